"""The AF_XDP echo reflector (tests/bench/xdp_reflector.c) end to end, over a veth pair between
two network namespaces: it sends every UDP datagram to its port back from where it came, IPv4
and IPv6, through the runtime's XDP program and AF_XDP sockets; what is not UDP to its port
(another port, TCP, fragments) reaches the kernel; SIGTERM leaves the interface without an XDP
program."""

from __future__ import annotations

import random
import re
import select
import socket
import subprocess

import pytest

from conftest import ROOT, stop_process
from vethpair import CLIENT_V4, SERVER_V4, SERVER_V6, VethPair, require_af_xdp

XDP = ROOT / "runtime" / "transport" / "xdp"
PORT = 5300
DATAGRAMS = 1000  # each over IPv4 and over IPv6
# One datagram's payload at most: IPv6's 1500 - 40 - 8, no fragment.
LARGEST = 1452
WINDOW = 16


@pytest.fixture(scope="module")
def reflector(tmp_path_factory):
    require_af_xdp()
    path = tmp_path_factory.mktemp("xdp_reflector") / "xdp_reflector"
    subprocess.run(["cc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Wshadow", "-Werror",
                    "-pthread", f"-I{ROOT / 'runtime'}", str(ROOT / "tests/bench/xdp_reflector.c"),
                    *(str(XDP / name) for name in ("program.c", "xsk.c", "queues.c")),
                    "-o", str(path)], check=True)
    return path


def start(pair: VethPair, reflector) -> subprocess.Popen:
    process = subprocess.Popen([*pair.exec("server"), str(reflector), pair.server_if,
                                str(PORT)], stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([process.stderr], [], [], 10)
    line = process.stderr.readline() if ready else ""
    if not line.startswith(f"xdp_reflector: {pair.server_if} port {PORT}"):
        stop_process(process)
        raise AssertionError(f"the reflector did not start: {line}{process.stderr.read()}")
    return process


def echo_all(client: socket.socket, server: tuple, payloads: list[bytes]) -> list[bytes]:
    """Send the payloads WINDOW at a time; return those that did not come back, from the
    server's address and port, unchanged."""
    missing = []
    for start_at in range(0, len(payloads), WINDOW):
        window = payloads[start_at:start_at + WINDOW]
        for payload in window:
            client.sendto(payload, server)
        expected = set(window)
        try:
            while expected:
                answer, source = client.recvfrom(65535)
                assert source[:2] == server, f"an answer from {source}"
                expected.discard(answer)
        except socket.timeout:
            missing += [p for p in window if p in expected]
    return missing


def test_it_echoes_udp_to_its_port_and_leaves_the_rest_to_the_kernel(reflector):
    rng = random.Random(39)
    with VethPair() as pair:
        process = start(pair, reflector)
        try:
            for family, address in [(socket.AF_INET, SERVER_V4), (socket.AF_INET6, SERVER_V6)]:
                with pair.socket("client", family) as client:
                    client.settimeout(2)
                    payloads = [b"%05d " % i + rng.randbytes(rng.randrange(0, LARGEST - 5))
                                for i in range(DATAGRAMS - 2)]
                    payloads += [b"", bytes(LARGEST)]  # the smallest and the largest
                    missing = echo_all(client, (address, PORT), payloads)
                    assert not missing, f"{len(missing)} of {DATAGRAMS} not echoed " \
                                        f"({'IPv6' if family == socket.AF_INET6 else 'IPv4'})"

            # Another port: the kernel's, where a plain socket gets it; no echo comes.
            with pair.socket("server", socket.AF_INET) as other, \
                    pair.socket("client", socket.AF_INET) as client:
                other.bind((SERVER_V4, PORT + 1))
                other.settimeout(2)
                client.settimeout(0.5)
                client.sendto(b"to another port", (SERVER_V4, PORT + 1))
                assert other.recvfrom(100) == (b"to another port", (CLIENT_V4,
                                                                     client.getsockname()[1]))
                with pytest.raises(socket.timeout):
                    client.recv(100)

            for family, address in [(socket.AF_INET, SERVER_V4), (socket.AF_INET6, SERVER_V6)]:
                # TCP to the port: the kernel's RST, no socket listening there.
                with pair.socket("client", family, socket.SOCK_STREAM) as tcp:
                    tcp.settimeout(2)
                    with pytest.raises(ConnectionRefusedError):
                        tcp.connect((address, PORT))
                # A datagram in fragments to the port: the kernel's, which reassembles it and,
                # no socket bound there, says port unreachable (ICMP) to the connected socket.
                with pair.socket("client", family) as client:
                    client.settimeout(2)
                    client.connect((address, PORT))
                    client.send(bytes(3000))
                    with pytest.raises(ConnectionRefusedError):
                        client.recv(4000)

            process.terminate()
            _, err = process.communicate(timeout=10)
            assert process.returncode == 0, err
            reflected = re.search(r"reflected (\d+) frames, dropped (\d+)", err)
            assert reflected and reflected.groups() == (str(2 * DATAGRAMS), "0"), err
            assert pair.xdp_on_server() == ""
        finally:
            stop_process(process)
