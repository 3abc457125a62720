"""Memory-backed scratch space for a build's large intermediate files.

A large zone set's data is written more than once on its way into the binary (the blob, the
assembler's object); on this machine's disk file system each 479 MiB copy cost 0.5 to 1.9 s,
in memory a steady fraction of that. Linux has /dev/shm; it is used when it has room for
what is asked to spare (it is memory others need too), and otherwise the caller writes beside
its output as before.
"""

from __future__ import annotations

import os
from pathlib import Path

RAM_DIRECTORY = Path("/dev/shm")


def memory_directory(needed: int) -> Path | None:
    """RAM_DIRECTORY if it is writable with more than `needed` bytes free, else None."""
    try:
        room = os.statvfs(RAM_DIRECTORY)
    except OSError:
        return None
    if os.access(RAM_DIRECTORY, os.W_OK) and room.f_bavail * room.f_frsize > needed:
        return RAM_DIRECTORY
    return None
