"""A zone the build signs (issue 17) is served as any signed zone: every RRset in the answer
and authority sections the server returns with DO set carries an RRSIG that dnspython
verifies against the zone's DNSKEY RRset, made by the right key (the KSK for the apex's key
sets, the ZSK for the rest), and negative answers carry their proofs; delv validates a sample
from a trust anchor made of the KSK. NSEC, NSEC3 and NSEC3 with opt-out."""

from __future__ import annotations

import base64
import subprocess
import time
from pathlib import Path

import dns.dnssec
import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import pytest

from buildsigned import ORIGIN, build, signed_set
from conftest import Server, require
from zonebake.dnssec.keys import load

A, NS, DS, SOA, RRSIG = (dns.rdatatype.A, dns.rdatatype.NS, dns.rdatatype.DS,
                         dns.rdatatype.SOA, dns.rdatatype.RRSIG)
DENIAL = {"nsec": dns.rdatatype.NSEC, "nsec3": dns.rdatatype.NSEC3,
          "opt-out": dns.rdatatype.NSEC3}
NOERROR, NXDOMAIN = dns.rcode.NOERROR, dns.rcode.NXDOMAIN

# name, type, rcode, answer types in order, whether a denial proof is in the authority section
PROBES = [
    ("example.com.", "SOA", NOERROR, ["SOA"], False),
    ("example.com.", "DNSKEY", NOERROR, ["DNSKEY"], False),
    ("example.com.", "CDS", NOERROR, ["CDS"], False),
    ("example.com.", "CDNSKEY", NOERROR, ["CDNSKEY"], False),
    ("www.example.com.", "A", NOERROR, ["CNAME", "A"], False),
    ("mail.example.com.", "AAAA", NOERROR, [], True),           # NODATA
    ("nx.example.com.", "A", NXDOMAIN, [], True),
    ("x.y.wild.example.com.", "TXT", NOERROR, ["TXT"], True),    # wildcard: no closer name
    ("x.wild.example.com.", "A", NOERROR, [], True),             # wildcard NODATA
    ("b.ent.example.com.", "A", NOERROR, [], True),              # empty non-terminal
    ("secure.example.com.", "DS", NOERROR, ["DS"], False),
    ("sub.example.com.", "DS", NOERROR, [], True),               # no DS: insecure
]
REFERRALS = [("a.sub.example.com.", False), ("a.secure.example.com.", True)]

SECURE, DENIED = "; fully validated", "; negative response, fully validated"
# delv's verdicts; with opt-out, the NSEC3 that covers the wildcard answer's next closer name
# has the Opt-Out flag, and BIND then calls the answer insecure (RFC 5155 §9.2).
DELV = [("example.com.", "SOA", SECURE, SECURE), ("www.example.com.", "A", SECURE, SECURE),
        ("x.y.wild.example.com.", "TXT", SECURE, "; unsigned answer"),
        ("nx.example.com.", "A", DENIED, DENIED), ("mail.example.com.", "AAAA", DENIED, DENIED),
        ("x.wild.example.com.", "A", DENIED, DENIED), ("b.ent.example.com.", "A", DENIED, DENIED),
        ("secure.example.com.", "DS", SECURE, SECURE), ("sub.example.com.", "DS", DENIED, DENIED)]


class Signed:
    def __init__(self, directory: Path, chain: str):
        self.chain = chain
        toml = signed_set(directory, "nsec" if chain == "nsec" else "nsec3",
                          opt_out=chain == "opt-out")
        built = build(toml, directory / "out", epoch=int(time.time()))
        assert built.returncode == 0, built.stderr
        pairs = load(ORIGIN, directory / "keys")
        [self.ksk] = [p for p in pairs if p.ksk]
        [self.zsk] = [p for p in pairs if not p.ksk]
        self.server = Server(directory / "out" / "zonebake-server")
        self.anchors = directory / "anchors.conf"
        key = self.ksk.dnskey
        self.anchors.write_text(f"trust-anchors {{ example.com. static-key {key.flags} "
                                f"{key.protocol} {key.algorithm} "
                                f'"{base64.b64encode(key.key).decode()}"; }};\n')

    def ask(self, name: str, rdtype: str) -> dns.message.Message:
        return self.server.send(dns.message.make_query(name, rdtype, want_dnssec=True))

    def keys(self):
        answer = self.ask("example.com.", "DNSKEY")
        [keys] = [r for r in answer.answer if r.rdtype == dns.rdatatype.DNSKEY]
        assert {k.to_text() for k in keys} == {self.ksk.dnskey.to_text(),
                                               self.zsk.dnskey.to_text()}
        return keys

    def verify(self, rrsets, referral: bool = False) -> None:
        """Every RRset but a referral's NS has its RRSIG, by the right key, and it verifies."""
        keys = {ORIGIN: self.keys()}
        for rrset in rrsets:
            if rrset.rdtype == RRSIG or (referral and rrset.rdtype == NS):
                continue
            sigs = [s for s in rrsets if s.rdtype == RRSIG and s.covers == rrset.rdtype
                    and s.name == rrset.name]
            assert len(sigs) == 1, f"{rrset.name} {dns.rdatatype.to_text(rrset.rdtype)}"
            apex_keys = rrset.name == ORIGIN and rrset.rdtype in (
                dns.rdatatype.DNSKEY, dns.rdatatype.CDS, dns.rdatatype.CDNSKEY)
            signer = self.ksk if apex_keys else self.zsk
            assert [s.key_tag for s in sigs[0]] == [signer.tag]
            dns.dnssec.validate(rrset, sigs[0], keys)

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture(scope="module", params=["nsec", "nsec3", "opt-out"])
def signed(request, tmp_path_factory):
    made = Signed(tmp_path_factory.mktemp(f"built-{request.param}"), request.param)
    yield made
    made.stop()


