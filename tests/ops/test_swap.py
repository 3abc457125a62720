"""Swaps: `zonebake deploy` hands every listening socket of the running server to a new one
(zonebake-server --takeover), under load, and not one query is lost; swaps chain; a swap that
fails leaves the old server serving, and both say why."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import AS_ROOT
from swapping import (ControlledServer, answer_octet, build_loadgen, build_swap_set, deploy,
                      gone, log_lines, stop_pid, udp_drops, wait_for_log, wait_gone)

from zonebake.commands.deploy import control_status

OLD_OCTET, NEW_OCTET = 1, 2
# A longer run: ZONEBAKE_SWAP_RATE=20000 ZONEBAKE_SWAP_SECONDS=60
# ZONEBAKE_SWAP_COUNT=30 pytest tests/ops/test_swap.py -k load
RATE = int(os.environ.get("ZONEBAKE_SWAP_RATE", 20000))
SECONDS = int(os.environ.get("ZONEBAKE_SWAP_SECONDS", 12))
SWAPS = int(os.environ.get("ZONEBAKE_SWAP_COUNT", 10))
# Under load the servers get a receive buffer (4 MiB, some 200 ms of queries) that rides out
# a moment without CPU on a busy machine: a loss must be the swap's, not the scheduler's.
BUFFER = ("--udp-rcvbuf", str(4 << 20))


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    """Two builds of the same zone, v.swap.test. at 192.0.2.1 in one and 192.0.2.2 in the
    other."""
    root = tmp_path_factory.mktemp("swapsets")
    return build_swap_set(root / "old", OLD_OCTET), build_swap_set(root / "new", NEW_OCTET)


@pytest.fixture(scope="module")
def loadgen(tmp_path_factory):
    return build_loadgen(tmp_path_factory.mktemp("loadgen"))


@pytest.fixture
def paths(tmp_path):
    return tmp_path / "control", tmp_path / "server.log"


def run_load(loadgen, port, tmp_path, rate, seconds) -> subprocess.Popen:
    queries = tmp_path / "queries"
    queries.write_text("v.swap.test. A\n")
    return subprocess.Popen([str(loadgen), "127.0.0.1", str(port), str(queries), "--rate",
                             str(rate), "--count", str(rate * seconds), "--sockets", "4",
                             "--cpu", "-1", "--linger", "3", "--tally", "1"],
                            stdout=subprocess.PIPE, text=True)


def load_result(load: subprocess.Popen, seconds: int) -> dict[str, str]:
    out, _ = load.communicate(timeout=seconds + 30)
    assert load.returncode == 0
    return dict(re.findall(r"(\w+)=(\S+)", out))


def tally(result: dict[str, str]) -> dict[int, int]:
    """Answers counted by the last octet of the address they carried."""
    return {int(value, 16) & 0xff: int(count)
            for value, count in (entry.split(":") for entry in result["tally"].split(","))}


def test_swaps_under_load_lose_no_query(sets, loadgen, paths, tmp_path):
    control, log = paths
    server = ControlledServer(sets[0], control, log, *BUFFER)
    load = run_load(loadgen, server.port, tmp_path, RATE, SECONDS)
    started = time.monotonic()
    pids = [server.process.pid]
    try:
        for swap in range(SWAPS):
            # Evenly over the load, the last one well before it ends.
            time.sleep(max(0.0, started + (swap + 1) * SECONDS / (SWAPS + 1) - time.monotonic()))
            # 1, 2 or 3 workers for the two sockets of each kind: one worker reads both,
            # one each, or two share one.
            result = deploy(sets[(swap + 1) % 2], control, log, *BUFFER,
                            threads=swap % 3 + 1)
            assert result.returncode == 0, result.stderr
            pids.append(control_status(control)["pid"])
        result = load_result(load, SECONDS)
        drops = udp_drops(server.port)
    finally:
        load.kill()
        server.stop_all()
    print(f"\nswap load: rate={RATE}/s seconds={SECONDS} swaps={SWAPS} " +
          " ".join(f"{k}={result[k]}" for k in ("sent", "answered", "lost", "tally",
                                                "switches")) +
          f" buffer_drops(server,client)={drops}")
    assert int(result["sent"]) == RATE * SECONDS
    assert int(result["lost"]) == 0, f"receive-buffer drops (server, client): {drops}"
    assert int(result["answered"]) == RATE * SECONDS
    counts = tally(result)
    assert set(counts) == {OLD_OCTET, NEW_OCTET}, counts  # nothing but the two sets' answers
    # Each swap switched the answers from one set to the other at least once.
    assert int(result["switches"]) >= SWAPS
    assert int(result["last"], 16) & 0xff == (NEW_OCTET if SWAPS % 2 else OLD_OCTET)
    assert server.process.returncode == 0
    assert len(set(pids)) == SWAPS + 1
    for old, new in zip(pids, pids[1:]):
        assert gone(old)
        assert f"stopped; pid {new} serves in its place" in log_lines(log, old)
        assert f"pid {old} has stopped; the swap is complete" in log_lines(log, new)


def test_swaps_chain_and_the_new_server_serves_the_control_socket(sets, paths):
    control, log = paths
    server = ControlledServer(sets[0], control, log, threads=3)
    try:
        assert control_status(control) == {"pid": server.process.pid, "workers": 3,
                                           "sockets": 6, "zones": 1}
        assert answer_octet(server.port) == OLD_OCTET
        previous = server.process.pid
        for outdir, octet, threads in ((sets[1], NEW_OCTET, 2), (sets[0], OLD_OCTET, 5)):
            result = deploy(outdir, control, log, threads=threads)
            assert result.returncode == 0, result.stderr
            status = control_status(control)
            assert status["pid"] != previous
            assert wait_gone(previous)
            # Three sockets of each kind came from the first server: the new one reads them
            # all with its own number of workers (two share one, or five share three), and
            # binds none of its own.
            assert status == {"pid": status["pid"], "workers": threads, "sockets": 6,
                              "zones": 1}
            assert answer_octet(server.port) == octet
            assert f"pid {status['pid']} serves in place of pid {previous}" in result.stderr
            previous = status["pid"]
        assert server.process.wait(timeout=10) == 0
    finally:
        server.stop_all()
    assert not control.exists()  # the last one stopped by SIGTERM removed it


def test_swap_of_two_addresses_ipv6_too(sets, paths):
    """Each socket keeps its address across the swap, IPv6 included, UDP and TCP."""
    control, log = paths
    server = ControlledServer(sets[0], control, log, "--listen", "[::1]:0")
    v6_port = int(wait_for_log(log, server.process.pid, r"on \[::1\]:(\d+) \(udp, tcp\)")
                  .group(1))
    try:
        assert deploy(sets[1], control, log).returncode == 0
        new = server.serving_pid()
        assert control_status(control) == {"pid": new, "workers": 2, "sockets": 8, "zones": 1}
        assert wait_for_log(log, new, r"on \[::1\]:(\d+) \(udp, tcp\)").group(1) == \
            str(v6_port)
        for host, port in (("127.0.0.1", server.port), ("::1", v6_port)):
            assert answer_octet(port, host) == NEW_OCTET
            assert answer_octet(port, host, tcp=True) == NEW_OCTET
    finally:
        server.stop_all()


def test_deploy_without_a_server_fails(sets, paths):
    control, log = paths
    result = deploy(sets[1], control, log)
    assert result.returncode == 1
    assert f"no server answers at {control}" in result.stderr


def test_takeover_without_a_server_fails(sets, paths):
    control, _ = paths
    result = subprocess.run([str(sets[1] / "zonebake-server"), *AS_ROOT, "--takeover",
                             str(control)], capture_output=True, text=True, timeout=10)
    assert result.returncode == 1
    assert f"cannot connect to {control}: No such file or directory" in result.stderr


def test_takeover_refuses_listen(sets, paths):
    control, _ = paths
    result = subprocess.run([str(sets[1] / "zonebake-server"), *AS_ROOT, "--takeover",
                             str(control), "--listen", "127.0.0.1:0"], capture_output=True,
                            text=True, timeout=10)
    assert result.returncode == 2
    assert "--listen and --takeover exclude each other" in result.stderr


def test_a_second_server_may_not_take_the_control_path(sets, paths):
    control, log = paths
    server = ControlledServer(sets[0], control, log)
    try:
        result = subprocess.run([str(sets[1] / "zonebake-server"), *AS_ROOT, "--listen",
                                 "127.0.0.1:0", "--control", str(control)],
                                capture_output=True, text=True, timeout=10)
        assert result.returncode == 1
        assert f"a server answers at {control}: give --takeover" in result.stderr
        assert control_status(control)["pid"] == server.process.pid
    finally:
        server.stop_all()


def test_control_path_that_is_not_a_socket_is_left_alone(sets, paths):
    control, _ = paths
    control.write_text("precious\n")
    result = subprocess.run([str(sets[0] / "zonebake-server"), *AS_ROOT, "--listen",
                             "127.0.0.1:0", "--control", str(control)], capture_output=True,
                            text=True, timeout=10)
    assert result.returncode == 1
    assert f"--control {control}: exists and is not a socket" in result.stderr
    assert control.read_text() == "precious\n"


def test_new_binary_that_exits_leaves_the_old_serving(sets, paths):
    control, log = paths
    server = ControlledServer(sets[0], control, log)
    try:
        result = deploy(sets[1], control, log, "--user", "no-such-user-here")
        assert result.returncode == 1
        assert (f"the new server exited with status 2; pid {server.process.pid} still serves"
                in result.stderr)
        assert "--user no-such-user-here: no such user in /etc/passwd" in result.stderr
        assert server.serving_pid() == server.process.pid
        assert answer_octet(server.port) == OLD_OCTET
    finally:
        server.stop_all()


def ask(binary_dir, command: str, control) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary_dir / "zonebake-server"), command, "--control",
                           str(control)], capture_output=True, text=True, timeout=10)


def test_stats_over_the_control_socket_and_metrics_survive_a_swap(sets, paths):
    control, log = paths
    server = ControlledServer(sets[0], control, log, "--metrics", "127.0.0.1:0")
    metrics = r"statistics on http://127\.0\.0\.1:(\d+)/metrics"
    port = wait_for_log(log, server.process.pid, metrics).group(1)
    try:
        for _ in range(3):
            answer_octet(server.port)
        result = ask(sets[0], "stats", control)
        assert result.returncode == 0, result.stderr
        stats = json.loads(result.stdout)
        assert (stats["queries"]["udp"], stats["swaps"], len(stats["workers"])) == (3, 0, 2)
        assert deploy(sets[1], control, log, "--metrics", "127.0.0.1:0").returncode == 0
        new = server.serving_pid()
        # The statistics listener came with the takeover: same port, no failed scrape.
        assert wait_for_log(log, new, metrics).group(1) == port
        for _ in range(2):
            answer_octet(server.port)
        stats = json.loads(ask(sets[1], "stats", control).stdout)
        # The totals carry on from the old server's (3 queries, and the swap); each worker's
        # counters are its own.
        assert (stats["queries"]["udp"], stats["swaps"], len(stats["workers"])) == (5, 1, 2)
        assert sum(worker["queries"]["udp"] for worker in stats["workers"]) == 2
        with socket.create_connection(("127.0.0.1", int(port)), timeout=5) as http:
            http.sendall(b"GET /stats.json HTTP/1.0\r\n\r\n")
            body = b""
            while chunk := http.recv(65536):
                body += chunk
        assert json.loads(body.partition(b"\r\n\r\n")[2])["swaps"] == 1
        # The zones served and their serials follow (the new set's serial is its octet).
        assert ask(sets[1], "status", control).stdout == (
            f"pid={new} workers=2 sockets=4 zones=1\nzone swap.test. serial {NEW_OCTET}\n")
    finally:
        server.stop_all()
    result = ask(sets[1], "stats", control)
    assert result.returncode == 1
    assert f"cannot connect to {control}" in result.stderr


class ControlClient:
    """Speaks the control protocol by hand, to break a takeover where a real server would
    not."""

    def __init__(self, path):
        self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.conn.settimeout(5)
        self.conn.connect(str(path))
        self.file = self.conn.makefile("rb")

    def greet(self) -> None:
        self.say("zonebake-control 1")
        assert self.line() == "ok zonebake-control 1"

    def say(self, line: str) -> None:
        self.conn.sendall(line.encode() + b"\n")

    def line(self) -> str:
        return self.file.readline().decode().rstrip("\n")

    def receive_socket_line(self) -> tuple[str, list[int]]:
        """One line of a takeover reply with the descriptors that came with it (the reply is
        read a byte at a time, as the server's own client does)."""
        line, fds = b"", []
        while not line.endswith(b"\n"):
            data, fds_now, _, _ = socket.recv_fds(self.conn, 1, 4)
            assert data, "connection closed"
            line, fds = line + data, fds + fds_now
        return line.decode().rstrip("\n"), fds

    def close(self) -> None:
        self.file.close()
        self.conn.close()


def test_control_protocol_version_and_errors(sets, paths):
    control, log = paths
    server = ControlledServer(sets[0], control, log)
    try:
        client = ControlClient(control)
        client.say("zonebake-control 2")
        assert client.line() == "error this server speaks zonebake-control 1"
        client.close()
        client = ControlClient(control)
        client.greet()
        client.say("reload")
        assert client.line() == "error unknown command 'reload'"
        client.say("stop-reading")
        assert client.line() == "error stop-reading comes after takeover"
        client.say("status")
        assert client.line() == f"ok pid={server.process.pid} workers=2 sockets=4 zones=1"
        assert client.line() == f"zone swap.test. serial {OLD_OCTET}"
        client.close()
        assert answer_octet(server.port) == OLD_OCTET
    finally:
        server.stop_all()


def test_taker_that_goes_away_leaves_the_old_serving(sets, paths):
    """A new process that takes the sockets and dies before stop-reading: the old server
    says so and goes on serving (its own copies of the sockets were never closed)."""
    control, log = paths
    server = ControlledServer(sets[0], control, log)
    try:
        client = ControlClient(control)
        client.greet()
        client.say("takeover")
        received = []
        for _ in range(4):
            line, fds = client.receive_socket_line()
            assert re.fullmatch(r"socket (udp|tcp) 127\.0\.0\.1:\d+", line) and len(fds) == 1
            received += fds
        assert client.receive_socket_line() == ("ok sockets=4", [])
        assert {socket.socket(fileno=fd).type for fd in received} == {
            socket.SOCK_DGRAM, socket.SOCK_STREAM}  # (and closed with them)
        client.close()
        wait_for_log(log, server.process.pid,
                     r"took the sockets but did not ask to stop reading \(connection closed\); "
                     r"still serving")
        assert answer_octet(server.port) == OLD_OCTET
        assert server.serving_pid() == server.process.pid
    finally:
        server.stop_all()


def test_old_server_killed_mid_takeover(sets, paths):
    """The old server, frozen, accepts the connection but never answers; killed, it leaves
    the new process with a closed connection: the new one says why and exits 1."""
    control, log = paths
    server = ControlledServer(sets[0], control, log)
    try:
        server.process.send_signal(signal.SIGSTOP)
        new = subprocess.Popen([str(sets[1] / "zonebake-server"), *AS_ROOT, "--takeover",
                                str(control)], stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        server.process.kill()
        # Longer than the new process's 10 s read timeout, so that a run that waits for it
        # fails on what the process said rather than on the wait (seen once in CI, not
        # understood yet).
        _, err = new.communicate(timeout=30)
        assert new.returncode == 1
        # Usually the connection was never accepted and the kernel resets it; on a loaded
        # machine the stop can land after the greeting: before the cookie secret came back
        # (the path alone), or before any socket was handed over.
        assert re.search(f"cannot take over: ({control}(: no greeting)?|pid {server.process.pid}: "
                         f"after 0 sockets): Connection reset by peer", err), err
    finally:
        server.stop_all()


class FakeOldServer:
    """A control socket served by a script that hands over real sockets, then fails in a
    chosen way: `exit` (it dies at stop-reading) or `refuse` (it stays, answering an error)."""

    SCRIPT = r"""
import os, socket, sys, time
path, way = sys.argv[1], sys.argv[2]
for attempt in range(100):  # a UDP port whose TCP twin is free too
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp.bind(("127.0.0.1", 0))
    tcp = socket.socket()
    try:
        tcp.bind(udp.getsockname()); break
    except OSError:
        udp.close(); tcp.close()
tcp.listen()
listener = socket.socket(socket.AF_UNIX); listener.bind(path); listener.listen()
print(udp.getsockname()[1], flush=True)
conn, _ = listener.accept(); f = conn.makefile("rb")
assert f.readline() == b"zonebake-control 1\n"; conn.sendall(b"ok zonebake-control 1\n")
line = f.readline()
if line == b"cookie-secret\n":  # as a server from before cookies answers it
    conn.sendall(b"error unknown command 'cookie-secret'\n"); line = f.readline()
assert line == b"takeover\n"
address = "127.0.0.1:%d" % udp.getsockname()[1]
for kind, s in (("udp", udp), ("tcp", tcp)):
    socket.send_fds(conn, [("socket %s %s\n" % (kind, address)).encode()], [s.fileno()])
conn.sendall(b"ok sockets=2\n")
assert f.readline() == b"stop-reading\n"
if way == "exit":
    os._exit(0)
conn.sendall(b"error not today\n")
time.sleep(30)  # still alive, still "serving", until the test kills it
"""

    def __init__(self, path, way):
        self.process = subprocess.Popen([sys.executable, "-c", self.SCRIPT, str(path), way],
                                        stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline())


def test_takeover_refused_at_stop_reading_stops_the_new_server(sets, paths):
    control, _ = paths
    old = FakeOldServer(control, "refuse")
    try:
        new = subprocess.run([str(sets[1] / "zonebake-server"), *AS_ROOT, "--takeover",
                              str(control)], capture_output=True, text=True, timeout=20)
        assert new.returncode == 1
        assert re.search(rf"the takeover broke \(stop-reading: error not today\); stopping, "
                         rf"pid {old.process.pid} keeps serving", new.stderr), new.stderr
        assert old.process.poll() is None
    finally:
        old.process.kill()
        old.process.wait()


def test_old_server_gone_at_stop_reading_leaves_the_new_one_serving(sets, paths):
    control, _ = paths
    old = FakeOldServer(control, "exit")
    new = subprocess.Popen([str(sets[1] / "zonebake-server"), *AS_ROOT, "--takeover",
                            str(control)], stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        while not any("serving its sockets alone" in line for line in lines):
            lines.append(new.stderr.readline())
            assert lines[-1], lines
        assert f"pid {old.process.pid} is gone" in lines[-1]
        assert answer_octet(old.port) == NEW_OCTET
    finally:
        new.terminate()
        assert new.wait(timeout=10) == 0
        old.process.wait()


def test_sigterm_to_the_old_server_during_a_swap_loses_nothing(sets, loadgen, paths, tmp_path):
    """The old server is told to stop as soon as the new one holds the sockets: whichever
    comes first, its stop or the new one's stop-reading, every query is answered."""
    control, log = paths
    server = ControlledServer(sets[0], control, log, *BUFFER)
    rate, seconds = 10000, 4
    load = run_load(loadgen, server.port, tmp_path, rate, seconds)
    try:
        time.sleep(1)
        with open(log, "ab") as output:
            new = subprocess.Popen([str(sets[1] / "zonebake-server"), *AS_ROOT, *BUFFER,
                                    "--takeover", str(control), "--control", str(control)],
                                   stderr=output)
        wait_for_log(log, new.pid, r"^took 4 sockets from pid")
        server.process.terminate()
        assert server.process.wait(timeout=10) == 0
        result = load_result(load, seconds)
        drops = udp_drops(server.port)
        assert new.poll() is None
    finally:
        load.kill()
        server.stop_all()
    assert int(result["sent"]) == rate * seconds
    assert int(result["lost"]) == 0, f"receive-buffer drops (server, client): {drops}"
    assert set(tally(result)) == {OLD_OCTET, NEW_OCTET}
    assert int(result["last"], 16) & 0xff == NEW_OCTET
