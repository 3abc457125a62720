"""The core's executable: compiled on first use with the same C compiler as the responder,
into a cache keyed by its sources, the responder's headers it includes and the compiler, so a
build pays for it once; `check`, which writes nothing, compiles one for the run when the
cache has none.

Its C files are here and in a folder per layer (base/, read/, semantics/, dnssec/, layout/);
each compiles with this folder and runtime/ on the include path, so an include names a file
from either root: "bake.h", "read/lexed.h", "zonedata.h"."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

from ..errors import UsageError
from ..toolchain import objcache
from ..toolchain.cachehome import core_directories
from ..toolchain.cc import compiler_identity, runtime_dir

SOURCES = Path(__file__).resolve().parent
CFLAGS = ["-std=gnu11", "-O2", "-pthread", "-Wall", "-Wextra"]
# ZONEBAKE_SANITIZE=1 (the tests' second pass) builds it with ASan and UBSan too.
SANITIZE_CFLAGS = ["-std=gnu11", "-O1", "-g", "-pthread", "-fno-omit-frame-pointer",
                   "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


def _cflags() -> list[str]:
    return SANITIZE_CFLAGS if os.environ.get("ZONEBAKE_SANITIZE") else CFLAGS


class Failed(UsageError):
    """The core itself went wrong (a bug of ours, or no way to compile it)."""


UNUSED_FOR = 7 * 24 * 3600  # seconds after which another version's executable is deleted


def _directories() -> list[Path]:
    """Where the executable is kept: beside the runtime's objects (objcache.py), else in the
    temporary directory."""
    return [Path(directory) for directory in core_directories()]


def _prune(directory: Path, keep: Path) -> None:
    """Executables of other versions of the core, unused for a week ("bake-*": its name
    before)."""
    for old in [*directory.glob("core-*"), *directory.glob("bake-*")]:
        try:
            if old != keep and time.time() - old.stat().st_atime > UNUSED_FOR:
                old.unlink()
        except OSError:
            pass


def _sources(pattern: str) -> list[Path]:
    """The core's files that match, in every folder, in order of their paths."""
    return sorted(SOURCES.rglob(pattern))


def _object_name(source: Path) -> str:
    """A source's object, named by its path, so that all fit in one folder
    (read/zonefile.c: read-zonefile.o)."""
    return "-".join(source.relative_to(SOURCES).with_suffix(".o").parts)


def _digest(cc: list[str], runtime: Path, cache: bool) -> str:
    """What the executable depends on: its sources, the responder's headers, the compiler;
    kept under the files' stats (objcache.digested)."""
    files = [(SOURCES, _sources("*.[ch]")), (runtime, sorted(runtime.rglob("*.h")))]
    try:
        identity = compiler_identity(cc, runtime, cache)
    except UsageError as exc:
        raise Failed(str(exc)) from None
    flags = " ".join(cc + _cflags()).encode()

    def make() -> bytes:
        digest = hashlib.sha256(flags)
        for root, paths in files:
            for path in paths:
                name = path.relative_to(root).as_posix()
                digest.update(name.encode() + b"\0" + path.read_bytes())
        digest.update(identity)
        return digest.hexdigest()[:16].encode()
    return objcache.digested([flags, identity], [path for _, paths in files for path in paths],
                             make, cache).decode()


def _compile(cc: list[str], runtime: Path, executable: Path) -> bool:
    """Compile the core to `executable`, via a name of its own and a rename (builds running
    at once each get a whole executable); False when the directory is not writable. The files
    compile at once, one a processor: on a first build the core's compile delays everything."""
    temporary = executable.with_name(f".{executable.name}.{os.getpid()}")
    sources = _sources("*.c")
    with tempfile.TemporaryDirectory(prefix="zonebake-core-") as objects:
        jobs = [[*cc, *_cflags(), f"-I{SOURCES}", f"-I{runtime}", "-c", str(source), "-o",
                 str(Path(objects) / _object_name(source))] for source in sources]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            results = list(pool.map(_run, jobs))
        link = [*cc, *_cflags(), *(job[-1] for job in jobs), "-o", str(temporary)]
        results.append(_run(link) if all(r.returncode == 0 for r, _ in results) else None)
    for result, command in filter(None, results):
        if result.returncode != 0:
            temporary.unlink(missing_ok=True)
            if command is link and "Permission denied" in result.stderr:
                return False
            raise Failed(f"the C compiler failed ({shlex.join(command)}):\n{result.stderr}")
    os.replace(temporary, executable)
    return True


def _run(command: list[str]) -> tuple[subprocess.CompletedProcess, list[str]]:
    try:
        return subprocess.run(command, capture_output=True, text=True), command
    except OSError as exc:
        raise Failed(f"cannot run the C compiler {command[0]!r}: {exc.strerror}") from None


@contextlib.contextmanager
def executable(cache: bool = True) -> Iterator[Path]:
    """The core's executable, from the cache, or compiled now: into the cache, or with
    `cache` false (for `check`, which writes nothing) into a directory removed after."""
    cc = shlex.split(os.environ.get("CC", "cc"))
    runtime = runtime_dir()
    name = f"core-{_digest(cc, runtime, cache)}"
    directories = _directories()
    for directory in directories:
        if (directory / name).is_file():
            yield directory / name
            return
    if not cache:
        with tempfile.TemporaryDirectory(prefix="zonebake-core-") as scratch:
            _compile(cc, runtime, Path(scratch) / name)
            yield Path(scratch) / name
        return
    for directory in directories:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if _compile(cc, runtime, directory / name):
            _prune(directory, directory / name)
            yield directory / name
            return
    raise Failed("no writable directory for the compiler's core (tried "
                 f"{' and '.join(map(str, directories))})")
