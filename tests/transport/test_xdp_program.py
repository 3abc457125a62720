"""The XDP program of runtime/transport/xdp/program.c: the kernel's verifier accepts it, it is
attached by a BPF link that takes it away when the link's last descriptor closes, its failures
say what went wrong. Each test makes a veth pair between two network namespaces of its own
(vethpair.py)."""

from __future__ import annotations

import contextlib
import select
import signal
import subprocess

import pytest

from conftest import ROOT, c_harness, require
from vethpair import VethPair, require_af_xdp

XDP = ROOT / "runtime" / "transport" / "xdp"
PORT = 5300
# enum zb_xdp_status, as the harness exits with it
NO_INTERFACE, NOT_PERMITTED, BUSY = 1, 2, 4


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    require_af_xdp()
    return c_harness(tmp_path_factory, "xdp_program", XDP / "program.c")


def read_line(process: subprocess.Popen, timeout: float = 10) -> str:
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, "the harness said nothing"
    return process.stdout.readline().strip()


def attach(pair: VethPair, harness, mode: str = "native") -> subprocess.Popen:
    return subprocess.Popen([*pair.exec("server"), str(harness), "attach",
                             pair.server_if, str(PORT), mode],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.communicate()


@contextlib.contextmanager
def attached(harness, mode: str = "native"):
    """A veth pair, the program attached to its server side by the harness, which holds the
    link until told `close` or until it ends."""
    with VethPair() as pair:
        process = attach(pair, harness, mode)
        try:
            assert read_line(process) == f"attached {mode}", process.stderr.read()
            yield pair, process
        finally:
            stop(process)


@pytest.mark.parametrize("mode, shown", [("native", "xdp "), ("generic", "xdpgeneric ")])
def test_verifier_accepts_it_and_closing_the_link_detaches_it(harness, mode, shown):
    with attached(harness, mode) as (pair, process):
        on_interface = pair.xdp_on_server()
        assert on_interface.startswith(shown) and "name zonebake_xdp" in on_interface, \
            on_interface
        process.stdin.write("close\n")
        process.stdin.flush()
        assert read_line(process) == "closed"
        assert pair.xdp_on_server() == ""


def test_the_program_goes_when_the_process_holding_its_link_dies(harness):
    with attached(harness) as (pair, process):
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        assert pair.xdp_on_server() == ""


def test_a_second_program_is_refused_while_one_is_attached(harness):
    with attached(harness) as (pair, _):
        second = attach(pair, harness, "auto")
        _, err = second.communicate(timeout=10)
        assert second.returncode == BUSY, err
        assert "another XDP program is attached to the interface" in err, err
        assert "zonebake_xdp" in pair.xdp_on_server()


def test_a_missing_interface_is_named(harness):
    with VethPair() as pair:
        result = subprocess.run([*pair.exec("server"), str(harness), "attach", "nosuch0",
                                 str(PORT), "auto"], capture_output=True, text=True)
    assert result.returncode == NO_INTERFACE, result.stderr
    assert result.stderr.startswith("nosuch0: no such interface"), result.stderr


def test_without_capabilities_it_says_which_are_needed(harness):
    setpriv, = require("util-linux", "setpriv")
    with VethPair() as pair:
        result = subprocess.run([*pair.exec("server"), setpriv, "--reuid=65534",
                                 "--regid=65534", "--clear-groups", "--inh-caps=-all",
                                 "--bounding-set=-all", str(harness), "attach",
                                 pair.server_if, str(PORT), "auto"],
                                capture_output=True, text=True)
    assert result.returncode == NOT_PERMITTED, result.stderr
    assert "CAP_BPF and CAP_NET_ADMIN" in result.stderr, result.stderr
