"""An alias's answers hold the CNAME alone, and the responder composes the rest from the
target's own answer (compiler/core/semantics/aliases.c, runtime/zonedata.h struct
zb_answer_alias): the target's records are stored once. The differential tests hold every
composed answer to Knot's; these pin the octets, the signatures and the truncation."""

from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace

import dns.dnssec
import dns.flags
import dns.message
import dns.name
import dns.rdatatype
import pytest

from blob import Blob, head
from buildsigned import EPOCH, build, signed_set
from conftest import Server, build_set, data_beside

ZONE = """$ORIGIN example.com.
$TTL 3600
@ SOA ns1 hostmaster 1 7200 900 1209600 300
@ NS ns1
@ MX 10 mail
ns1 A 192.0.2.53
mail A 192.0.2.25
www A 192.0.2.80
www TXT "web"
alias CNAME www
chained CNAME alias
to-apex CNAME @
fat TXT "{fat}"
fat TXT "{fat}2"
big CNAME fat
*.wild TXT "any"
literal CNAME *.wild
""".format(fat="x" * 250)


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    directory = tmp_path_factory.mktemp("aliases")
    (directory / "example.com.zone").write_text(ZONE)
    binary = build_set(directory / "out", "--zone",
                       f"example.com.={directory / 'example.com.zone'}")
    server = Server(binary)
    yield SimpleNamespace(out=directory / "out", server=server,
                          blob=Blob.read(data_beside(directory / "out"),
                                         head(directory / "out" / "zonedata.bin")))
    server.stop()


def test_one_body_serves_every_type_and_holds_the_cname_alone(plain):
    answers = plain.blob.answers(dns.name.from_text("alias.example.com."))
    composed = {key: answer for key, answer in answers.items()
                if key != "miss" and answer.is_alias}
    # A, AAAA, TXT, MX... and the default: one answer, whatever the type.
    assert len(composed) == 1 and "default" in composed
    alias = composed["default"]
    cname = dns.name.from_text("www.example.com.").to_wire()
    # Owner (a pointer to the question), type, class, TTL, RDLENGTH, the target whole.
    assert alias.body == (b"\xc0\x0c" + struct.pack("!HHIH", 5, 1, 3600, len(cname)) + cname)
    assert alias.target_at == 12
    # Not composed: the CNAME itself, ANY, and a chain whose target is an alias too.
    assert not answers[dns.rdatatype.CNAME].is_alias
    chained = plain.blob.answers(dns.name.from_text("chained.example.com."))
    assert not any(a.is_alias for k, a in chained.items() if k != "miss")


def test_the_composed_octets(plain):
    """The target's owner points at the CNAME's target; its counts are added."""
    query = dns.message.make_query("ALIAS.example.com.", "A", use_edns=False)
    query.flags &= ~dns.flags.RD
    wire = plain.server.exchange(query.to_wire())
    question = dns.name.from_text("ALIAS.example.com.").to_wire() + struct.pack("!HH", 1, 1)
    target = dns.name.from_text("www.example.com.").to_wire()
    at = 12 + len(question) + 12  # the CNAME's RDATA
    expected = (struct.pack("!HHHHHH", query.id, 0x8400, 1, 2, 0, 0) + question +
                b"\xc0\x0c" + struct.pack("!HHIH", 5, 1, 3600, len(target)) + target +
                struct.pack("!HHHIH", 0xC000 | at, 1, 1, 3600, 4) + bytes([192, 0, 2, 80]))
    assert wire == expected


def test_additional_records_and_nodata_follow_the_target(plain):
    response = plain.server.query("to-apex.example.com.", "MX")
    assert [(r.name.to_text(), r.rdtype) for r in response.answer] == [
        ("to-apex.example.com.", dns.rdatatype.CNAME), ("example.com.", dns.rdatatype.MX)]
    assert [(r.name.to_text(), r.rdtype) for r in response.additional] == [
        ("mail.example.com.", dns.rdatatype.A)]
    nodata = plain.server.query("alias.example.com.", "AAAA")
    assert nodata.rcode() == 0 and len(nodata.answer) == 1
    assert nodata.authority[0].rdtype == dns.rdatatype.SOA
    assert nodata.authority[0].name == dns.name.from_text("example.com.")


def test_an_alias_to_a_wildcard_s_own_name_is_stored_whole(plain):
    """The wildcard's answers are made for any name it matches, owned by the question:
    behind an alias they would be owned by the alias."""
    answers = plain.blob.answers(dns.name.from_text("literal.example.com."))
    assert not any(a.is_alias for k, a in answers.items() if k != "miss")
    response = plain.server.query("literal.example.com.", "TXT")
    assert [r.name.to_text() for r in response.answer] == ["literal.example.com.",
                                                           "*.wild.example.com."]


def test_a_composed_answer_too_long_for_udp_is_truncated(plain):
    udp = plain.server.query("big.example.com.", "TXT")
    assert udp.flags & dns.flags.TC and not udp.answer and len(udp.question) == 1
    tcp = plain.server.send_tcp(dns.message.make_query("big.example.com.", "TXT",
                                                       use_edns=False))
    assert not tcp.flags & dns.flags.TC
    assert [len(r) for r in tcp.answer] == [1, 2]


def test_signed_composed_answers_validate(tmp_path):
    toml = signed_set(tmp_path, zone=ZONE.replace("@ SOA ns1 hostmaster 1",
                                                  "@ SOA ns1 hostmaster 2"))
    made = build(toml, tmp_path / "out", "-q", epoch=EPOCH, cache=tmp_path / "cache")
    assert made.returncode == 0, made.stderr
    blob = Blob.read(data_beside(tmp_path / "out"), head(tmp_path / "out" / "zonedata.bin"))
    node = blob.nodes[dns.name.from_text("alias.example.com.")]
    twin = blob._typed(node + blob.node_size // 2)
    assert twin[dns.rdatatype.A].is_alias and twin[dns.rdatatype.TXT].is_alias
    server = Server(tmp_path / "out" / "zonebake-server")
    try:
        keys = server.send_tcp(dns.message.make_query("example.com.", "DNSKEY", use_edns=0,
                                                      want_dnssec=True))
        dnskey = {dns.name.from_text("example.com."): keys.answer[0]}
        for qtype in ("A", "TXT"):
            response = server.send_tcp(dns.message.make_query(
                "alias.example.com.", qtype, use_edns=0, want_dnssec=True))
            kinds = [(r.name.to_text(), r.rdtype, r.covers) for r in response.answer]
            rdtype = dns.rdatatype.from_text(qtype)
            assert kinds == [
                ("alias.example.com.", dns.rdatatype.CNAME, 0),
                ("alias.example.com.", dns.rdatatype.RRSIG, dns.rdatatype.CNAME),
                ("www.example.com.", rdtype, 0),
                ("www.example.com.", dns.rdatatype.RRSIG, rdtype)]
            for rrset, sigs in zip(response.answer[::2], response.answer[1::2]):
                dns.dnssec.validate(rrset, sigs, dnskey, now=EPOCH)
    finally:
        server.stop()
