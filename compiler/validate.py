"""Stage 2: turn parsed records into RRsets and refuse a zone that cannot be served.

Errors stop the build (no output is written); warnings are reported and the zone is served
the way BIND serves it. Every message names the record's file and line.
"""

from __future__ import annotations

from typing import Iterable

import dns.name
import dns.rdataset
import dns.rdatatype

from .errors import CompileError, Diagnostic, Position
from .parse import ParsedZone, Record
from .progress import Each, uncounted
from .zone import RRset, Zone

# The zone's names with their RRsets by type, as a check walks them (counted: build_zone).
Names = Iterable[tuple[dns.name.Name, dict]]

# Types that may sit beside a CNAME (RFC 2181 §10.1, RFC 4035 §2.5: DNSSEC records).
CNAME_COMPANIONS = {dns.rdatatype.CNAME, dns.rdatatype.RRSIG, dns.rdatatype.NSEC}


def build_zone(parsed: ParsedZone, lenient: bool = False,
               each: Each = uncounted) -> tuple[Zone, list[Diagnostic]]:
    """Group records into RRsets and check the zone; raise CompileError listing every error.
    `lenient` makes warnings of the integrity errors the peers let operators switch off
    (BIND's check-integrity, Knot's semantic-checks): missing glue. `each` wraps the walks
    over the records and the names (progress reports: on a 1M-name zone they took minutes)."""
    zone = Zone(parsed.source)
    origin = zone.origin
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []

    for record in each(parsed.records, len(parsed.records), "records grouped into RRsets"):
        if not record.name.is_subdomain(origin):
            errors.append(Diagnostic(record.position, "error",
                                     f"{record.name} is outside the zone {origin}"))
            continue
        by_type = zone.nodes.setdefault(record.name, {})
        rrset = by_type.get(record.rdata.rdtype)
        if rrset is None:
            rdataset = dns.rdataset.Rdataset(record.rdata.rdclass, record.rdata.rdtype)
            rdataset.add(record.rdata, record.ttl)
            by_type[record.rdata.rdtype] = RRset(record.name, rdataset, record.position)
            continue
        if dns.rdatatype.is_singleton(record.rdata.rdtype) and record.rdata not in rrset.rdataset:
            errors.append(_second_singleton(record, rrset))
            continue
        if record.rdata in rrset.rdataset:
            warnings.append(Diagnostic(record.position, "warning",
                                       f"duplicate record {record.name} "
                                       f"{record.rdata.rdtype.name} dropped"))
            continue
        if record.ttl != rrset.ttl:
            # RFC 2181 §5.2: TTLs in an RRset must match; serve the lowest, as BIND does.
            warnings.append(Diagnostic(record.position, "warning",
                                       f"TTL {record.ttl} differs from {rrset.ttl} in the "
                                       f"{record.name} {record.rdata.rdtype.name} RRset "
                                       f"(first at line {rrset.position.line}); "
                                       f"serving the lowest"))
        rrset.rdataset.add(record.rdata, min(record.ttl, rrset.ttl))  # add() keeps the lowest

    def names(check: str) -> Names:
        return each(zone.nodes.items(), len(zone.nodes), f"names checked for {check}")

    errors += _check_apex(zone, parsed, names("SOA"))
    errors += _check_cname(zone, names("CNAME"))
    errors += _check_dname(zone, names("DNAME"))
    integrity = _check_glue(zone, names("glue"))
    if lenient:
        integrity = [Diagnostic(d.position, "warning", d.message) for d in integrity]
        warnings += integrity
    else:
        errors += integrity
    warnings += _advice(zone, names("warnings"))
    if errors:
        raise CompileError(sorted(errors, key=lambda d: d.position) + warnings)
    return zone, warnings


def _second_singleton(record: Record, first: RRset) -> Diagnostic:
    """SOA, CNAME, DNAME: types of which a name holds one record (dnspython would silently
    keep the last)."""
    why = {dns.rdatatype.SOA: "a zone has exactly one",
           dns.rdatatype.CNAME: "an alias has one target (RFC 2181 §10.1)",
           dns.rdatatype.DNAME: "a name has one redirection (RFC 6672 §2.4)"}
    rdtype = record.rdata.rdtype
    return Diagnostic(record.position, "error",
                      f"a second {rdtype.name} record at {record.name} (first at line "
                      f"{first.position.line}); {why.get(rdtype, 'a name holds one')}")


def _check_apex(zone: Zone, parsed: ParsedZone, names: Names) -> list[Diagnostic]:
    origin = zone.origin
    errors = []
    start = Position(parsed.source.display, 1)
    soa = zone.get(origin, dns.rdatatype.SOA)
    if soa is None:
        errors.append(Diagnostic(start, "error", f"no SOA record at the zone apex {origin}"))
    if zone.get(origin, dns.rdatatype.NS) is None and soa is not None:
        errors.append(Diagnostic(soa.position, "error", f"no NS records at the zone apex {origin}"))
    for name, by_type in names:
        if name != origin and dns.rdatatype.SOA in by_type:
            errors.append(Diagnostic(by_type[dns.rdatatype.SOA].position, "error",
                                     f"SOA record at {name}, which is not the zone apex "
                                     f"{origin}"))
    return errors


