"""End to end over UDP: malformed, odd and unsupported queries get the RFC's response or none."""

from __future__ import annotations

import struct

import dns.message
import dns.rcode
import pytest

WWW_QUESTION = b"\x03www\x07example\x00" + struct.pack("!HH", 1, 1)


def header(id_=0x1234, flags=0x0100, qd=1, an=0, ns=0, ar=0) -> bytes:
    return struct.pack("!HHHHHH", id_, flags, qd, an, ns, ar)


def unpack_header(packet: bytes) -> tuple:
    return struct.unpack("!HHHHHH", packet[:12])


def assert_still_serving(server):
    response = server.query("www.example.", "A")
    assert response.rcode() == dns.rcode.NOERROR and len(response.answer) == 1


@pytest.mark.parametrize("packet", [
    b"",
    b"\x12",
    header()[:11],
    header(flags=0x8100) + WWW_QUESTION,  # QR=1: a response, never answered (RFC 1035 §4.1.1)
    header(flags=0x8000, qd=0),
])
def test_dropped(server, packet):
    assert server.exchange(packet) is None
    assert_still_serving(server)


@pytest.mark.parametrize("opcode", [1, 2, 3, 4, 5, 6, 15])  # IQUERY STATUS - NOTIFY UPDATE DSO -
def test_other_opcodes_get_notimp_with_the_question(server, opcode):
    flags = (opcode << 11) | 0x0100
    response = server.exchange(header(flags=flags) + WWW_QUESTION)
    assert unpack_header(response) == (0x1234, 0x8000 | flags | dns.rcode.NOTIMP, 1, 0, 0, 0)
    assert response[12:] == WWW_QUESTION


def test_other_opcode_without_a_question_gets_notimp(server):
    response = server.exchange(header(flags=5 << 11, qd=0))
    assert unpack_header(response) == (0x1234, 0x8000 | (5 << 11) | dns.rcode.NOTIMP, 0, 0, 0, 0)
    assert len(response) == 12


@pytest.mark.parametrize("qdcount,question", [
    (0, b""),
    (0, WWW_QUESTION),
    (2, WWW_QUESTION + WWW_QUESTION),
    (1, b"\x03www\x07example"),                         # name runs past the end
    (1, b"\x03www\x07example\x00\x00\x01\x00"),           # QCLASS cut short
    (1, b"\x03www\xc0\x0c" + struct.pack("!HH", 1, 1)),  # compression pointer in the question
    (1, b"\x03www\x47example\x00" + struct.pack("!HH", 1, 1)),  # label type 0x40
    (1, b"\x03www\x87example\x00" + struct.pack("!HH", 1, 1)),  # label type 0x80
    (1, b"\x3f" + b"a" * 63 + b"\x3f" + b"b" * 63 + b"\x3f" + b"c" * 63 + b"\x3f" + b"d" * 63
        + b"\x00" + struct.pack("!HH", 1, 1)),       # 257 octets: over the 255 limit
])
def test_formerr(server, qdcount, question):
    response = server.exchange(header(id_=0xABCD, qd=qdcount) + question)
    assert unpack_header(response) == (0xABCD, 0x8100 | dns.rcode.FORMERR, 0, 0, 0, 0)
    assert len(response) == 12


@pytest.mark.parametrize("counts,tail", [
    ((1, 0, 0), b""),                     # ANCOUNT in a query
    ((0, 1, 0), b""),                     # NSCOUNT in a query
    ((0, 0, 1), b""),                     # ARCOUNT claims a record that is not there
    ((0, 0, 2), b"\x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00"),  # two claimed, one there
    ((0, 0, 0), b"\x00"),                 # a trailing byte
    ((0, 0, 0), b"trailing junk"),
])
def test_formerr_with_the_question(server, counts, tail):
    """The question parsed, so it is echoed (as Knot does); the rest of the packet is bad."""
    an, ns, ar = counts
    response = server.exchange(header(id_=0x5151, an=an, ns=ns, ar=ar) + WWW_QUESTION + tail)
    assert unpack_header(response) == (0x5151, 0x8100 | dns.rcode.FORMERR, 1, 0, 0, 0)
    assert response[12:] == WWW_QUESTION


def test_longest_legal_name_is_answered(server):
    # 255 octets, root included, below example.: NXDOMAIN.
    labels = [b"a" * 63, b"b" * 63, b"c" * 61, b"d" * 55, b"example"]
    name = b"".join(bytes([len(label)]) + label for label in labels) + b"\x00"
    assert len(name) == 255
    response = server.exchange(header() + name + struct.pack("!HH", 1, 1))
    assert unpack_header(response)[1] == 0x8500 | dns.rcode.NXDOMAIN


@pytest.mark.parametrize("qclass", [3, 4, 254, 2, 65280])  # CH, HS, NONE, CSNET, private
def test_other_classes_are_refused(server, qclass):
    question = b"\x03www\x07example\x00" + struct.pack("!HH", 1, qclass)
    response = server.exchange(header() + question)
    assert unpack_header(response) == (0x1234, 0x8100 | dns.rcode.REFUSED, 1, 0, 0, 0)
    assert response[12:] == question


def test_class_any_is_answered_from_class_in_data(server):
    """RFC 1035 §3.2.5: QCLASS * matches any class; Knot and NSD answer it from IN data."""
    question = b"\x03www\x07example\x00" + struct.pack("!HH", 28, 255)
    response = dns.message.from_wire(server.exchange(header() + question))
    assert response.rcode() == dns.rcode.NOERROR
    assert [r.to_text() for r in response.answer] == ["www.example. 3600 IN AAAA 2001:db8::10"]


@pytest.mark.parametrize("qtype", [0, 251, 252, 253, 254])  # reserved, IXFR, AXFR, MAILB, MAILA
def test_types_without_zone_data_get_notimp(server, qtype):
    question = b"\x07example\x00" + struct.pack("!HH", qtype, 1)
    response = server.exchange(header() + question)
    assert unpack_header(response) == (0x1234, 0x8100 | dns.rcode.NOTIMP, 1, 0, 0, 0)
    assert response[12:] == question


def test_response_is_query_header_question_and_precompiled_body(server, testset_compiled):
    """No record is encoded at run time: after the client's own question come exactly the
    bytes the compiler serialized for (www.example., A)."""
    body = testset_compiled.body_for("www.example.", 1)
    question = b"\x03WwW\x07eXample\x00" + struct.pack("!HH", 1, 1)
    response = server.exchange(header(id_=0x4242, flags=0x0100) + question)
    assert response[:2] == b"\x42\x42"
    assert response[2:12] == bytes([body.header[0] | 0x01]) + body.header[1:]  # RD copied
    assert response[12:12 + len(question)] == question
    assert response[12 + len(question):] == body.body


def test_answer_over_512_octets_sets_tc_and_sends_the_question_alone(server):
    """RFC 1035 §4.2.1, RFC 2181 §9: without EDNS a UDP response holds 512 octets; an answer
    that does not fit is not cut into a partial RRset."""
    question = b"\x03big\x07example\x00" + struct.pack("!HH", 16, 1)
    response = server.exchange(header() + question)
    assert unpack_header(response) == (0x1234, 0x8000 | 0x0400 | 0x0200 | 0x0100, 1, 0, 0, 0)
    assert response[12:] == question
