"""Questions for the differential tests, derived from the zone files themselves (read here with
dnspython, independently of the compiler): every (owner, type) present, every owner with types
it lacks, names that do not exist below every node, names matched by every wildcard, names at
and below every cut and DNAME, every empty non-terminal, and random letter case."""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass
from pathlib import Path

import dns.name
import dns.rdataclass
import dns.rdatatype
import dns.zone

T = dns.rdatatype
LACKING = (T.A, T.AAAA, T.MX, T.TXT, T.NS, T.SOA, T.CNAME, T.DS, T.SRV, T.PTR, T.ANY)
LACKING_FEW = (T.A, T.MX, T.TXT, T.ANY)


@dataclass(frozen=True)
class Probe:
    qname: dns.name.Name
    qtype: int
    why: str
    qclass: int = dns.rdataclass.IN
    zone: dns.name.Name = dns.name.root  # origin of the zone file the probe came from

    def __str__(self) -> str:
        cls = "" if self.qclass == dns.rdataclass.IN else dns.rdataclass.to_text(self.qclass) + " "
        return f"{self.qname} {cls}{dns.rdatatype.to_text(self.qtype)} ({self.why})"


def _prefixed(prefix: str, name: dns.name.Name) -> dns.name.Name | None:
    try:
        return dns.name.from_text(prefix, name)
    except dns.name.NameTooLong:
        return None


def _longest_below(name: dns.name.Name) -> dns.name.Name:
    """A name of exactly 255 octets below `name`: its image under a longer target overflows."""
    labels = []
    room = 255 - len(name.to_wire())
    while room > 1:
        size = min(63, room - 1)
        labels.append(b"y" * size)
        room -= size + 1
    return dns.name.Name(labels).concatenate(name) if room == 0 else dns.name.Name(
        labels[:-1] + [labels[-1][:-1]]).concatenate(name)


def _images(owner: dns.name.Name, node, exists: set, apex: dns.name.Name) -> list:
    """Below a DNAME owner, the name of every existing name below its target (in the zone
    and not below the owner), each with why: the query names the DNAME rewrites onto names
    that exist, where the answer and its proof come from the target's subtree (RFC 6672
    §3.3)."""
    target = node.get_rdataset(dns.rdataclass.IN, T.DNAME)[0].target
    if not target.is_subdomain(apex) or target.is_subdomain(owner):
        return []
    below = sorted(name for name in exists if name != target and name.is_subdomain(target)
                   and not name.is_subdomain(owner))
    return [(image, "the image of an existing name below a DNAME") for image in
            (_prefixed(name.relativize(target).to_text(), owner) for name in below)
            if image is not None]


def random_case(name: dns.name.Name, rng: random.Random) -> dns.name.Name:
    labels = [bytes(c ^ 0x20 if chr(c).isalpha() and rng.random() < 0.5 else c for c in label)
              for label in name.labels]
    return dns.name.Name(labels)


def zone_probes(origin: str, path: Path, few: bool = False, sample: float = 1.0,
                seed: int = 1) -> list[Probe]:
    rng = random.Random(seed)
    with contextlib.chdir(path.parent):  # $INCLUDE names a file beside the zone file
        zone = dns.zone.from_file(str(path), origin, relativize=False, check_origin=False)
    apex = zone.origin
    owners = {name: {rds.rdtype for rds in node} for name, node in zone.nodes.items()}
    exists = set()
    for name in owners:
        while name not in exists:
            exists.add(name)
            if name == apex:
                break
            name = name.parent()
    probes: list[Probe] = []

    def add(name, qtype, why):
        if name is not None:
            probes.append(Probe(name, qtype, why, zone=apex))

    for name, types in owners.items():
        for rdtype in types:
            add(name, rdtype, "present")
        lacking = [t for t in (LACKING_FEW if few else LACKING) if t not in types]
        for rdtype in lacking:
            add(name, rdtype, "lacking")
    for name in sorted(exists - set(owners)):
        add(name, T.A, "empty non-terminal")
        add(name, T.TXT, "empty non-terminal")
    for name in sorted(exists):
        if sample < 1.0 and rng.random() > sample:
            continue
        add(_prefixed("zz-nx-probe", name), T.A, "does not exist")
        add(_prefixed("a.zz-nx-probe", name), T.MX, "does not exist, deeper")
    for name, types in owners.items():
        if name.labels[0] == b"*":
            parent = name.parent()
            for rdtype in types | {T.A, T.TXT, T.ANY}:
                add(_prefixed("wild-probe", parent), rdtype, "wildcard match")
            add(_prefixed("x.y.wild-probe", parent), T.A, "wildcard match, deeper")
        if T.NS in types and name != apex:
            for rdtype in (T.NS, T.A, T.DS, T.ANY, T.SOA):
                add(name, rdtype, "at a cut")
            add(_prefixed("below-cut", name), T.A, "below a cut")
            add(_prefixed("a.b.below-cut", name), T.AAAA, "below a cut, deeper")
            add(_prefixed("below-cut", name), T.DS, "DS below a cut")
        if T.DNAME in types:
            for image, why in _images(name, zone.nodes[name], exists, apex):
                for rdtype in (T.A, T.TXT):
                    add(image, rdtype, why)
                add(_prefixed("zz-nx-probe", image), T.A, why + ", does not exist")
                add(_prefixed("a.zz-nx-probe", image), T.MX, why + ", does not exist, deeper")
            add(_prefixed("dname-probe", name), T.A, "below a DNAME")
            add(_prefixed("x.dname-probe", name), T.TXT, "below a DNAME, deeper")
            add(_prefixed("www", name), T.A, "below a DNAME")
            add(_longest_below(name), T.A, "longest name below a DNAME")
    # Types no zone data answers, and classes other than IN.
    for qtype in (T.AXFR, T.IXFR, T.MAILA, T.MAILB, 0, T.OPT, T.RRSIG, T.NSEC):
        add(apex, qtype, "special type")
    for qclass in (dns.rdataclass.CH, dns.rdataclass.HS, dns.rdataclass.NONE,
                   dns.rdataclass.ANY):
        probes.append(Probe(apex, T.SOA, "other class", qclass, apex))
    # Letter case is the client's business (RFC 4343): every tenth question again, mixed case.
    mixed = [Probe(random_case(p.qname, rng), p.qtype, p.why + ", mixed case", p.qclass, p.zone)
             for p in probes[::10]]
    return list(dict.fromkeys(probes + mixed))
