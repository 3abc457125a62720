"""The time zonebake signs by, checks signatures against, and re-signs by: the system's clock,
read here only.

Signatures are valid for days, so that re-signing (`zonebake follow`, `zonebake re-sign`) can
only be tested with a clock that moves faster than the wall's. ZONEBAKE_CLOCK_FILE, when set,
names a file holding a number of seconds to add to the system's clock; it is read at every
look, so that a test moves a running `zonebake follow` days ahead by writing it. Nothing else
reads the time this way: log lines and timeouts keep the system's clock. SOURCE_DATE_EPOCH,
when set, still fixes the build's signing time (signing.build_time).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .errors import UsageError

SKEW_FILE = "ZONEBAKE_CLOCK_FILE"
SKEW_LIMIT = 100 * 365 * 86400  # seconds either way: more is a mistake, not a test


def now() -> int:
    """Seconds since 1970, moved by ZONEBAKE_CLOCK_FILE's seconds when it is set."""
    return int(time.time()) + _skew()


def _skew() -> int:
    path = os.environ.get(SKEW_FILE)
    if not path:
        return 0
    try:
        text = Path(path).read_text().strip()
    except OSError as exc:
        raise UsageError(f"{SKEW_FILE}={path}: {exc.strerror}") from None
    try:
        skew = int(text or "0")
    except ValueError:
        skew = None
    if skew is None or abs(skew) > SKEW_LIMIT:
        raise UsageError(f"{SKEW_FILE}={path}: expected the seconds to add to the clock (an "
                         f"integer, at most {SKEW_LIMIT} either way), found {text[:40]!r}")
    return skew
