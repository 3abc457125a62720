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
renaming a complete directory, so concurrent builds see all of one or none of it."""

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


def store(entry_key: str, objects: Path, headers: list[str]) -> None:
    """Make OBJECTS (a `workspace`) the entry for entry_key. HEADERS are the absolute paths of
    the headers the compile read. Never fails a build: a cache that cannot be written, or an
    entry another build stored first (the same bytes), leaves things as they are."""
    root = cache_dir()
    if root is None or objects.parent != root:  # the cache could not be written
        return
    manifest = _manifest(objects, sorted(p.name for p in objects.glob("*.o")) + headers)
    if manifest is None:
        return
    try:
        (objects / MANIFEST).write_text("".join(f"{line}\n" for line in manifest))
        os.rename(objects, root / entry_key)
    except OSError:
        return
    _prune(root)


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
    change to the runtime's sources or to the compiler leaves its objects behind."""
    now = time.time()
    for path in root.iterdir():
        try:
            if now - path.stat().st_mtime > UNUSED_FOR:
                _remove(path)
        except OSError:
            pass


def _remove(entry: Path) -> None:
    """Rename first, so that no build finds a half-deleted entry."""
    try:
        doomed = Path(tempfile.mkdtemp(prefix=".old-", dir=entry.parent))
        os.rename(entry, doomed / entry.name)
    except OSError:
        return
    shutil.rmtree(doomed, ignore_errors=True)
