"""What asking the primaries gave (transfer.py), apart from the asking: every build has one,
and one whose zones name no primary needs neither dnspython's messages nor its queries, which
a build of such a set would otherwise import for nothing."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection

from .config import ZoneSetConfig
from .errors import Diagnostic


@dataclass(frozen=True)
class Soa:
    serial: int
    refresh: int  # seconds until a secondary asks again (RFC 1035 §3.3.13)
    retry: int  # seconds until it asks again after a failure


@dataclass
class Refreshed:
    """What asking the primaries gave: the set to compile (transferred zones' files staged),
    the staged files with where each goes once built, warnings, and each asked zone's SOA
    timers (for `zonebake follow`; None when its primary failed)."""

    config: ZoneSetConfig
    staged: dict[str, tuple[Path, Path]] = field(default_factory=dict)  # origin: (staged, file)
    warnings: list[Diagnostic] = field(default_factory=list)
    timers: dict[str, Soa | None] = field(default_factory=dict)

    def commit(self, broken: Collection[str] = ()) -> None:
        """The build succeeded: each staged transfer becomes its zone's file, but for the zones
        the build left out or compiled from an older copy (--keep-going)."""
        for origin, (staged, final) in self.staged.items():
            if origin not in broken:
                os.replace(staged, final)
