"""EDNS(0) (RFC 6891), NSID (RFC 5001) and the size limits of UDP responses, each tested at,
one octet under and one octet over its limit."""

from __future__ import annotations

import math
import struct

import dns.edns
import dns.flags
import dns.message
import dns.rcode
import pytest

from conftest import Server, build_set

ORIGIN = "trunc.example."
SOA = f"@ SOA ns1 hostmaster 1 7200 900 1209600 300\n@ NS ns1\nns1 A 192.0.2.1\n"
OPT_LEN = 11


def txt_rdata(size: int) -> str:
    """TXT character-strings taking exactly `size` octets of RDATA."""
    count = math.ceil(size / 256)  # each string: a length octet and up to 255 more
    left = size - count
    strings = []
    for _ in range(count):
        take = min(255, left)
        strings.append('"' + "x" * take + '"')
        left -= take
    assert left == 0
    return " ".join(strings)


def name_for(target: int, edns: bool) -> str:
    return f"{'e' if edns else 'p'}{target}.{ORIGIN}"


def response_size_record(target: int, edns: bool) -> str:
    """A TXT RRset whose response to a TXT query is exactly `target` octets."""
    qname = name_for(target, edns)
    overhead = 12 + len(dns.name.from_text(qname).to_wire()) + 4 + 2 + 10
    overhead += OPT_LEN if edns else 0
    return f"{qname} TXT {txt_rdata(target - overhead)}"


TARGETS = {  # limit -> (EDNS payload size asked, or None for no EDNS)
    512: None,
    600: 600,
    1232: 4096,  # capped by the server's udp-size
}


def server_with_identity(directory, identity: str, origin: str, zone) -> Server:
    config = directory / "z.toml"
    config.write_text(f'[server]\nidentity = "{identity}"\n[[zone]]\norigin = "{origin}"\n'
                      f'file = "{zone}"\n')
    return Server(build_set(directory / "out", "-c", str(config)))


@pytest.fixture(scope="module")
def trunc_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trunc")
    lines = [f"$ORIGIN {ORIGIN}", "$TTL 300", SOA]
    for limit, payload in TARGETS.items():
        for target in (limit - 1, limit, limit + 1):
            lines.append(response_size_record(target, payload is not None))
    for target in (511, 512, 513):  # an EDNS size under 512 counts as 512
        lines.append(response_size_record(target, True))
    # Six MX targets with addresses: the answer fits 512 octets, the addresses do not.
    for i in range(6):
        label = f"{i}" + "m" * 49
        lines.append(f"mx MX {10 + i} {label}")
        lines.append(f"{label} A 192.0.2.{10 + i}")
    zone = tmp / "trunc.zone"
    zone.write_text("\n".join(lines) + "\n")
    server = server_with_identity(tmp, "ns-x", ORIGIN, zone)
    yield server
    server.stop()


def ask(server, qname, qtype="TXT", payload=None, **kwargs):
    query = dns.message.make_query(qname, qtype, use_edns=0 if payload else False,
                                   payload=payload or 1232, **kwargs)
    wire = server.exchange(query.to_wire())
    return wire, dns.message.from_wire(wire)


@pytest.mark.parametrize("limit,payload", [(512, None), (600, 600), (1232, 4096), (512, 100)])
@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_response_at_under_and_over_the_limit(trunc_server, limit, payload, offset):
    edns = payload is not None
    wire, response = ask(trunc_server, name_for(limit + offset, edns), payload=payload)
    assert response.rcode() == dns.rcode.NOERROR
    assert (response.edns == 0) == edns
    if offset <= 0:
        assert len(wire) == limit + offset
        assert not response.flags & dns.flags.TC
        assert len(response.answer) == 1
    else:
        # RFC 2181 §9: no partial RRset; the question (and the OPT) alone, with TC.
        assert response.flags & dns.flags.TC
        assert (response.answer, response.authority, response.additional) == ([], [], [])
        assert len(wire) == 12 + len(dns.name.from_text(name_for(limit + 1, edns)).to_wire()) \
            + 4 + (OPT_LEN if edns else 0)


def test_optional_additional_records_are_dropped_first(trunc_server):
    wire, response = ask(trunc_server, f"mx.{ORIGIN}", "MX")
    assert not response.flags & dns.flags.TC
    assert len(response.answer[0]) == 6 and response.additional == []
    assert struct.unpack("!H", wire[10:12]) == (0,)  # ARCOUNT adjusted
    wire, response = ask(trunc_server, f"mx.{ORIGIN}", "MX", payload=1232)
    assert len(response.answer[0]) == 6 and len(response.additional) == 6


def test_opt_only_when_the_query_had_one(server):
    _, plain = ask(server, "www.example.", "A")
    assert plain.edns == -1
    _, with_edns = ask(server, "www.example.", "A", payload=4096)
    assert with_edns.edns == 0 and with_edns.payload == 1232  # the server's size, default
    assert len(with_edns.answer) == 1


def test_do_bit_is_echoed(server):
    _, response = ask(server, "www.example.", "A", payload=1232, want_dnssec=True)
    assert response.ednsflags & dns.flags.DO
    _, response = ask(server, "www.example.", "A", payload=1232)
    assert not response.ednsflags & dns.flags.DO


