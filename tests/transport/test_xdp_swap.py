"""Swaps and reloads over AF_XDP (issue 39): a server answering UDP on a veth's queues over
AF_XDP hands its program's link and each queue's socket and UMEM to its successor, which maps
the same rings and goes on where the old one stopped. Under load from the other end of the
veth, swaps (`zonebake deploy`) and SIGHUP reloads (`--release`) lose no query, the counters
carry over, and after the last server's SIGTERM no XDP program is left on the interface. A
reload started by a server that has left root keeps the queues too.

The servers bind their sockets on 127.0.0.1 alone: a query to the veth's address can only be
answered over AF_XDP (the kernel would send a port unreachable)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dns.message
import pytest

from conftest import AS_ROOT, LISTENING
from swapping import (build_loadgen, build_swap_set, log_lines, stop_pid, wait_for_log,
                      wait_gone)
from vethpair import SERVER_V4, VethPair, require_af_xdp
from zonebake.commands.deploy import control_status

OLD_OCTET, NEW_OCTET = 1, 2
PORT = 5300
RATE, SECONDS = 4000, 6
SWAPS = 4
QUEUES = 2


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    require_af_xdp()
    root = tmp_path_factory.mktemp("xdpswap")
    return build_swap_set(root / "old", OLD_OCTET), build_swap_set(root / "new", NEW_OCTET)


@pytest.fixture(scope="module")
def loadgen(tmp_path_factory):
    return build_loadgen(tmp_path_factory.mktemp("loadgen"))


def serve_args(pair: VethPair, control: Path, threads: int) -> list[str]:
    return ["--listen", f"127.0.0.1:{PORT}", "--control", str(control), "--threads",
            str(threads), "--xdp", f"{pair.server_if}@{PORT}", "--no-huge-pages", *AS_ROOT]


def start_load(pair: VethPair, loadgen: Path, tmp_path: Path) -> subprocess.Popen:
    """RATE queries a second for SECONDS from the client's end of the veth, each answer
    tallied by the set that gave it; bounded by --count and --linger."""
    queries = tmp_path / "queries"
    queries.write_text("v.swap.test. A\n")
    return subprocess.Popen([*pair.exec("client"), str(loadgen), SERVER_V4, str(PORT),
                             str(queries), "--rate", str(RATE), "--count", str(RATE * SECONDS),
                             "--sockets", "4", "--cpu", "-1", "--linger", "3", "--tally", "1"],
                            stdout=subprocess.PIPE, text=True)


def load_result(load: subprocess.Popen) -> dict[str, str]:
    out, _ = load.communicate(timeout=SECONDS + 30)
    assert load.returncode == 0
    return dict(re.findall(r"(\w+)=(\S+)", out))


def stats(binary: Path, control: Path) -> dict:
    return json.loads(subprocess.run([str(binary), "stats", "--control", str(control)],
                                     capture_output=True, text=True, timeout=10,
                                     check=True).stdout)


def assert_handed_over(log: Path, pids: list[int]) -> None:
    """Each old server handed its queues to its successor, stopped, and warned of nothing."""
    for old, new in zip(pids, pids[1:]):
        said = log_lines(log, old)
        assert f"handed {QUEUES} AF_XDP queues to pid {new}; answering on them until it " \
               f"has started" in said, said
        assert f"stopped; pid {new} serves in its place" in said, said
        assert not [line for line in said if line.startswith(("warning", "error"))], said
        assert f"pid {old} has stopped; the swap is complete" in log_lines(log, new)


def test_swaps_under_load_over_af_xdp_lose_no_query(sets, loadgen, tmp_path):
    control, log = tmp_path / "control", tmp_path / "server.log"
    with VethPair(queues=QUEUES) as pair:
        with open(log, "ab") as output:
            first = subprocess.Popen([*pair.exec("server"), str(sets[0] / "zonebake-server"),
                                      *serve_args(pair, control, 2)], stderr=output)
        pids = [first.pid]
        try:
            wait_for_log(log, first.pid, rf"on {pair.server_if} port {PORT} over AF_XDP: "
                                         rf"{QUEUES} queues")
            load = start_load(pair, loadgen, tmp_path)
            started = time.monotonic()
            for swap in range(SWAPS):
                time.sleep(max(0.0, started + (swap + 1) * SECONDS / (SWAPS + 1) -
                               time.monotonic()))
                # One worker for both queues, or one each: the queues are shared out anew.
                threads = swap % 2 + 1
                deployed = subprocess.run(
                    [*pair.exec("server"), sys.executable, "-m", "zonebake", "deploy",
                     str(sets[(swap + 1) % 2]), "--control", str(control), "--log", str(log),
                     "--", *serve_args(pair, control, threads)[4:]],
                    capture_output=True, text=True, timeout=60)
                assert deployed.returncode == 0, deployed.stderr
                pids.append(control_status(control)["pid"])
            result = load_result(load)
            counted = stats(sets[0] / "zonebake-server", control)
            on_interface = pair.xdp_on_server()
            stop_pid(pids[-1])
            assert wait_gone(pids[-1])
            assert pair.xdp_on_server() == "", "the XDP program outlived the server"
        finally:
            for pid in pids:
                stop_pid(pid)
            first.wait(timeout=10)
    print(f"\nxdp swap load: rate={RATE}/s seconds={SECONDS} swaps={SWAPS} " +
          " ".join(f"{k}={result[k]}" for k in ("sent", "answered", "lost", "tally",
                                                "switches")))
    assert "prog/xdp" in on_interface
    assert int(result["sent"]) == int(result["answered"]) == RATE * SECONDS
    assert int(result["lost"]) == 0
    assert int(result["switches"]) >= SWAPS
    # Every query came over AF_XDP, and the counters carried over every swap.
    assert counted["queries"]["udp"] == counted["xdp_queries"] == RATE * SECONDS
    assert counted["swaps"] == SWAPS
    assert len(set(pids)) == SWAPS + 1
    assert_handed_over(log, pids)


def point(link: Path, release: Path) -> None:
    new = link.with_name(link.name + ".new")
    new.unlink(missing_ok=True)
    new.symlink_to(release / "zonebake-server")
    os.replace(new, link)


def test_reloads_under_load_over_af_xdp_lose_no_query(sets, loadgen, tmp_path):
    control, log, link = tmp_path / "control", tmp_path / "server.log", tmp_path / "current"
    point(link, sets[0])
    reloads = 3
    with VethPair(queues=QUEUES) as pair:
        with open(log, "ab") as output:
            first = subprocess.Popen([*pair.exec("server"), str(link),
                                      *serve_args(pair, control, 2), "--release", str(link)],
                                     stderr=output)
        pids = [first.pid]
        try:
            wait_for_log(log, first.pid, LISTENING.pattern)
            load = start_load(pair, loadgen, tmp_path)
            started = time.monotonic()
            for reload in range(reloads):
                time.sleep(max(0.0, started + (reload + 1) * SECONDS / (reloads + 1) -
                               time.monotonic()))
                point(link, sets[(reload + 1) % 2])
                os.kill(pids[-1], signal.SIGHUP)
                new = int(wait_for_log(log, pids[-1], r"stopped; pid (\d+) serves in its "
                                                      r"place").group(1))
                assert wait_gone(pids[-1])
                pids.append(new)
            result = load_result(load)
            counted = stats(link, control)
            stop_pid(pids[-1])
            assert wait_gone(pids[-1])
            assert pair.xdp_on_server() == ""
        finally:
            for pid in pids:
                stop_pid(pid)
            first.wait(timeout=10)
    assert int(result["sent"]) == int(result["answered"]) == RATE * SECONDS
    assert int(result["lost"]) == 0
    assert int(result["switches"]) >= reloads
    assert counted["queries"]["udp"] == counted["xdp_queries"] == RATE * SECONDS
    assert counted["swaps"] == reloads
    assert_handed_over(log, pids)


NOBODY = 65534


def answer_over_veth(pair: VethPair) -> int:
    """The last octet of v.swap.test.'s address, asked from the client's end of the veth."""
    query = dns.message.make_query("v.swap.test.", "A", use_edns=False)
    with pair.socket("client", socket.AF_INET) as client:
        client.settimeout(2)
        client.sendto(query.to_wire(), (SERVER_V4, PORT))
        (rrset,) = dns.message.from_wire(client.recv(4096)).answer
    return int(rrset[0].address.rsplit(".", 1)[1])


def test_a_reload_by_a_server_that_left_root_keeps_af_xdp(sets, tmp_path):
    """Under systemd the server runs as its user and a reload's successor is started by it,
    without root: it takes the AF_XDP queues over all the same (mapping a socket's rings and
    a UMEM handed over needs no capability) and answers over them as that user."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        root.chmod(0o755)  # the releases reachable by the server's user
        releases = []
        for octet, built in zip((OLD_OCTET, NEW_OCTET), sets):
            (root / str(octet)).mkdir()
            shutil.copy2(built / "zonebake-server", root / str(octet) / "zonebake-server")
            releases.append(root / str(octet))
        run = root / "run"
        run.mkdir()
        os.chown(run, NOBODY, NOBODY)
        link, log = root / "current", tmp_path / "server.log"
        point(link, releases[0])
        with VethPair() as pair:
            with open(log, "ab") as output:
                first = subprocess.Popen(
                    [*pair.exec("server"), str(link), "--listen", f"127.0.0.1:{PORT}",
                     "--control", str(run / "control"), "--threads", "1", "--xdp",
                     f"{pair.server_if}@{PORT}", "--no-huge-pages", "--user", "nobody",
                     "--release", str(link)], stderr=output)
            pids = [first.pid]
            try:
                wait_for_log(log, first.pid, rf"on {pair.server_if} port {PORT} over AF_XDP")
                assert answer_over_veth(pair) == OLD_OCTET
                point(link, releases[1])
                os.kill(first.pid, signal.SIGHUP)
                new = int(wait_for_log(log, first.pid, r"stopped; pid (\d+) serves in its "
                                                       r"place").group(1))
                pids.append(new)
                assert wait_gone(first.pid)
                assert answer_over_veth(pair) == NEW_OCTET
                uids = Path(f"/proc/{new}/status").read_text().split("\nUid:")[1].split()[:4]
                assert uids == [str(NOBODY)] * 4
                assert "handed 1 AF_XDP queue to pid" in " ".join(log_lines(log, first.pid))
                stop_pid(new)
                assert wait_gone(new)
                assert pair.xdp_on_server() == ""
            finally:
                for pid in pids:
                    stop_pid(pid)
                first.wait(timeout=10)
