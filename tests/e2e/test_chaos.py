"""CH-class TXT questions about the server (id.server, hostname.bind, version.bind,
version.server), answered as NSD and Knot answer them (checked on the wire): one TXT in class
CH, owner the question, TTL 0, AA clear, NOERROR; REFUSED when the text is not configured, for
other names and for other types (ANY gets the TXT, as NSD)."""

from __future__ import annotations

import socket
import struct

import dns.edns
import dns.flags
import dns.message
import dns.rcode
import pytest

from conftest import ZONES, Server, build_set

IDENTITY = "ns-ch.example"
VERSION = "zonebake 1.2.3"


def config(tmp_path, server_table: str):
    path = tmp_path / "z.toml"
    path.write_text(f'[server]\n{server_table}\n[[zone]]\norigin = "example."\n'
                    f'file = "{ZONES / "example.zone"}"\n')
    return path


@pytest.fixture(scope="module")
def chaos_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chaos")
    path = config(tmp, f'identity = "{IDENTITY}"\nversion = "{VERSION}"')
    server = Server(build_set(tmp / "out", "-c", str(path)))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def hidden_server(tmp_path_factory):
    """Neither identity nor version configured."""
    tmp = tmp_path_factory.mktemp("hidden")
    server = Server(build_set(tmp / "out", "--zone", f"example.={ZONES / 'example.zone'}"))
    yield server
    server.stop()


def ch_query(qname: str, qtype: str = "TXT", qid: int = 0x1234, rd: bool = False) -> bytes:
    query = dns.message.make_query(qname, qtype, "CH", use_edns=False, id=qid)
    query.flags = dns.flags.RD if rd else 0
    return query.to_wire()


def expected_txt_response(query: bytes, text: str) -> bytes:
    """Header (QR, RD copied, AA clear, NOERROR, one answer), the question as sent, then
    owner = pointer to the question, TXT, CH, TTL 0, one character-string."""
    flags = 0x8000 | (struct.unpack("!H", query[2:4])[0] & 0x0100)
    rdata = bytes([len(text.encode())]) + text.encode()
    return (query[:2] + struct.pack("!HHHHH", flags, 1, 1, 0, 0) + query[12:]
            + b"\xc0\x0c" + struct.pack("!HHIH", 16, 3, 0, len(rdata)) + rdata)


@pytest.mark.parametrize("qname,text", [
    ("id.server.", IDENTITY), ("hostname.bind.", IDENTITY),
    ("version.bind.", VERSION), ("version.server.", VERSION),
    ("ID.Server.", IDENTITY), ("VERSION.BIND.", VERSION),  # letter case kept in the answer
])
def test_txt_answers_exact_bytes(chaos_server, qname, text):
    query = ch_query(qname, rd=True)
    assert chaos_server.exchange(query) == expected_txt_response(query, text)


def test_any_gets_the_txt(chaos_server):
    query = ch_query("id.server.", "ANY")
    response = dns.message.from_wire(chaos_server.exchange(query))
    assert response.rcode() == dns.rcode.NOERROR
    assert not response.flags & dns.flags.AA
    assert [(str(r.name), r.rdclass, r.rdtype, r.ttl, [t.strings for t in r])
            for r in response.answer] == [("id.server.", 3, 16, 0, [(IDENTITY.encode(),)])]


def refused(server, query: bytes) -> None:
    """REFUSED, question echoed, nothing else (as every other CH question)."""
    response = server.exchange(query)
    assert response[:2] == query[:2]
    assert struct.unpack("!HHHHH", response[2:12]) == (0x8000 | dns.rcode.REFUSED, 1, 0, 0, 0)
    assert response[12:] == query[12:]


@pytest.mark.parametrize("qname,qtype", [
    ("id.server.", "A"), ("version.bind.", "NS"), ("version.bind.", "AXFR"),
    ("authors.bind.", "TXT"), ("foo.id.server.", "TXT"), ("server.", "TXT"),
    ("example.", "TXT"),
])
def test_other_names_and_types_are_refused(chaos_server, qname, qtype):
    refused(chaos_server, ch_query(qname, qtype))


@pytest.mark.parametrize("qname", ["id.server.", "hostname.bind.", "version.bind.",
                                   "version.server."])
def test_unconfigured_texts_are_refused(hidden_server, qname):
    refused(hidden_server, ch_query(qname))


def test_in_class_is_unaffected(chaos_server):
    """The same names in class IN are names in no served zone."""
    query = dns.message.make_query("id.server.", "TXT", use_edns=False).to_wire()
    assert struct.unpack("!H", chaos_server.exchange(query)[2:4])[0] & 0xF == dns.rcode.REFUSED
    response = chaos_server.query("www.example.", "A")
    assert response.rcode() == dns.rcode.NOERROR and len(response.answer) == 1


def test_edns_and_nsid_with_a_chaos_answer(chaos_server):
    query = dns.message.make_query("version.server.", "TXT", "CH", use_edns=0, payload=1232,
                                   options=[dns.edns.GenericOption(dns.edns.NSID, b"")])
    response = dns.message.from_wire(chaos_server.exchange(query.to_wire()))
    assert response.edns == 0 and response.rcode() == dns.rcode.NOERROR
    assert [(o.otype, o.to_wire()) for o in response.options] == \
        [(dns.edns.NSID, IDENTITY.encode())]
    assert response.answer[0][0].strings == (VERSION.encode(),)


def test_over_tcp(chaos_server):
    query = ch_query("hostname.bind.")
    with socket.create_connection(chaos_server.address, timeout=2) as sock:
        sock.sendall(struct.pack("!H", len(query)) + query)
        expected = expected_txt_response(query, IDENTITY)
        data = b""
        while len(data) < 2 + len(expected):
            chunk = sock.recv(4096)
            assert chunk, "connection closed early"
            data += chunk
    assert data == struct.pack("!H", len(expected)) + expected


@pytest.mark.parametrize("table,message", [
    ('version = "' + "v" * 256 + '"', "version is longer than 255 octets"),
    ("version = 3", "version must be a str"),
])
def test_bad_version_is_a_usage_error(tmp_path, table, message):
    from conftest import run_zonebake
    result = run_zonebake("check", "-c", str(config(tmp_path, table)))
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_longest_version_fits(tmp_path):
    text = "v" * 255
    server = Server(build_set(tmp_path / "out", "-c",
                              str(config(tmp_path, f'version = "{text}"'))))
    try:
        query = ch_query("version.bind.")
        assert server.exchange(query) == expected_txt_response(query, text)
        refused(server, ch_query("id.server."))  # no identity
    finally:
        server.stop()
