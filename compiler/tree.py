"""Stage 3: one name tree over every zone of the set.

A node exists for every name at or below a zone apex that owns data or has a descendant that
does (an empty non-terminal, RFC 4592 §2.2.2). Each node belongs to the deepest zone whose apex
is at or above it, so when a parent and its child zone are both served, the child answers.
Names above every apex are not in the tree: the responder refuses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import dns.name

from .zone import RRset, Zone


@dataclass
class Node:
    name: dns.name.Name
    zone: Zone
    rrsets: dict[int, RRset] = field(default_factory=dict)  # empty for an empty non-terminal

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


def build_tree(zones: list[Zone]) -> NameTree:
    origins = {zone.origin: zone for zone in zones}
    names: set[dns.name.Name] = set()
    for zone in zones:
        for name in zone.nodes:
            # The name and every ancestor down to its zone's apex exist (ENTs included).
            while True:
                names.add(name)
                if name == zone.origin:
                    break
                name = name.parent()
        names.add(zone.origin)

    nodes = {}
    for name in sorted(names):
        zone = _deepest_zone(name, origins)
        nodes[name] = Node(name, zone, dict(zone.nodes.get(name, {})))
    return NameTree(tuple(zones), nodes)


def _deepest_zone(name: dns.name.Name, origins: dict[dns.name.Name, Zone]) -> Zone:
    while name not in origins:
        name = name.parent()
    return origins[name]
