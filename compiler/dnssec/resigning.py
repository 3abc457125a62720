"""When a set signed at build time must be built again (issue 41): its signatures are valid for
`signature-validity` from the build, and a zone served after they expire is bogus at every
validating resolver (RFC 4035 §5.3.1). Nothing but a build makes new ones.

A re-sign is due when a build would sign again the first signature to expire among those
served, instead of reusing it from the signature cache: signing.resign_at, the cache's own
rule (three quarters of the validity left), so that the build that is due does move the
expiration, and a served signature never has less than three quarters of its validity left
while re-signing works. `zonebake follow` (commands/follow.py) and `zonebake re-sign`
(commands/resign.py, run by a timer) ask this module; the server only reports its expiries.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Mapping

from ..config import ZoneSetConfig
from . import signing


def date(at: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


@dataclass(frozen=True)
class Due:
    """The set's next re-sign: when (seconds since 1970), and the zone that makes it due."""

    at: int
    origin: str
    expires: int | None  # when that zone's first signature expires; None: served unsigned

    def why(self) -> str:
        """Why a build is due, for the log."""
        if self.expires is None:
            return f"{self.origin} is signed at build time but not served signed"
        return (f"{self.origin}'s first signature expires at {date(self.expires)}; a build "
                f"signs it again from {date(self.at)}")

    def not_moved(self) -> str:
        """A build that should have re-signed did not move this: why, for an error."""
        fixed = " (SOURCE_DATE_EPOCH fixes the signing time)" \
            if os.environ.get("SOURCE_DATE_EPOCH") else ""
        return f"the build did not re-sign: {self.why()}{fixed}"

    def next(self) -> str:
        """When the next build is due, for the log."""
        return (f"next re-sign at {date(self.at)}: {self.origin}'s first signature expires "
                f"at {date(self.expires or 0)}")


def due(config: ZoneSetConfig, expiries: Mapping[str, int | None]) -> Due | None:
    """The first re-sign of the zones the set signs at build time, given when each one's first
    signature expires as served (by lowercased origin; a zone missing, or None, is served
    without signatures: due at once). None when the set signs no zone."""
    first = None
    for zone in config.zones:
        if zone.dnssec is None:
            continue
        expires = expiries.get(zone.origin_text.lower())
        at = 0 if expires is None else signing.resign_at(expires,
                                                          zone.dnssec.signature_validity)
        if first is None or at < first.at:
            first = Due(at, zone.origin_text, expires)
    return first