def _check_cname(zone: Zone, names: Names) -> list[Diagnostic]:
    errors = []
    for name, by_type in names:
        cname = by_type.get(dns.rdatatype.CNAME)
        if cname is None:
            continue
        others = [rrset for rdtype, rrset in by_type.items() if rdtype not in CNAME_COMPANIONS]
        for other in others:
            errors.append(Diagnostic(other.position, "error",
                                     f"{name} has a CNAME and {other.rdtype.name} data "
                                     f"(RFC 2181 §10.1; CNAME at line {cname.position.line})"))
    return errors


def _below_any(name: dns.name.Name, owners, origin: dns.name.Name) -> dns.name.Name | None:
    """The nearest of `owners` strictly above `name`, walking up to the apex: a few steps per
    name, where comparing with every owner would be quadratic in big delegation zones."""
    while name != origin:
        name = name.parent()
        if name in owners:
            return name
    return None


def _check_dname(zone: Zone, names: Names) -> list[Diagnostic]:
    """RFC 6672 §2.4: no name may exist below a DNAME owner (it could never be reached)."""
    owners = {name: by_type[dns.rdatatype.DNAME] for name, by_type in zone.nodes.items()
              if dns.rdatatype.DNAME in by_type}
    errors = []
    for name, by_type in names:
        owner = _below_any(name, owners, zone.origin) if owners else None
        if owner is not None:
            first = next(iter(by_type.values()))
            errors.append(Diagnostic(first.position, "error",
                                     f"{name} lies below the DNAME at {owner} (line "
                                     f"{owners[owner].position.line}), which redirects every "
                                     f"name under it (RFC 6672 §2.4)"))
    return errors


def _addresses(zone: Zone, name: dns.name.Name) -> bool:
    data = zone.nodes.get(name, {})
    return dns.rdatatype.A in data or dns.rdatatype.AAAA in data


def _check_glue(zone: Zone, names: Names) -> list[Diagnostic]:
    """An NS target inside the zone needs an address there: below a cut it is glue, which
    nobody else can supply (RFC 1034 §4.2.1, RFC 9471); named-checkzone and kzonecheck agree."""
    errors = []
    for name, by_type in names:
        ns = by_type.get(dns.rdatatype.NS)
        if ns is None:
            continue
        for rdata in ns.rdataset:
            target = rdata.target
            if target.is_subdomain(zone.origin) and not _addresses(zone, target):
                errors.append(Diagnostic(ns.position, "error",
                                         f"{name} NS {target}: no A or AAAA record for it in "
                                         f"the zone (glue missing)"))
    return errors


def _advice(zone: Zone, names: Names) -> list[Diagnostic]:
    """Legal but probably wrong: served as written, with a warning."""
    warnings = []
    cuts = {n for n, t in zone.nodes.items() if n != zone.origin and dns.rdatatype.NS in t}
    targets = {rd.target for t in zone.nodes.values() if dns.rdatatype.NS in t
               for rd in t[dns.rdatatype.NS].rdataset}
    for name, by_type in names:
        for rdtype, field in ((dns.rdatatype.NS, "target"), (dns.rdatatype.MX, "exchange")):
            rrset = by_type.get(rdtype)
            for rdata in rrset.rdataset if rrset else ():
                target = getattr(rdata, field)
                if dns.rdatatype.CNAME in zone.nodes.get(target, {}):
                    warnings.append(Diagnostic(rrset.position, "warning",
                                               f"{name} {rdtype.name} {target} is an alias "
                                               f"(CNAME); RFC 2181 §10.3 forbids that"))
        if name.labels[0] == b"*" and dns.rdatatype.NS in by_type:
            warnings.append(Diagnostic(by_type[dns.rdatatype.NS].position, "warning",
                                       f"wildcard {name} has NS records (RFC 4592 §4.2: "
                                       f"their meaning is undefined)"))
        below_cut = _below_any(name, cuts, zone.origin)
        for rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
            if below_cut and rdtype in by_type and name not in targets:
                warnings.append(Diagnostic(by_type[rdtype].position, "warning",
                                           f"{name} {rdtype.name} lies below a delegation "
                                           f"but no NS record names it: glue nobody uses"))
    soa = zone.get(zone.origin, dns.rdatatype.SOA)
    if soa is not None and soa.rdataset[0].minimum > 86400:
        warnings.append(Diagnostic(soa.position, "warning",
                                   f"SOA MINIMUM {soa.rdataset[0].minimum} is over a day; "
                                   f"negative answers will be cached that long (RFC 2308 §5)"))
    return warnings
