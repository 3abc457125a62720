"""Write the request handler's fuzz seed corpus (tests/fuzz/corpus/respond): queries that reach
every kind of answer, with and without EDNS, and the malformed packets of the protocol tests.
Run it again after changing the list; the files are named by content, so reruns are stable."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import dns.edns
import dns.message

CORPUS = Path(__file__).parent / "corpus" / "respond"

NAMES = ["example.", "www.example.", "WwW.ExAmPlE.", "nope.example.", "alias2.example.",
         "c1.example.", "loop1.example.", "dangling.example.", "sub.example.", "a.b.sub.example.",
         "ns1.sub.example.", "foo.wild.example.", "x.y.wild.example.", "anything.wc.example.",
         "x.dn.example.", "no.such.dn.example.", "www.dn-out.example.", "x.deep.ent.example.",
         "ent.example.", "www.sub.example.com.", "sub.example.com.", "www.example.org.",
         "y" * 63 + "." + "y" * 63 + "." + "y" * 63 + "." + "y" * 50 + ".dn.example."]
TYPES = ["A", "AAAA", "MX", "NS", "DS", "ANY", "CNAME", "TXT", "SOA", "DNAME", "SRV"]
# The signed zones' names, asked with DO set: answers, NODATA, NXDOMAIN, wildcards, empty
# non-terminals, referrals secure and not, DNAME, and the chain's own types.
SIGNED_NAMES = ["", "www.", "nope.", "x.wild.", "b.ent.", "a.b.ent.", "secure.", "x.insecure.",
                "x.old.", "mail.", "zz.zz.nope."]
SIGNED_TYPES = ["A", "MX", "DS", "TXT", "NSEC", "NSEC3", "RRSIG", "DNSKEY", "ANY"]


def seeds() -> list[bytes]:
    out = []
    for i, name in enumerate(NAMES):
        for j, qtype in enumerate(TYPES):
            if (i + j) % 3:
                continue
            out.append(dns.message.make_query(name, qtype, use_edns=False).to_wire())
        out.append(dns.message.make_query(name, "A", use_edns=0, payload=4096,
                                          want_dnssec=True).to_wire())
    for zone in ("nsec.test.", "nsec3.test."):
        for i, name in enumerate(SIGNED_NAMES):
            for j, qtype in enumerate(SIGNED_TYPES):
                if (i + j) % 3 == 0:
                    out.append(dns.message.make_query(name + zone, qtype, use_edns=0,
                                                      payload=1232, want_dnssec=True).to_wire())
    out.append(dns.message.make_query("www.example.", "A", use_edns=0, options=[
        dns.edns.GenericOption(dns.edns.NSID, b""), dns.edns.GenericOption(65001, b"x")]).to_wire())
    out.append(dns.message.make_query("www.example.", "A", use_edns=1).to_wire())
    # Cookies (RFC 7873): the sizes a read takes on a guess, a client's alone and with a
    # server cookie of RFC 9018's size, then others, a malformed one, and one beside NSID.
    for cookie in (bytes(range(8)), bytes(range(24)), bytes(range(16)), bytes(range(40)),
                   bytes(range(7))):
        for name in ("www.example.", "nope.example.", "a.b.sub.example."):
            out.append(dns.message.make_query(name, "A", use_edns=0, options=[
                dns.edns.GenericOption(dns.edns.COOKIE, cookie)]).to_wire())
    out.append(dns.message.make_query("www.example.", "A", use_edns=0, options=[
        dns.edns.GenericOption(dns.edns.NSID, b""),
        dns.edns.GenericOption(dns.edns.COOKIE, bytes(range(8)))]).to_wire())
    # Class CH: the server's own names (TXT, ANY, another type) and one it does not answer.
    for name, qtype in [("id.server.", "TXT"), ("Version.Bind.", "ANY"),
                        ("hostname.bind.", "A"), ("authors.bind.", "TXT")]:
        out.append(dns.message.make_query(name, qtype, "CH", use_edns=False).to_wire())
    out.append(dns.message.make_query("version.server.", "TXT", "CH", use_edns=0, options=[
        dns.edns.GenericOption(dns.edns.NSID, b"")]).to_wire())
    query = dns.message.make_query("www.example.", "A", use_edns=False).to_wire()
    out += [b"", query[:11], query[:12], query + b"\x00", query[:-1],
            b"\x12\x34\x81\x00" + query[4:],  # QR=1
            query[:2] + b"\x28\x00" + query[4:],  # NOTIFY
            query[:5] + b"\x02" + query[6:] + query[12:],  # QDCOUNT 2
            query[:12] + b"\x03www\xc0\x0c\x00\x01\x00\x01",  # pointer in the question
            query[:12] + b"\x03www\x47example\x00\x00\x01\x00\x01"]  # label type 0x40
    return out


def main() -> None:
    """Write the seeds, each with ID 0 (make_query picks one at random), and remove the files
    of the same seeds with another ID."""
    fixed = [b"\0\0" + seed[2:] if len(seed) >= 2 else seed for seed in seeds()]
    bodies = {seed[2:] for seed in fixed if len(seed) >= 12}
    CORPUS.mkdir(exist_ok=True)
    for old in CORPUS.iterdir():
        data = old.read_bytes()
        if len(data) >= 12 and data[2:] in bodies and data[:2] != b"\0\0":
            old.unlink()
    for seed in fixed:
        (CORPUS / hashlib.sha1(seed).hexdigest()).write_bytes(seed)


if __name__ == "__main__":
    main()
