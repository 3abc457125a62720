"""One build at a time into an output directory.

Two builds into one directory at once wrote the same temporary files and put them in place
in turn: a server that was neither build's, a state that did not match it (the next build
then refused the directory), tracebacks. A build holds an exclusive flock(2) on the
directory itself (no file of its own in it: the directory is what operators ship), from
before its core begins (core/early.py's start) until it has put its outputs in place; another build into
it waits, saying so once, as cargo does for its build directory. The kernel drops the lock
when the holder exits, killed or not.

Holding it, a build removes what builds killed before they could clean up left in the
directory: their scratch directories, accumulating one per killed build, and temporary
files. Every name a build writes there only while it runs begins with one of TEMPORARY
(the outputs themselves, and anything else there, do not), so none of them is another
running build's, nor anyone else's."""

from __future__ import annotations

import errno
import fcntl
import os
import sys

# The beginnings of the names of what a build writes in its output directory while it runs
# (prefill.py, emit.py, cc.py, early.py, the core's state and image): never an output's.
TEMPORARY = (".zonebake-", ".zonedata.")

# The directories this process holds, by (device, inode): the descriptor, the absolute path.
_held: dict[tuple[int, int], tuple[int, str]] = {}


def _identity(found: os.stat_result) -> tuple[int, int]:
    return found.st_dev, found.st_ino


def _open(outdir: str) -> int | None:
    """A descriptor of OUTDIR, or None where it is not a directory this user may open (the
    build says why, or makes it)."""
    try:
        return os.open(outdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None


def hold(outdir: str | os.PathLike[str]) -> bool:
    """Wait for OUTDIR's lock and hold it until `release` or the process's exit; then remove
    killed builds' leftovers there. True once held, or held already by this process; False
    where OUTDIR is not a directory to lock (gone, never made, not one, not to be opened)."""
    path = os.fspath(outdir)
    while True:
        fd = _open(path)
        if fd is None:
            return False
        identity = _identity(os.fstat(fd))
        if identity in _held:
            os.close(fd)
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                os.close(fd)  # a file system without locks: as before, unlocked
                return False
            print(f"zonebake: waiting for another build into {path} to end", file=sys.stderr,
                  flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        # The build that held it may have removed the directory (a first build that failed):
        # then the lock is on a directory no longer there, and the caller's is made again.
        try:
            now = _identity(os.stat(path))
        except OSError:
            now = None
        if now != identity:
            os.close(fd)
            if now is None:
                return False
            continue
        _held[identity] = fd, os.path.abspath(path)
        _remove_leftovers(path)
        return True


def release(outdir: str | os.PathLike[str]) -> None:
    """Let the next build into OUTDIR go on (this process's lock, if it holds it; OUTDIR
    may be gone: a first build that failed removes it)."""
    path = os.path.abspath(outdir)
    try:
        identity = _identity(os.stat(path))
    except OSError:
        identity = None
    for key, (fd, held) in list(_held.items()):
        if key == identity or held == path:
            del _held[key]
            os.close(fd)  # the lock goes with its last descriptor


def _remove_leftovers(outdir: str) -> None:
    try:
        names = os.listdir(outdir)
    except OSError:
        return
    for name in names:
        if not name.startswith(TEMPORARY):
            continue
        path = os.path.join(outdir, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                import shutil  # here: most builds find nothing to remove
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass  # not ours to remove: left as it was