def test_unknown_options_are_ignored(server):
    _, response = ask(server, "www.example.", "A", payload=1232,
                      options=[dns.edns.GenericOption(65001, b"abc")])
    assert response.rcode() == dns.rcode.NOERROR and len(response.answer) == 1
    assert response.options == ()


def test_nsid_returns_the_identity(server):
    _, response = ask(server, "www.example.", "A", payload=1232,
                      options=[dns.edns.GenericOption(dns.edns.NSID, b"")])
    assert [(o.otype, o.to_wire()) for o in response.options] == \
        [(dns.edns.NSID, b"test-ns1.example")]
    assert len(response.answer) == 1


def test_nsid_without_identity_is_not_answered(tmp_path):
    from conftest import ZONES
    server = Server(build_set(tmp_path, "--zone", f"example.={ZONES / 'example.zone'}"))
    try:
        _, response = ask(server, "www.example.", "A", payload=1232,
                          options=[dns.edns.GenericOption(dns.edns.NSID, b"")])
        assert response.options == () and len(response.answer) == 1
    finally:
        server.stop()


def test_udp_size_is_set_in_the_toml(tmp_path):
    from conftest import ZONES
    config = tmp_path / "z.toml"
    config.write_text(f'[server]\nudp-size = 4000\n[[zone]]\norigin = "example."\n'
                      f'file = "{ZONES / "example.zone"}"\n')
    server = Server(build_set(tmp_path / "out", "-c", str(config)))
    try:
        wire, response = ask(server, "big.example.", "TXT", payload=4096)
        assert response.payload == 4000 and len(response.answer) == 1 and len(wire) > 600
    finally:
        server.stop()


@pytest.mark.parametrize("version", [1, 255])
def test_higher_edns_version_gets_badvers(server, version):
    """RFC 6891 §6.1.3: BADVERS (16): 0 in the header, 1 in the OPT's extended RCODE."""
    query = dns.message.make_query("www.example.", "A", use_edns=version)
    wire = server.exchange(query.to_wire())
    response = dns.message.from_wire(wire)
    assert response.rcode() == dns.rcode.BADVERS
    assert response.edns == 0 and response.answer == [] and not response.flags & dns.flags.AA
    assert len(response.question) == 1


def _with_edns(**kwargs) -> bytes:
    return dns.message.make_query("www.example.", "A", use_edns=0, **kwargs).to_wire()


@pytest.mark.parametrize("mangle", [
    "two OPT records", "OPT owner not the root", "OPT RDLENGTH past the end",
    "option length past the RDATA", "OPT in the answer section",
])
def test_bad_opt_is_formerr(server, mangle):
    wire = bytearray(_with_edns())
    opt = bytes(wire[-11:])
    if mangle == "two OPT records":
        wire += opt
        wire[11] = 2
    elif mangle == "OPT owner not the root":
        wire[-11:] = b"\x03com\x00" + opt[1:]
    elif mangle == "OPT RDLENGTH past the end":
        wire[-2:] = b"\x00\x05"
    elif mangle == "option length past the RDATA":
        wire[-2:] = b"\x00\x04"
        wire += b"\x00\x03\x00\x09"
    else:
        wire[7], wire[11] = 1, 0  # ANCOUNT=1, ARCOUNT=0
    response = server.exchange(bytes(wire))
    assert struct.unpack("!HH", response[2:6]) == (0x8100 | dns.rcode.FORMERR, 1)
    assert dns.message.from_wire(response).edns == -1


@pytest.fixture(scope="module")
def long_identity_server(tmp_path_factory):
    """An identity of 255 octets: with a long question, the OPT holding it does not fit in
    512 octets."""
    from conftest import ZONES
    server = server_with_identity(tmp_path_factory.mktemp("nsid"), "n" * 255, "example.",
                                  ZONES / "example.zone")
    yield server
    server.stop()


LONG_NAME = ".".join(["x" * 62] * 3 + ["x" * 47]) + ".nx.example."  # 249 octets in wire form


@pytest.mark.parametrize("opcode,qname,rcode", [(2, LONG_NAME, dns.rcode.NOTIMP),
                                                (0, LONG_NAME, dns.rcode.NXDOMAIN),
                                                (0, "www.example.", dns.rcode.NOERROR)])
def test_nsid_goes_only_where_it_fits(long_identity_server, opcode, qname, rcode):
    """Header, question and an OPT with a 255-octet NSID: 12 + 253 + 270 = 535 octets, over
    the 512 the client takes, for an error (STATUS gets NOTIMP) as for an answer: the NSID
    goes (RFC 5001 §2.3 makes it optional), never the size (RFC 6891 §6.2.5). A short
    question keeps it."""
    query = dns.message.make_query(qname, "A", use_edns=0, payload=512,
                                   options=[dns.edns.GenericOption(dns.edns.NSID, b"")])
    query.set_opcode(opcode)
    wire = long_identity_server.exchange(query.to_wire())
    response = dns.message.from_wire(wire)
    assert len(wire) <= 512
    assert response.rcode() == rcode
    expected = ((dns.edns.NSID, b"n" * 255),) if qname == "www.example." else ()
    assert tuple((o.otype, o.to_wire()) for o in response.options) == expected
