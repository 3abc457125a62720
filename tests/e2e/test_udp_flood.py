"""A UDP flood on a worker's socket must not hold up the rest of its work: with one query a
batch (the worst case), a load generator sending faster than the worker answers keeps the
socket full; a TCP query sent meanwhile is still answered at once. The flood is bounded (3 s);
the TCP query waits at most 1.5 s. While the socket stays full the worker reads it without
epoll watching it (runtime/server/worker.c); once the flood is over it must watch it again: a
UDP query then is answered."""

from __future__ import annotations

import socket
import struct
import subprocess
import time

import dns.message
import dns.query
import dns.rcode
import pytest

from conftest import Server
from swapping import build_loadgen

FLOOD_SECONDS = 3


@pytest.fixture(scope="module")
def loadgen(tmp_path_factory):
    return build_loadgen(tmp_path_factory.mktemp("loadgen"))


def tcp_query(address, qname: str, timeout: float) -> dns.message.Message:
    wire = dns.message.make_query(qname, "A", use_edns=False).to_wire()
    with socket.create_connection(address, timeout=timeout) as s:
        s.sendall(struct.pack("!H", len(wire)) + wire)
        data = b""
        while len(data) < 2 or len(data) < 2 + struct.unpack("!H", data[:2])[0]:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return dns.message.from_wire(data[2:])


def test_tcp_is_answered_during_a_udp_flood(testset_binary, loadgen, tmp_path):
    server = Server(testset_binary, "--threads", "1", "--batch", "1")
    queries = tmp_path / "queries"
    queries.write_text("www.example. A\n")
    flood = subprocess.Popen([str(loadgen), *map(str, server.address), str(queries),
                              "--rate", "2000000", "--seconds", str(FLOOD_SECONDS),
                              "--batch", "64", "--sockets", "4", "--cpu", "-1",
                              "--linger", "0"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)  # the flood under way
        assert flood.poll() is None
        started = time.monotonic()
        response = tcp_query(server.address, "www.example.", timeout=1.5)
        waited = time.monotonic() - started
        assert response.rcode() == dns.rcode.NOERROR and len(response.answer) == 1
        assert flood.poll() is None, "the flood ended before the answer came"
        assert waited < 1.5
        flood.wait(timeout=FLOOD_SECONDS + 30)
        time.sleep(0.5)  # the worker has found the socket empty, and waits on epoll again
        later = dns.query.udp(dns.message.make_query("www.example.", "A", use_edns=False),
                              server.address[0], port=server.address[1], timeout=2)
        assert later.rcode() == dns.rcode.NOERROR and len(later.answer) == 1
    finally:
        if flood.poll() is None:
            flood.kill()
        flood.wait(timeout=FLOOD_SECONDS + 30)
        alive = server.alive()
        server.stop()
    assert alive
