"""Reload the systemd way (issue 18): SIGHUP starts `--release PATH` (a symlink a deploy
repoints) as the server's successor, which takes every socket over and serves in its place;
systemd hears READY=1 and MAINPID=<successor> on its notify socket (a socket of the test's
own here, which also learns each message's sender from SO_PASSCRED). Under load, UDP and TCP,
ten reloads alternating two releases lose no query and the counters carry over; a release
that cannot run or exits leaves the server serving; SIGHUP without --release is logged and
ignored."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import AS_ROOT, LISTENING, run_zonebake
from swapping import (answer_octet, build_loadgen, build_swap_set, gone, log_lines, stop_pid,
                      wait_for_log, wait_gone)
from zonebake.commands.deploy import control_status

OLD_OCTET, NEW_OCTET = 1, 2
RELOADS, RATE, SECONDS = 10, 4000, 8


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    root = tmp_path_factory.mktemp("releases")
    return build_swap_set(root / "a", OLD_OCTET), build_swap_set(root / "b", NEW_OCTET)


class Notify:
    """A notify socket as systemd's: datagrams of state lines, each with its sender's pid."""

    def __init__(self, path: Path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)

    def next(self, timeout: float = 10) -> tuple[int, str]:
        self.sock.settimeout(timeout)
        data, ancillary, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(12))
        pid = next(struct.unpack("3i", cdata)[0] for level, kind, cdata in ancillary
                   if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS)
        return pid, data.decode()

    def close(self) -> None:
        self.sock.close()


def point(link: Path, release: Path) -> None:
    """Repoint the `current` symlink at a release's binary, atomically, as a deploy does."""
    new = link.with_name(link.name + ".new")
    new.unlink(missing_ok=True)
    new.symlink_to(release / "zonebake-server")
    os.replace(new, link)


class ReleasedServer:
    def __init__(self, tmp_path: Path, release: Path, *args: str):
        self.link, self.control = tmp_path / "current", tmp_path / "control"
        self.log = tmp_path / "server.log"
        self.notify = Notify(tmp_path / "notify")
        point(self.link, release)
        with open(self.log, "ab") as output:
            self.process = subprocess.Popen(
                [str(self.link), "--listen", "127.0.0.1:0", "--control", str(self.control),
                 "--threads", "2", *AS_ROOT, *args],
                stderr=output, env={**os.environ, "NOTIFY_SOCKET": str(self.notify.path)})
        self.pid = self.process.pid
        self.port = int(wait_for_log(self.log, self.pid, LISTENING.pattern).group(2))

    def stop(self) -> None:
        stop_pid(self.pid)
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=10)
        self.notify.close()


class TcpLoad:
    """Queries over TCP, a connection each, one after another in a thread until finished
    (bounded: SECONDS + 20 s at most): how many were answered, and what went wrong."""

    def __init__(self, port: int):
        self.port, self.answered, self.failed = port, 0, []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def _run(self) -> None:
        deadline = time.monotonic() + SECONDS + 20
        while not self.done.is_set() and time.monotonic() < deadline:
            try:
                assert answer_octet(self.port, tcp=True) in (OLD_OCTET, NEW_OCTET)
                self.answered += 1
            except Exception as exc:  # noqa: BLE001 - every failure is reported
                self.failed.append(repr(exc))

    def finish(self) -> tuple[int, list[str]]:
        self.done.set()
        self.thread.join()
        return self.answered, self.failed


