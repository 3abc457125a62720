"""Response rate limiting (rrl.h): a burst of one answer to one client prefix gets `rate`
answers, then every slip-th limited one truncated and the rest nothing; other prefixes,
other answers, TCP and queries with a valid server cookie go on; a client cookie alone gets
BADCOOKIE with a cookie instead of TC; the counters say how many."""

from __future__ import annotations

import json
import socket
import urllib.request

import dns.edns
import dns.flags
import dns.message
import dns.query
import dns.rcode
import pytest

from conftest import Server
from test_cookies import CLIENT, COOKIE, cookie_of, with_cookie

RATE = 5
BURST = 40


def burst(port: int, messages: list[dns.message.Message], source: str = "127.0.0.1",
          quiet: float = 0.3, to: str = "127.0.0.1") -> list[dns.message.Message]:
    """Send every message at once from one socket; the responses that come back."""
    sock = socket.socket(socket.AF_INET6 if ":" in to else socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((source, 0))
    try:
        for i, message in enumerate(messages):
            message.id = i
            sock.sendto(message.to_wire(), (to, port))
        responses = []
        sock.settimeout(quiet)
        for _ in range(len(messages)):  # bounded: at most one response a query
            try:
                responses.append(dns.message.from_wire(sock.recv(65535)))
            except socket.timeout:
                break
        return responses
    finally:
        sock.close()


def plain(qname: str = "www.example.", edns: bool = False) -> dns.message.Message:
    return dns.message.make_query(qname, "A", use_edns=0 if edns else False)


def stats(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats.json", timeout=2) as reply:
        return json.load(reply)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def limited(testset_binary):
    metrics = free_port()
    server = Server(testset_binary, "--threads", "1", "--rrl-responses-per-second", str(RATE),
                    "--rrl-slip", "2", "--metrics", f"127.0.0.1:{metrics}")
    server.metrics_port = metrics
    yield server
    alive = server.alive()
    server.stop()
    assert alive


def split(responses):
    answered = [r for r in responses if not r.flags & dns.flags.TC and r.answer]
    slipped = [r for r in responses if r.flags & dns.flags.TC]
    return answered, slipped


def test_a_burst_gets_the_rate_then_every_second_one_truncated(limited):
    responses = burst(limited.address[1], [plain(edns=True) for _ in range(BURST)])
    answered, slipped = split(responses)
    # A tick of the worker's clock may fall inside the burst and refill the bucket once.
    assert RATE <= len(answered) <= 2 * RATE
    limited_count = BURST - len(answered)
    assert len(slipped) == limited_count // 2
    assert len(responses) == len(answered) + len(slipped)
    for response in slipped:
        assert response.rcode() == dns.rcode.NOERROR and response.flags & dns.flags.AA
        assert not response.answer and not response.authority and not response.additional
        assert response.edns == 0  # the OPT stays
        assert str(response.question[0].name) == "www.example."
    counted = stats(limited.metrics_port)
    assert counted["rrl_slipped"] == len(slipped)
    assert counted["rrl_dropped"] == limited_count - len(slipped)


def test_a_slipped_response_is_no_larger_than_the_query(limited):
    port = limited.address[1]
    burst(port, [plain("mail.example.") for _ in range(BURST)])
    query = plain("mail.example.")
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(1)
    try:
        sizes = []
        for i in range(4):  # limited now: two of four come back, truncated
            query.id = 100 + i
            sock.sendto(query.to_wire(), ("127.0.0.1", port))
        for _ in range(2):
            sizes.append(len(sock.recv(65535)))
        assert sizes == [len(query.to_wire())] * 2
    finally:
        sock.close()


def test_other_prefixes_and_other_answers_are_not_held_back(limited):
    port = limited.address[1]
    flood = burst(port, [plain() for _ in range(BURST)], source="127.0.0.2")
    assert len(split(flood)[0]) <= 2 * RATE
    # Another /24: every answer.
    others = burst(port, [plain() for _ in range(RATE)], source="127.0.1.1")
    assert len(split(others)[0]) == RATE
    # The same /24, another answer: a bucket of its own.
    mail = burst(port, [plain("mail.example.") for _ in range(RATE)], source="127.0.0.3")
    assert len(split(mail)[0]) == RATE
    # TCP proves its source: never limited.
    response = dns.query.tcp(plain(), "127.0.0.1", port=port, timeout=2, source="127.0.0.2")
    assert response.answer and not response.flags & dns.flags.TC


def test_a_slipped_negative_answer_keeps_its_question_and_opt_alone(limited):
    """The records after the question are stepped over to find the OPT: an NXDOMAIN's SOA."""
    responses = burst(limited.address[1], [plain("nx.example.", edns=True)
                                           for _ in range(BURST)])
    whole = [r for r in responses if not r.flags & dns.flags.TC]
    slipped = [r for r in responses if r.flags & dns.flags.TC]
    assert whole and whole[0].rcode() == dns.rcode.NXDOMAIN and whole[0].authority
    assert slipped
    for response in slipped:
        assert response.rcode() == dns.rcode.NXDOMAIN and response.edns == 0
        assert not response.answer and not response.authority and not response.additional
        assert str(response.question[0].name) == "nx.example."


def test_an_ipv6_client_is_limited_by_its_prefix(testset_binary):
    server = Server(testset_binary, "--threads", "1", "--rrl-responses-per-second", str(RATE),
                    listen=("127.0.0.1:0", "[::1]:0"))
    try:
        v4_port, v6_port = server.addresses[0][1], server.addresses[1][1]
        over6 = burst(v6_port, [plain() for _ in range(BURST)], source="::1", to="::1")
        answered, slipped = split(over6)
        assert RATE <= len(answered) <= 2 * RATE and slipped
        # The same name from an IPv4 client: a bucket of its own.
        over4 = burst(v4_port, [plain() for _ in range(RATE)])
        assert len(split(over4)[0]) == RATE
    finally:
        alive = server.alive()
        server.stop()
    assert alive


def test_a_valid_server_cookie_is_never_limited(limited):
    port = limited.address[1]
    first = dns.query.udp(with_cookie("www.example.", CLIENT), "127.0.0.1", port=port,
                          timeout=2)
    cookie = cookie_of(first)
    responses = burst(port, [with_cookie("www.example.", cookie) for _ in range(BURST)])
    answered, slipped = split(responses)
    assert len(answered) == BURST and not slipped


def test_a_client_cookie_alone_slips_as_badcookie_and_then_gets_through(limited):
    port = limited.address[1]
    responses = burst(port, [with_cookie("txt.example.", CLIENT, "TXT") for _ in range(BURST)])
    bad = [r for r in responses if r.rcode() == dns.rcode.BADCOOKIE]
    assert bad and len(bad) == (BURST - (len(responses) - len(bad))) // 2
    for response in bad:
        assert not response.flags & dns.flags.TC and not response.flags & dns.flags.AA
        assert not response.answer and not response.authority
        assert cookie_of(response)[:8] == CLIENT and len(cookie_of(response)) == 24
    # With the cookie it was given, the client is answered at once.
    again = dns.query.udp(with_cookie("txt.example.", cookie_of(bad[0]), "TXT"), "127.0.0.1",
                          port=port, timeout=2)
    assert again.rcode() == dns.rcode.NOERROR and again.answer


def test_without_a_rate_nothing_is_limited(server):
    responses = burst(server.address[1], [plain() for _ in range(BURST)])
    assert len(split(responses)[0]) == BURST
