"""DNS over TCP (RFC 1035 §4.2.2, RFC 7766): framing, several and pipelined queries, pieces,
large answers, ANY, idle timeout, the connection cap, and clients that misbehave."""

from __future__ import annotations

import socket
import struct
import time

import dns.flags
import dns.message
import dns.rcode
import pytest

from conftest import Server

LONG = 5.0  # seconds to wait for something that must happen (bounds every loop here)


def connect(server) -> socket.socket:
    sock = socket.create_connection(server.address, timeout=LONG)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def frame(message: bytes) -> bytes:
    return struct.pack("!H", len(message)) + message


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"closed after {len(data)} of {n} octets")
        data += chunk
    return data


def recv_message(sock: socket.socket) -> dns.message.Message:
    (length,) = struct.unpack("!H", recv_exactly(sock, 2))
    return dns.message.from_wire(recv_exactly(sock, length))


def query(qname: str, qtype: str = "A", id_: int = 1) -> bytes:
    message = dns.message.make_query(qname, qtype, use_edns=False)
    message.id = id_
    return message.to_wire()


def closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def test_one_query(server):
    with connect(server) as sock:
        sock.sendall(frame(query("www.example.", "AAAA")))
        response = recv_message(sock)
    assert response.rcode() == dns.rcode.NOERROR and response.flags & dns.flags.AA
    assert [r.to_text() for r in response.answer] == ["www.example. 3600 IN AAAA 2001:db8::10"]


def test_several_queries_on_one_connection(server):
    with connect(server) as sock:
        for i, qname in enumerate(["www.example.", "nope.example.", "mail.example."]):
            sock.sendall(frame(query(qname, id_=i)))
            response = recv_message(sock)
            assert response.id == i
            assert response.rcode() == (dns.rcode.NXDOMAIN if qname.startswith("nope")
                                        else dns.rcode.NOERROR)


def test_pipelined_queries_are_answered_in_order(server):
    names = ["www.example.", "mail.example.", "nope.example.", "txt.example."] * 25
    with connect(server) as sock:
        sock.sendall(b"".join(frame(query(n, "TXT" if n.startswith("txt") else "A", id_=i))
                              for i, n in enumerate(names)))
        ids = [recv_message(sock).id for _ in names]
    assert ids == list(range(len(names)))


def test_query_arriving_in_pieces(server):
    data = frame(query("www.example.", id_=77))
    with connect(server) as sock:
        for i in range(len(data)):
            sock.sendall(data[i:i + 1])
            time.sleep(0.002)
        response = recv_message(sock)
    assert response.id == 77 and len(response.answer) == 1


def test_answer_of_63_kilobytes_leaves_in_pieces(server):
    with connect(server) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(frame(query("huge.example.", "TXT")))
        (length,) = struct.unpack("!H", recv_exactly(sock, 2))
        data = b""
        while len(data) < length:
            data += sock.recv(min(1000, length - len(data)))
    response = dns.message.from_wire(data)
    assert length > 60000 and not response.flags & dns.flags.TC
    assert len(response.answer[0]) == 240


def test_huge_answer_over_udp_is_truncated(server):
    response = dns.message.from_wire(server.exchange(
        dns.message.make_query("huge.example.", "TXT", use_edns=0, payload=4096).to_wire()))
    assert response.flags & dns.flags.TC and response.answer == []


def test_any_over_tcp_gets_every_rrset(server):
    with connect(server) as sock:
        sock.sendall(frame(query("www.example.", "ANY")))
        response = recv_message(sock)
    assert sorted(r.to_text() for r in response.answer) == [
        "www.example. 3600 IN A 192.0.2.10\nwww.example. 3600 IN A 192.0.2.11",
        "www.example. 3600 IN AAAA 2001:db8::10"]
    udp = server.query("www.example.", "ANY")
    assert [r.to_text() for r in udp.answer] == [
        "www.example. 3600 IN A 192.0.2.10\nwww.example. 3600 IN A 192.0.2.11"]


