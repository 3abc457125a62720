"""End to end over UDP: queries from sources no answer should go to, and answers the kernel
refuses to send. Forging a source address takes a raw socket and the small services' ports
are below 1024: both need root (CAP_NET_RAW, CAP_NET_BIND_SERVICE)."""

from __future__ import annotations

import os
import signal
import socket
import struct
import time

import dns.message
import dns.rcode
import pytest

from conftest import Server

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="forging a source address and "
                                "binding ports below 1024 need root")


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def forged(source: tuple[str, int], destination: tuple[str, int], payload: bytes) -> bytes:
    """An IPv4 datagram from `source`, which the sender does not own."""
    (src, sport), (dst, dport) = source, destination
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 17, len(udp))
    udp = udp[:6] + struct.pack("!H", checksum(pseudo + udp) or 0xFFFF) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    return ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:] + udp


def query(qname: str, id_: int) -> bytes:
    message = dns.message.make_query(qname, "A", use_edns=False)
    message.id = id_
    return message.to_wire()


@pytest.fixture
def one_worker(testset_binary):
    server = Server(testset_binary, "--threads", "1", "--batch", "32")
    yield server
    alive = server.alive()
    server.stop()
    assert alive, "the server died"


@pytest.mark.parametrize("source", [("127.255.255.255", 5353), ("127.0.0.1", 0)])
def test_an_unanswerable_query_costs_only_itself(one_worker, source):
    """A query forged from the loopback broadcast address (the kernel refuses to send there,
    EACCES) or from port 0 (EINVAL; the server drops it unanswered), first in a batch of 20:
    the other 19 are answered."""
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.bind(("127.0.0.1", 0))
    client.settimeout(2)
    try:
        # Stopped, the server reads the 20 queries in one recvmmsg once it runs again.
        os.kill(one_worker.process.pid, signal.SIGSTOP)
        try:
            raw.sendto(forged(source, one_worker.address,
                              query("www.example.", 1)), (one_worker.address[0], 0))
            for i in range(19):
                client.sendto(query("www.example.", 100 + i), one_worker.address)
            time.sleep(0.2)
        finally:
            os.kill(one_worker.process.pid, signal.SIGCONT)
        ids = set()
        for _ in range(19):
            response = dns.message.from_wire(client.recv(4096))
            assert response.rcode() == dns.rcode.NOERROR
            ids.add(response.id)
        assert ids == set(range(100, 119))
    finally:
        raw.close()
        client.close()


@pytest.mark.parametrize("port", [7, 13, 17, 19, 37])
def test_queries_from_the_small_services_get_no_answer(one_worker, port):
    """echo, daytime, quote of the day, chargen, time answer whatever reaches them: an
    answer to a query forged from one would start a loop."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as service, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        service.bind(("127.0.0.1", port))
        service.sendto(query("www.example.", 7), one_worker.address)
        client.settimeout(2)
        client.sendto(query("www.example.", 8), one_worker.address)
        assert dns.message.from_wire(client.recv(4096)).id == 8  # the first was read before
        service.setblocking(False)
        with pytest.raises(BlockingIOError):
            service.recv(4096)

