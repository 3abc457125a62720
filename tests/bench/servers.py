"""The servers the benchmark compares, each started from a generated configuration on a
loopback port with one worker on CPU 0, and stopped by process group. Every one serves the
same zone file."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import dns.message
import dns.query
import dns.rcode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared helpers
from knotd import knot_config  # noqa: E402

ORIGIN = "bench.example."


class BenchServer:
    name = "?"
    pinned = True  # started under taskset on CPU 0

    def __init__(self, workdir: Path, port: int):
        self.workdir = workdir / self.name
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = port
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> None:
        if self.answers():
            raise RuntimeError(f"port {self.port} already answers: a server left running?")
        log = open(self.workdir / "log", "w")
        pin = ["taskset", "-c", "0"] if self.pinned else []
        self.process = subprocess.Popen([*pin, *self.command()],
                                        stdout=log, stderr=log, start_new_session=True,
                                        cwd=self.workdir)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {(self.workdir / 'log').read_text()}")
            if self.answers():
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer in time")

    def answers(self) -> bool:
        query = dns.message.make_query("host1." + ORIGIN, "A", use_edns=False)
        try:
            response = dns.query.udp(query, "127.0.0.1", port=self.port, timeout=0.5)
        except Exception:
            return False
        return response.rcode() == dns.rcode.NOERROR and bool(response.answer)

    def cpu_times(self) -> tuple[float, float]:
        """User and system time, in seconds, of every process of the server's group (NSD
        forks)."""
        user = system = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == self.process.pid:  # field 5: the process group
                user += int(fields[11])  # utime
                system += int(fields[12])  # stime
        tick = os.sysconf("SC_CLK_TCK")
        return user / tick, system / tick

    def cpu_seconds(self) -> float:
        return sum(self.cpu_times())

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


class Zonebake(BenchServer):
    name = "zonebake"

    def __init__(self, workdir, port, binary: Path, threads: int = 1, pinned: bool = True,
                 extra: tuple[str, ...] = ()):
        self.binary, self.threads, self.pinned, self.extra = binary, threads, pinned, extra
        super().__init__(workdir, port)

    def command(self):
        command = [str(self.binary), "--listen", f"127.0.0.1:{self.port}", "--threads",
                   str(self.threads), *(["--allow-root"] if os.geteuid() == 0 else []),
                   *self.extra]
        return command + (["--cpu-affinity"] if self.pinned else [])


class Reflector(BenchServer):
    name = "reflector"

    def __init__(self, workdir, port, binary: Path):
        self.binary = binary
        super().__init__(workdir, port)

    def command(self):
        return [str(self.binary), "127.0.0.1", str(self.port), "64"]

    def answers(self) -> bool:
        """It echoes: the query comes back as it went."""
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(0.5)
            s.sendto(b"ping", ("127.0.0.1", self.port))
            try:
                return s.recv(16) == b"ping"
            except OSError:
                return False


class Peer(BenchServer):
    """A peer serving the benchmark's zone file."""

    def __init__(self, workdir, port, zone: Path):
        self.zone = zone
        super().__init__(workdir, port)


class Knot(Peer):
    name = "knot"

    def command(self):
        config = self.workdir / "knot.conf"
        config.write_text(knot_config(self.workdir, self.port, [(ORIGIN, self.zone)],
                                      "    udp-workers: 1\n    tcp-workers: 1\n"
                                      "    background-workers: 1\n"))
        return ["knotd", "-c", str(config)]


class Nsd(Peer):
    name = "nsd"

    def command(self):
        config = self.workdir / "nsd.conf"
        config.write_text(f"""server:
    ip-address: 127.0.0.1@{self.port}
    server-count: 1
    username: ""
    zonesdir: "{self.workdir}"
    database: ""
    pidfile: "{self.workdir / 'nsd.pid'}"
    xfrdfile: "{self.workdir / 'xfrd.state'}"
    zonelistfile: "{self.workdir / 'zone.list'}"
    logfile: "{self.workdir / 'nsd.log'}"
    verbosity: 0
    rrl-ratelimit: 0
    rrl-whitelist-ratelimit: 0
remote-control:
    control-enable: no
zone:
    name: {ORIGIN}
    zonefile: "{self.zone}"
""")
        return ["nsd", "-d", "-c", str(config)]


class Gdnsd(Peer):
    name = "gdnsd"

    def command(self):
        (self.workdir / "zones").mkdir(exist_ok=True)
        target = self.workdir / "zones" / ORIGIN.rstrip(".")
        if not target.exists():
            target.symlink_to(self.zone)
        (self.workdir / "config").write_text(f"""options => {{
  listen => [ 127.0.0.1 ]
  dns_port => {self.port}
  udp_threads => 1
  tcp_threads => 1
  run_dir => {self.workdir / 'run'}
  state_dir => {self.workdir / 'state'}
}}
""")
        return ["gdnsd", "-c", str(self.workdir), "-f", "start"]
