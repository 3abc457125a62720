"""Stage 3: one name tree over every zone of the set.

A node exists for every name at or below a zone apex that owns data or has a descendant that
does (an empty non-terminal, RFC 4592 §2.2.2), but for names below a zone cut (glue and
occluded data), which the cut's referral answers. Each node belongs to the deepest zone whose
apex is at or above it, so when a parent and its child zone are both served, the child answers.
Names above every apex are not in the tree: the responder refuses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter

import dns.name
import dns.rdatatype

from .names import canonical_key
from .progress import Each, uncounted
from .zone import RRset, Zone


@dataclass
class Node:
    name: dns.name.Name
    zone: Zone
    rrsets: dict[int, RRset] = field(default_factory=dict)  # empty for an empty non-terminal
    image_of: dns.name.Name | None = None  # for a DNAME image (see below): the name it maps to

    @property
    def is_apex(self) -> bool:
        return self.name == self.zone.origin


@dataclass
class NameTree:
    zones: tuple[Zone, ...]
    nodes: dict[dns.name.Name, Node]  # in DNSSEC canonical order (RFC 4034 §6.1)

    @property
    def max_labels(self) -> int:
        """The most labels (root not counted) of any node: deeper query names are cut to this."""
        return max(len(name) - 1 for name in self.nodes)


def build_tree(zones: list[Zone], each: Each = uncounted) -> NameTree:
    """The tree; `each` wraps every walk over the names (progress reports)."""
    origins = {zone.origin: zone for zone in zones}
    names: set[dns.name.Name] = set(origins)
    owners = ((zone, name) for zone in zones for name in zone.nodes)
    for zone, name in each(owners, sum(len(zone.nodes) for zone in zones), "owner names added"):
        if _deepest_zone(name, origins) is not zone:
            continue  # the parent's glue inside a child zone we also serve: the child answers
        # The name and every ancestor down to its zone's apex exist (ENTs included).
        while True:
            names.add(name)
            if name == zone.origin:
                break
            name = name.parent()

    images = _dname_images(zones, names, each)
    # Below a cut every name gets the cut's referral, and the cut's node gives it already to
    # the names below it that have no node (its miss answer, shifted to the query name at run
    # time): nodes there would only repeat it, for a quarter of a hosting zone's names.
    names = {name for name in each(names, len(names), "names checked for cuts")
             if not _below_cut(name, origins)}
    names |= set(images)
    # With the sort keys made in a walk of their own, only the sort itself goes uncounted (a
    # few seconds for a million names).
    keyed = [(canonical_key(name), name) for name in each(names, len(names), "sort keys made")]
    keyed.sort(key=itemgetter(0))
    nodes = {}
    for _, name in each(keyed, len(keyed), "nodes made"):
        zone = _deepest_zone(name, origins)
        nodes[name] = Node(name, zone, dict(zone.nodes.get(name, {})), images.get(name))
    return NameTree(tuple(zones), nodes)


def _dname_images(zones: list[Zone], names: set[dns.name.Name], each: Each) -> dict:
    """Nodes for names below a DNAME whose image under its target exists in the same zone.

    A query for X.owner is rewritten to X.target (RFC 6672 §3.3) and followed there. Where
    X.target exists, the whole answer is known in advance: X.owner gets a node of its own.
    Below such nodes the responder finds the closest encloser as for any name, and the
    answer goes on from the image of that encloser."""
    images = {}
    for zone in zones:
        for owner, by_type in zone.nodes.items():
            dname = by_type.get(dns.rdatatype.DNAME)
            if dname is None:
                continue
            target = dname.rdataset[0].target
            if not target.is_subdomain(zone.origin) or target.is_subdomain(owner):
                continue
            for name in each(names, len(names), f"names checked against the DNAME of {owner}"):
                if name != target and name.is_subdomain(target):
                    try:
                        images[name.relativize(target).concatenate(owner)] = name
                    except dns.name.NameTooLong:
                        pass  # no query name can be that long
    return images


def _below_cut(name: dns.name.Name, origins: dict[dns.name.Name, Zone]) -> bool:
    """Whether a cut of the name's zone lies strictly above it."""
    zone = _deepest_zone(name, origins)
    while name != zone.origin:
        name = name.parent()
        if name != zone.origin and dns.rdatatype.NS in zone.nodes.get(name, {}):
            return True
    return False


def _deepest_zone(name: dns.name.Name, origins: dict[dns.name.Name, Zone]) -> Zone:
    """Every name handled here lies in some zone of the set, so an origin is found."""
    while name not in origins:
        name = name.parent()
    return origins[name]
