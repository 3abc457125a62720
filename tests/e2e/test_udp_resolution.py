"""End to end: each behaviour of RFC 1034 §4.3.2 and its successors, with exact expectations
written from the zone files in tests/differential/zones (features, parent and child, RFC 4592)."""

from __future__ import annotations

import struct

import dns.flags
import dns.message
import dns.name
import dns.rcode
import pytest

from conftest import ZONES, Server, build_set
from dnsassert import assert_response, rrs

NOERROR, NXDOMAIN, YXDOMAIN = dns.rcode.NOERROR, dns.rcode.NXDOMAIN, dns.rcode.YXDOMAIN
SOA = "example. 600 IN SOA ns1.example. hostmaster.example. 2026112101 7200 900 1209600 600"
SUB_NS = ("sub.example. 3600 IN NS ns1.sub.example.; ns2.sub.example.; ns1.example.; "
          "ns.other.test.")
SUB_GLUE = ["ns1.sub.example. 3600 IN A 192.0.2.10", "ns2.sub.example. 3600 IN AAAA 2001:db8::10",
            "ns1.example. 3600 IN A 192.0.2.1", "ns1.example. 3600 IN AAAA 2001:db8::1"]
MAIL = ["mail.example. 3600 IN A 192.0.2.2", "mail.example. 3600 IN AAAA 2001:db8::2"]


def _serve(tmp_path_factory, config: str):
    server = Server(build_set(tmp_path_factory.mktemp(config), "-c", str(ZONES / config)))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def features(tmp_path_factory):
    yield from _serve(tmp_path_factory, "resolution.toml")


@pytest.fixture(scope="module")
def rfc4592(tmp_path_factory):
    yield from _serve(tmp_path_factory, "rfc4592.toml")


def check(server, qname, qtype, rcode, aa, answer=(), authority=(), additional=()):
    assert_response(server.query(qname, qtype), rcode, aa, rrs(*answer), rrs(*authority),
                    rrs(*additional))


# CNAME (RFC 1034 §3.6.2 and §4.3.2 step 3a, RFC 2181 §10.1)

def test_cname_chain_ends_at_the_type(features):
    check(features, "alias2.example.", "A", NOERROR, True, [
        "alias2.example. 3600 IN CNAME alias.example.",
        "alias.example. 3600 IN CNAME www.example.",
        "www.example. 3600 IN A 192.0.2.3"])


def test_cname_chain_ends_without_the_type(features):
    check(features, "alias.example.", "MX", NOERROR, True,
          ["alias.example. 3600 IN CNAME www.example."], [SOA])


def test_cname_chain_ends_at_a_missing_name(features):
    """RFC 6604 §3: the RCODE is that of the last name in the chain."""
    check(features, "dangling.example.", "A", NXDOMAIN, True,
          ["dangling.example. 3600 IN CNAME nothere.example."], [SOA])


@pytest.mark.parametrize("qname,target", [("outside.example.", "www.other.test."),
                                          ("other-zone.example.", "www.example.net.")])
def test_cname_chain_leaving_the_zone_is_just_the_chain(features, qname, target):
    """Followed inside the same zone only, as Knot does, even into another zone of the set."""
    check(features, qname, "A", NOERROR, True, [f"{qname} 3600 IN CNAME {target}"])


def test_cname_loop_stops(features):
    check(features, "loop1.example.", "A", NOERROR, True, [
        "loop1.example. 3600 IN CNAME loop2.example.",
        "loop2.example. 3600 IN CNAME loop1.example."])
    check(features, "self.example.", "TXT", NOERROR, True,
          ["self.example. 3600 IN CNAME self.example."])


def test_cname_chain_stops_after_eight(features):
    check(features, "c1.example.", "A", NOERROR, True,
          [f"c{i}.example. 3600 IN CNAME c{i + 1}.example." for i in range(1, 9)])
    check(features, "c4.example.", "A", NOERROR, True,
          [f"c{i}.example. 3600 IN CNAME c{i + 1}.example." for i in range(4, 11)]
          + ["c11.example. 3600 IN A 192.0.2.11"])


