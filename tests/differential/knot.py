"""Knot DNS (knotd, Debian package `knot`) serving a zone set on a loopback port: the oracle of
the differential tests. Started from a generated configuration, stopped by PID."""

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

from conftest import stop_process
from knotconf import knot_config


def knotd_path() -> str | None:
    return shutil.which("knotd") or (os.path.exists("/usr/sbin/knotd") and "/usr/sbin/knotd"
                                     or None)


def require_knotd() -> str:
    """CI installs knot (see .ci/run) and must run these tests; elsewhere say what is missing."""
    path = knotd_path()
    if path:
        return path
    if os.environ.get("CI"):
        pytest.fail("knotd is missing: the differential tests need Debian's `knot` package")
    pytest.skip("knotd is not installed (apt-get install knot): differential tests not run")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Knot:
    def __init__(self, zones: list[tuple[str, Path]], workdir: Path):
        knotd = require_knotd()
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        config = workdir / "knot.conf"
        config.write_text(knot_config(workdir, self.port, zones))
        self.log = open(workdir / "knotd.log", "w")
        self.process = subprocess.Popen([knotd, "-c", str(config)], stdout=self.log,
                                        stderr=subprocess.STDOUT)
        self._wait_until_serving([origin for origin, _ in zones])

    def _wait_until_serving(self, origins: list[str]) -> None:
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
        if pending:
            self.stop()
            raise AssertionError(f"knotd did not serve {pending}: "
                                 f"{(Path(self.log.name)).read_text()}")

    def query(self, message: dns.message.Message) -> dns.message.Message:
        return dns.query.udp(message, "127.0.0.1", port=self.port, timeout=2)

    def stop(self) -> None:
        stop_process(self.process)
        self.log.close()
