"""A pre-signed zone built with --lenient is served as the file has it (issue 37): the zone in
the state of PowerDNS's cryptokeys.org (tests/unpublishedkeys.py), its RRSIGs by a key the
apex does not publish included, answers every question with DO set with each RRSIG of the
file, and a validator accepts it through the published key (dnspython, and delv from a trust
anchor); a zone whose signatures have expired is served with them."""

from __future__ import annotations

import subprocess

import dns.dnssec
import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.zone
import pytest

from conftest import ZONES, Server, build_set, require
from unpublishedkeys import ORIGIN, RRSETS, SignedZone, sign, trust_anchor

RRSIG = dns.rdatatype.RRSIG
APEX = dns.name.from_text(ORIGIN)
# Negative answers: (name, type, rcode, the RRsets of the authority section). NXDOMAIN: the
# NSEC covering the name, and the apex's covering the wildcard (RFC 4035 §3.1.3.2).
NEGATIVE = [(f"nx.{ORIGIN}", "A", dns.rcode.NXDOMAIN,
             [(ORIGIN, "SOA"), (f"ns1.{ORIGIN}", "NSEC"), (ORIGIN, "NSEC")]),
            (f"www.{ORIGIN}", "MX", dns.rcode.NOERROR,
             [(ORIGIN, "SOA"), (f"www.{ORIGIN}", "NSEC")])]


class Served:
    def __init__(self, zone: SignedZone, tmp):
        self.zone = zone
        self.file = dns.zone.from_file(str(zone.path), origin=APEX, relativize=False)
        self.server = Server(build_set(tmp / "out", "--lenient", "--zone",
                                       f"{ORIGIN}={zone.path}"))

    def ask(self, name: str, rdtype: str) -> dns.message.Message:
        query = dns.message.make_query(name, rdtype, want_dnssec=True, use_edns=0,
                                       payload=4096)
        query.flags = 0  # an authoritative question
        response = self.server.send(query)
        assert response.flags & dns.flags.AA and not response.flags & dns.flags.TC
        return response

    def as_the_file_has_it(self, section, wanted: list[tuple[str, str]]) -> None:
        """`section` holds each RRset of `wanted` and its RRSIGs, exactly the file's records,
        and nothing else."""
        expected = {}
        for owner, rdtype in wanted:
            name, covered = dns.name.from_text(owner), dns.rdatatype.from_text(rdtype)
            expected[name, covered, dns.rdatatype.NONE] = self.file.find_rdataset(name, covered)
            expected[name, RRSIG, covered] = self.file.find_rdataset(name, RRSIG, covered)
        served = {(r.name, r.rdtype, r.covers): r for r in section}
        assert len(served) == len(section) and served.keys() == expected.keys()
        for key, rdataset in expected.items():
            assert set(served[key]) == set(rdataset), key

    def validate(self, section) -> None:
        """Each RRset verifies through a key of the apex DNSKEY set; dnspython skips the
        RRSIGs whose key it lacks, as a validator does (RFC 4035 §5.3.1)."""
        keys = {APEX: self.file.find_rrset(APEX, dns.rdatatype.DNSKEY)}
        sigs = {(r.name, r.covers): r for r in section if r.rdtype == RRSIG}
        for rrset in section:
            if rrset.rdtype != RRSIG:
                dns.dnssec.validate(rrset, sigs[rrset.name, rrset.rdtype], keys)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lenient-signed")
    s = Served(sign(tmp / "keys"), tmp)
    yield s
    alive = s.server.alive()
    s.server.stop()
    assert alive, "the server died during the tests"


@pytest.mark.parametrize("owner,rdtype", RRSETS, ids=[f"{o}{t}" for o, t in RRSETS])
def test_each_rrset_comes_with_every_rrsig_of_the_file(served, owner, rdtype):
    response = served.ask(owner, rdtype)
    assert response.rcode() == dns.rcode.NOERROR
    served.as_the_file_has_it(response.answer, [(owner, rdtype)])
    served.validate(response.answer)


@pytest.mark.parametrize("name,rdtype,rcode,authority", NEGATIVE,
                         ids=[f"{n}{t}" for n, t, _, _ in NEGATIVE])
def test_negative_answers_come_with_every_rrsig_of_the_file(served, name, rdtype, rcode,
                                                            authority):
    response = served.ask(name, rdtype)
    assert response.rcode() == rcode and response.answer == []
    served.as_the_file_has_it(response.authority, authority)
    served.validate(response.authority)


@pytest.mark.parametrize("name,rdtype,verdict", [
    (ORIGIN, "SOA", "; fully validated"), (f"www.{ORIGIN}", "TXT", "; fully validated"),
    (f"nx.{ORIGIN}", "A", "; negative response, fully validated"),
    (f"www.{ORIGIN}", "MX", "; negative response, fully validated")])
def test_delv_validates_it_from_the_published_key(served, tmp_path, name, rdtype, verdict):
    """BIND's validator, from the Ed25519 KSK as the trust anchor: the algorithm that signs
    nothing and the key it cannot find do not stop it (RFC 6840 §5.11)."""
    [delv] = require("bind9-dnsutils", "delv")
    anchors = trust_anchor(served.zone.ksk, tmp_path / "anchors.conf")
    result = subprocess.run([delv, "@127.0.0.1", "-p", str(served.server.address[1]), "-a",
                             str(anchors), f"+root={ORIGIN}", name, rdtype],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == verdict


def test_expired_signatures_are_served_as_the_file_has_them(tmp_path):
    """(The server warns of them at start-up and exports their expiry: tests/ops/
    test_stats.py.)"""
    path = ZONES / "broken" / "signed-expired.zone"
    server = Server(build_set(tmp_path, "--lenient", "--zone", f"example.={path}"))
    try:
        query = dns.message.make_query("example.", "SOA", want_dnssec=True, use_edns=0)
        response = server.send(query)
        file = dns.zone.from_file(str(path), origin="example.", relativize=False)
        apex = dns.name.from_text("example.")
        [sig] = [r for r in response.answer if r.rdtype == RRSIG]
        assert set(sig) == set(file.find_rdataset(apex, RRSIG, dns.rdatatype.SOA))
        assert [s.expiration for s in sig] == [1580515200]
    finally:
        server.stop()
