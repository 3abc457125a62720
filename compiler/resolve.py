"""The RFC 1034 §4.3.2 algorithm over one zone's data, run by the compiler for every answer.

`ZoneView` says where a name falls in a zone (step 3: below a cut, below a DNAME, an exact
match, a wildcard match, or nothing); `resolve` builds the whole response for one question,
following CNAME and DNAME chains inside the zone as Knot DNS does.

A question is either a concrete name (a node of the tree, or a CNAME target), or `QNAME`: the
name the client asked for, known only to lie below a given closest encloser that has no node
for it. Records synthesized for such a name (wildcard answers, RFC 4592 §3.3.1; the CNAME of a
DNAME, RFC 6672 §3.3) are written with QNAME as owner and point at the question at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import dns.name
import dns.rcode
import dns.rdataset
import dns.rdatatype

from .zone import Zone

MAX_CHAIN = 8  # CNAMEs in one answer; a longer chain stops with the chain so far
WILDCARD = dns.name.Name([b"*"])
ADDRESS_TYPES = (dns.rdatatype.A, dns.rdatatype.AAAA)
# Types whose targets get their addresses in the additional section (RFC 1035 §3.3,
# RFC 2782); NS targets below the delegation they serve are glue (RFC 9471).
TARGET_OF = {
    dns.rdatatype.NS: lambda rd: rd.target,
    dns.rdatatype.MX: lambda rd: rd.exchange,
    dns.rdatatype.SRV: lambda rd: rd.target,
}


class _QueryName:
    def __repr__(self) -> str:
        return "QNAME"


class _DnameImage:
    def __repr__(self) -> str:
        return "DNAME_IMAGE"


QNAME = _QueryName()
# The query name rewritten by a DNAME: the target of the synthesized CNAME, which the responder
# completes; records owned by it point there.
DNAME_IMAGE = _DnameImage()
Owner = dns.name.Name | _QueryName | _DnameImage


@dataclass(frozen=True)
class Entry:
    """One RRset in a response section, with the owner it is written with."""

    owner: Owner
    rdataset: dns.rdataset.Rdataset


@dataclass(frozen=True)
class DnameSynthesis:
    """A CNAME whose target the responder completes: the query name's labels in front of the
    DNAME owner, then `target` (RFC 6672 §2.2). It follows the answer section's first
    `position` RRsets (the last of them the DNAME)."""

    owner: dns.name.Name  # the DNAME owner
    target: dns.name.Name
    ttl: int
    position: int


@dataclass
class Response:
    rcode: int = dns.rcode.NOERROR
    aa: bool = True
    answer: list[Entry] = field(default_factory=list)
    authority: list[Entry] = field(default_factory=list)
    additional: list[Entry] = field(default_factory=list)  # required: never cut, TC instead
    optional: list[Entry] = field(default_factory=list)  # optional additional: cut first
    dname: DnameSynthesis | None = None


# Where a name falls in a zone (RFC 1034 §4.3.2 step 3).
@dataclass(frozen=True)
class Delegated:  # at or below a zone cut: a referral (step 3b)
    cut: dns.name.Name


@dataclass(frozen=True)
class BelowDname:  # below a DNAME owner (RFC 6672 §3.3)
    owner: dns.name.Name


@dataclass(frozen=True)
class Exact:  # the name exists (step 3a); `data_at` is where its records are
    data_at: dns.name.Name


@dataclass(frozen=True)
class Synthesized:  # no such name, but its closest encloser has a wildcard (RFC 4592 §4)
    source: dns.name.Name  # the wildcard: '*.' + closest encloser


@dataclass(frozen=True)
class Missing:  # no such name (step 3c)
    closest_encloser: dns.name.Name


Location = Delegated | BelowDname | Exact | Synthesized | Missing


class ZoneView:
    """One zone's names, cuts and DNAMEs, for locating names the way a server does."""

    def __init__(self, zone: Zone):
        self.zone = zone
        self.origin = zone.origin
        # owner -> type -> dnspython Rdataset
        self.data = {name: {t: rrset.rdataset for t, rrset in by_type.items()}
                     for name, by_type in zone.nodes.items()}
        self.names: set[dns.name.Name] = set()  # every name that exists: data or ENT
        for name in zone.nodes:
            while name not in self.names:
                self.names.add(name)
                if name == self.origin:
                    break
                name = name.parent()
        self.cuts = {n for n, t in zone.nodes.items()
                     if n != self.origin and dns.rdatatype.NS in t}
        self._redirects: dict[dns.name.Name, Delegated | BelowDname | None] = {}
        self.dnames = {n for n, t in zone.nodes.items() if dns.rdatatype.DNAME in t}
        soa = zone.soa.rdataset
        negative = dns.rdataset.Rdataset(soa.rdclass, dns.rdatatype.SOA)
        negative.update(soa)
        negative.ttl = min(soa.ttl, soa[0].minimum)  # RFC 2308 §3
        self.negative_soa = Entry(self.origin, negative)
        # The other zones of the set, by origin, for additional-section addresses.
        self.zone_set: dict[dns.name.Name, ZoneView] = {self.origin: self}

    def contains(self, name: dns.name.Name) -> bool:
        return name.is_subdomain(self.origin)

    def locate(self, name: dns.name.Name, qtype: int) -> Location:
        """Where a concrete name in this zone falls."""
        if name != self.origin:
            redirect = self._redirect(name.parent())
            if redirect is not None:
                return redirect
        # At the cut itself only DS is the parent's own data (RFC 4035 §3.1.4.1).
        if name in self.cuts and qtype != dns.rdatatype.DS:
            return Delegated(name)
        if name in self.names:
            return Exact(name)
        encloser = name.parent()
        while encloser not in self.names:
            encloser = encloser.parent()
        return self._below(encloser)

    def locate_below(self, encloser: dns.name.Name) -> Location:
        """Where a name falls that lies below `encloser` (an existing name) and does not exist."""
        redirect = self._redirect(encloser)
        return redirect if redirect is not None else self._below(encloser)

    def _below(self, encloser: dns.name.Name) -> Location:
        source = WILDCARD.concatenate(encloser)
        return Synthesized(source) if source in self.names else Missing(encloser)

    def _redirect(self, name: dns.name.Name) -> Delegated | BelowDname | None:
        """The first cut or DNAME on the way from the apex down to `name` (included), which
        decides for every name below (step 3's walk). The apex may own a DNAME (RFC 6672
        §2.3), never a cut. Remembered per name: every node asks for its parent's."""
        if name in self._redirects:
            return self._redirects[name]
        above = self._redirect(name.parent()) if name != self.origin else None
        if above is None:
            if name in self.cuts:
                above = Delegated(name)
            elif name in self.dnames:
                above = BelowDname(name)
        self._redirects[name] = above
        return above

    def rrsets(self, name: dns.name.Name) -> dict:
        return self.data.get(name, {})

    def addresses(self, target: dns.name.Name) -> list[Entry]:
        """A and AAAA at a name of this zone, glue included, as Knot adds them."""
        data = self.rrsets(target)
        return [Entry(target, data[t]) for t in ADDRESS_TYPES if t in data]

    def set_addresses(self, target: dns.name.Name) -> list[Entry]:
        """Addresses of a target from this zone, or else authoritative ones from the deepest
        other zone of the set that holds it (RFC 1034 §4.3.2 step 6: any authoritative data)."""
        if self.contains(target):
            return self.addresses(target)
        name = target
        while name not in self.zone_set:
            if name == dns.name.root:
                return []
            name = name.parent()
        other = self.zone_set[name]
        if isinstance(other.locate(target, dns.rdatatype.A), Exact):
            return other.addresses(target)
        return []


