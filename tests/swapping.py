"""Helpers of the swap tests: zone sets that differ in one address, servers started with a
control socket and logging to a file (deployed servers are not our children: the log and
the control socket are how they are seen), and the load generator."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import dns.message
import dns.query

from conftest import AS_ROOT, LISTENING, LOG_LINE, TESTS, build_set, run_zonebake

from zonebake.commands.deploy import control_status

SWAP_ZONE = """\
$ORIGIN swap.test.
$TTL 300
@   IN SOA ns.swap.test. admin.swap.test. {octet} 3600 600 86400 300
@   IN NS  ns
ns  IN A   192.0.2.53
v   IN A   192.0.2.{octet}
"""
QNAME = "v.swap.test."


def build_swap_set(outdir: Path, octet: int) -> Path:
    """A zone set whose v.swap.test. A is 192.0.2.<octet>: which set answered is visible."""
    outdir.mkdir(parents=True)
    zone = outdir / "swap.test.zone"
    zone.write_text(SWAP_ZONE.format(octet=octet))
    build_set(outdir, "--zone", f"swap.test.={zone}")
    return outdir


def build_loadgen(outdir: Path) -> Path:
    binary = outdir / "loadgen"
    subprocess.run(["cc", "-O2", "-o", str(binary), str(TESTS / "bench" / "loadgen.c")],
                   check=True)
    return binary


def log_lines(log: Path, pid: int) -> list[str]:
    """The messages process `pid` has logged."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return [m.group(2) for m in map(LOG_LINE.match, lines) if m and int(m.group(1)) == pid]


def wait_for_log(log: Path, pid: int, pattern: str, timeout: float = 10) -> re.Match:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in log_lines(log, pid):
            if match := re.search(pattern, line):
                return match
        time.sleep(0.02)
    raise AssertionError(f"pid {pid} did not log {pattern!r}: {log_lines(log, pid)}")


def gone(pid: int) -> bool:
    """No such process, or a zombie: a deployed server's parent (deploy) has exited."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in "ZX"


def wait_gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return gone(pid)


def stop_pid(pid: int) -> None:
    """SIGTERM by pid, then SIGKILL if it does not go."""
    if not gone(pid):
        os.kill(pid, signal.SIGTERM)
        if not wait_gone(pid):
            os.kill(pid, signal.SIGKILL)
            wait_gone(pid)


class ControlledServer:
    """A server on an ephemeral loopback port with a control socket, logging to `log`."""

    def __init__(self, outdir: Path, control: Path, log: Path, *args: str, threads: int = 2,
                 listen: str = "127.0.0.1:0"):
        with open(log, "ab") as output:
            self.process = subprocess.Popen(
                [str(outdir / "zonebake-server"), "--listen", listen, "--control",
                 str(control), "--threads", str(threads), *AS_ROOT, *args], stderr=output)
        self.control, self.log = control, log
        match = wait_for_log(log, self.process.pid, LISTENING.pattern)
        self.port = int(match.group(2))

    def serving_pid(self) -> int:
        return control_status(self.control)["pid"]

    def stop_all(self) -> None:
        """Stop whichever process serves now, and the first one."""
        try:
            stop_pid(self.serving_pid())
        except OSError:
            pass
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=10)


def deploy(outdir: Path, control: Path, log: Path, *server_args: str,
           threads: int = 2) -> subprocess.CompletedProcess:
    return run_zonebake("deploy", str(outdir), "--control", str(control), "--log", str(log),
                        "--", "--threads", str(threads), *AS_ROOT, *server_args)


def udp_drops(port: int) -> tuple[int, int]:
    """Datagrams the kernel dropped because a receive buffer was full (/proc/net/udp's last
    column): on the server's sockets (local port `port`; the same sockets across swaps), and
    on the load generator's (connected to it). A loss these do not explain is the server's."""
    server = client = 0
    for line in Path("/proc/net/udp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, drops = fields[1], fields[2], int(fields[-1])
        if int(local.split(":")[1], 16) == port:
            server += drops
        elif int(remote.split(":")[1], 16) == port:
            client += drops
    return server, client


def answer_octet(port: int, host: str = "127.0.0.1", tcp: bool = False) -> int:
    """The last octet of v.swap.test.'s address, as the server on `port` answers it."""
    ask = dns.query.tcp if tcp else dns.query.udp
    response = ask(dns.message.make_query(QNAME, "A", use_edns=False), host, port=port,
                   timeout=2)
    (rrset,) = response.answer
    (rdata,) = rrset
    return int(rdata.address.rsplit(".", 1)[1])