def test_qtype_cname_returns_the_cname_itself(features):
    check(features, "alias2.example.", "CNAME", NOERROR, True,
          ["alias2.example. 3600 IN CNAME alias.example."])


def test_cname_to_a_wildcard_and_additional_of_the_end(features):
    check(features, "to-wild.example.", "MX", NOERROR, True, [
        "to-wild.example. 3600 IN CNAME foo.wild.example.",
        "foo.wild.example. 3600 IN MX 10 mail.example."], [], MAIL)


# Delegations (RFC 1034 §4.3.2 step 3b, RFC 9471)

@pytest.mark.parametrize("qname,qtype", [("sub.example.", "A"), ("sub.example.", "NS"),
                                         ("a.b.sub.example.", "TXT"), ("sub.example.", "ANY"),
                                         ("ns1.sub.example.", "A"), ("x.sub.example.", "DS")])
def test_referral(features, qname, qtype):
    """Not authoritative; the cut's NS in authority; glue for the servers below the cut
    first (required), then the zone's other addresses for its servers. Glue itself is never
    an answer."""
    check(features, qname, qtype, NOERROR, False, [], [SUB_NS], SUB_GLUE)


def test_referral_with_no_glue(features):
    check(features, "www.only-out.example.", "A", NOERROR, False, [],
          ["only-out.example. 3600 IN NS ns.other.test.; ns2.other.test."])


