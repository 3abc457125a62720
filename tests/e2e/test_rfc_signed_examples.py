"""The example answers of RFC 4035 Appendix B (NSEC) and RFC 5155 Appendix B (NSEC3, opt-out),
asked of a server built from the example zones of their Appendix A, signed here by
dnssec-signzone with a fresh key (the RFCs' own signatures expired long ago). Each case
checks the rcode, the answer, and the authority section record by record as the RFC lists it;
every RRset that comes with signatures is verified against the zone's key. `delv` validates
a sample as fully secure against that key as the trust anchor.

One difference from the RFCs' listings, by choice: a positive answer carries no NS RRset of
the apex in its authority section (RFC 2181 §6.1 does not ask for it; Knot and NSD leave it
out too). The additional section is not compared."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import dns.dnssec
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import dns.zone
import pytest

from conftest import Server, build_set, require

# RFC 4035 Appendix A, without its keys and signatures.
RFC4035 = """$TTL 3600
@ SOA ns1.example. bugs.x.w.example. 1081539377 3600 300 3600000 3600
@ NS ns1.example.
@ NS ns2.example.
@ MX 1 xx.example.
a NS ns1.a.example.
a NS ns2.a.example.
a DS 57855 5 1 B6DCD485719ADCA18E5F3D48A2331627FDD3636B
ns1.a A 192.0.2.5
ns2.a A 192.0.2.6
ai A 192.0.2.9
ai HINFO "KLH-10" "ITS"
ai AAAA 2001:db8::f00:baa9
b NS ns1.b.example.
b NS ns2.b.example.
ns1.b A 192.0.2.7
ns2.b A 192.0.2.8
ns1 A 192.0.2.1
ns2 A 192.0.2.2
*.w MX 1 ai.example.
x.w MX 1 xx.example.
x.y.w MX 1 xx.example.
xx A 192.0.2.10
xx HINFO "KLH-10" "TOPS-20"
xx AAAA 2001:db8::f00:baa9
"""

# RFC 5155 Appendix A: the same zone, but for its serial and the delegations (a. secure, c.
# insecure), and a name that is spelled as an NSEC3 owner (§7.2.8).
RFC5155 = (RFC4035.replace("1081539377", "1")
           .replace("57855 5 1 B6DCD485719ADCA18E5F3D48A2331627FDD3636B",
                    "58470 5 1 3079F1593EBAD6DC121E202A8B766A6A4837206C")
           .replace("b NS ns1.b.example.\nb NS ns2.b.example.\nns1.b A 192.0.2.7\nns2.b A",
                    "c NS ns1.c.example.\nc NS ns2.c.example.\nns1.c A 192.0.2.7\nns2.c A")
           + "2t7b4g4vsa5smi47k61mv5bv1a22bojr A 192.0.2.127\n")

# The names of RFC 5155's zone that have an NSEC3 (-A: not the insecure delegation c.example.,
# nor the glue), the empty non-terminals w. and y.w. among them.
NSEC3_NAMES = ["example.", "a.example.", "ai.example.", "ns1.example.", "ns2.example.",
               "w.example.", "*.w.example.", "x.w.example.", "y.w.example.", "x.y.w.example.",
               "xx.example.", "2t7b4g4vsa5smi47k61mv5bv1a22bojr.example."]

ORIGIN = dns.name.from_text("example.")
SALT, ITERATIONS = "aabbccdd", 12


def sign(directory: Path, text: str, *nsec3: str) -> tuple[Path, dns.rrset.RRset]:
    """The zone signed with one ECDSA P-256 key (a KSK signing everything, `-z`); the signed
    file and the DNSKEY RRset."""
    keygen, signzone = require("bind9-utils", "dnssec-keygen", "dnssec-signzone")
    directory.mkdir()
    key = subprocess.run([keygen, "-q", "-a", "ECDSAP256SHA256", "-f", "KSK", "-K",
                          str(directory), "example."], capture_output=True, text=True,
                         check=True).stdout.strip()
    unsigned = directory / "example.zone"
    unsigned.write_text(text + (directory / f"{key}.key").read_text())
    signed = directory / "example.signed"
    subprocess.run([signzone, "-q", "-z", "-S", "-K", str(directory), "-o", "example.",
                    *nsec3, "-f", str(signed), str(unsigned)], capture_output=True,
                   check=True, cwd=directory)
    zone = dns.zone.from_file(str(signed), origin=ORIGIN, relativize=False)
    return signed, zone.find_rrset(ORIGIN, dns.rdatatype.DNSKEY)


class Signed:
    def __init__(self, tmp: Path, text: str, *nsec3: str):
        self.zone, self.keys = sign(tmp / "keys", text, *nsec3)
        self.server = Server(build_set(tmp / "out", "--zone", f"example.={self.zone}"))

    def ask(self, name: str, rdtype: str) -> dns.message.Message:
        query = dns.message.make_query(name, rdtype, want_dnssec=True, use_edns=0,
                                       payload=4096)
        response = dns.query.udp(query, *self.server.address[:1],
                                 port=self.server.address[1], timeout=2)
        assert not response.flags & 0x0200, "truncated"  # TC: all of it fits 4096
        self.verify(response)
        return response

    def verify(self, response: dns.message.Message) -> None:
        """Every RRset of the answer and authority sections is signed, and verifies."""
        for section in (response.answer, response.authority):
            sigs = {(r.name, r.covers): r for r in section if r.rdtype == dns.rdatatype.RRSIG}
            for rrset in section:
                if rrset.rdtype == dns.rdatatype.RRSIG:
                    continue
                if rrset.rdtype == dns.rdatatype.NS and rrset.name != ORIGIN:
                    continue  # a delegation's NS is not signed (RFC 4035 §2.2)
                sig = sigs.get((rrset.name, rrset.rdtype))
                assert sig is not None, f"{rrset.name} {dns.rdatatype.to_text(rrset.rdtype)}" \
                    " has no RRSIG"
                dns.dnssec.validate(rrset, sig, {ORIGIN: self.keys})

    def delv(self, tmp: Path, name: str, rdtype: str) -> str:
        """What delv makes of the name and type, validating from the zone's KSK as the trust
        anchor; its first line says whether it validated."""
        [ksk] = [key for key in self.keys if key.flags & 1]  # SEP (RFC 4034 §2.1.1)
        anchors = tmp / "anchors.conf"
        anchors.write_text(f'trust-anchors {{\n example. static-key {ksk.flags} {ksk.protocol} '
                           f'{ksk.algorithm} "{base64.b64encode(ksk.key).decode()}";\n}};\n')
        result = subprocess.run([delv_path(), "@127.0.0.1", "-p", str(self.server.address[1]),
                                 "-a", str(anchors), "+root=example.", name, rdtype],
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        return result.stdout.splitlines()[0]

    def stop(self) -> None:
        self.server.stop()


def delv_path() -> str:
    return require("bind9-dnsutils", "delv")[0]


@pytest.fixture(scope="module")
def nsec(tmp_path_factory):
    signed = Signed(tmp_path_factory.mktemp("rfc4035"), RFC4035)
    yield signed
    signed.stop()


@pytest.fixture(scope="module")
def nsec3(tmp_path_factory):
    signed = Signed(tmp_path_factory.mktemp("rfc5155"), RFC5155, "-3", SALT, "-H",
                    str(ITERATIONS), "-A")
    yield signed
    signed.stop()


def h(name: str) -> str:
    """The NSEC3 owner of a name (RFC 5155 Appendix A lists them)."""
    return dns.dnssec.nsec3_hash(name, SALT, ITERATIONS, 1).lower() + ".example."


def listed(section, skip_apex_ns: bool = False) -> list[str]:
    """`OWNER TYPE` per RRset, signatures as `OWNER RRSIG(TYPE)`, sorted; for NSEC and NSEC3
    the data too (the next name and the types are what prove)."""
    out = []
    for rrset in section:
        name, kind = rrset.name.to_text().lower(), dns.rdatatype.to_text(rrset.rdtype)
        if skip_apex_ns and rrset.name == ORIGIN and kind == "NS":
            continue
        if kind == "RRSIG":
            if skip_apex_ns and rrset.name == ORIGIN and rrset.covers == dns.rdatatype.NS:
                continue
            out.append(f"{name} RRSIG({dns.rdatatype.to_text(rrset.covers)})")
        elif kind in ("NSEC", "NSEC3"):
            out += [f"{name} {kind} {rdata.to_text().lower()}" for rdata in rrset]
        else:
            out.append(f"{name} {kind}")
    return sorted(out)


def nsec3_entry(owner: str, types: str) -> list[str]:
    """The NSEC3 of a name of RFC 5155's zone, naming the next hash of the chain; every one
    has the opt-out flag (the zone is signed with -A, as the RFC's)."""
    chain = sorted(h(name) for name in NSEC3_NAMES)
    next_hash = chain[(chain.index(h(owner)) + 1) % len(chain)].split(".")[0]
    record = f"{h(owner)} NSEC3 1 1 {ITERATIONS} {SALT} {next_hash} {types}".rstrip()
    return [record, f"{h(owner)} RRSIG(NSEC3)"]


def nsec_entry(owner: str, next_name: str, types: str) -> list[str]:
    return [f"{owner} NSEC {next_name} {types}", f"{owner} RRSIG(NSEC)"]


SOA = ["example. SOA", "example. RRSIG(SOA)"]


# ---- RFC 4035 Appendix B ----

def test_b1_answer(nsec):
    r = nsec.ask("x.w.example.", "MX")
    assert r.rcode() == dns.rcode.NOERROR and r.flags & 0x0400  # AA
    assert listed(r.answer) == ["x.w.example. MX", "x.w.example. RRSIG(MX)"]
    assert listed(r.authority, skip_apex_ns=True) == []


def test_b2_name_error(nsec):
    r = nsec.ask("ml.example.", "A")
    assert r.rcode() == dns.rcode.NXDOMAIN and r.answer == []
    assert listed(r.authority) == sorted(
        SOA + nsec_entry("b.example.", "ns1.example.", "ns rrsig nsec")
        + nsec_entry("example.", "a.example.", "ns soa mx rrsig nsec dnskey"))


def test_b3_no_data_error(nsec):
    r = nsec.ask("ns1.example.", "MX")
    assert r.rcode() == dns.rcode.NOERROR and r.answer == []
    assert listed(r.authority) == sorted(
        SOA + nsec_entry("ns1.example.", "ns2.example.", "a rrsig nsec"))


def test_b4_referral_to_signed_zone(nsec):
    r = nsec.ask("mc.a.example.", "MX")
    assert r.rcode() == dns.rcode.NOERROR and not r.flags & 0x0400 and r.answer == []
    assert listed(r.authority) == ["a.example. DS", "a.example. NS", "a.example. RRSIG(DS)"]
    assert listed(r.additional) == ["ns1.a.example. A", "ns2.a.example. A"]


def test_b5_referral_to_unsigned_zone(nsec):
    r = nsec.ask("mc.b.example.", "MX")
    assert r.rcode() == dns.rcode.NOERROR and not r.flags & 0x0400 and r.answer == []
    assert listed(r.authority) == sorted(
        ["b.example. NS"] + nsec_entry("b.example.", "ns1.example.", "ns rrsig nsec"))


def test_b6_wildcard_expansion(nsec):
    r = nsec.ask("a.z.w.example.", "MX")
    assert r.rcode() == dns.rcode.NOERROR
    assert listed(r.answer) == ["a.z.w.example. MX", "a.z.w.example. RRSIG(MX)"]
    sig = next(s for s in r.answer if s.rdtype == dns.rdatatype.RRSIG)[0]
    assert sig.labels == 2  # expanded from *.w.example. (RFC 4035 §5.3.4)
    assert listed(r.authority, skip_apex_ns=True) == nsec_entry(
        "x.y.w.example.", "xx.example.", "mx rrsig nsec")


def test_b7_wildcard_no_data_error(nsec):
    r = nsec.ask("a.z.w.example.", "AAAA")
    assert r.rcode() == dns.rcode.NOERROR and r.answer == []
    assert listed(r.authority) == sorted(
        SOA + nsec_entry("x.y.w.example.", "xx.example.", "mx rrsig nsec")
        + nsec_entry("*.w.example.", "x.w.example.", "mx rrsig nsec"))


def test_b8_ds_child_zone_no_data_error(nsec):
    r = nsec.ask("example.", "DS")
    assert r.rcode() == dns.rcode.NOERROR and r.answer == []
    assert listed(r.authority) == sorted(
        SOA + nsec_entry("example.", "a.example.", "ns soa mx rrsig nsec dnskey"))


# ---- RFC 5155 Appendix B ----

def test_hashes_are_the_rfcs():
    """RFC 5155 Appendix A's hashes, as the expected answers below compute them."""
    assert h("example.") == "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.example."
    assert h("x.w.example.") == "b4um86eghhds6nea196smvmlo4ors995.example."
    assert h("*.w.example.") == "r53bq7cc2uvmubfu5ocmm6pers9tk9en.example."


def test_nsec3_b1_name_error(nsec3):
    r = nsec3.ask("a.c.x.w.example.", "A")
    assert r.rcode() == dns.rcode.NXDOMAIN and r.answer == []
    assert listed(r.authority) == sorted(
        SOA
        # covers the next closer name, c.x.w.example.
        + nsec3_entry("example.", "ns soa mx rrsig dnskey nsec3param")
        # matches the closest encloser, x.w.example.
        + nsec3_entry("x.w.example.", "mx rrsig")
        # covers the wildcard at the closest encloser, *.x.w.example.
        + nsec3_entry("a.example.", "ns ds rrsig"))


def test_nsec3_b2_no_data_error(nsec3):
    r = nsec3.ask("ns1.example.", "MX")
    assert r.rcode() == dns.rcode.NOERROR and r.answer == []
    assert listed(r.authority) == sorted(
        SOA + nsec3_entry("ns1.example.", "a rrsig"))


def test_nsec3_b2_1_no_data_error_empty_non_terminal(nsec3):
    r = nsec3.ask("y.w.example.", "A")
    assert r.rcode() == dns.rcode.NOERROR and r.answer == []
    assert listed(r.authority) == sorted(SOA + nsec3_entry("y.w.example.", ""))


def test_nsec3_b3_referral_to_an_opt_out_unsigned_zone(nsec3):
    r = nsec3.ask("mc.c.example.", "MX")
    assert r.rcode() == dns.rcode.NOERROR and not r.flags & 0x0400 and r.answer == []
    assert listed(r.authority) == sorted(
        ["c.example. NS"]
        # matches the closest provable encloser, example.
        + nsec3_entry("example.", "ns soa mx rrsig dnskey nsec3param")
        # covers the next closer name, c.example., with opt-out
        + nsec3_entry("a.example.", "ns ds rrsig"))
    assert listed(r.additional) == ["ns1.c.example. A", "ns2.c.example. A"]


def test_nsec3_b4_wildcard_expansion(nsec3):
    r = nsec3.ask("a.z.w.example.", "MX")
    assert r.rcode() == dns.rcode.NOERROR
    assert listed(r.answer) == ["a.z.w.example. MX", "a.z.w.example. RRSIG(MX)"]
    # covers the next closer name, z.w.example.
    assert listed(r.authority, skip_apex_ns=True) == nsec3_entry("ns2.example.", "a rrsig")


def test_nsec3_b5_wildcard_no_data_error(nsec3):
    r = nsec3.ask("a.z.w.example.", "AAAA")
    assert r.rcode() == dns.rcode.NOERROR and r.answer == []
    assert listed(r.authority) == sorted(
        SOA
        + nsec3_entry("w.example.", "")  # matches the closest encloser
        + nsec3_entry("ns2.example.", "a rrsig")  # covers the next closer, z.w.example.
        + nsec3_entry("*.w.example.", "mx rrsig"))  # matches the wildcard


def test_nsec3_b6_ds_child_zone_no_data_error(nsec3):
    r = nsec3.ask("example.", "DS")
    assert r.rcode() == dns.rcode.NOERROR and r.answer == []
    assert listed(r.authority) == sorted(
        SOA + nsec3_entry("example.", "ns soa mx rrsig dnskey nsec3param"))


# ---- A validator's verdict ----

SECURE, DENIED = "; fully validated", "; negative response, fully validated"
# With opt-out, a wildcard answer whose next closer name only an opt-out NSEC3 covers is
# insecure, not bogus (RFC 5155 §8.8): the RFC's own zone has that case (B.4).
SAMPLE = [("x.w.example.", "MX", SECURE, SECURE),
          ("a.z.w.example.", "MX", SECURE, "; unsigned answer"),
          ("example.", "DNSKEY", SECURE, SECURE),
          ("ml.example.", "A", DENIED, DENIED),
          ("a.c.x.w.example.", "A", DENIED, DENIED),
          ("ns1.example.", "MX", DENIED, DENIED),
          ("y.w.example.", "A", DENIED, DENIED),
          ("a.z.w.example.", "AAAA", DENIED, DENIED)]


@pytest.mark.parametrize("chain", ["nsec", "nsec3"])
def test_delv_validates_a_sample_as_secure(chain, request, tmp_path):
    """delv (BIND's validator) checks each answer from the trust anchor down: answers,
    NXDOMAIN, NODATA, an empty non-terminal, a wildcard and wildcard NODATA. (A referral it
    cannot follow: it is a stub that wants recursion.)"""
    delv_path()
    signed = request.getfixturevalue(chain)
    for name, rdtype, *verdicts in SAMPLE:
        verdict = verdicts[["nsec", "nsec3"].index(chain)]
        assert signed.delv(tmp_path, name, rdtype) == verdict, (name, rdtype)
