"""DNS cookies on a running server (RFC 7873, server cookies as RFC 9018): a client cookie
gets a server cookie, a returned one comes back unchanged from any worker and after a swap,
a foreign or tampered one is replaced, a malformed option is FORMERR, and a zone set with
cookie-secret makes the cookies RFC 9018 §4.4 says, which any server sharing the secret
(an anycast set) takes."""

from __future__ import annotations

import socket
import struct
import time

import dns.edns
import dns.flags
import dns.message
import dns.query
import dns.rcode
import pytest

from conftest import Server, build_set
from swapping import ControlledServer, build_swap_set, deploy, wait_gone

COOKIE = 10
CLIENT = bytes.fromhex("2464c4abcf10c957")
SECRET = "e5e973e5a6b2a43f48e7dc849e37bfcf"


def with_cookie(qname: str, cookie: bytes | None, qtype: str = "A") -> dns.message.Message:
    options = [] if cookie is None else [dns.edns.GenericOption(COOKIE, cookie)]
    return dns.message.make_query(qname, qtype, use_edns=0, options=options)


def cookie_of(response: dns.message.Message) -> bytes | None:
    found = [o for o in response.options if o.otype == COOKIE]
    assert len(found) <= 1
    return found[0].to_wire() if found else None


def ask(port: int, message: dns.message.Message, source: str = "127.0.0.1",
        tcp: bool = False) -> dns.message.Message:
    how = dns.query.tcp if tcp else dns.query.udp
    return how(message, "127.0.0.1", port=port, timeout=2, source=source)


def siphash24(key: bytes, data: bytes) -> int:
    """SipHash-2-4, as written in its paper: the test's own, not the server's."""
    mask = (1 << 64) - 1
    k0, k1 = struct.unpack("<QQ", key)
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d,
         k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]

    def rotl(x, b):
        return ((x << b) | (x >> (64 - b))) & mask

    def rounds(n):
        for _ in range(n):
            v[0] = (v[0] + v[1]) & mask; v[1] = rotl(v[1], 13) ^ v[0]; v[0] = rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & mask; v[3] = rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & mask; v[3] = rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & mask; v[1] = rotl(v[1], 17) ^ v[2]; v[2] = rotl(v[2], 32)
    tail = len(data) % 8
    words = [struct.unpack("<Q", data[i:i + 8])[0] for i in range(0, len(data) - tail, 8)]
    words.append(len(data) % 256 << 56 | int.from_bytes(data[len(data) - tail:], "little"))
    for m in words:
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    v[2] ^= 0xff
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def test_a_client_cookie_gets_a_server_cookie(server):
    before = int(time.time())
    response = ask(server.address[1], with_cookie("www.example.", CLIENT))
    after = int(time.time())
    assert response.rcode() == dns.rcode.NOERROR and len(response.answer) == 1
    cookie = cookie_of(response)
    assert len(cookie) == 24 and cookie[:8] == CLIENT
    version, reserved, stamp = cookie[8], cookie[9:12], struct.unpack("!I", cookie[12:16])[0]
    assert version == 1 and reserved == b"\0\0\0"
    assert before - 2 <= stamp <= after + 1  # the worker's clock: read once a second


def test_no_cookie_asked_none_given(server):
    assert cookie_of(ask(server.address[1], with_cookie("www.example.", None))) is None


def test_a_returned_cookie_comes_back_unchanged_from_every_worker(testset_binary):
    server = Server(testset_binary, "--threads", "2")
    try:
        port = server.address[1]
        cookie = cookie_of(ask(port, with_cookie("www.example.", CLIENT)))
        # Each query from a new source port: the kernel spreads them over both workers.
        for _ in range(20):
            response = ask(port, with_cookie("www.example.", cookie))
            assert response.rcode() == dns.rcode.NOERROR and cookie_of(response) == cookie
        assert cookie_of(ask(port, with_cookie("www.example.", cookie), tcp=True)) == cookie
    finally:
        server.stop()


def test_a_cookie_is_bound_to_its_address(server):
    port = server.address[1]
    cookie = cookie_of(ask(port, with_cookie("www.example.", CLIENT)))
    elsewhere = ask(port, with_cookie("www.example.", cookie), source="127.0.0.2")
    assert elsewhere.rcode() == dns.rcode.NOERROR and len(elsewhere.answer) == 1
    assert cookie_of(elsewhere)[:8] == CLIENT and cookie_of(elsewhere) != cookie


