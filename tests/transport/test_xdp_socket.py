"""The AF_XDP socket's set-up (runtime/transport/xdp/xsk.c) and the count of an interface's
queues (queues.c), on a veth pair between two network namespaces of the test's own: a veth
binds in copy mode, and a socket that cannot be bound says why."""

from __future__ import annotations

import subprocess

import pytest

from conftest import ROOT, c_harness
from vethpair import VethPair, require_af_xdp

XDP = ROOT / "runtime" / "transport" / "xdp"


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    require_af_xdp()
    return c_harness(tmp_path_factory, "xdp_socket", XDP / "xsk.c", XDP / "queues.c")


def run(pair: VethPair, harness, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*pair.exec("server"), str(harness), *args], input="",
                          capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("queues", [1, 2])
def test_the_queues_of_a_veth_are_counted(harness, queues):
    with VethPair(queues=queues) as pair:
        assert run(pair, harness, "queues", pair.server_if).stdout == f"{queues}\n"
        # The loopback interface does not say (no ETHTOOL_GCHANNELS): one queue.
        assert run(pair, harness, "queues", "lo").stdout == "1\n"


def test_a_veth_binds_in_copy_mode_on_each_of_its_queues(harness):
    with VethPair(queues=2) as pair:
        result = run(pair, harness, "bind", pair.server_if, "0", "auto", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "bound copy\nbound copy\n"


@pytest.mark.parametrize("args, why", [
    (["5", "auto"], "xs0 queue 5: AF_XDP socket: bind: Invalid argument: the interface has "
                    "no such queue"),
    (["0", "auto", "0"], "xs0 queue 0: AF_XDP socket: bind: Device or resource busy: another "
                         "AF_XDP socket is bound to this queue"),
    (["0", "zerocopy"], "xs0 queue 0: AF_XDP socket: bind: Operation not supported: the "
                        "driver has no zero-copy AF_XDP"),
])
def test_a_socket_that_cannot_be_bound_says_why(harness, args, why):
    with VethPair() as pair:
        result = run(pair, harness, "bind", pair.server_if, *args)
    assert result.returncode == 1
    assert result.stderr == why + "\n"
