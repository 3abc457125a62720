"""`zonebake deploy` to a server started with `--release PATH` (issue 18): a reload, not a
takeover started from the caller's session, so that under systemd the new process stays in
the unit (its cgroup, its journal, its MainPID).

PATH is ROOT/current/zonebake-server, `current` a symlink to ROOT/releases/<id> (docs/deploying.rst,
contrib/systemd/zonebake.service). The deploy copies the new build's server in as
releases/<id>, points `previous` at the release `current` pointed to (for a rollback), repoints
`current`, and reloads the server: `systemctl reload UNIT` when the server is its unit's
main process (and deploy runs as root), else SIGHUP. If no new server takes over, `current` goes back to the old
release, so that a restart does not start the one that failed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from ..errors import UsageError


def release_path(pid: int) -> Path | None:
    """The running server's --release PATH, if it was given one."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    for flag, value in zip(args, args[1:]):
        if flag == b"--release":
            return Path(os.fsdecode(value))
    return None


def _point(link: Path, target: str) -> None:
    """Repoint a symlink atomically (a new one renamed over it)."""
    new = link.with_name(link.name + ".new")
    new.unlink(missing_ok=True)
    new.symlink_to(target)
    os.replace(new, link)


def install(binary: Path, release: Path) -> tuple[Path, str]:
    """Copy the server in as a new release and make it `current`: the link and what it
    pointed to before."""
    current = release.parent
    if not current.is_symlink():
        raise UsageError(f"{current}: the server's --release {release} is not in a release "
                         f"directory that a symlink points to (ROOT/current -> "
                         f"releases/<id>: see contrib/systemd/zonebake.service)")
    root = current.parent
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()[:12]
    target = root / "releases" / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{digest}"
    target.mkdir(parents=True, exist_ok=True)
    partial = target / (release.name + ".partial")
    shutil.copy2(binary, partial)
    os.replace(partial, target / release.name)
    before = os.readlink(current)
    _point(root / "previous", before)
    _point(current, os.path.relpath(target, root))
    return current, before


def roll_back(current: Path, before: str) -> None:
    _point(current, before)


def _unit(pid: int) -> str | None:
    """The systemd service whose main process the server is, if it is one."""
    systemctl = shutil.which("systemctl")
    try:
        cgroup = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    units = [line.rsplit("/", 1)[-1] for line in cgroup if line.endswith(".service")]
    if not units or systemctl is None:
        return None
    main = subprocess.run([systemctl, "show", "-p", "MainPID", "--value", units[0]],
                          capture_output=True, text=True, timeout=10).stdout.strip()
    return units[0] if main == str(pid) else None


def reload(pid: int) -> str:
    """Reload the server; how it was done, for messages. Through systemd when the server is
    a unit's main process and we are root (systemctl would ask anyone else for a password);
    else SIGHUP, which is what the unit's ExecReload sends."""
    unit = _unit(pid) if os.geteuid() == 0 else None
    if unit is not None:
        subprocess.run(["systemctl", "reload", unit], check=True, capture_output=True,
                       timeout=30)
        return f"systemctl reload {unit}"
    os.kill(pid, signal.SIGHUP)
    return f"SIGHUP to pid {pid}"
