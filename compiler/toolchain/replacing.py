"""A finished output put in place of the last build's: the name always holds a whole file,
the old one or the new.

os.replace does that, but on ext4 a rename over an existing file first writes out the new
file's delayed blocks (its auto_da_alloc, against zero-length files after a crash), which took
0.2 s for a 441 MiB zonedata.bin, in the middle of the build. Exchanging the two names
(renameat2 with RENAME_EXCHANGE) is as atomic and leaves the writing to the kernel's own
time; the old file, under the temporary name then, is unlinked. Where the exchange is not
available (another kernel, libc or file system), os.replace.

The old file's pages are freed when its last descriptor closes: 60 ms for a 240 MiB server,
a tenth of a million names' rebuild, spent after everything else is in place. `release`
gives that descriptor to a child that exits once this process has closed its own, so that
the kernel frees them in the child's exit while the build returns."""

from __future__ import annotations

import _thread
import ctypes
import os
import stat

_WAITS_FOR_EOF = "cat"  # POSIX's: exits at the end of its input, the pipe release closes
_children: list[int] = []  # released to, not yet reaped
_lock = _thread.allocate_lock()  # a build releases on two threads (threading: 2 ms to import)

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)


def _exchange(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    renameat2 = getattr(_libc, "renameat2", None)
    if renameat2 is None:
        return False
    return renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b),
                     _RENAME_EXCHANGE) == 0


def replace(new: str | os.PathLike[str], path: str | os.PathLike[str]) -> int | None:
    """Put NEW at PATH. Returns a descriptor of the file that was there, if one was, whose
    close frees it: hundreds of MiB of pages for a large zone set, which the caller may free
    while it does something else."""
    try:
        old = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:  # nothing there (nothing is written out early then), or not ours to read
        os.replace(new, path)
        return None
    try:
        if stat.S_ISREG(os.fstat(old).st_mode) and _exchange(new, path):
            os.unlink(new)  # the old file, now
        else:
            os.replace(new, path)
    except BaseException:
        os.close(old)
        raise
    return old


def put(new: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """NEW at PATH as `replace` puts it, the old file freed at once: for the small files
    written after the data (zonedata.c, the next manifest, a cache), whose rename over the
    old one also waited for their blocks (12-50 ms each here, after a rebuild had written
    its data)."""
    old = replace(new, path)
    if old is not None:
        os.close(old)


def put_releasing(new: str | os.PathLike[str], path: str | os.PathLike[str],
                  freed: list[int | None] | None = None) -> None:
    """NEW at PATH as `replace` puts it, the old file freed by `release` as the build goes
    on: the server and the state, tens or hundreds of MiB. FREED: where the old file's
    descriptor goes instead, for the caller to release with others."""
    old = replace(new, path)
    if freed is not None:
        freed.append(old)
    else:
        release(old)


def put_text(path: str, text: str, freed: list[int | None] | None = None) -> None:
    """TEXT (UTF-8, the file names in it as the file system gave them) written beside PATH,
    then put in its place as `put` does (FREED: as `put_releasing` does); nothing where it
    cannot be: the small records a build leaves for the next (core/early.py,
    core/driverless.py), which then does without."""
    temporary = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}")
    try:
        with open(temporary, "w", encoding="utf-8", errors="surrogateescape") as file:
            file.write(text)
        if freed is not None:
            put_releasing(temporary, path, freed)
        else:
            put(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def release(*olds: int | None) -> None:
    """Close OLDS (descriptors `replace` returned; None: none) without waiting for the kernel
    to free their files: a child that inherits them holds the last references, for it exits
    only once they are closed here (a child that exited at once often did so first on two
    processors, and this close freed the file after all). One child for them all: a rebuild
    without the driver releases its outputs' old files at its end together, each child's
    start (a millisecond or more while the last one's exit frees its file) on its way. The
    child is not waited for: the next release reaps those that have exited (`zonebake
    follow` builds for days), and init those left when this process exits. Where it cannot
    be started, closed here."""
    olds = tuple(old for old in olds if old is not None)
    if not olds:
        return
    _reap()
    try:
        read_end, write_end = os.pipe()
    except OSError:
        for old in olds:
            os.close(old)
        return
    try:
        for old in olds:
            os.set_inheritable(old, True)
        # Nothing of ours but the file and the pipe's end: a reader of this process's output
        # gets its end of file without waiting for the child.
        child = os.posix_spawnp(_WAITS_FOR_EOF, [_WAITS_FOR_EOF], os.environ,
                                file_actions=[(os.POSIX_SPAWN_DUP2, read_end, 0)] +
                                [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0)
                                 for fd in (1, 2)])
    except OSError:
        pass
    else:
        with _lock:
            _children.append(child)
    for old in olds:
        os.close(old)
    os.close(read_end)
    os.close(write_end)  # the child's end of input: it exits, and frees the file


def _reap() -> None:
    with _lock:
        for child in list(_children):
            try:
                exited = os.waitpid(child, os.WNOHANG)[0] == child
            except ChildProcessError:
                exited = True
            if exited:
                _children.remove(child)