def test_reloads_under_load_lose_no_query_and_tell_systemd(releases, tmp_path):
    loadgen = build_loadgen(tmp_path)
    server = ReleasedServer(tmp_path, releases[0], "--release", str(tmp_path / "current"))
    try:
        assert server.notify.next() == (server.pid, "READY=1")
        queries = tmp_path / "queries"
        queries.write_text("v.swap.test. A\n")
        load = subprocess.Popen([str(loadgen), "127.0.0.1", str(server.port), str(queries),
                                 "--rate", str(RATE), "--count", str(RATE * SECONDS),
                                 "--sockets", "4", "--cpu", "-1", "--linger", "3", "--tally",
                                 "1"], stdout=subprocess.PIPE, text=True)
        tcp = TcpLoad(server.port)
        started, pids = time.monotonic(), [server.pid]
        for reload in range(RELOADS):
            time.sleep(max(0.0, started + (reload + 1) * SECONDS / (RELOADS + 1) -
                           time.monotonic()))
            release = releases[(reload + 1) % 2]
            point(server.link, release)
            old = pids[-1]
            os.kill(old, signal.SIGHUP)
            sender, message = server.notify.next()
            assert sender == old and message.startswith("MAINPID="), (sender, message)
            new = int(message.removeprefix("MAINPID="))
            assert server.notify.next() == (new, "READY=1")
            assert wait_gone(old)
            pids.append(new)
            octet = OLD_OCTET if release == releases[0] else NEW_OCTET
            assert answer_octet(server.port) == octet
            assert answer_octet(server.port, tcp=True) == octet
        out, _ = load.communicate(timeout=SECONDS + 30)
        tcp_answered, tcp_failed = tcp.finish()
        stats = json.loads(subprocess.run([str(server.link), "stats", "--control",
                                           str(server.control)], capture_output=True,
                                          text=True, timeout=10, check=True).stdout)
        result = dict(re.findall(r"(\w+)=(\S+)", out))
    finally:
        server.pid = pids[-1]
        server.stop()
    print(f"\nreload load: rate={RATE}/s seconds={SECONDS} reloads={RELOADS} " +
          " ".join(f"{k}={result[k]}" for k in ("sent", "answered", "lost", "switches")) +
          f" tcp_answered={tcp_answered} tcp_failed={len(tcp_failed)}")
    assert int(result["sent"]) == int(result["answered"]) == RATE * SECONDS
    assert int(result["lost"]) == 0
    assert int(result["switches"]) >= RELOADS
    # TCP: a connection per query throughout, each answered by one server or the other.
    assert tcp_failed == [] and tcp_answered > 100, (tcp_answered, tcp_failed[:3])
    # The counters carried over every reload: every query the load and the checks sent.
    assert stats["queries"] == {"udp": RATE * SECONDS + RELOADS,
                                "tcp": tcp_answered + RELOADS}
    assert stats["swaps"] == RELOADS
    assert len(set(pids)) == RELOADS + 1
    assert all(gone(pid) for pid in pids[:-1])
    # Each old server says what it did, in order, to its end, and no warning: the swaps all
    # went as they should (the pid's log line is said before the process can end with the
    # swap; the successor closing the connection after stop-reading is the swap's end).
    for old, new in zip(pids, pids[1:]):
        said = log_lines(server.log, old)
        assert [line for line in said if re.search(rf"\bpid {new}\b", line)] == [
            f"reload: started pid {new} ({server.link}) to serve in this one's place",
            f"handed 4 sockets to pid {new}; serving until it has started",
            f"pid {new} reads every socket; stopping reading",
            f"stopped; pid {new} serves in its place"], said
        assert not [line for line in said if line.startswith(("warning", "error"))], said
        assert f"pid {old} has stopped; the swap is complete" in log_lines(server.log, new)


def test_a_release_that_cannot_run_or_exits_leaves_the_server_serving(releases, tmp_path):
    server = ReleasedServer(tmp_path, releases[0], "--release", str(tmp_path / "current"))
    try:
        assert server.notify.next() == (server.pid, "READY=1")
        server.link.unlink()
        os.kill(server.pid, signal.SIGHUP)
        wait_for_log(server.log, server.pid, rf"reload: cannot run {server.link}: No such file "
                                             r"or directory; still serving")
        # A successor that exits at once: a release whose server refuses its options.
        script = tmp_path / "broken"
        script.write_text("#!/bin/sh\nexit 3\n")
        script.chmod(0o755)
        server.link.symlink_to(script)
        os.kill(server.pid, signal.SIGHUP)
        wait_for_log(server.log, server.pid, r"reload: pid \d+ \(.*current\) exited with status "
                                             r"3 before it took over; still serving")
        assert server.process.poll() is None
        assert answer_octet(server.port) == OLD_OCTET
    finally:
        server.stop()


