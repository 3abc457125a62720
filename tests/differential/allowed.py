"""Every difference from Knot DNS that the differential tests accept, each with the reason the
RFCs give for zonebake's choice. Nothing else may differ."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype

from probes import Probe


@dataclass(frozen=True)
class Allowed:
    name: str
    reason: str
    applies: Callable[[Probe, dns.message.Message, dns.message.Message], bool]


def _longer_chain(probe: Probe, ours: dns.message.Message, knot: dns.message.Message) -> bool:
    """Knot stops after 5 CNAMEs; zonebake follows up to 8 (issue #3). Where Knot stopped,
    zonebake's answer goes on with the same chain."""
    knot_chain = knot.answer
    return (len(knot_chain) == KNOT_CHAIN_LIMIT and len(ours.answer) > KNOT_CHAIN_LIMIT
            and all(r.rdtype == dns.rdatatype.CNAME for r in knot_chain)
            and [_key(r) for r in ours.answer[:KNOT_CHAIN_LIMIT]] == [_key(r) for r in knot_chain]
            and not knot.authority and not knot.additional)


KNOT_CHAIN_LIMIT = 5


def _yxdomain_target_records(probe, ours, knot) -> bool:
    """Knot's YXDOMAIN carries the DNAME and then the records of the DNAME target itself; when
    those are a CNAME to a name that does not exist, Knot says NXDOMAIN instead."""
    return (ours.rcode() == dns.rcode.YXDOMAIN
            and knot.rcode() in (dns.rcode.YXDOMAIN, dns.rcode.NXDOMAIN)
            and [_key(r) for r in ours.answer] == [_key(r) for r in knot.answer[:len(ours.answer)]]
            and ours.answer and ours.answer[-1].rdtype == dns.rdatatype.DNAME
            and all(r.name == ours.answer[-1][0].target for r in knot.answer[len(ours.answer):]))


def _addresses_from_other_zones(probe, ours, knot) -> bool:
    """All else equal, zonebake's additional section also holds addresses of NS/MX/SRV
    targets that live in another zone of the set."""
    extra = {_key(r) for r in ours.additional} - {_key(r) for r in knot.additional}
    return (ours.rcode() == knot.rcode() and ours.flags == knot.flags
            and [_key(r) for r in ours.answer] == [_key(r) for r in knot.answer]
            and sorted(map(_key, ours.authority)) == sorted(map(_key, knot.authority))
            and {_key(r) for r in knot.additional} <= {_key(r) for r in ours.additional}
            and all(r.rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA)
                    and not r.name.is_subdomain(probe.zone)
                    for r in ours.additional if _key(r) in extra))


def _svcb_target_in_another_case(probe, ours, knot) -> bool:
    """All else equal, zonebake's additional section also holds the records of an SVCB or
    HTTPS TargetName written with capitals, which Knot does not find."""
    targets = {rd.target.to_text().lower() for rrset in [*ours.answer, *ours.additional]
               if rrset.rdtype in (dns.rdatatype.SVCB, dns.rdatatype.HTTPS) for rd in rrset
               if rd.target.to_text() != rd.target.to_text().lower()}
    extra = {_key(r) for r in ours.additional} - {_key(r) for r in knot.additional}
    return (bool(extra) and ours.rcode() == knot.rcode() and ours.flags == knot.flags
            and [_key(r) for r in ours.answer] == [_key(r) for r in knot.answer]
            and sorted(map(_key, ours.authority)) == sorted(map(_key, knot.authority))
            and {_key(r) for r in knot.additional} <= {_key(r) for r in ours.additional}
            and all(r.name.to_text().lower() in targets
                    for r in ours.additional if _key(r) in extra))


def _truncated_to_question(probe, ours, knot) -> bool:
    """Both set TC; zonebake sends no records with it, Knot the RRsets that fitted. The rcode
    may differ where a chain goes on past what fitted (zonebake gives the whole answer's,
    Knot the one it had when it stopped)."""
    return (bool(ours.flags & dns.flags.TC) and bool(knot.flags & dns.flags.TC)
            and (ours.rcode() == knot.rcode() or knot.answer)
            and not ours.answer and not ours.authority and not ours.additional)


