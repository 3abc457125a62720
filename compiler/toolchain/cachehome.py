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