@pytest.mark.parametrize("tamper", [lambda c: c[:-1] + bytes([c[-1] ^ 1]),
                                    lambda c: c[:8] + b"\x02" + c[9:],
                                    lambda c: c[:8] + bytes(16)])
def test_a_tampered_cookie_is_answered_with_a_new_one(server, tamper):
    port = server.address[1]
    cookie = cookie_of(ask(port, with_cookie("www.example.", CLIENT)))
    bad = tamper(cookie)
    response = ask(port, with_cookie("www.example.", bad))
    assert response.rcode() == dns.rcode.NOERROR and len(response.answer) == 1
    assert cookie_of(response) == cookie  # made again: the same second, the same cookie
    assert cookie_of(response) != bad


@pytest.mark.parametrize("length", [0, 1, 7, 9, 15, 41])
def test_a_malformed_cookie_option_is_formerr(server, length):
    """RFC 7873 §5.2.2; the FORMERR keeps the OPT (RFC 6891 §7) and carries no cookie."""
    response = ask(server.address[1], with_cookie("www.example.", bytes(length)))
    assert response.rcode() == dns.rcode.FORMERR
    assert response.edns == 0 and not response.answer and cookie_of(response) is None


@pytest.mark.parametrize("length", [8, 16, 24, 40])
def test_every_length_the_rfc_allows_is_answered(server, length):
    response = ask(server.address[1], with_cookie("www.example.", CLIENT + bytes(length - 8)))
    assert response.rcode() == dns.rcode.NOERROR and len(cookie_of(response)) == 24


def test_error_responses_carry_the_cookie_too(server):
    response = ask(server.address[1], with_cookie("not-served.test.", CLIENT))
    assert response.rcode() == dns.rcode.REFUSED and cookie_of(response)[:8] == CLIENT


def test_a_configured_secret_makes_the_cookies_of_rfc_9018(tmp_path):
    """Any RFC 9018 server holding the secret computes the same cookie: here the test's own
    SipHash over client cookie, version, reserved, timestamp and 127.0.0.1."""
    zone = tmp_path / "example.zone"
    zone.write_text("$ORIGIN example.\n$TTL 300\n@ SOA ns h 1 2 3 4 5\n@ NS ns\nns A 192.0.2.1\n")
    (tmp_path / "zonebake.toml").write_text(
        f'[server]\ncookie-secret = "{SECRET}"\n[[zone]]\norigin = "example."\n'
        f'file = "example.zone"\n')
    out = build_set(tmp_path / "out", "-c", str(tmp_path / "zonebake.toml"))
    server = Server(out)
    try:
        cookie = cookie_of(ask(server.address[1], with_cookie("ns.example.", CLIENT)))
        head = cookie[:16]
        digest = siphash24(bytes.fromhex(SECRET), head + socket.inet_aton("127.0.0.1"))
        assert cookie[16:] == digest.to_bytes(8, "little")
        # A cookie another server of the set made a moment ago is valid here.
        stamp = struct.pack("!I", int(time.time()) - 60)
        other = CLIENT + b"\x01\0\0\0" + stamp
        other += siphash24(bytes.fromhex(SECRET),
                           other + socket.inet_aton("127.0.0.1")).to_bytes(8, "little")
        assert cookie_of(ask(server.address[1], with_cookie("ns.example.", other))) == other
    finally:
        server.stop()


def test_cookies_hold_across_a_swap(tmp_path):
    """The secret goes to the successor with the sockets: a client's cookie stays good."""
    old = build_swap_set(tmp_path / "old", 1)
    new = build_swap_set(tmp_path / "new", 2)
    control, log = tmp_path / "control", tmp_path / "server.log"
    server = ControlledServer(old, control, log)
    try:
        cookie = cookie_of(ask(server.port, with_cookie("v.swap.test.", CLIENT)))
        assert deploy(new, control, log).returncode == 0
        assert wait_gone(server.process.pid)
        response = ask(server.port, with_cookie("v.swap.test.", cookie))
        assert str(response.answer[0][0]) == "192.0.2.2"  # the new process answered
        assert cookie_of(response) == cookie
    finally:
        server.stop_all()
