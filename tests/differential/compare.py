"""Compare two responses the way the differential tests mean it: rcode, AA, TC and every
section; owner names without regard to case, TTLs compared, the order of records inside an
RRset ignored, the order of RRsets kept in the answer section (a CNAME chain is ordered) and
ignored in authority and additional. Where RRSIGs go in a section is no one's business
(RFC 4035 §3.1.1 asks only that they be in it): zonebake puts each after its RRset, Knot
all at the end."""

from __future__ import annotations

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype


def _rrset(rrset) -> tuple:
    return (rrset.name.to_text().lower(), rrset.ttl, rrset.rdclass, rrset.rdtype,
            tuple(sorted(rd.to_digestable() for rd in rrset)))


def normalize(message: dns.message.Message) -> dict:
    return {
        "rcode": dns.rcode.to_text(message.rcode()),
        "aa": bool(message.flags & dns.flags.AA),
        "tc": bool(message.flags & dns.flags.TC),
        "answer": [_rrset(r) for r in message.answer if r.rdtype != dns.rdatatype.RRSIG]
        + sorted(_rrset(r) for r in message.answer if r.rdtype == dns.rdatatype.RRSIG),
        "authority": sorted(_rrset(r) for r in message.authority),
        "additional": sorted(_rrset(r) for r in message.additional),
    }


def differences(ours: dict, theirs: dict) -> list[str]:
    return [key for key in ours if ours[key] != theirs[key]]


def show(message: dns.message.Message) -> str:
    flags = dns.flags.to_text(message.flags)
    lines = [f"  {dns.rcode.to_text(message.rcode())} {flags}"]
    for title, section in (("AN", message.answer), ("NS", message.authority),
                           ("AR", message.additional)):
        lines += [f"  {title} {line}" for rrset in section for line in rrset.to_text().split("\n")]
    return "\n".join(lines)
