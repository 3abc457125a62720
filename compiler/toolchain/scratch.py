"""Memory-backed scratch space for a build's large intermediate files.

A large zone set's data is written more than once on its way into the binary (the blob, the
assembler's object); on this machine's disk file system each 479 MiB copy cost 0.5 to 1.9 s,
in memory a steady fraction of that. Linux has /dev/shm; it is used when it has room for
what is asked to spare (it is memory others need too), and otherwise the caller writes beside
its output as before.

There, each build writes in a directory of its own, which it holds an exclusive flock(2) on
while it is there: a build killed on its way cannot remove it, and memory is never given back
by itself, so each build first removes those whose lock it can take (the kernel drops a lock
with the process that held it), as outdirlock.py does with the output directory's leftovers.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

RAM_DIRECTORY = Path("/dev/shm")
PREFIX = ".zonebake-scratch-"
# A directory is made, then locked: one younger than this may be between the two.
LOCKED_WITHIN = 10.0  # seconds


def memory_directory(needed: int) -> Path | None:
    """RAM_DIRECTORY if it is writable with more than `needed` bytes free, else None."""
    try:
        room = os.statvfs(RAM_DIRECTORY)
    except OSError:
        return None
    if os.access(RAM_DIRECTORY, os.W_OK) and room.f_bavail * room.f_frsize > needed:
        return RAM_DIRECTORY
    return None


@contextmanager
def directory_for(needed: int, fallback: Path) -> Iterator[Path]:
    """A fresh directory in memory for files of `needed` bytes, removed afterwards, or,
    where memory has not the room or the directory cannot be made, FALLBACK itself (an
    output directory: its lock's next holder removes what a killed build left there)."""
    memory = memory_directory(needed)
    made = _make_locked(memory) if memory is not None else None
    if made is None:
        yield fallback
        return
    path, fd = made
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)


def _make_locked(parent: Path) -> tuple[Path, int] | None:
    """A new directory in PARENT that this process holds locked, and its descriptor, once
    the directories that killed builds left there are gone; None where it cannot be made."""
    _remove_abandoned(parent)
    try:
        path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
    except OSError:
        return None
    fd = _locked(path, blocking=True)
    if fd is None:
        shutil.rmtree(path, ignore_errors=True)
        return None
    return path, fd


def _locked(path: Path, blocking: bool) -> int | None:
    """A descriptor of the directory PATH holding its lock, or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError:
        os.close(fd)
        return None
    return fd


def _remove_abandoned(parent: Path) -> None:
    """Remove PARENT's build directories no running build holds (not another user's: those
    are not ours to open or remove)."""
    try:
        names = [name for name in os.listdir(parent) if name.startswith(PREFIX)]
    except OSError:
        return
    for name in names:
        path = parent / name
        try:
            if time.time() - path.lstat().st_mtime < LOCKED_WITHIN:
                continue
        except OSError:
            continue
        fd = _locked(path, blocking=False)
        if fd is not None:
            shutil.rmtree(path, ignore_errors=True)
            os.close(fd)
