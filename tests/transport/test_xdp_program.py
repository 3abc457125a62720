"""The XDP program of runtime/transport/xdp/program.c: the kernel's verifier accepts it, it is
attached by a BPF link that takes it away when the link's last descriptor closes, its failures
say what went wrong, and it steers exactly the UDP frames to the port into the XSKMAP (the
verdicts asked of the kernel with BPF_PROG_TEST_RUN, frame by frame). Each test makes a veth
pair between two network namespaces of its own (vethpair.py)."""

from __future__ import annotations

import contextlib
import select
import signal
import struct
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
    return c_harness(tmp_path_factory, "xdp_program", XDP / "program.c", XDP / "xsk.c")


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


# Frames, as the interface would receive them.
MACS = bytes.fromhex("020000000001" "020000000002")


def ether(ethertype: int, payload: bytes, tags=()) -> bytes:
    return MACS + b"".join(struct.pack("!HH", tpid, 100) for tpid in tags) + \
        struct.pack("!H", ethertype) + payload


def udp(port: int = PORT, payload: bytes = bytes(12)) -> bytes:
    return struct.pack("!HHHH", 40000, port, 8 + len(payload), 0) + payload


def tcp(port: int = PORT) -> bytes:
    return struct.pack("!HHIIHHHH", 40000, port, 1, 0, 0x5002, 65535, 0, 0)


def ipv4(payload: bytes, protocol: int = 17, ihl: int = 5, fragment: int = 0,
         version: int = 4) -> bytes:
    options = bytes(max(0, ihl - 5) * 4)
    return struct.pack("!BBHHHBBH4s4s", version << 4 | ihl, 0, 20 + len(options) + len(payload),
                       1, fragment, 64, protocol, 0, bytes([198, 18, 0, 2]),
                       bytes([198, 18, 0, 1])) + options + payload


def ipv6(payload: bytes, next_header: int = 17, version: int = 6) -> bytes:
    return struct.pack("!IHBB16s16s", version << 28, len(payload), next_header, 64,
                       bytes(15) + b"\2", bytes(15) + b"\1") + payload


V4, V6, VLAN, QINQ, ARP = 0x0800, 0x86DD, 0x8100, 0x88A8, 0x0806
UDP4, UDP6 = ether(V4, ipv4(udp())), ether(V6, ipv6(udp()))

VERDICTS = [
    ("IPv4 UDP to the port", 0, UDP4, "redirect"),
    ("IPv6 UDP to the port", 0, UDP6, "redirect"),
    ("IPv4 UDP, DF set", 0, ether(V4, ipv4(udp(), fragment=0x4000)), "redirect"),
    ("IPv4 with options", 0, ether(V4, ipv4(udp(), ihl=6)), "redirect"),
    ("IPv4 with the longest header", 0, ether(V4, ipv4(udp(), ihl=15)), "redirect"),
    ("802.1Q, IPv4", 0, ether(V4, ipv4(udp()), tags=[VLAN]), "redirect"),
    ("802.1ad, IPv6", 0, ether(V6, ipv6(udp()), tags=[QINQ]), "redirect"),
    ("a queue with no socket", 1, UDP4, "pass"),
    ("IPv4 UDP to another port", 0, ether(V4, ipv4(udp(PORT + 1))), "pass"),
    ("IPv6 UDP to another port", 0, ether(V6, ipv6(udp(53))), "pass"),
    ("IPv4 TCP to the port", 0, ether(V4, ipv4(tcp(), protocol=6)), "pass"),
    ("IPv6 TCP to the port", 0, ether(V6, ipv6(tcp(), next_header=6)), "pass"),
    ("IPv4 first fragment (MF)", 0, ether(V4, ipv4(udp(), fragment=0x2000)), "pass"),
    ("IPv4 later fragment", 0, ether(V4, ipv4(udp(), fragment=0x0010)), "pass"),
    ("IPv6 fragment header", 0, ether(V6, ipv6(bytes([17, 0, 0, 1, 0, 0, 0, 1]) + udp(),
                                                next_header=44)), "pass"),
    ("IPv6 hop-by-hop header", 0, ether(V6, ipv6(bytes([17, 0, 1, 4, 0, 0, 0, 0]) + udp(),
                                                  next_header=0)), "pass"),
    ("two tags", 0, ether(V4, ipv4(udp()), tags=[QINQ, VLAN]), "pass"),
    ("ARP", 0, ether(ARP, bytes(28)), "pass"),
    ("IPv4 header length 4", 0, ether(V4, ipv4(udp(), ihl=4)), "pass"),
    ("IPv4 EtherType, version 6", 0, ether(V4, ipv4(udp(), version=6)), "pass"),
    ("IPv6 EtherType, version 4", 0, ether(V6, ipv6(udp(), version=4)), "pass"),
    ("Ethernet header only", 0, UDP4[:14], "pass"),
    ("tag cut short", 0, ether(VLAN, b"\0\0"), "pass"),
    ("IPv4 header cut short", 0, UDP4[:14 + 19], "pass"),
    ("UDP header cut short (IPv4)", 0, UDP4[:14 + 20 + 7], "pass"),
    ("UDP header cut short (IPv4 options)", 0,
     ether(V4, ipv4(udp(), ihl=15))[:14 + 60 + 7], "pass"),
    ("IPv6 header cut short", 0, UDP6[:14 + 39], "pass"),
    ("UDP header cut short (IPv6)", 0, UDP6[:14 + 40 + 7], "pass"),
    ("UDP header exactly (IPv4)", 0, UDP4[:14 + 20 + 8], "redirect"),
]


def test_it_steers_udp_to_the_port_and_passes_everything_else(harness):
    with VethPair(queues=2) as pair:
        frames = "".join(f"{queue} {frame.hex()}\n" for _, queue, frame, _ in VERDICTS)
        result = subprocess.run([*pair.exec("server"), str(harness), "verdicts",
                                 pair.server_if, str(PORT)], input=frames,
                                capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    got = result.stdout.split()
    wrong = [f"{name}: {verdict}, not {expected}"
             for (name, _, _, expected), verdict in zip(VERDICTS, got) if verdict != expected]
    assert len(got) == len(VERDICTS) and not wrong, wrong or result.stdout
