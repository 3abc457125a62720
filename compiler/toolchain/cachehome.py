"""Where zonebake keeps what it caches for a user: $XDG_CACHE_HOME/zonebake, or
~/.cache/zonebake (the runtime's objects: objcache.py; the core's program: core/program.py;
the signatures' caches). A module of its own: the command's start (core/early.py) asks it
before the driver's imports."""

from __future__ import annotations

import os


def zonebake_cache() -> str | None:
    """The directory, or None where there is no home directory to put it in."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, or relative, which the XDG spec says to ignore
        base = os.path.join(os.path.expanduser("~"), ".cache")
        if not os.path.isabs(base):
            return None
    return os.path.join(base, "zonebake")


def core_directories() -> list[str]:
    """Where the core's program is kept (core/program.py): beside the objects, else in a
    folder of this user's own in the temporary directory."""
    import tempfile  # not at the command's start, which asks zonebake_cache first
    fallback = os.path.join(tempfile.gettempdir(), f"zonebake-{os.getuid()}")
    home = zonebake_cache()
    return [home, fallback] if home is not None else [fallback]


# The temporary directories tempfile.gettempdir() tries, on POSIX, in its order: the first of
# them it can write in is where core_directories' fallback lies (its last try, the working
# directory, left to core_directories itself).
_TEMPORARY_ENVIRONMENT = ("TMPDIR", "TEMP", "TMP")
_TEMPORARY_FOLDERS = ("/tmp", "/var/tmp", "/usr/tmp")


def may_hold_core(folder: str) -> bool:
    """Whether FOLDER is one of core_directories(), or this user's folder of that name in
    another of the temporary directories tempfile would try (which holds only what this
    user put there, as the caller checks): without importing tempfile where it can, which
    took 8 ms at the command's start (core/early.py)."""
    if folder == zonebake_cache():
        return True
    if os.path.basename(folder) == f"zonebake-{os.getuid()}":
        tried = [os.environ.get(name) for name in _TEMPORARY_ENVIRONMENT]
        if os.path.dirname(folder) in {os.path.abspath(path) for path in
                                       [*filter(None, tried), *_TEMPORARY_FOLDERS]}:
            return True
    return folder in core_directories()