def resolve(view: ZoneView, start: dns.name.Name | None, qtype: int,
            encloser: dns.name.Name | None = None, minimal: bool = False,
            every_rrset: bool = False) -> Response:
    """The response to a question for `start` (a concrete name of the zone), or, when `start`
    is None, for QNAME: a name below `encloser` that has no node. `every_rrset`: ANY gets all
    RRsets (over TCP), not one."""
    response = Response()
    name, owner = (start, start) if start is not None else (None, QNAME)
    seen: set[dns.name.Name] = {start} if start is not None else set()
    for hop in range(MAX_CHAIN):
        location = view.locate(name, qtype) if name is not None else view.locate_below(encloser)
        next_name = None
        if isinstance(location, Delegated):
            _referral(view, response, location.cut)
            if hop == 0:
                response.aa = False  # a referral is not an authoritative answer
            return response
        elif isinstance(location, BelowDname):
            if name is None:
                # The query name itself is rewritten: its image under the target lies below
                # the image of the encloser, and is followed there, once (RFC 6672 §3.3).
                if response.dname is not None:
                    return response
                encloser = _synthesize_dname(view, response, location.owner, encloser)
                if encloser is None:
                    return response
                owner = DNAME_IMAGE
                continue
            next_name = _follow_dname(view, response, location.owner, name, owner)
        elif isinstance(location, (Exact, Synthesized)):
            data_at = location.data_at if isinstance(location, Exact) else location.source
            next_name = _answer_from(view, response, view.rrsets(data_at), owner, qtype, minimal,
                                     every_rrset)
        else:
            response.rcode = dns.rcode.NXDOMAIN
            response.authority.append(view.negative_soa)
            return response
        if next_name is None or next_name in seen or not view.contains(next_name) \
                or hop + 1 == MAX_CHAIN:
            return response
        seen.add(next_name)
        name = owner = next_name
    return response


