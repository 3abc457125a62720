"""zonedata.c from the Jinja2 template: the zoneset struct that points into the core's blob,
zonedata.bin, which the assembler includes (.incbin). Same input, same bytes out."""

from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .config import ZoneSetConfig


@dataclass(frozen=True)
class Layout:
    """Where the core put each table in zonedata.bin (runtime/zonedata.h), and its size."""

    groups_off: int  # the perfect hash's groups (runtime/hash.h)
    ngroups: int
    group_mask: int
    nslots: int  # all groups': some are empty
    nanswers: int
    seed: int
    # CH-class names answered with a TXT: (lowercased wire name, answer offset).
    chaos: tuple[tuple[bytes, int], ...]
    data_size: int
    signed_nodes: int = 0  # a node's DO twin: the node after it (1); 0 when none is signed
    # Signed zones, each its number in the set and its signatures' earliest expiration
    # (seconds since 1970).
    expiries: tuple[tuple[int, int], ...] = ()
    # Every zone: its number in the set and its SOA serial.
    serials: tuple[tuple[int, int], ...] = ()


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


NAMED_ZONES = 3  # the most zones the server's banner and --help name one by one


def describe(config: ZoneSetConfig) -> str:
    """The zone set in a few words: a provider's 10,000 zones make no log line."""
    zones = config.zones
    if len(zones) <= NAMED_ZONES + 1:
        return ", ".join(zone.origin_text for zone in zones)
    named = ", ".join(zone.origin_text for zone in zones[:NAMED_ZONES])
    return f"{named} and {len(zones) - NAMED_ZONES} more zones"


_template_lock = threading.Lock()


@functools.cache
def _template():
    import jinja2  # here: a build imports it while the core runs (prepare)

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


def prepare() -> None:
    """Import Jinja2 and compile the template: a build does it on a thread while the core
    runs, so that zonedata.c is rendered at once when the layout's numbers come, and the
    server's compile and link, which a rebuild of a few hundred thousand names waits for,
    start then."""
    with _template_lock:
        _template()


def render(config: ZoneSetConfig, layout: Layout, max_labels: int) -> str:
    with _template_lock:  # prepare's, when it is still under way
        template = _template()
    return template.render(
        version=__version__,
        zones=config.zones,
        description=describe(config),
        listen=config.server.listen,
        server=config.server,
        identity=config.server.identity,
        layout=layout,
        max_labels=max_labels,
    )


DATA_FILE = "zonedata.bin"  # the name zonedata.c.j2 includes


def write(outdir: Path, config: ZoneSetConfig, layout: Layout, max_labels: int,
          rendered: str | None = None) -> Path:
    """Write OUTDIR/zonedata.c (the text `render` gives, if it was rendered already); return
    its path. The core has written zonedata.bin."""
    zonedata = outdir / "zonedata.c"
    text = rendered if rendered is not None else render(config, layout, max_labels)
    write_atomically(zonedata, text.encode("ascii"))
    return zonedata


def temporary_for(path: Path) -> Path:
    """Where to write a file before renaming it over `path`: readers never see half of it."""
    return path.with_name(f".{path.name}.tmp")


def write_atomically(path: Path, data: bytes) -> None:
    temporary = temporary_for(path)
    temporary.write_bytes(data)
    os.replace(temporary, path)
