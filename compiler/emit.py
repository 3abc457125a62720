"""zonedata.c from the Jinja2 template: the zoneset struct that points into the core's blob,
zonedata.bin, which the assembler includes (.incbin) where the build does not write the data
into the server itself (toolchain/cc.py). Same input, same bytes out."""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path

from . import __version__
from .config import ServerDefaults, ZoneSetConfig
from .toolchain import objcache, replacing

TEMPLATES = Path(__file__).resolve().parent / "templates"  # PackageLoader's, read for the key


def _c_escape_table() -> list[str]:
    table = []
    for b in range(256):
        c = chr(b)
        # Three-digit octal for anything that is not plain printable text: it never runs into
        # the next character the way \x does. '?' is escaped against trigraphs.
        if 0x20 <= b < 0x7F and c not in '"\\?':
            table.append(c)
        else:
            table.append(f"\\{b:03o}")
    return table


_ESCAPE = _c_escape_table()


def c_bytes(data: bytes) -> str:
    """The contents of a C string literal holding these bytes (quotes not included)."""
    return "".join(_ESCAPE[b] for b in data)


def c_string(text: str) -> str:
    """The contents of a C string literal holding text (quotes not included)."""
    return c_bytes(text.encode())


# The CH-class names the server answers about itself with a TXT (RFC 4892; NSD and Knot answer
# them the same way): the identity's and the version's, each only when it is configured.
IDENTITY_NAMES = (b"\x02id\x06server\x00", b"\x08hostname\x04bind\x00")
VERSION_NAMES = (b"\x07version\x04bind\x00", b"\x07version\x06server\x00")


def chaos_names(server: ServerDefaults) -> list[tuple[bytes, str]]:
    """(lowercased wire-format name, its text) for each CH TXT answer, in the core's order."""
    return [(name, text) for names, text in ((IDENTITY_NAMES, server.identity),
                                             (VERSION_NAMES, server.version)) if text
            for name in names]


NAMED_ZONES = 3  # the most zones the server's banner and --help name one by one


def describe(config: ZoneSetConfig) -> str:
    """The zone set in a few words: a provider's 10,000 zones make no log line."""
    zones = config.zones
    if len(zones) <= NAMED_ZONES + 1:
        return ", ".join(zone.origin_text for zone in zones)
    named = ", ".join(zone.origin_text for zone in zones[:NAMED_ZONES])
    return f"{named} and {len(zones) - NAMED_ZONES} more zones"


_template_lock = threading.Lock()  # a build renders on a thread of its pool


@functools.cache
def _template():
    import jinja2  # here: a build imports it on a thread, while the core runs

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("zonebake", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["c_string"] = c_string
    env.filters["c_bytes"] = c_bytes
    return env.get_template("zonedata.c.j2")


def render(config: ZoneSetConfig) -> str:
    """zonedata.c: the configuration alone (the layout's numbers are in the data's head), so
    that it is known before the core runs. Kept in the cache by what it is made of (the
    configuration as its repr writes every field, this file and the template): a rebuild
    does not import Jinja2 (40 ms of CPU, beside the core)."""
    name = objcache.RENDERED_PREFIX + objcache.key(
        [__version__.encode(), repr(config).encode(), Path(__file__).read_bytes(),
         *(path.read_bytes() for path in sorted(TEMPLATES.iterdir()))])
    return objcache.kept_or_made(name, lambda: _rendered(config).encode("ascii")).decode("ascii")


def _rendered(config: ZoneSetConfig) -> str:
    with _template_lock:  # one compile of the template, whichever thread renders first
        template = _template()
    return template.render(
        version=__version__,
        zones=config.zones,
        description=describe(config),
        listen=config.server.listen,
        server=config.server,
        identity=config.server.identity,
        chaos=[name for name, _ in chaos_names(config.server)],
    )


DATA_FILE = "zonedata.bin"  # the name zonedata.c.j2 includes


def write(outdir: Path, config: ZoneSetConfig, rendered: str | None = None) -> Path:
    """Write OUTDIR/zonedata.c (the text `render` gives, if it was rendered already); return
    its path."""
    zonedata = outdir / "zonedata.c"
    text = rendered if rendered is not None else render(config)
    write_atomically(zonedata, text.encode("ascii"))
    return zonedata


def temporary_for(path: Path) -> Path:
    """Where to write a file before renaming it over `path`: readers never see half of it."""
    return path.with_name(f".{path.name}.tmp")


def write_atomically(path: Path, data: bytes) -> None:
    temporary = temporary_for(path)
    temporary.write_bytes(data)
    replacing.put(temporary, path)
