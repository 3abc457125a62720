"""RFC 1035's experimental mail types, MD, MF, MB, MG, MR (a name) and MINFO (two names),
which dnspython reads only with compiler/read/mailtypes.py (BIND, Knot and NSD read them; so
do PowerDNS's regression zones): a zone holding them builds, and each is answered with its
name in the RDATA, written out whole."""

from __future__ import annotations

import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdatatype

from conftest import Server, build_set

ZONE = """$ORIGIN example.
@ 300 SOA ns1 hostmaster 1 7200 900 1209600 300
@ 300 NS ns1
ns1 300 A 192.0.2.1
LOC 300 LOC 52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m
m 300 MD mail.Example.
m 300 MF mail
m 300 MB mail
hostmaster.mb 300 MG phil.mb
hostmaster.mb 300 MG sheila.mb
m 300 MR mail
m 300 MINFO owner-list errors
"""

# (owner, type, the RDATA of each record as sent: names in full, as written).
EXPECTED = [
    ("m.example.", "MD", [b"\x04mail\x07Example\x00"]),
    ("m.example.", "MF", [b"\x04mail\x07example\x00"]),
    ("m.example.", "MB", [b"\x04mail\x07example\x00"]),
    ("hostmaster.mb.example.", "MG", [b"\x04phil\x02mb\x07example\x00",
                                      b"\x06sheila\x02mb\x07example\x00"]),
    ("m.example.", "MR", [b"\x04mail\x07example\x00"]),
    ("m.example.", "MINFO", [b"\x0aowner-list\x07example\x00\x06errors\x07example\x00"]),
]


def rdata_octets(response: bytes) -> list[bytes]:
    """The RDATA of each answer record, in the order sent (the question's name is the only
    pointer target before them, and these names are written whole)."""
    message = dns.message.from_wire(response)
    at = len(message.question[0].name.to_wire()) + 12 + 4
    octets = []
    for _ in range(sum(len(rrset) for rrset in message.answer)):
        at += 2 if response[at] >= 0xC0 else len(dns.name.from_wire(response, at)[0].to_wire())
        length = int.from_bytes(response[at + 8:at + 10], "big")
        octets.append(response[at + 10:at + 10 + length])
        at += 10 + length
    return octets


def test_a_zone_of_rfc_1035_mail_types_builds_and_answers_them(tmp_path):
    zone = tmp_path / "example.zone"
    zone.write_text(ZONE)  # LOC: the fast reader leaves the file to dnspython
    server = Server(build_set(tmp_path / "out", "--zone", f"example.={zone}"))
    try:
        for owner, rdtype, rdatas in EXPECTED:
            query = dns.message.make_query(owner, rdtype, use_edns=False)
            query.flags = 0
            raw = server.exchange(query.to_wire())
            response = dns.message.from_wire(raw)
            assert response.rcode() == dns.rcode.NOERROR
            assert response.flags & dns.flags.AA
            assert [(r.name.to_text(), dns.rdatatype.to_text(r.rdtype)) for r in
                    response.answer] == [(owner, rdtype)]
            assert sorted(rdata_octets(raw)) == sorted(rdatas), (owner, rdtype)
    finally:
        server.stop()