def test_sighup_without_release_is_logged_and_ignored(releases, tmp_path):
    server = ReleasedServer(tmp_path, releases[0])
    try:
        os.kill(server.pid, signal.SIGHUP)
        wait_for_log(server.log, server.pid, "SIGHUP: no --release PATH to start in this "
                                             "server's place; ignored")
        assert server.process.poll() is None
        assert answer_octet(server.port) == OLD_OCTET
    finally:
        server.stop()


def test_release_needs_a_control_socket(releases, tmp_path):
    result = subprocess.run([str(releases[0] / "zonebake-server"), "--listen", "127.0.0.1:0",
                             "--release", "/x", *AS_ROOT], capture_output=True, text=True,
                            timeout=10)
    assert result.returncode == 2
    assert "--release needs --control: the successor takes the sockets over through it" in \
        result.stderr


def test_deploy_to_a_released_server_installs_the_build_and_reloads(releases, tmp_path):
    """`zonebake deploy` to a server started with --release: the build becomes a release of
    its own, `current` points to it and `previous` to the one before, and the server reloads;
    a release that does not take over is rolled back."""
    root = tmp_path / "zonebake"
    first = root / "releases" / "first"
    first.mkdir(parents=True)
    shutil.copy2(releases[0] / "zonebake-server", first / "zonebake-server")
    (root / "current").symlink_to("releases/first")
    release = root / "current" / "zonebake-server"
    control, log = tmp_path / "control", tmp_path / "server.log"
    with open(log, "ab") as output:
        process = subprocess.Popen([str(release), "--listen", "127.0.0.1:0", "--control",
                                    str(control), "--release", str(release), *AS_ROOT],
                                   stderr=output)
    port = int(wait_for_log(log, process.pid, LISTENING.pattern).group(2))
    serving = process.pid
    try:
        deployed = run_zonebake("deploy", str(releases[1]), "--control", str(control))
        assert deployed.returncode == 0, deployed.stderr
        serving = control_status(control)["pid"]
        assert deployed.stderr == f"zonebake: pid {serving} serves in place of pid " \
                                  f"{process.pid}\n"
        assert answer_octet(port) == NEW_OCTET and wait_gone(process.pid)
        installed = os.readlink(root / "current")
        assert installed.startswith("releases/") and installed != "releases/first"
        assert (root / installed / "zonebake-server").read_bytes() == \
            (releases[1] / "zonebake-server").read_bytes()
        assert os.readlink(root / "previous") == "releases/first"

        broken = tmp_path / "broken"
        broken.mkdir()
        (broken / "zonebake-server").write_text("#!/bin/sh\nexit 3\n")
        (broken / "zonebake-server").chmod(0o755)
        failed = run_zonebake("deploy", str(broken), "--control", str(control), "--timeout", "3")
        assert failed.returncode == 1
        assert failed.stderr.startswith(f"zonebake: deploy failed: no new server took over "
                                        f"from pid {serving} within 3.0 s of SIGHUP to pid "
                                        f"{serving} (see its log); ")
        assert os.readlink(root / "current") == installed
        assert control_status(control)["pid"] == serving
        assert answer_octet(port) == NEW_OCTET

        refused = run_zonebake("deploy", str(releases[0]), "--control", str(control), "--",
                               "--threads", "2")
        assert refused.returncode == 2
        assert "reloads with its own options, so options after -- are not used" in \
            refused.stderr
    finally:
        stop_pid(serving)
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=10)
