"""The responder's C files (runtime/) compiled once and reused: the objects depend on the C
sources, the flags and the C compiler, never on the zones, so every build after the first
needs to compile only zonedata.c.

The cache is the user's ($XDG_CACHE_HOME/zonebake/objs, else ~/.cache/zonebake/objs), not the
output directory's: every output directory, and every test of the suite, builds the same
objects, as every Go package shares Go's build cache. A build that cannot write there
compiles without it.

An entry is a directory named by its key, holding the objects and a manifest: the SHA-256 of
each object and of each header outside runtime/ that the compile read. An entry is used only
if all of these still match, so an object cut short by a crash or a libc header changed by an
upgrade costs a compile, never a binary different from a cold build's. Entries appear by
renaming a complete directory, so concurrent builds see all of one or none of it.

The server linked with a placeholder for its data (cc.py) is an entry too, keyed by the
objects' key and zonedata.c, which holds a zone set's configuration alone: its manifest names
the system's files the link read as well (crt1.o, libc.a), so a rebuild of the set links
nothing, and an upgraded libc costs one link. The LINKED_KEPT used last are kept."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

MANIFEST = "manifest"
UNUSED_FOR = 7 * 24 * 3600  # seconds unused after which an entry is deleted
# Linked servers (cc.py), one per zone set's configuration, a few MiB each: the most kept,
# the least recently used deleted first.
LINKED_PREFIX = "linked-"
LINKED_KEPT = 16


def cache_dir() -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, or relative, which the XDG spec says to ignore
        base = os.path.join(os.path.expanduser("~"), ".cache")
        if not os.path.isabs(base):  # no home directory to be found
            return None
    return Path(base) / "zonebake" / "objs"


def signatures_file(origins: list[str], suffix: str) -> Path | None:
    """A zone set's file beside the objects, in signatures/, named by its origins: the
    digests of the signatures verified (signatures.py), the signatures made (signing.py)."""
    objects = cache_dir()
    if objects is None:
        return None
    name = hashlib.sha256("\n".join(sorted(origins)).encode()).hexdigest()[:24]
    return objects.parent / "signatures" / f"{name}{suffix}"


def key(parts: Iterable[bytes]) -> str:
    """A hash of everything that goes into the objects; each part length-prefixed, so that
    moving bytes from one part to the next changes it."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def lookup(entry_key: str) -> Path | None:
    """The entry's directory if it is there and intact. A damaged or outdated one is removed,
    so that this build's objects can take its place."""
    root = cache_dir()
    if root is None:
        return None
    entry = root / entry_key
    if not entry.is_dir():
        return None
    try:
        expected = (entry / MANIFEST).read_text().splitlines()
        paths = [line.split(" ", 1)[1] for line in expected]
    except (OSError, UnicodeDecodeError, IndexError):
        expected, paths = [], []
    if not expected or _manifest(entry, paths) != expected:
        _remove(entry)
        return None
    try:
        os.utime(entry)  # used now: pruning goes by the directory's time
    except OSError:
        pass
    return entry


@contextmanager
def workspace() -> Iterator[Path]:
    """A fresh directory to compile into, on the cache's file system where it can be, so that
    `store` can rename it into place; removed afterwards unless stored."""
    root, path = cache_dir(), None
    if root is not None:
        try:
            root.mkdir(parents=True, exist_ok=True)
            path = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
        except OSError:
            pass
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="zonebake-objs-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def store(entry_key: str, objects: Path, headers: list[str],
          files: list[str] | None = None) -> Path | None:
    """Make OBJECTS (a `workspace`) the entry for entry_key, and return it. HEADERS are the
    absolute paths of the headers (and other system files) the compile read; FILES, the
    entry's own files, its objects unless given. Never fails a build: a cache that cannot be
    written, or an entry another build stored first (the same bytes), leaves things as they
    are (and None)."""
    root = cache_dir()
    if root is None or objects.parent != root:  # the cache could not be written
        return None
    names = sorted(p.name for p in objects.glob("*.o")) if files is None else files
    manifest = _manifest(objects, names + headers)
    if manifest is None:
        return None
    try:
        (objects / MANIFEST).write_text("".join(f"{line}\n" for line in manifest))
        os.rename(objects, root / entry_key)
    except OSError:
        return None
    _prune(root)
    return root / entry_key


def _manifest(entry: Path, paths: list[str]) -> list[str] | None:
    """'SHA-256 path' per file: objects relative to the entry, headers absolute; None if one of
    them cannot be read."""
    lines = []
    for path in paths:
        try:
            lines.append(f"{hashlib.sha256((entry / path).read_bytes()).hexdigest()} {path}")
        except OSError:
            return None
    return lines


def _prune(root: Path) -> None:
    """Delete the entries (and workspaces left by killed builds) unused for UNUSED_FOR: each
    change to the runtime's sources or to the compiler leaves its objects behind; and the
    linked servers but the LINKED_KEPT used last."""
    now = time.time()
    linked = []
    for path in root.iterdir():
        try:
            used = path.stat().st_mtime
            if now - used > UNUSED_FOR:
                _remove(path)
            elif path.name.startswith(LINKED_PREFIX):
                linked.append((used, path))
        except OSError:
            pass
    for _, path in sorted(linked, reverse=True)[LINKED_KEPT:]:
        _remove(path)


def _remove(entry: Path) -> None:
    """Rename first, so that no build finds a half-deleted entry."""
    try:
        doomed = Path(tempfile.mkdtemp(prefix=".old-", dir=entry.parent))
        os.rename(entry, doomed / entry.name)
    except OSError:
        return
    shutil.rmtree(doomed, ignore_errors=True)
