"""`zonebake build --keep-going` (issue 18): a set with broken zones is still built. A hosting
provider's 10,000 customer zones should not stop serving because one customer's is broken.

A zone with errors is reported with them and left out, or, when the output directory holds
its last good copy, that copy is compiled instead, with a warning. The last good copy is the
zone's records as the core read them, before any signing, in the handover form
(compiler/core/read/records.c; positions kept, so that messages still name the file and line),
written by every --keep-going build that found the zone without errors, into
OUTDIR/last-good/, one file per origin.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from pathlib import Path
from typing import Callable

from .config import ZoneSetConfig, ZoneSource
from .errors import CompileError, Diagnostic, Position

LAST_GOOD = "last-good"

# The core's run: the set, the zones to compile from their last good copy, where to keep the
# records of those without errors (both by their number in the set).
Bake = Callable[[ZoneSetConfig, dict[int, Path], dict[int, Path]], object]


def last_good_path(outdir: Path, zone: ZoneSource) -> Path:
    name = hashlib.sha256(zone.origin_text.lower().encode()).hexdigest()[:24]
    return outdir / LAST_GOOD / f"{name}.records"


def _warning(zone: ZoneSource, message: str) -> Diagnostic:
    return Diagnostic(Position(zone.display, 0), "warning", message)


def build(config: ZoneSetConfig, outdir: Path, bake: Bake
          ) -> tuple[object, ZoneSetConfig, list[Diagnostic], set[str]]:
    """Bake the set, its broken zones left out or taken from their last good copy: the
    result, the set as compiled, what was reported of the broken zones (their errors, and
    a warning each saying what became of it) and their origins. CompileError when no zone is
    left."""
    (outdir / LAST_GOOD).mkdir(parents=True, exist_ok=True)
    from_copy: dict[str, Path] = {}  # by origin
    left_out: set[str] = set()
    reported: list[Diagnostic] = []
    while True:
        zones = tuple(z for z in config.zones if z.origin_text not in left_out)
        if not zones:
            raise CompileError(reported)
        current = dataclasses.replace(config, zones=zones)
        copies = {i: from_copy[z.origin_text] for i, z in enumerate(zones)
                  if z.origin_text in from_copy}
        keep = {i: last_good_path(outdir, z) for i, z in enumerate(zones) if i not in copies}
        try:
            return bake(current, copies, keep), current, reported, set(from_copy) | left_out
        except CompileError as exc:
            by_zone = getattr(exc, "by_zone", {})
            broken = [i for i in sorted(by_zone)
                      if any(d.severity == "error" for d in by_zone[i])]
            if not broken:
                raise
        for i in broken:
            zone = zones[i]
            reported += [d for d in by_zone[i] if d.severity == "error"]
            copy = last_good_path(outdir, zone)
            if zone.origin_text not in from_copy and copy.exists():
                from_copy[zone.origin_text] = copy
                when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(copy.stat().st_mtime))
                reported.append(_warning(zone, f"{zone.origin_text} has errors: its last good "
                                               f"copy, kept by the build of {when}, is "
                                               f"compiled instead"))
            else:
                left_out.add(zone.origin_text)
                reported.append(_warning(zone, f"{zone.origin_text} has errors and no last "
                                               f"good copy: left out of the set"))
