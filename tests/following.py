"""`zonebake follow --deploy` as the operations tests run it: a process logging to a file,
whose lines are waited for (the transfer tests, the re-signing tests)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import AS_ROOT, ROOT


class Follow:
    """`zonebake follow --deploy` for a zone set, logging to a file."""

    def __init__(self, config: Path, outdir: Path, log: Path,
                 env: dict[str, str] | None = None):
        """`env`: the environment, when not this one (ZONEBAKE_CLOCK_FILE, say)."""
        self.log = log
        with open(log, "ab") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "zonebake", "follow", "-c", str(config), "-o",
                 str(outdir), "--listen", "127.0.0.1:0", "--deploy", "--log",
                 str(log.with_name("servers.log")), "--", "--threads", "1", *AS_ROOT],
                stderr=output, cwd=ROOT, env=env)
        listening = self.wait_for(r"^info: listening for NOTIFY on 127\.0\.0\.1:\d+ "
                                  r"\(udp, tcp\)$")
        self.port = int(re.search(r":(\d+) ", listening).group(1))

    def lines(self) -> list[str]:
        prefix = re.compile(rf"^\S+ zonebake-follow\[{self.process.pid}\]: ")
        return [prefix.sub("", line) for line in self.log.read_text().splitlines()
                if prefix.match(line)]

    def wait_for(self, pattern: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()
            for line in self.lines():
                if re.search(pattern, line):
                    return line
            time.sleep(0.05)
        raise AssertionError(f"follow never logged {pattern!r}: {self.log.read_text()}")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)
