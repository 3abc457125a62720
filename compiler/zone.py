"""The zone model every stage after parsing works on: RRsets by owner and type, with positions."""

from __future__ import annotations

from dataclasses import dataclass, field

import dns.name
import dns.rdataset
import dns.rdatatype

from .config import ZoneSource
from .errors import Position


@dataclass
class RRset:
    """One RRset of a zone: its owner, its records, and the position of its first record."""

    name: dns.name.Name
    rdataset: dns.rdataset.Rdataset
    position: Position

    @property
    def rdtype(self) -> dns.rdatatype.RdataType:
        return self.rdataset.rdtype

    @property
    def ttl(self) -> int:
        return self.rdataset.ttl


@dataclass
class Zone:
    source: ZoneSource
    # owner name -> type -> RRset; insertion order is the order of the zone file.
    nodes: dict[dns.name.Name, dict[int, RRset]] = field(default_factory=dict)

    @property
    def origin(self) -> dns.name.Name:
        return self.source.origin

    def get(self, name: dns.name.Name, rdtype: int) -> RRset | None:
        return self.nodes.get(name, {}).get(rdtype)

    @property
    def soa(self) -> RRset:
        soa = self.get(self.origin, dns.rdatatype.SOA)
        assert soa is not None, "validate guarantees an SOA at the apex"
        return soa