def _expanded_nsec_with_its_proof(probe, ours, knot) -> bool:
    """QTYPE NSEC at a name a wildcard owning an NSEC matches, DO set: both answer with the
    expanded NSEC; zonebake's authority section also holds the NSEC that proves the name
    itself does not exist, which Knot leaves out."""
    extra = {_key(r) for r in ours.authority} - {_key(r) for r in knot.authority}
    return (probe.qtype == dns.rdatatype.NSEC and ours.rcode() == knot.rcode()
            and ours.flags == knot.flags and bool(extra)
            and sorted(map(_key, ours.answer)) == sorted(map(_key, knot.answer))
            and any(r.rdtype == dns.rdatatype.RRSIG and r[0].labels < len(r.name) - 1
                    for r in ours.answer)
            and {_key(r) for r in knot.authority} <= {_key(r) for r in ours.authority}
            and all(r.rdtype in (dns.rdatatype.NSEC, dns.rdatatype.RRSIG)
                    for r in ours.authority if _key(r) in extra))


def _any_not_the_signatures_alone(probe, ours, knot) -> bool:
    """ANY over UDP at a name whose types all sort after RRSIG (NSEC, an unknown type):
    zonebake answers with the lowest of them (and its signatures with DO set), Knot with the
    RRSIG RRset alone, the lowest type there."""
    ours_types = {r.rdtype for r in ours.answer if r.rdtype != dns.rdatatype.RRSIG}
    return (probe.qtype == dns.rdatatype.ANY and ours.rcode() == knot.rcode()
            and ours.flags == knot.flags and len(ours_types) == 1
            and min(ours_types) > dns.rdatatype.RRSIG
            and knot.answer and all(r.rdtype == dns.rdatatype.RRSIG for r in knot.answer)
            and sorted(map(_key, ours.authority)) == sorted(map(_key, knot.authority))
            and sorted(map(_key, ours.additional)) == sorted(map(_key, knot.additional)))


def _key(rrset) -> tuple:
    return (rrset.name.to_text().lower(), rrset.ttl, rrset.rdtype,
            tuple(sorted(rd.to_digestable() for rd in rrset)))