@pytest.mark.parametrize("qtype", ["AXFR", "IXFR"])
def test_zone_transfers_over_tcp_get_notimp(server, qtype):
    with connect(server) as sock:
        sock.sendall(frame(query("example.", qtype)))
        response = recv_message(sock)
    assert response.rcode() == dns.rcode.NOTIMP and len(response.question) == 1


@pytest.mark.parametrize("data", [
    b"\x00\x00",                                   # a length of 0
    b"\x00\x01\x00",                               # a one-octet message
    frame(b"\x12\x34\x81\x00" + b"\x00" * 8),        # QR=1: a response, not a query
])
def test_bad_frames_close_the_connection(server, data):
    with connect(server) as sock:
        sock.sendall(data)
        assert closed_by_server(sock, LONG)


def test_slow_client_does_not_hold_up_another(server):
    partial = frame(query("www.example."))[:7]
    with connect(server) as slow, connect(server) as quick:
        slow.sendall(partial)
        quick.sendall(frame(query("mail.example.", id_=5)))
        quick.settimeout(1.0)
        assert recv_message(quick).id == 5
        slow.sendall(frame(query("www.example."))[7:])
        assert len(recv_message(slow).answer) == 1


def test_client_that_does_not_read_holds_up_nobody(server):
    """Answers pile up for a client that never reads; the server stops reading it and goes
    on serving others."""
    with connect(server) as hog, connect(server) as other:
        hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        hog.settimeout(0.2)
        burst = frame(query("huge.example.", "TXT")) * 50
        try:
            hog.sendall(burst)
        except socket.timeout:
            pass  # the server stopped reading: back-pressure works
        other.sendall(frame(query("www.example.", id_=9)))
        other.settimeout(1.0)
        assert recv_message(other).id == 9
    assert server.alive()


def one_worker(binary, *args):
    """One worker, so that every connection meets the same pool and the same clock."""
    srv = Server(binary, "--threads", "1", *args)
    yield srv
    alive = srv.alive()
    srv.stop()
    assert alive


@pytest.fixture()
def strict_server(testset_binary):
    yield from one_worker(testset_binary, "--tcp-idle-timeout", "1")


@pytest.fixture()
def capped_server(testset_binary):
    yield from one_worker(testset_binary, "--tcp-idle-timeout", "60",
                          "--tcp-max-connections", "3")


def test_idle_connection_is_closed(strict_server):
    with connect(strict_server) as sock:
        sock.sendall(frame(query("www.example.")))
        assert len(recv_message(sock).answer) == 1
        started = time.monotonic()
        assert closed_by_server(sock, LONG)
        assert time.monotonic() - started >= 0.5  # not at once: after about a second


def test_length_larger_than_what_follows_waits_then_times_out(strict_server):
    with connect(strict_server) as sock:
        sock.sendall(b"\x00\x40" + query("www.example."))  # claims 64, sends 29
        assert closed_by_server(sock, LONG)


def test_connection_cap_closes_the_oldest_idle(capped_server):
    silent = [connect(capped_server) for _ in range(3)]
    try:
        # The three are the oldest and idle; the idle timeout (60 s) is far away.
        silent[1].sendall(frame(query("www.example.", id_=1)))
        assert recv_message(silent[1]).id == 1  # now silent[0] is the oldest idle one
        with connect(capped_server) as newcomer:
            newcomer.sendall(frame(query("www.example.", id_=3)))
            newcomer.settimeout(1.0)
            assert recv_message(newcomer).id == 3
        assert closed_by_server(silent[0], 1.0)
        assert not closed_by_server(silent[2], 0.2)
    finally:
        for sock in silent:
            sock.close()


def test_many_silent_connections(capped_server):
    """A client opening connections and sending nothing takes no more than the cap, and
    never stops a real query from being answered."""
    socks = [connect(capped_server) for _ in range(40)]
    try:
        with connect(capped_server) as real:
            real.sendall(frame(query("www.example.", id_=4)))
            real.settimeout(1.0)
            assert recv_message(real).id == 4
    finally:
        for sock in socks:
            sock.close()
