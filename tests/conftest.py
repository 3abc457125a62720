"""Shared fixtures: build a zone set with the real CLI, run the binary on an ephemeral
loopback port, and query it."""

from __future__ import annotations

import os
import re
import select
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import dns.message
import dns.name
import dns.query
import pytest

TESTS = Path(__file__).parent
ROOT = TESTS.parent
ZONES = TESTS / "zones"
# tests/scale/gen.py makes the hosting zones the scale report and several tests use.
sys.path.insert(0, str(TESTS / "scale"))
# Every line the server logs: an ISO-8601 UTC time stamp, the program's name and pid, the
# severity, the message. Group 2 is the message, after "info: " (warnings and errors keep
# theirs: "warning: ...", "error: ..."); a line without a severity does not match.
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ zonebake-server\[(\d+)\]: "
                      r"(?:info: |(?=warning: |error: ))(.*)$")
LISTENING = re.compile(r"serving .* on \[?([^\s\]]+?)\]?:(\d+) \(udp, tcp\)")
# The server refuses to go on as root without a user to become; the tests run as whoever
# runs them (root in CI), and say so.
AS_ROOT = ["--allow-root"] if os.geteuid() == 0 else []


# A harness in tests/c: warnings are errors, the responder's and the core's headers in reach.
HARNESS_CFLAGS = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'runtime'}",
                  f"-I{ROOT / 'compiler' / 'core'}"]


def c_harness(tmp_path_factory, name: str, *sources: Path) -> Path:
    """tests/c/NAME.c compiled with SOURCES (of the responder or the core) into a program."""
    path = tmp_path_factory.mktemp(name) / name
    subprocess.run(["cc", *HARNESS_CFLAGS, str(TESTS / "c" / f"{name}.c"),
                    *map(str, sources), "-o", str(path)], check=True)
    return path


