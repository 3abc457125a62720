"""End to end over UDP: the binary built from tests/zones answers each kind of query exactly."""

from __future__ import annotations

import dns.flags
import dns.message
import dns.name
import dns.rcode
import pytest

from dnsassert import assert_response, rrs

NEG_EXAMPLE = "example. 600 IN SOA ns1.example. hostmaster.example. 42 7200 900 1209600 600"
NEG_NET = "example.net. 60 IN SOA ns2.example.net. hostmaster.example. 7 3600 600 86400 3600"


@pytest.mark.parametrize("qname,qtype,expected", [
    ("www.example.", "A", "www.example. 3600 IN A 192.0.2.10; 192.0.2.11"),
    ("www.example.", "AAAA", "www.example. 3600 IN AAAA 2001:db8::10"),
    ("mail.example.", "A", "mail.example. 300 IN A 192.0.2.20"),

    ("example.", "SOA", "example. 3600 IN SOA ns1.example. hostmaster.example. "
                        "42 7200 900 1209600 600"),
    ("alias.example.", "CNAME", "alias.example. 3600 IN CNAME www.example."),
    ("txt.example.", "TXT", 'txt.example. 3600 IN TXT "hello" "world"'),
    ("_sip._tcp.example.", "SRV", "_sip._tcp.example. 3600 IN SRV 10 60 5060 sip.example."),
    ("deep.a.b.example.", "TXT", 'deep.a.b.example. 3600 IN TXT "deep"'),
    ("host.example.net.", "AAAA", "host.example.net. 7200 IN AAAA 2001:db8::2"),
    ("example.net.", "SOA", "example.net. 60 IN SOA ns2.example.net. hostmaster.example. "
                            "7 3600 600 86400 3600"),
])
def test_exact_match(server, qname, qtype, expected):
    response = server.query(qname, qtype)
    assert_response(response, dns.rcode.NOERROR, True, answer=rrs(expected))


@pytest.mark.parametrize("qname,qtype,expected,additional", [
    ("example.", "MX", "example. 3600 IN MX 10 mail.example.",
     ["mail.example. 300 IN A 192.0.2.20"]),
    # ns2.example.net. lies in the other zone of the set: its address comes from there.
    ("example.", "NS", "example. 3600 IN NS ns1.example.; ns2.example.net.",
     ["ns1.example. 3600 IN A 192.0.2.1", "ns2.example.net. 7200 IN A 198.51.100.2"]),
    ("example.net.", "NS", "example.net. 7200 IN NS ns2.example.net.",
     ["ns2.example.net. 7200 IN A 198.51.100.2"]),
])
def test_exact_match_with_target_addresses(server, qname, qtype, expected, additional):
    """RFC 1034 §4.3.2 step 6: addresses of NS and MX targets go in the additional section."""
    response = server.query(qname, qtype)
    assert_response(response, dns.rcode.NOERROR, True, answer=rrs(expected),
                    additional=rrs(*additional))


@pytest.mark.parametrize("qname,qtype,soa", [
    ("www.example.", "MX", NEG_EXAMPLE),
    ("example.", "A", NEG_EXAMPLE),
    ("txt.example.", "A", NEG_EXAMPLE),
    ("a.b.example.", "TXT", NEG_EXAMPLE),  # empty non-terminals exist: NODATA, not NXDOMAIN
    ("b.example.", "A", NEG_EXAMPLE),
    ("host.example.net.", "A", NEG_NET),  # TTL: the SOA's own 60 is below MINIMUM 3600
])
def test_nodata(server, qname, qtype, soa):
    assert_response(server.query(qname, qtype), dns.rcode.NOERROR, True, authority=rrs(soa))


@pytest.mark.parametrize("qname,soa", [
    ("nope.example.", NEG_EXAMPLE),
    ("x.y.z.www.example.", NEG_EXAMPLE),  # closest encloser www: a longer name, shifted pointers
    ("other.a.b.example.", NEG_EXAMPLE),  # closest encloser a.b, an empty non-terminal
    ("a" * 63 + "." + "b" * 63 + "." + "c" * 63 + ".example.", NEG_EXAMPLE),
    ("nope.example.net.", NEG_NET),
])
def test_nxdomain(server, qname, soa):
    assert_response(server.query(qname, "A"), dns.rcode.NXDOMAIN, True, authority=rrs(soa))


@pytest.mark.parametrize("qname", ["www.example.org.", "com.", "net.", ".", "org."])
def test_name_in_no_zone_is_refused(server, qname):
    response = server.query(qname, "A")
    assert_response(response, dns.rcode.REFUSED, False)
    assert response.question[0].name == dns.name.from_text(qname)


@pytest.mark.parametrize("qname,qtype,rcode,answer,authority", [
    ("WWW.EXAMPLE.", "A", dns.rcode.NOERROR, "www.example. 3600 IN A 192.0.2.10; 192.0.2.11", None),
    ("wWw.ExAmPlE.", "AAAA", dns.rcode.NOERROR, "www.example. 3600 IN AAAA 2001:db8::10", None),
    ("mixed.example.", "A", dns.rcode.NOERROR, "mixed.example. 3600 IN A 192.0.2.30", None),
    ("MIXED.example.", "A", dns.rcode.NOERROR, "mixed.example. 3600 IN A 192.0.2.30", None),
    ("Www.Example.", "MX", dns.rcode.NOERROR, None, NEG_EXAMPLE),
    ("NoPe.ExAmPlE.", "A", dns.rcode.NXDOMAIN, None, NEG_EXAMPLE),
])
def test_letter_case(server, qname, qtype, rcode, answer, authority):
    """RFC 4343: the lookup ignores case; the question comes back as the client wrote it."""
    query = dns.message.make_query(qname, qtype, use_edns=False)
    response = server.query(qname, qtype)
    assert_response(response, rcode, True, answer=rrs(answer) if answer else (),
                    authority=rrs(authority) if authority else ())
    assert response.question[0].name.to_text() == qname  # byte for byte, case included
    assert response.question == query.question


def test_id_and_rd_are_copied(server):
    for rd in (True, False):
        query = dns.message.make_query("www.example.", "A", use_edns=False)
        query.id = 0xBEEF if rd else 0x0102
        if not rd:
            query.flags &= ~dns.flags.RD
        response = dns.message.from_wire(server.exchange(query.to_wire()))
        assert response.id == query.id
        assert bool(response.flags & dns.flags.RD) == rd
        assert not response.flags & dns.flags.RA


def test_cd_is_copied(server):
    """RFC 6840 §5.9: CD in a query is copied into the response."""
    query = dns.message.make_query("www.example.", "A", use_edns=False)
    query.flags |= dns.flags.CD
    response = dns.message.from_wire(server.exchange(query.to_wire()))
    assert response.flags & dns.flags.CD


def test_unknown_type_in_rfc3597_form_is_carried_through(server):
    """RFC 3597 §5: `\\#` generic RDATA in the zone file comes out as the same octets."""
    response = server.query("unknown.example.", "TYPE65400")
    assert response.rcode() == dns.rcode.NOERROR and len(response.answer) == 1
    rdata = response.answer[0][0]
    assert rdata.rdtype == 65400
    assert rdata.to_wire() == bytes.fromhex("0a0000010203")
