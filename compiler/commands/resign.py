"""`zonebake re-sign` (issue 41): what `zonebake follow` does for the signatures, once, for a set
built and deployed without it; a timer runs it (contrib/systemd/zonebake-resign.timer).

It asks the server at the control socket when each zone's first signature expires, and when a
re-sign is due (dnssec/resigning.py) builds the set into OUTDIR and deploys it as `zonebake
deploy` does; otherwise it says when the next one is due and changes nothing. Run it as
often as you like: only a due re-sign builds.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import clock
from ..build import Built, build
from ..config import ZoneSetConfig
from ..dnssec import resigning
from ..errors import UsageError
from .deploy import DeployError, Served, control_status, deploy


@dataclass(frozen=True)
class Outcome:
    """What `re-sign` did: the build when it made one (None: not due), and the re-sign due
    next, as the server serves the set now."""

    built: Built | None
    next: resigning.Due


def _due(config: ZoneSetConfig, control: Path) -> resigning.Due:
    served: dict[str, Served] = {}
    try:
        control_status(control, zones=served)
    except (OSError, KeyError, ValueError) as exc:
        raise DeployError(f"no server answers at {control}: {exc}") from None
    due = resigning.due(config, {origin: zone.expires for origin, zone in served.items()})
    assert due is not None  # the set signs a zone: checked before
    return due


def resign(config: ZoneSetConfig, outdir: Path, control: Path, server_args: list[str],
           log: Path | None, timeout: float, lenient: bool, say) -> Outcome:
    """Build and deploy the set when its signatures are due; `say` takes each line for the
    log. Raises UsageError, CompileError (the build's errors) and DeployError."""
    if not any(zone.dnssec for zone in config.zones):
        raise UsageError("no zone of the set is signed at build time (a dnssec table): "
                         "nothing to re-sign")
    due = _due(config, control)
    if due.at > clock.now():
        say(f"not due: {due.next()}")
        return Outcome(None, due)
    say(f"re-signing: {due.why()}")
    try:
        built = build(config, outdir, lenient)
    except (OSError, subprocess.SubprocessError) as exc:  # the compiler's; zone errors raise
        raise DeployError(f"the build failed: {exc}") from None
    old, new = deploy(outdir, control, server_args, log, timeout)
    say(f"deployed: pid {new} serves in place of pid {old}")
    after = _due(config, control)
    if after.at <= clock.now():
        raise DeployError(after.not_moved())
    say(after.next())
    return Outcome(built, after)