def _answer_from(view: ZoneView, response: Response, data: dict, owner: Owner, qtype: int,
                 minimal: bool, every_rrset: bool) -> dns.name.Name | None:
    """Answer from the records at one name; return a CNAME target to follow, if any."""
    if qtype == dns.rdatatype.ANY and data and every_rrset:
        for rdtype in sorted(data):
            response.answer.append(Entry(owner, data[rdtype]))
            if not minimal:
                _add_target_addresses(view, response, data[rdtype])
        return None
    if qtype == dns.rdatatype.ANY and data:
        # RFC 8482 §4.1: one RRset stands for all; the lowest type, as Knot picks it.
        qtype = min(data)
    if qtype in data:
        response.answer.append(Entry(owner, data[qtype]))
        if not minimal:
            _add_target_addresses(view, response, data[qtype])
        return None
    cname = data.get(dns.rdatatype.CNAME)
    if cname is not None:
        response.answer.append(Entry(owner, cname))
        return cname[0].target
    response.authority.append(view.negative_soa)  # NODATA (RFC 2308 §2.2)
    return None


def _synthesize_dname(view: ZoneView, response: Response, dname_owner: dns.name.Name,
                      encloser: dns.name.Name) -> dns.name.Name | None:
    """The DNAME for a query name below `encloser`, and the CNAME the responder completes.
    Returns the closest existing name above the query name's image, where the lookup goes
    on, or None when the image leaves the zone or falls back under the DNAME."""
    dname = view.rrsets(dname_owner)[dns.rdatatype.DNAME]
    target = dname[0].target
    response.answer.append(Entry(dname_owner, dname))
    response.dname = DnameSynthesis(dname_owner, target, dname.ttl, len(response.answer))
    if not view.contains(target) or target.is_subdomain(dname_owner):
        return None
    image = encloser.relativize(dname_owner).concatenate(target)
    while image not in view.names and image != view.origin:
        image = image.parent()
    return image


def _follow_dname(view: ZoneView, response: Response, dname_owner: dns.name.Name,
                  name: dns.name.Name, owner: Owner) -> dns.name.Name | None:
    """RFC 6672 §3.3: the DNAME, then a CNAME from the name to its image under the target."""
    dname = view.rrsets(dname_owner)[dns.rdatatype.DNAME]
    target = dname[0].target
    response.answer.append(Entry(dname_owner, dname))
    try:
        new_name = name.relativize(dname_owner).concatenate(target)
    except dns.name.NameTooLong:
        response.rcode = dns.rcode.YXDOMAIN  # RFC 6672 §2.2
        return None
    cname = dns.rdataset.from_text(dname.rdclass, dns.rdatatype.CNAME, dname.ttl,
                                   new_name.to_text())
    response.answer.append(Entry(owner, cname))
    return new_name


def _referral(view: ZoneView, response: Response, cut: dns.name.Name) -> None:
    ns = view.rrsets(cut)[dns.rdatatype.NS]
    response.authority.append(Entry(cut, ns))
    seen = _already_added(response)
    for rdata in ns:
        target = rdata.target
        # RFC 9471 §3: glue for name servers below the cut must be sent (TC if it does not
        # fit); addresses of other name servers the zone knows are sent if there is room.
        section = response.additional if target.is_subdomain(cut) else response.optional
        _add_once(section, view.addresses(target), seen)


def _add_target_addresses(view: ZoneView, response: Response, rdataset) -> None:
    target_of = TARGET_OF.get(rdataset.rdtype)
    if target_of is None:
        return
    seen = _already_added(response)
    for rdata in rdataset:
        _add_once(response.optional, view.set_addresses(target_of(rdata)), seen)


def _already_added(response: Response) -> set:
    return {(e.owner, e.rdataset.rdtype) for e in response.additional + response.optional}


def _add_once(section: list[Entry], entries: list[Entry], seen: set) -> None:
    for entry in entries:
        key = (entry.owner, entry.rdataset.rdtype)
        if key not in seen:
            seen.add(key)
            section.append(entry)