def stop_process(process: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM by PID, then SIGKILL if it does not exit in time."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def require(package: str, *tools: str) -> list[str]:
    """The paths of tools a test needs. CI installs them (.ci/run) and must run the test;
    elsewhere the test says what is missing and is skipped."""
    paths = [shutil.which(tool) for tool in tools]
    if all(paths):
        return paths
    missing = ", ".join(tool for tool, path in zip(tools, paths) if not path)
    if os.environ.get("CI"):
        pytest.fail(f"{missing} missing: Debian's {package} package")
    pytest.skip(f"{missing} not installed (apt-get install {package})")


def proc_fields(pid: int, name: str, prefix: str) -> list[str]:
    """The fields after `prefix` on its line of /proc/PID/NAME (limits, status)."""
    for line in open(f"/proc/{pid}/{name}"):
        if line.startswith(prefix):
            return line[len(prefix):].split()
    raise AssertionError(f"no {prefix!r} in /proc/{pid}/{name}")


def run_zonebake(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the `zonebake` command as a user would (python -m zonebake is the same entry point)."""
    return subprocess.run([sys.executable, "-m", "zonebake", *args], capture_output=True,
                          text=True, cwd=cwd)


def build_set(outdir: Path, *args: str) -> Path:
    result = run_zonebake("build", *args, "-o", str(outdir))
    assert result.returncode == 0, result.stderr
    return outdir / "zonebake-server"


def data_beside(outdir: Path, server: Path | None = None) -> Path:
    """OUTDIR/zonedata.bin taken out of SERVER (OUTDIR/zonebake-server) as the manual tells
    a user to (objcopy), to link by hand with zonedata.c: the build writes the data into the
    server alone."""
    data = outdir / "zonedata.bin"
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.zonedata",
                    str(server or outdir / "zonebake-server"), str(data)], check=True)
    return data


class Server:
    """A zonebake-server process on 127.0.0.1 with the port it chose; stopped by PID."""

    def __init__(self, binary: Path, *args: str, listen=("127.0.0.1:0",), preexec=None):
        """`preexec`: run in the child before the exec (resource limits)."""
        listen_args = [arg for address in listen for arg in ("--listen", address)]
        self.process = subprocess.Popen([str(binary), *listen_args, *AS_ROOT, *args],
                                        stderr=subprocess.PIPE, preexec_fn=preexec)
        self._stderr = b""
        self.addresses = []
        for _ in range(max(1, len(listen))):
            banner = self._read_line(timeout=5)
            logged = LOG_LINE.match(banner)
            match = logged and int(logged.group(1)) == self.process.pid and \
                LISTENING.match(logged.group(2))
            if not match:
                self.stop()
                raise AssertionError(f"server did not start: {banner!r}")
            self.addresses.append((match.group(1), int(match.group(2))))
        self.address = self.addresses[0]

    def _read_line(self, timeout: float) -> str:
        """One line of the server's stderr, read unbuffered (a buffered reader could swallow
        the next line where select() would no longer see it)."""
        deadline = time.monotonic() + timeout
        fd = self.process.stderr.fileno()
        while b"\n" not in self._stderr:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, remaining))
            chunk = os.read(fd, 4096) if ready else b""
            if not chunk:
                break
            self._stderr += chunk
        line, _, self._stderr = self._stderr.partition(b"\n")
        return line.decode(errors="replace")

    def query(self, qname: str, qtype: str = "A", **kwargs) -> dns.message.Message:
        return self.send(dns.message.make_query(qname, qtype, use_edns=False, **kwargs))

    def send(self, message: dns.message.Message) -> dns.message.Message:
        return dns.query.udp(message, self.address[0], port=self.address[1], timeout=2)

    def send_tcp(self, message: dns.message.Message) -> dns.message.Message:
        return dns.query.tcp(message, self.address[0], port=self.address[1], timeout=2)

    def exchange(self, packet: bytes, timeout: float = 0.5) -> bytes | None:
        """Send raw bytes; return the raw answer, or None when none comes in `timeout`."""
        family = socket.AF_INET6 if ":" in self.address[0] else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.settimeout(timeout)
            s.sendto(packet, self.address)
            try:
                return s.recv(65535)
            except socket.timeout:
                return None

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        stop_process(self.process)
        self.process.stderr.close()


@pytest.fixture(scope="session", autouse=True)
def object_cache(tmp_path_factory):
    """A cache of the runtime's objects (compiler/toolchain/objcache.py) for this session's builds, which
    start with it empty: the tests neither use nor fill the user's."""
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if saved is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = saved


@pytest.fixture(scope="session")
def testset_binary(tmp_path_factory) -> Path:
    return build_set(tmp_path_factory.mktemp("testset"), "-c", str(ZONES / "testset.toml"))


@pytest.fixture(scope="session")
def server(testset_binary):
    srv = Server(testset_binary)
    yield srv
    alive = srv.alive()
    srv.stop()
    assert alive, "the server died during the tests"


class CompiledSet:
    """A zone set compiled in-process by the core, its zonedata.bin read back (blob.py), for
    byte-level checks."""

    def __init__(self, config_path: Path, directory: Path):
        from blob import Blob
        from zonebake.core import run as core
        from zonebake.config import load_toml

        baked = core.bake(load_toml(config_path), directory / "zonedata.bin")
        self.blob = Blob.read(directory / "zonedata.bin", baked.layout)

    def body_for(self, name: str, rdtype: int):
        return self.blob.answer(name, rdtype)


@pytest.fixture(scope="session")
def testset_compiled(tmp_path_factory) -> CompiledSet:
    return CompiledSet(ZONES / "testset.toml", tmp_path_factory.mktemp("testset"))


def load_toml_text(tmp_path: Path, zone: Path):
    """The configuration of a set of one zone, example.test., in `zone` (a file in tmp_path)."""
    from zonebake.config import load_toml

    config = tmp_path / "zonebake.toml"
    config.write_text(f'[[zone]]\norigin = "example.test."\nfile = "{zone.name}"\n')
    return load_toml(config)


def bake_outcome(config, data_file: Path, **how) -> tuple:
    """What the core makes of a zone set, in-process (compiler/core/run.py's bake, with `how`):
    ('baked', warnings, zonedata.bin's bytes) or ('refused', diagnostics)."""
    from zonebake.core import run as core
    from zonebake.errors import CompileError

    try:
        baked = core.bake(config, data_file, **how)
    except CompileError as refused:
        return "refused", [str(d) for d in refused.diagnostics]
    return "baked", [str(d) for d in baked.warnings], data_file.read_bytes()
