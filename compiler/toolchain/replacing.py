"""A finished output put in place of the last build's: the name always holds a whole file,
the old one or the new.

os.replace does that, but on ext4 a rename over an existing file first writes out the new
file's delayed blocks (its auto_da_alloc, against zero-length files after a crash), which took
0.2 s for a 441 MiB zonedata.bin, in the middle of the build. Exchanging the two names
(renameat2 with RENAME_EXCHANGE) is as atomic and leaves the writing to the kernel's own
time; the old file, under the temporary name then, is unlinked. Where the exchange is not
available (another kernel, libc or file system), os.replace."""

from __future__ import annotations

import ctypes
import os
import stat
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)


def _exchange(a: Path, b: Path) -> bool:
    renameat2 = getattr(_libc, "renameat2", None)
    if renameat2 is None:
        return False
    return renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b),
                     _RENAME_EXCHANGE) == 0


def replace(new: Path, path: Path) -> int | None:
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
