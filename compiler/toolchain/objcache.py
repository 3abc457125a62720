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

Beside the manifest, `seen` keeps each file's identity and times (device, inode, size,
modification and change times) when its digest last matched; a file whose stat still says
the same is not read again. Writing a file, or renaming another over it as a package
upgrade does, changes its change time, which no one can set back. A file changed within
RACY seconds of its stat could keep the same times (they are coarse), so it is not kept
there, as git keeps "racily clean" entries of its index: the next build reads it again.
That spares a rebuild reading and digesting some 10 MiB (the objects, libc.a) on every run,
a tenth of a second of CPU beside the core.

The server linked with a placeholder for its data (cc.py) is an entry too, keyed by the
objects' key and zonedata.c, which holds a zone set's configuration alone: its manifest names
the system's files the link read as well (crt1.o, libc.a), so a rebuild of the set links
nothing, and an upgraded libc costs one link. The LINKED_KEPT used last are kept.

Small files are kept beside the entries too (`keep`, `read_kept`), each with its digest: the
compiler's name for itself, which takes running it (cc.compiler_identity), and zonedata.c as
rendered for a configuration (emit.render), which takes importing Jinja2. Each costs a
rebuild 20-40 ms. And the digest of the core's sources (core/program.py), kept under their
stats as the entries' files are: reading and digesting them took 3-10 ms of each build
beside the driver's other threads."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .cachehome import zonebake_cache

MANIFEST = "manifest"
SEEN = "seen"  # the files' stats when their digests last matched (see above)
RACY = 2.0  # seconds: a file changed as recently as this before its stat is read again
UNUSED_FOR = 7 * 24 * 3600  # seconds unused after which an entry is deleted
# Linked servers (cc.py), one per zone set's configuration, a few MiB each: the most kept,
# the least recently used deleted first.
LINKED_PREFIX = "linked-"
LINKED_KEPT = 16
# Small files kept beside the entries (`keep`): the compiler's name for itself (cc.py), and
# zonedata.c as rendered for a configuration (emit.py).
COMPILER_PREFIX = "compiler-"
RENDERED_PREFIX = "rendered-"
SOURCES_PREFIX = "sources-"
KEPT_DIGEST = 32  # the SHA-256 a kept file begins with


def cache_dir() -> Path | None:
    home = zonebake_cache()
    return Path(home) / "objs" if home is not None else None


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
    seen = _seen(entry)
    stats = {path: _stat(entry / path) for path in paths}
    unseen = [i for i, path in enumerate(paths) if stats[path] is None
              or seen.get(path) != stats[path]]
    if not expected or _manifest(entry, [paths[i] for i in unseen]) != \
            [expected[i] for i in unseen]:
        _remove(entry)
        return None
    if any(stats[paths[i]] is not None for i in unseen):  # some can be kept now
        _write_seen(entry, stats)
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
    stats = {path: _stat(objects / path) for path in names + headers}  # before the reads
    manifest = _manifest(objects, names + headers)
    if manifest is None:
        return None
    try:
        (objects / MANIFEST).write_text("".join(f"{line}\n" for line in manifest))
        _write_seen(objects, stats)
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


def remembered(parts: list[bytes], files: list[Path], make: Callable[[], bytes],
               write: bool = True) -> bytes:
    """What `make` gives (the compiler's name for itself, which takes running it), kept beside
    the objects under a key of `parts` and the stats of `files`, the executables it comes
    from: made again when one of them changes (see above), or when one is not a binary (a
    wrapper script, which names nothing of what it runs). `write` false: only read (`zonebake
    check` writes nothing)."""
    return _kept_by_stats(COMPILER_PREFIX, parts,
                          [_stat(path) if _is_binary(path) else None for path in files],
                          make, write)


def digested(parts: list[bytes], files: list[Path], make: Callable[[], bytes],
             write: bool = True) -> bytes:
    """What `make` gives from the contents of FILES (a digest of them), kept under a key of
    `parts`, their paths and their stats: made again when one of them changes or is changed
    too recently for its times to tell (see above), or `write` is false."""
    if not write:
        return make()
    return _kept_by_stats(SOURCES_PREFIX, parts,
                          [None if stat is None else f"{path}\t{stat}"
                           for path, stat in ((path, _stat(path)) for path in files)], make)


def _kept_by_stats(prefix: str, parts: list[bytes], stats: list[str | None],
                   make: Callable[[], bytes], write: bool = True) -> bytes:
    """kept_or_made under a key of `parts` and `stats`; made where a stat cannot tell."""
    if None in stats:
        return make()
    return kept_or_made(prefix + key([*parts, *(s.encode() for s in stats)]), make, write)


def kept_or_made(name: str, make: Callable[[], bytes], write: bool = True) -> bytes:
    """The file kept under `name`, else what `make` gives, kept there (unless `write` is
    false)."""
    kept = read_kept(name)
    if kept is None:
        kept = make()
        if write:
            keep(name, kept)
    return kept


def read_kept(name: str) -> bytes | None:
    """A file `keep` wrote, if it is there and whole; used now, as far as pruning goes."""
    root = cache_dir()
    try:
        data = (root / name).read_bytes() if root is not None else b""
    except OSError:
        return None
    digest, content = data[:KEPT_DIGEST], data[KEPT_DIGEST:]
    if len(digest) < KEPT_DIGEST or hashlib.sha256(content).digest() != digest:
        return None
    try:
        os.utime(root / name)
    except OSError:
        pass
    return content


def keep(name: str, content: bytes) -> None:
    """Keep a small file in the cache under `name`, with its digest so that a damaged one is
    not read back; written whole and renamed into place. Never fails a build."""
    root = cache_dir()
    if root is None:
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    _write_whole(root / name, hashlib.sha256(content).digest() + content)


def _write_whole(path: Path, data: bytes) -> None:
    """DATA at PATH, through a name of this thread's own and a rename: concurrent builds each
    leave a whole file. Never fails a build: a cache that cannot be written keeps nothing
    (and where its directory is not one, as under /dev/null, there is nothing to remove)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass


def _is_binary(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _stat(path: Path) -> str | None:
    """What says a file is the one its digest was taken of (see above), or None: missing, or
    changed too recently for its times to tell."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if time.time_ns() - st.st_ctime_ns < RACY * 1e9:
        return None
    return f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}"


def _seen(entry: Path) -> dict[str, str]:
    try:
        lines = (entry / SEEN).read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    return {path: stat for stat, _, path in (line.partition("\t") for line in lines)}


def _write_seen(entry: Path, stats: dict[str, str | None]) -> None:
    """Keep the stats taken before the digests matched (a cache that cannot be written reads
    its files every time)."""
    _write_whole(entry / SEEN, "".join(f"{stat}\t{path}\n" for path, stat in stats.items()
                                       if stat is not None).encode())


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
