"""`zonebake follow` (issue 18): a secondary's loop around zonebake build.

It listens for NOTIFY messages (RFC 1996; UDP and TCP, on --listen) and answers them (notify.py). An
accepted one, or a zone's SOA refresh timer (RFC 1035 §3.3.13; the retry timer after a
failure), makes it ask that zone's primary for its serial; when one is newer the zone is
transferred and the set built (transfer.py, build.py), and with --deploy the server at the
control socket gets the build, when it serves other serials than the build has. It starts
with one such round for every zone, so that a server behind the primaries catches up.

A set with zones signed at build time is also built again, and deployed, when a build would
re-sign the first of the signatures served (dnssec/resigning.py), primaries or not: a timer
of the loop, on the clock the signatures are made by (clock.py). Each build says when the
next re-sign is due.

NOTIFY messages go on being answered while a build runs: the listening threads only answer
and queue; the main thread asks, builds and deploys, one round at a time.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from .. import clock, transfer
from ..build import build
from ..config import ZoneSetConfig, parse_listen
from ..dnssec import resigning
from ..dnssec.resigning import date
from ..errors import CompileError, UsageError
from .deploy import DeployError, Served, built_zones, control_status, deploy
from .notify import Notifies

DEFAULT_RETRY = 300  # seconds, when a zone's file has no SOA to say (its primary failed)
DEPLOY_RETRY = 10  # seconds between tries to reach a server that did not take a build
# Seconds until a re-sign that failed, or did not move the expiry, is tried again: a re-sign
# is due with three quarters of the validity (a day at least) left, so there is time.
RESIGN_RETRY = 600
TCP_CONNECTIONS = 16  # at once; a primary opens one for each NOTIFY
TCP_IDLE = 10  # seconds a TCP connection may stay silent (RFC 7766 §6.2.3)


# syslog priorities (RFC 5424 §6.2.1), for the journal
PRIORITIES = {"error": 3, "warning": 4, "info": 6}


def _to_journal() -> bool:
    """Whether stderr is the journal: $JOURNAL_STREAM names its device and inode
    (systemd.exec(5)), as the server checks (runtime/ops/log.c)."""
    device, _, inode = os.environ.get("JOURNAL_STREAM", "").partition(":")
    try:
        st = os.fstat(sys.stderr.fileno())
        return (st.st_dev, st.st_ino) == (int(device), int(inode))
    except (OSError, ValueError):
        return False


JOURNAL = _to_journal()


def _say(severity: str, text: str) -> None:
    """One line on stderr: time, program and pid, severity, text; or, to the journal, the
    syslog priority and the text (journald adds the rest)."""
    if JOURNAL:
        line = f"<{PRIORITIES[severity]}>{severity}: {text}"
    else:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = f"{stamp} zonebake-follow[{os.getpid()}]: {severity}: {text}"
    print(line, file=sys.stderr, flush=True)


@dataclasses.dataclass
class Deploying:
    control: Path
    server_args: list[str]
    log: Path | None
    timeout: float


class Follower:
    def __init__(self, config: ZoneSetConfig, outdir: Path, lenient: bool, keep_going: bool,
                 deploying: Deploying | None):
        self.config = config
        self.outdir = outdir
        self.lenient = lenient
        self.keep_going = keep_going
        self.deploying = deploying
        self.notified: queue.Queue[str] = queue.Queue()
        self.stopping = threading.Event()
        now = time.monotonic()
        self.due = {z.origin_text: now for z in config.zones if z.primary is not None}
        self.retry = dict.fromkeys(self.due, DEFAULT_RETRY)
        self.first = True  # the first round builds whatever it transfers
        self.deploy_due: float | None = None
        self.signs = any(zone.dnssec for zone in config.zones)
        # When (clock.py's seconds) to build again for the signatures, and why; None: not
        # known until a build is served.
        self.resign_at: int | None = None
        self.resign: resigning.Due | None = None

    def listen(self, sock: socket.socket, rules: Notifies) -> None:
        """A listening thread on a UDP socket: answer each NOTIFY, queue the zones to ask
        about."""
        while not self.stopping.is_set():
            try:
                wire, peer = sock.recvfrom(65535)
            except OSError:
                return  # closed at the end
            reply = self._take(wire, peer, rules)
            if reply is not None:
                try:
                    sock.sendto(reply, peer)
                except OSError as exc:
                    _say("warning", f"cannot answer {peer[0]}#{peer[1]}: {exc.strerror}")

    def accept(self, sock: socket.socket, rules: Notifies) -> None:
        """A listening thread on a TCP socket (knotd sends NOTIFY over TCP): a thread for each
        connection, as many as TCP_CONNECTIONS at once."""
        slots = threading.BoundedSemaphore(TCP_CONNECTIONS)
        while not self.stopping.is_set():
            try:
                conn, peer = sock.accept()
            except OSError:
                return
            if not slots.acquire(blocking=False):
                conn.close()
                continue
            threading.Thread(target=self._connection, args=(conn, peer, rules, slots),
                             daemon=True).start()

    def _connection(self, conn: socket.socket, peer, rules: Notifies,
                    slots: threading.BoundedSemaphore) -> None:
        """Messages framed with their length (RFC 1035 §4.2.2) until the peer closes or is
        silent for TCP_IDLE seconds."""
        try:
            with conn:
                conn.settimeout(TCP_IDLE)
                while True:
                    size = _read_exactly(conn, 2)
                    if size is None:
                        return
                    wire = _read_exactly(conn, int.from_bytes(size, "big"))
                    if wire is None:
                        return
                    reply = self._take(wire, peer, rules)
                    if reply is not None:
                        conn.sendall(len(reply).to_bytes(2, "big") + reply)
        except OSError:
            return
        finally:
            slots.release()

    def _take(self, wire: bytes, peer, rules: Notifies) -> bytes | None:
        verdict = rules.answer(wire, f"{peer[0]}#{peer[1]}")
        _say("info" if verdict.zone else "warning", verdict.says)
        if verdict.zone is not None:
            self.notified.put(verdict.zone.origin_text)
        return verdict.reply

    def run(self) -> None:
        while not self.stopping.is_set():
            now = time.monotonic()
            wanted = {origin for origin, due in self.due.items() if due <= now}
            while True:
                try:
                    wanted.add(self.notified.get_nowait())
                except queue.Empty:
                    break
            resign = self._resign_due()
            if wanted or self.first or resign:
                self._round(wanted, resign)
                self.first = False
            if self.deploying and self.deploy_due is not None \
                    and self.deploy_due <= time.monotonic():
                self._deploy()
            wakes = list(self.due.values()) + ([self.deploy_due] if self.deploy_due else [])
            # At most a second: a SIGTERM sets `stopping` only (a handler must not take the
            # queue's lock, which the interrupted wait may hold). The re-sign time is looked
            # at on the same tick: it is on clock.py's clock, which need not run as the
            # monotonic one does.
            wait = min(1.0, max(0.0, min(wakes) - time.monotonic())) if wakes else 1.0
            try:
                self.notified.put(self.notified.get(timeout=wait))  # for the next round
            except queue.Empty:
                continue

    def _resign_due(self) -> bool:
        """Whether the signatures are due to be made again: not while a build waits for
        the server (its deploy is tried again first)."""
        return self.resign_at is not None and self.deploy_due is None \
            and clock.now() >= self.resign_at

    def _round(self, wanted: set[str], resign: bool = False) -> None:
        fetched = transfer.refresh(self.config, wanted)
        for warning in fetched.warnings:
            _say("warning", warning.message)
        for origin in wanted:
            soa = fetched.timers.get(origin)
            if soa is not None:
                self.retry[origin] = soa.retry
            interval = soa.refresh if soa is not None else self.retry[origin]
            self.due[origin] = time.monotonic() + max(1, interval)
        for origin in fetched.staged:
            _say("info", f"{origin} transferred, serial {fetched.timers[origin].serial}")
        if not self.first and not fetched.staged and not resign:
            return
        if resign:
            _say("info", f"re-signing: {self.resign.why()}" if self.resign else
                 "re-signing: the last build failed")
        said = set(fetched.warnings)
        try:
            built = build(self.config, self.outdir, self.lenient, keep_going=self.keep_going,
                          fetched=fetched)
        except CompileError as exc:
            for diagnostic in exc.diagnostics:
                if diagnostic not in said:
                    _say(diagnostic.severity, f"{diagnostic.position}: {diagnostic.message}")
            _say("error", f"the build failed; {self.outdir} keeps the last build")
            self._resign_later(resign)
            return
        except (UsageError, OSError, subprocess.SubprocessError) as exc:
            _say("error", f"the build failed: {exc}")
            self._resign_later(resign)
            return
        for diagnostic in built.broken + built.warnings:
            if diagnostic not in said:
                _say(diagnostic.severity, f"{diagnostic.position}: {diagnostic.message}")
        _say("info", f"built {self.outdir / 'zonebake-server'}")
        if self.deploying:
            self._deploy()
        elif self.signs:
            try:  # served by whoever deploys it: the build is what counts
                self._schedule(built_zones(self.outdir / "zonebake-server"))
            except (OSError, KeyError, ValueError, subprocess.SubprocessError) as exc:
                _say("error", f"cannot read what {self.outdir / 'zonebake-server'} serves: "
                              f"{exc}")
                self._resign_later(True)

    def _schedule(self, served: dict[str, Served]) -> None:
        """The next re-sign, from the zones served now; said in the log."""
        due = resigning.due(self.config, {origin: zone.expires
                                          for origin, zone in served.items()})
        self.resign = due
        if due is None:
            self.resign_at = None
        elif due.at > clock.now():
            self.resign_at = due.at
            _say("info", due.next())
        else:
            # The build did not move it: a fixed SOURCE_DATE_EPOCH, or the zone left out by
            # --keep-going. Building again at once would loop.
            _say("error", due.not_moved())
            self._resign_later(True)

    def _resign_later(self, resign: bool) -> None:
        """A build failed: a failed re-sign is tried again RESIGN_RETRY later, as is a first
        build (what the server serves is not known then)."""
        if self.signs and (resign or self.resign_at is None):
            self.resign_at = clock.now() + RESIGN_RETRY
            _say("error", f"re-signing again at {date(self.resign_at)}")

    def _deploy(self) -> None:
        """Hand the build to the server unless it serves the same zones already: the same
        serials and, signed, the same signatures' expiry (a re-signed build keeps its
        serials)."""
        deploying = self.deploying
        self.deploy_due = time.monotonic() + DEPLOY_RETRY
        try:
            wanted = built_zones(self.outdir / "zonebake-server")
            served: dict[str, Served] = {}
            control_status(deploying.control, zones=served)
        except (OSError, KeyError, ValueError, subprocess.SubprocessError) as exc:
            _say("error", f"no server to deploy to at {deploying.control}: {exc}; trying again "
                          f"in {DEPLOY_RETRY} s")
            return
        if served == wanted:
            self.deploy_due = None
            self._schedule(served)
            return
        try:
            old, new = deploy(self.outdir, deploying.control, deploying.server_args,
                              deploying.log, deploying.timeout)
        except (DeployError, UsageError) as exc:
            _say("error", f"deploy failed: {exc}; trying again in {DEPLOY_RETRY} s")
            return
        self.deploy_due = None
        changed = ", ".join(_change(origin, zone, served.get(origin))
                            for origin, zone in sorted(wanted.items())
                            if served.get(origin) != zone)
        _say("info", f"deployed: pid {new} serves in place of pid {old} ({changed})")
        self._schedule(wanted)


def _change(origin: str, zone: Served, before: Served | None) -> str:
    """A zone a deploy changes: its serial, and when re-signed, its signatures' new expiry
    (a re-signed zone keeps its serial)."""
    if zone.expires is None or (before is not None and before.expires == zone.expires):
        return f"{origin} {zone.serial}"
    return f"{origin} {zone.serial} signed until {date(zone.expires)}"


def _read_exactly(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _bind(address: str) -> tuple[socket.socket, socket.socket]:
    """A UDP and a TCP socket on `address`, on one port (for port 0 one that is free for
    both: the UDP socket's, tried again when TCP has it in use)."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for _ in range(20 if int(port) == 0 else 1):
        udp = socket.socket(family, socket.SOCK_DGRAM)
        tcp = socket.socket(family, socket.SOCK_STREAM)
        try:
            udp.bind((host, int(port)))
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            tcp.bind((host, udp.getsockname()[1]))
            tcp.listen(TCP_CONNECTIONS)
            return udp, tcp
        except OSError as exc:
            udp.close()
            tcp.close()
            failure = exc
    raise UsageError(f"cannot listen on {address}: {failure.strerror}")


def follow(config: ZoneSetConfig, outdir: Path, listen: list[str], lenient: bool,
           keep_going: bool, deploying: Deploying | None) -> None:
    """Run until SIGTERM or SIGINT."""
    if not any(zone.primary for zone in config.zones):
        raise UsageError("no zone of the set has a primary to follow")
    pairs = [_bind(parse_listen(address, "--listen")) for address in listen]
    follower = Follower(config, outdir, lenient, keep_going, deploying)

    def stop(signum, _frame):
        follower.stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    rules = Notifies(config)
    for udp, tcp in pairs:
        threading.Thread(target=follower.listen, args=(udp, rules), daemon=True).start()
        threading.Thread(target=follower.accept, args=(tcp, rules), daemon=True).start()
        host, port = udp.getsockname()[:2]
        _say("info", f"listening for NOTIFY on {f'[{host}]' if ':' in host else host}:{port} "
                     f"(udp, tcp)")
    try:
        follower.run()
    finally:
        for udp, tcp in pairs:
            udp.close()
            tcp.close()
    _say("info", "stopped")
