"""Knot DNS's daemon (knotd, Debian package `knot`) as the tests, the benchmark and the scale
report run it: the configuration (everything in one work directory, zones loaded whole from
their files and never written back, semantic checks off: the zones under test are checked by
zonebake itself), and a knotd serving a zone set on a loopback port, stopped by PID (the
differential tests' oracle, the transfer tests' primary)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import dns.message
import dns.query
import dns.rcode
import pytest


def knotd_path() -> str | None:
    return shutil.which("knotd") or (os.path.exists("/usr/sbin/knotd") and "/usr/sbin/knotd"
                                     or None)


def require_knotd() -> str:
    """CI installs knot (see .ci/run) and must run these tests; elsewhere say what is missing."""
    path = knotd_path()
    if path:
        return path
    if os.environ.get("CI"):
        pytest.fail("knotd is missing: the tests with Knot need Debian's `knot` package")
    pytest.skip("knotd is not installed (apt-get install knot): tests with Knot not run")


def free_port() -> int:
    """A loopback port free for UDP and TCP just now (knotd binds both)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
                socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
            udp.bind(("127.0.0.1", 0))
            try:
                tcp.bind(("127.0.0.1", udp.getsockname()[1]))
            except OSError:
                continue
            return udp.getsockname()[1]


def knot_config(workdir: Path, port: int, zones: list[tuple[str, Path]],
                server_extra: str = "", template_extra: str = "",
                zone_extra: dict[str, str] | None = None) -> str:
    """`server_extra` goes at the end of the server section (a line without indentation
    there starts sections of its own: key, acl, remote); `zone_extra` gives lines of a
    zone's own settings, by origin."""
    zone_extra = zone_extra or {}
    zone_lines = "".join(f'  - domain: "{origin}"\n    file: "{Path(path).resolve()}"\n'
                         f'{zone_extra.get(origin, "")}' for origin, path in zones)
    return f"""server:
    rundir: "{workdir}"
    listen: 127.0.0.1@{port}
{server_extra}log:
  - target: stderr
    any: error
database:
    storage: "{workdir / 'db'}"
template:
  - id: default
    zonefile-load: whole
    zonefile-sync: -1
    journal-content: none
    semantic-checks: off
{template_extra}zone:
{zone_lines}"""


class Knot:
    """`extra`: knot_config's server_extra, template_extra and zone_extra."""

    def __init__(self, zones: list[tuple[str, Path]], workdir: Path, **extra):
        knotd = require_knotd()
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        config = workdir / "knot.conf"
        for _ in range(5):
            # Another process may take the port between free_port and knotd's bind: knotd
            # then exits at once, and is started again on another port.
            self.port = free_port()
            config.write_text(knot_config(workdir, self.port, zones, **extra))
            self.log = open(workdir / "knotd.log", "w")
            self.process = subprocess.Popen([knotd, "-c", str(config)], stdout=self.log,
                                            stderr=subprocess.STDOUT)
            if self._wait_until_serving([origin for origin, _ in zones]):
                return
        raise AssertionError(f"knotd found no free port: {(workdir / 'knotd.log').read_text()}")

    def _wait_until_serving(self, origins: list[str]) -> bool:
        """False when knotd exited because its port was taken."""
        deadline = time.monotonic() + 15
        pending = list(origins)
        while pending and time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                response = self.query(dns.message.make_query(pending[0], "SOA", use_edns=False))
                if response.rcode() == dns.rcode.NOERROR and response.answer:
                    pending.pop(0)
                    continue
            except Exception:
                pass
            time.sleep(0.05)
        if not pending:
            return True
        exited = self.process.poll() is not None
        self.stop()
        log = Path(self.log.name).read_text()
        if exited and "address already in use" in log:
            return False
        raise AssertionError(f"knotd did not serve {pending}: {log}")

    def query(self, message: dns.message.Message) -> dns.message.Message:
        return dns.query.udp(message, "127.0.0.1", port=self.port, timeout=2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