def test_ds_at_a_cut_is_answered_by_the_parent(features):
    """RFC 4035 §3.1.4.1: DS lives on the parent side of the cut, authoritatively."""
    check(features, "sub.example.", "DS", NOERROR, True, [
        "sub.example. 3600 IN DS 12345 8 2 "
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"])
    check(features, "only-out.example.", "DS", NOERROR, True, [], [SOA])


def test_cname_into_a_delegation(features):
    check(features, "to-cut.example.", "A", NOERROR, True,
          ["to-cut.example. 3600 IN CNAME a.sub.example."], [SUB_NS], SUB_GLUE)


def test_referral_whose_required_glue_does_not_fit_sets_tc(server):
    """RFC 9471 §3.1: glue for in-domain servers is required; 12 AAAA do not fit 512 octets."""
    question = b"\x01x\x03fat\x07example\x00" + struct.pack("!HH", 1, 1)
    response = server.exchange(struct.pack("!HHHHHH", 7, 0, 1, 0, 0, 0) + question)
    assert struct.unpack("!HHHHHH", response[:12]) == (7, 0x8200, 1, 0, 0, 0)
    assert response[12:] == question


# Wildcards: the examples of RFC 4592 §2.2.1

WILD_SOA = "example. 3600 IN SOA ns.example.com. hostmaster.example. 1 3600 600 86400 3600"


@pytest.mark.parametrize("qname,qtype,rcode,answer,authority,additional", [
    ("host3.example.", "MX", NOERROR, ["host3.example. 3600 IN MX 10 host1.example."], [],
     ["host1.example. 3600 IN A 192.0.2.1"]),
    ("host3.example.", "A", NOERROR, [], [WILD_SOA], []),
    ("foo.bar.example.", "TXT", NOERROR, ['foo.bar.example. 3600 IN TXT "this is a wildcard"'],
     [], []),
    ("host1.example.", "MX", NOERROR, [], [WILD_SOA], []),
    ("sub.*.example.", "MX", NOERROR, [], [WILD_SOA], []),
    ("_telnet._tcp.host1.example.", "SRV", NXDOMAIN, [], [WILD_SOA], []),
    ("ghost.*.example.", "MX", NXDOMAIN, [], [WILD_SOA], []),
    ("*.example.", "TXT", NOERROR, ['*.example. 3600 IN TXT "this is a wildcard"'], [], []),
])
def test_rfc4592_examples(rfc4592, qname, qtype, rcode, answer, authority, additional):
    check(rfc4592, qname, qtype, rcode, True, answer, authority, additional)


def test_rfc4592_cut_above_the_wildcard_wins(rfc4592):
    check(rfc4592, "host.subdel.example.", "A", NOERROR, False, [],
          ["subdel.example. 3600 IN NS ns.example.com.; ns.example.net."])


def test_synthesized_owner_is_the_query_name_as_asked(rfc4592):
    response = rfc4592.query("HoSt3.ExAmple.", "TXT")
    assert response.answer[0].name.to_text() == "HoSt3.ExAmple."


def test_wildcard_cname_is_followed(features):
    check(features, "anything.wc.example.", "A", NOERROR, True, [
        "anything.wc.example. 3600 IN CNAME www.example.", "www.example. 3600 IN A 192.0.2.3"])


def test_empty_non_terminal_blocks_the_wildcard(features):
    """RFC 4592 §2.2.2: x.ent-wild exists (below.x.ent-wild has data), so it is NODATA, and
    names below it have x.ent-wild, which has no '*', as closest encloser: NXDOMAIN."""
    check(features, "x.ent-wild.example.", "TXT", NOERROR, True, [], [SOA])
    check(features, "other.x.ent-wild.example.", "TXT", NXDOMAIN, True, [], [SOA])
    check(features, "zzz.ent-wild.example.", "TXT", NOERROR, True, [
        'zzz.ent-wild.example. 3600 IN TXT "wildcard with an empty non-terminal sibling"'])


def test_existing_name_is_not_synthesized(features):
    check(features, "exists.wild.example.", "A", NOERROR, True, [], [SOA])


# Empty non-terminals

@pytest.mark.parametrize("qname", ["ent.example.", "deep.ent.example."])
def test_empty_non_terminal_is_nodata(features, qname):
    check(features, qname, "A", NOERROR, True, [], [SOA])


# Additional section

def test_srv_target_addresses(features):
    check(features, "_sip._tcp.example.", "SRV", NOERROR, True,
          ["_sip._tcp.example. 3600 IN SRV 0 0 5060 www.example."], [],
          ["www.example. 3600 IN A 192.0.2.3"])


def test_each_address_once(server):
    check(server, "twice.example.", "MX", NOERROR, True,
          ["twice.example. 3600 IN MX 10 mail.example.; 20 mail.example."], [],
          ["mail.example. 300 IN A 192.0.2.20"])


def test_minimal_responses_drops_target_addresses_but_not_glue(tmp_path):
    config = tmp_path / "minimal.toml"
    text = (ZONES / "resolution.toml").read_text().replace("../differential",
                                                            str(ZONES.parent / "differential"))
    config.write_text("[server]\nminimal-responses = true\n" + text)
    server = Server(build_set(tmp_path / "out", "-c", str(config)))
    try:
        check(server, "example.", "MX", NOERROR, True, [
            "example. 3600 IN MX 10 mail.example.; 20 mx.other.test.; 30 mail.example.net."])
        check(server, "sub.example.", "A", NOERROR, False, [], [SUB_NS], SUB_GLUE)
    finally:
        server.stop()


# DNAME (RFC 6672)

def test_dname_synthesizes_and_follows(features):
    check(features, "x.dn.example.", "A", NOERROR, True, [
        "dn.example. 3600 IN DNAME target.example.",
        "x.dn.example. 3600 IN CNAME x.target.example.",
        "x.target.example. 3600 IN A 192.0.2.61"])


def test_dname_to_a_name_that_does_not_exist(features):
    check(features, "no.such.dn.example.", "A", NXDOMAIN, True, [
        "dn.example. 3600 IN DNAME target.example.",
        "no.such.dn.example. 3600 IN CNAME no.such.target.example."], [SOA])


def test_dname_out_of_the_zone(features):
    check(features, "Www.Dn-Out.example.", "A", NOERROR, True, [
        "dn-out.example. 3600 IN DNAME example.net.",
        "www.dn-out.example. 3600 IN CNAME Www.example.net."])


def test_dname_owner_itself(features):
    check(features, "dn.example.", "DNAME", NOERROR, True,
          ["dn.example. 3600 IN DNAME target.example."])
    check(features, "dn.example.", "A", NOERROR, True, [], [SOA])


def test_dname_overflow_is_yxdomain(features):
    """RFC 6672 §2.2: 'target.example.' is 4 octets longer than 'dn.example.'."""
    labels = [b"y" * 63, b"y" * 63, b"y" * 63, b"y" * 50]
    qname = dns.name.Name(labels).concatenate(dns.name.from_text("dn.example."))
    assert len(qname.to_wire()) == 255
    check(features, qname.to_text(), "A", YXDOMAIN, True,
          ["dn.example. 3600 IN DNAME target.example."])


# ANY (RFC 8482) and the apex

@pytest.mark.parametrize("qname,expected", [
    ("example.", ["example. 3600 IN A 192.0.2.1"]),
    ("www.example.", ["www.example. 3600 IN A 192.0.2.3"]),
    ("alias.example.", ["alias.example. 3600 IN CNAME www.example."]),
    ("dn.example.", ["dn.example. 3600 IN DNAME target.example."]),
])
def test_any_over_udp_is_one_rrset_of_the_lowest_type(features, qname, expected):
    check(features, qname, "ANY", NOERROR, True, expected)


def test_apex_soa_and_ns_with_glue(features):
    check(features, "example.", "SOA", NOERROR, True,
          [SOA.replace("example. 600", "example. 3600")])
    check(features, "example.", "NS", NOERROR, True,
          ["example. 3600 IN NS ns1.example.; ns2.sub.example."], [],
          ["ns1.example. 3600 IN A 192.0.2.1", "ns1.example. 3600 IN AAAA 2001:db8::1",
           "ns2.sub.example. 3600 IN AAAA 2001:db8::10"])


# Several zones, parent and child both served

CHILD_SOA = "sub.example.com. 120 IN SOA ns1.sub.example.com. hostmaster.sub.example.com. " \
            "5 7200 900 1209600 120"
PARENT_SOA = "example.com. 300 IN SOA ns1.example.com. hostmaster.example.com. " \
             "1 7200 900 1209600 300"


def test_the_deepest_zone_answers(features):
    check(features, "www.sub.example.com.", "A", NOERROR, True,
          ["www.sub.example.com. 600 IN A 192.0.2.81"])
    check(features, "sub.example.com.", "NS", NOERROR, True,
          ["sub.example.com. 600 IN NS ns1.sub.example.com.; ns2.example.com."], [],
          ["ns1.sub.example.com. 600 IN A 192.0.2.53", "ns2.example.com. 3600 IN A 192.0.2.2"])
    # The parent's glue below the child's apex is not served: the child says NXDOMAIN.
    check(features, "old.sub.example.com.", "A", NXDOMAIN, True, [], [CHILD_SOA])


def test_the_parent_answers_ds_for_the_child(features):
    check(features, "sub.example.com.", "DS", NOERROR, True, [
        "sub.example.com. 3600 IN DS 2371 13 2 "
        "1f987cc6583e92df0890718c42091b9c7dfd4d6a5c1b0d7c3a3b2c1d0e0f1a2b"])
    check(features, "nosec.example.com.", "DS", NOERROR, True, [], [PARENT_SOA])
    check(features, "nosec.example.com.", "A", NOERROR, False, [],
          ["nosec.example.com. 3600 IN NS ns1.example.com."],
          ["ns1.example.com. 3600 IN A 192.0.2.1"])
