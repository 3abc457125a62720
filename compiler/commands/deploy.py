"""`zonebake deploy`: swap a newly built server in for the running one without losing a query.

It starts OUTDIR/zonebake-server --takeover PATH --control PATH [SERVER_ARGS], detached (a
session of its own, stdin from /dev/null, stdout and stderr to --log or inherited), and waits
until that process answers on the control socket PATH. It does so only once the old server
has handed over every listening socket, stopped reading and finished: the swap is complete.
If the new server exits first, or does not get there in time, the old one is still serving
(a takeover that breaks leaves it so) and deploy says why and exits 1.

A server started with --release PATH is reloaded instead (releases.py): the build becomes a
new release, PATH's `current` symlink is repointed, and the server starts it itself.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from . import delta, releases

PROTOCOL = "zonebake-control 1"


class DeployError(Exception):
    """The swap did not happen; the message says why."""


def _read_line(conn: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(1)
        if not chunk:
            raise OSError("the server closed the connection")
        data += chunk
    return data[:-1].decode()


@dataclass(frozen=True)
class Served:
    """A zone as a server serves it: its SOA serial and, signed, when its first signature
    expires (seconds since 1970; None: not signed)."""

    serial: int
    expires: int | None = None


def served_zone(words: list[str]) -> tuple[str, Served]:
    """`ORIGIN serial N [expires T]` (a line of --version, or of status after `zone`): the
    origin, lowercased, and what is served."""
    origin, fields = words[0], dict(zip(words[1::2], words[2::2]))
    expires = fields.get("expires")
    return origin.lower(), Served(int(fields["serial"]),
                                  int(expires) if expires is not None else None)


def built_zones(binary: Path) -> dict[str, Served]:
    """What a built server serves, by origin: its `--version` lines after the first."""
    lines = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                           timeout=30, check=True).stdout.splitlines()[1:]
    return dict(served_zone(line.split()) for line in lines)


def control_status(path: Path, timeout: float = 2.0, zones: dict[str, Served] | None = None
                   ) -> dict[str, int]:
    """Ask the server at control socket `path` for its status: pid, workers, sockets, zones
    (how many); with `zones`, fill it with each zone served, by origin."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(str(path))
        conn.sendall(f"{PROTOCOL}\nstatus\n".encode())
        greeting = _read_line(conn)
        if greeting != f"ok {PROTOCOL}":
            raise OSError(f"it answers {greeting!r} to {PROTOCOL!r}")
        reply = _read_line(conn).split()
        if reply[:1] != ["ok"]:
            raise OSError(f"it answers {' '.join(reply)!r} to status")
        status = {key: int(value) for key, value in (field.split("=") for field in reply[1:])}
        for _ in range(status["zones"] if zones is not None else 0):
            origin, served = served_zone(_read_line(conn).split()[1:])  # after `zone`
            zones[origin] = served
        return status


def _tail(log: Path | None, lines: int = 5) -> str:
    if log is None:
        return ""
    try:
        text = log.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    return "".join(f"\n  {line}" for line in text)


def deploy(outdir: Path, control: Path, server_args: list[str], log: Path | None,
           timeout: float, patch: Path | None = None, sha256: str | None = None
           ) -> tuple[int, int]:
    """Swap OUTDIR/zonebake-server in; returns (old pid, new pid). With `patch`, that server
    is first made from the running one's binary and the delta (delta.py); with `sha256`,
    it is swapped in only when that is its SHA-256."""
    binary = outdir / "zonebake-server"
    if patch is not None and sha256 is None:
        raise UsageError("--patch needs --sha256: the hash of the build it was made for, "
                         "which zonebake delta prints")
    if patch is None and not os.access(binary, os.X_OK):
        raise UsageError(f"{binary}: not an executable (build it with zonebake build -o {outdir})")
    try:
        old = control_status(control)["pid"]
    except (OSError, KeyError, ValueError) as exc:
        raise DeployError(f"no server answers at {control}: {exc}") from None
    try:
        if patch is not None:
            outdir.mkdir(parents=True, exist_ok=True)
            delta.apply(delta.running_binary(old), patch, binary, sha256)
        elif sha256 is not None:
            delta.check(binary, sha256, str(binary))
    except delta.Mismatch as exc:
        raise DeployError(f"{exc}; not deployed, pid {old} still serves") from None
    release = releases.release_path(old)
    if release is not None:
        if server_args:
            raise UsageError(f"pid {old} was started with --release {release}: it reloads "
                             f"with its own options, so options after -- are not used")
        return old, _reload(binary, release, old, control, timeout)
    output = open(log, "ab") if log else None
    try:
        process = subprocess.Popen(
            [str(binary), "--takeover", str(control), "--control", str(control), *server_args],
            stdin=subprocess.DEVNULL, stdout=output, stderr=output, start_new_session=True)
    finally:
        if output:
            output.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = process.poll()
        if status is not None:
            raise DeployError(f"the new server exited with status {status}; pid {old} still "
                              f"serves{_tail(log)}")
        try:
            if control_status(control, timeout=0.5)["pid"] == process.pid:
                return old, process.pid
        except (OSError, KeyError, ValueError):
            pass  # the old server has closed its control socket; the new one not yet renamed
        time.sleep(0.02)
    if _gone(old):
        # The old server handed over and stopped, but the new one is not at PATH (it could not
        # rename its control socket there, say): it is the only one serving. Leave it.
        raise DeployError(f"pid {old} has stopped and the new server (pid {process.pid}) "
                          f"serves, but not on the control socket {control}: see its log"
                          f"{_tail(log)}")
    process.terminate()
    process.wait()
    raise DeployError(f"the new server (pid {process.pid}) had not taken over after {timeout} s; "
                      f"stopped it; pid {old} still serves{_tail(log)}")


def _reload(binary: Path, release: Path, old: int, control: Path, timeout: float) -> int:
    """Install the build as the current release and reload the server; the new pid."""
    current, before = releases.install(binary, release)
    try:
        how = releases.reload(old)
    except (OSError, subprocess.SubprocessError) as exc:
        releases.roll_back(current, before)
        raise DeployError(f"cannot reload pid {old}: {exc}; {current} points to {before} "
                          f"again") from None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            new = control_status(control, timeout=0.5)["pid"]
            if new != old and _gone(old):
                return new
        except (OSError, KeyError, ValueError):
            pass  # between the two servers' control sockets
        time.sleep(0.02)
    releases.roll_back(current, before)
    raise DeployError(f"no new server took over from pid {old} within {timeout} s of {how} "
                      f"(see its log); {current} points to {before} again")


def _gone(pid: int) -> bool:
    """Whether a process has ended (a zombie has: its parent has not reaped it yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")