ALLOWED: list[Allowed] = [
    Allowed(
        "IXFR gets NOTIMP",
        "zonebake serves no zone transfers at all (RFC 1995 §2 lets a UDP IXFR be answered "
        "with the SOA only by a server that does IXFR). It says NOTIMP, as it does for AXFR, "
        "where Knot says NOTIMP too; Knot answers IXFR with NOTAUTH because no ACL allows it.",
        lambda p, ours, knot: p.qtype == dns.rdatatype.IXFR and ours.rcode() == dns.rcode.NOTIMP
        and knot.rcode() == dns.rcode.NOTAUTH,
    ),
    Allowed(
        "CNAME chains followed to 8 records, not 5",
        "No RFC sets a limit: RFC 1034 §4.3.2 step 3a restarts the lookup at each alias, RFC "
        "2181 §10.1 only says chains should be short, and resolvers follow what is missing. "
        "A bound stops loops and amplification; zonebake's is 8 CNAMEs, Knot's is 5.",
        _longer_chain,
    ),
    Allowed(
        "addresses from every zone of the set in the additional section",
        "RFC 1034 §4.3.2 step 6 adds addresses for NS, MX and SRV targets from any "
        "authoritative data the server has (BIND and NSD do); issue #3 asks for the zone set's. "
        "Knot looks only in the zone that answers.",
        _addresses_from_other_zones,
    ),
    Allowed(
        "an SVCB/HTTPS TargetName in capitals gets its additional records",
        "RFC 9460 §4.1 adds the TargetName's SVCB/HTTPS and address records; names compare "
        "without regard to case (RFC 4343 §3). Knot leaves them out when the TargetName is "
        "written with capitals (as a zone whose $ORIGIN has them writes every relative one).",
        _svcb_target_in_another_case,
    ),
    Allowed(
        "YXDOMAIN carries the DNAME alone",
        "RFC 6672 §2.2: when the substituted name would exceed 255 octets the server returns "
        "YXDOMAIN; the DNAME explains why. Knot adds the records of the DNAME's target name, "
        "which answer no question that was asked (and says NXDOMAIN when they are a CNAME to "
        "a name that does not exist).",
        _yxdomain_target_records,
    ),
    Allowed(
        "a truncated response carries the question only",
        "RFC 2181 §9: a client that sees TC ignores the partial answer and asks again over TCP "
        "(RFC 7766). zonebake sends TC with the question alone (issue #4's rule) and the rcode "
        "of the whole answer, which the TCP answer carries; Knot keeps the whole RRsets that "
        "fitted and the rcode it had when it stopped (NOERROR with the DNAME of a chain that "
        "ends in NXDOMAIN). Both are correct: the partial answer is not used.",
        _truncated_to_question,
    ),
    Allowed(
        "a wildcard's expanded NSEC comes with the proof that the name does not exist",
        "RFC 4035 §3.1.3.3: an answer synthesized from a wildcard must carry the NSEC that "
        "proves no closer match exists, whatever the type asked for; asked for NSEC, Knot "
        "takes the expanded NSEC in the answer for that proof, which a validator cannot "
        "(its owner is the query name, its signature the wildcard's).",
        _expanded_nsec_with_its_proof,
    ),
    Allowed(
        "ANY over UDP gets an RRset that the signatures sign, not the signatures alone",
        "RFC 8482 §4.1 lets the responder pick one RRset. Where every type at the name sorts "
        "after RRSIG, Knot picks the RRSIG RRset, signatures of RRsets it does not send; "
        "zonebake picks the lowest other type, with its signatures when DO is set (RFC 4035 "
        "§3.1.1), an answer a validator can use.",
        _any_not_the_signatures_alone,
    ),
    Allowed(
        "MAILA and MAILB get NOTIMP",
        "RFC 1035 §3.2.3 defines MAILA/MAILB as QTYPEs asking for mail agent and mailbox "
        "records together; RFC 2505 and RFC 6895 §3.1 leave them obsolete and no server "
        "implements them. NSD answers NOTIMP; Knot treats them as plain types (NODATA). "
        "zonebake says NOTIMP: it does not implement them.",
        lambda p, ours, knot: p.qtype in (dns.rdatatype.MAILA, dns.rdatatype.MAILB)
        and ours.rcode() == dns.rcode.NOTIMP,
    ),
]


def explain(probe: Probe, ours: dns.message.Message, knot: dns.message.Message) -> str | None:
    for allowed in ALLOWED:
        if allowed.applies(probe, ours, knot):
            return allowed.name
    return None


# Allowed as the entries of ALLOWED are, but judged with zonebake's answer over TCP.
TRUNCATED_WHERE_KNOT_FITS = "truncated where Knot's more compressed response fits, the same over TCP"
TRUNCATED_WHERE_KNOT_FITS_REASON = (
    "RFC 1035 §4.1.4 lets a server compress names or not. A denial proof the responder adds "
    "for the query name (runtime/query/denial.c) is a chain entry made in advance: its RRSIG's "
    "owner is written out, not pointed at the NSEC or NSEC3 owner before it, and names in RDATA "
    "never point into the question (it keeps the client's letter case). Near the client's size "
    "limit zonebake then sets TC (RFC 2181 §9) where Knot's response still fits; over TCP "
    "zonebake's answer is Knot's.")


def explain_truncation(ours: dns.message.Message, ours_over_tcp: dns.message.Message,
                       knot: dns.message.Message, same) -> str | None:
    """zonebake truncated where Knot did not, and its answer over TCP is Knot's (`same`
    compares two responses as the tests do)."""
    if (ours.flags & dns.flags.TC and not knot.flags & dns.flags.TC
            and not ours_over_tcp.flags & dns.flags.TC and same(ours_over_tcp, knot)):
        return TRUNCATED_WHERE_KNOT_FITS
    return None

