"""Exact comparison of response sections: owner (case-insensitively), TTL, class, type and
the set of records of each RRset, in section order."""

from __future__ import annotations

import dns.flags
import dns.message
import dns.rcode
import dns.rrset


def section(rrsets) -> list[tuple]:
    return [(r.name.to_text().lower(), r.ttl, r.rdclass, r.rdtype,
             sorted(rd.to_text() for rd in r)) for r in rrsets]


def rrs(*texts: str) -> list[tuple]:
    """Expected RRsets, each as 'owner ttl IN type rdata[; rdata...]'."""
    out = []
    for text in texts:
        first, *more = text.split(";")
        owner, ttl, rdclass, rdtype, rdata = first.split(None, 4)
        rrset = dns.rrset.from_text(owner, int(ttl), rdclass, rdtype, rdata.strip(),
                                    *[m.strip() for m in more])
        out += section([rrset])
    return out


def assert_response(msg: dns.message.Message, rcode: int, aa: bool, answer=(), authority=(),
                    additional=()) -> None:
    assert msg.rcode() == rcode, dns.rcode.to_text(msg.rcode())
    assert bool(msg.flags & dns.flags.QR)
    assert bool(msg.flags & dns.flags.AA) == aa
    assert not msg.flags & (dns.flags.TC | dns.flags.RA | dns.flags.AD)
    assert section(msg.answer) == list(answer)
    assert section(msg.authority) == list(authority)
    assert section(msg.additional) == list(additional)
