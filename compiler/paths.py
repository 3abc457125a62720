"""What a path given on the command line or in the TOML names, asked without an exception:
pathlib's exists, is_dir and is_file answer False for a missing file but raise for a name
too long or a folder that cannot be searched (Python 3.11), which the commands must say as a
usage error, not end in a traceback."""

from __future__ import annotations

import os
import stat


def status(path: os.PathLike[str] | str) -> os.stat_result | str:
    """PATH's stat, following links, or the reason there is none: its strerror, or "" where
    nothing is there (ENOENT, which the caller's own words say)."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return exc.strerror or str(exc)


def is_dir(found: os.stat_result | str) -> bool:
    return not isinstance(found, str) and stat.S_ISDIR(found.st_mode)


def is_file(found: os.stat_result | str) -> bool:
    return not isinstance(found, str) and stat.S_ISREG(found.st_mode)


def reason(found: os.stat_result | str) -> str:
    """': REASON' where there is no such file for a reason other than its absence, else ''."""
    return f": {found}" if isinstance(found, str) and found else ""