def test_every_answer_carries_verifying_signatures_and_its_proofs(signed):
    for name, rdtype, rcode, answer_types, denied in PROBES:
        answer = signed.ask(name, rdtype)
        where = (name, rdtype)
        assert answer.rcode() == rcode, where
        assert answer.flags & dns.flags.AA and not answer.flags & dns.flags.AD, where
        assert [dns.rdatatype.to_text(r.rdtype) for r in answer.answer
                if r.rdtype != RRSIG] == answer_types, where
        proofs = [r for r in answer.authority if r.rdtype == DENIAL[signed.chain]]
        assert bool(proofs) == denied, where
        assert any(r.rdtype == SOA for r in answer.authority) == (not answer_types), where
        signed.verify(answer.answer)
        signed.verify(answer.authority)


def test_a_wildcard_answer_is_signed_as_the_expansion(signed):
    answer = signed.ask("x.y.wild.example.com.", "TXT")
    [txt] = [r for r in answer.answer if r.rdtype == dns.rdatatype.TXT]
    [sig] = [r for r in answer.answer if r.rdtype == RRSIG]
    assert txt.name == sig.name == dns.name.from_text("x.y.wild.example.com.")
    assert [s.labels for s in sig] == [3]  # *.wild.example.com. (RFC 4034 §3.1.3)


@pytest.mark.parametrize("name,secure", REFERRALS)
def test_referrals_carry_the_ds_or_the_proof_that_there_is_none(signed, name, secure):
    answer = signed.ask(name, "A")
    assert answer.rcode() == NOERROR and not answer.flags & dns.flags.AA
    assert answer.answer == []
    types = [r.rdtype for r in answer.authority if r.rdtype != RRSIG]
    assert types[0] == NS
    if secure:
        assert types == [NS, DS]
    else:
        assert types[1:] and set(types[1:]) == {DENIAL[signed.chain]}
    signed.verify(answer.authority, referral=True)
    assert not [r for r in answer.authority if r.rdtype == RRSIG and r.covers == NS]


def test_the_apex_publishes_cds_and_cdnskey_of_the_ksk(signed):
    [cds] = [r for r in signed.ask("example.com.", "CDS").answer if r.rdtype == dns.rdatatype.CDS]
    assert [c.to_text() for c in cds] == [
        dns.dnssec.make_ds(ORIGIN, signed.ksk.dnskey, "SHA256").to_text()]
    [cdnskey] = [r for r in signed.ask("example.com.", "CDNSKEY").answer
                 if r.rdtype == dns.rdatatype.CDNSKEY]
    assert [r.key for r in cdnskey] == [signed.ksk.dnskey.key]
    if signed.chain != "nsec":
        [param] = [r for r in signed.ask("example.com.", "NSEC3PARAM").answer
                   if r.rdtype == dns.rdatatype.NSEC3PARAM]
        # RFC 9276: SHA-1, no flags, 0 iterations, no salt
        assert [(p.algorithm, p.flags, p.iterations, p.salt) for p in param] == [(1, 0, 0, b"")]


def test_without_do_the_answers_carry_no_dnssec_records(signed):
    for name, rdtype, rcode, answer_types, _ in PROBES:
        answer = signed.server.send(dns.message.make_query(name, rdtype, use_edns=0))
        assert answer.rcode() == rcode
        assert not [r for r in answer.answer + answer.authority
                    if r.rdtype in (RRSIG, dns.rdatatype.NSEC, dns.rdatatype.NSEC3)]


def test_delv_validates_a_sample_from_the_ksk(signed):
    delv = require("bind9-dnsutils", "delv")[0]
    for name, rdtype, verdict, opt_out_verdict in DELV:
        result = subprocess.run([delv, "@127.0.0.1", "-p", str(signed.server.address[1]),
                                 "-a", str(signed.anchors), "+root=example.com.", name, rdtype],
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        expected = opt_out_verdict if signed.chain == "opt-out" else verdict
        assert result.stdout.splitlines()[0] == expected, (name, rdtype)
