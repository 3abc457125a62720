"""Stage 4: the complete response, after the question, for every way a query can reach a node.

For each node the responder needs three things, all decided here:
- `by_type`: the answer for each query type the node has data for (RFC 1034 §4.3.2 step 3a);
- `default`: the answer for any other type: NODATA, the zone's SOA in authority (RFC 2308 §2.2);
- `miss`: the answer for a name below this node that is not in the tree, when this node is the
  closest encloser: NXDOMAIN with the SOA in authority (RFC 1034 §4.3.2 step 3c, RFC 2308 §2.1).

Each Answer names the `base` it is compiled against: the query name for an exact match, the
closest encloser for a miss. The wire stage writes every name relative to it, and the responder
shifts compression pointers by however much longer the real query name is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import dns.name
import dns.rcode
import dns.rdataset
import dns.rdatatype

from .tree import NameTree, Node
from .zone import RRset, Zone


@dataclass(frozen=True)
class Entry:
    """One RRset in a response section, with the owner it is written with."""

    owner: dns.name.Name
    rdataset: dns.rdataset.Rdataset


@dataclass(frozen=True)
class Answer:
    rcode: int
    aa: bool
    base: dns.name.Name
    answer: tuple[Entry, ...] = ()
    authority: tuple[Entry, ...] = ()
    additional: tuple[Entry, ...] = ()  # required: never cut, TC instead
    optional: tuple[Entry, ...] = ()  # optional additional: the first thing cut (RFC 2181 §9)


@dataclass
class NodeAnswers:
    node: Node
    by_type: dict[int, Answer] = field(default_factory=dict)
    default: Answer | None = None
    miss: Answer | None = None


def build_answers(tree: NameTree) -> list[NodeAnswers]:
    negative_soa = {zone.origin: _negative_soa(zone) for zone in tree.zones}
    result = []
    for node in tree.nodes.values():
        soa = negative_soa[node.zone.origin]
        answers = NodeAnswers(node)
        for rdtype, rrset in node.rrsets.items():
            answers.by_type[rdtype] = Answer(dns.rcode.NOERROR, True, node.name,
                                             answer=(_entry(rrset),))
        answers.default = Answer(dns.rcode.NOERROR, True, node.name, authority=(soa,))
        answers.miss = Answer(dns.rcode.NXDOMAIN, True, node.name, authority=(soa,))
        result.append(answers)
    return result


def _entry(rrset: RRset) -> Entry:
    return Entry(rrset.name, rrset.rdataset)


def _negative_soa(zone: Zone) -> Entry:
    """The SOA for negative answers: TTL = min(SOA TTL, SOA MINIMUM), RFC 2308 §3."""
    soa = zone.soa.rdataset
    rdataset = dns.rdataset.Rdataset(soa.rdclass, dns.rdatatype.SOA)
    rdataset.update(soa)
    rdataset.ttl = min(soa.ttl, soa[0].minimum)
    return Entry(zone.origin, rdataset)
