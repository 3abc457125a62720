"""Stage 4: the complete response, after the question, for every way a query can reach a node.

For each node of the tree the responder needs, all decided here by `resolve`:
- `by_type`: the answer for each query type whose answer differs from the default;
- `default`: the answer for any other type (NODATA, a referral, a CNAME chain's end...);
- `miss`: the answer for a name below the node that has no node, when this node is the
  closest encloser: NXDOMAIN, a referral, a DNAME synthesis; or, when the node has a wildcard
  child, `miss_wildcard` names that child, whose answers are written for any query name.

Each Answer names the `base` it is compiled against: the node's name, or for answers that
serve other names (a wildcard's, a miss) the closest encloser. The wire stage writes names
relative to it; the responder shifts compression pointers by how much longer the real query
name is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

import dns.name
import dns.rcode
import dns.rdatatype

from .resolve import (DNAME_IMAGE, QNAME, Delegated, DnameSynthesis, Entry, Exact, Response,
                      Synthesized, ZoneView, resolve)
from .tree import NameTree, Node

__all__ = ["Answer", "NodeAnswers", "build_answers", "Entry", "QNAME", "DNAME_IMAGE"]

# Types a query can ask for whose answer can differ from the default at any node.
ALWAYS_DISTINCT = (dns.rdatatype.ANY, dns.rdatatype.DS, dns.rdatatype.CNAME)
# The key of ANY over TCP, which gets every RRset (runtime/zonedata.h: ZB_KEY_ANY_OVER_TCP).
ANY_OVER_TCP = 0


@dataclass(frozen=True)
class Answer:
    rcode: int
    aa: bool
    base: dns.name.Name
    answer: tuple[Entry, ...] = ()
    authority: tuple[Entry, ...] = ()
    additional: tuple[Entry, ...] = ()  # required: never cut, TC instead
    optional: tuple[Entry, ...] = ()  # optional additional: the first thing cut (RFC 2181 §9)
    dname: DnameSynthesis | None = None  # a CNAME the responder completes, after `answer`
    overflow: Answer | None = None  # with `dname`: the answer when the name grows too long


@dataclass
class NodeAnswers:
    node: Node
    by_type: dict[int, Answer] = field(default_factory=dict)
    default: Answer | None = None
    miss: Answer | None = None  # None when miss_wildcard is set
    miss_wildcard: dns.name.Name | None = None


def build_answers(tree: NameTree, minimal: bool = False,
                  each: Callable[[Iterable[Node]], Iterable[Node]] = iter) -> list[NodeAnswers]:
    """Every node's answers; `each` wraps the walk over the nodes (progress reports)."""
    views = {zone.origin: ZoneView(zone) for zone in tree.zones}
    for view in views.values():
        view.zone_set = views
    zone_types = {origin: {t for data in view.data.values() for t in data}
                  for origin, view in views.items()}
    return [_node_answers(node, views, zone_types[node.zone.origin], minimal)
            for node in each(tree.nodes.values())]


def _node_answers(node: Node, views: dict, zone_types: set, minimal: bool) -> NodeAnswers:
    view = views[node.zone.origin]
    name = node.name
    wildcard = name.labels[0] == b"*"
    # A wildcard's answers are written for any name it matches; queried literally ('*.x'),
    # the same answers are right (RFC 4592 §2.2.1): the owner is the query name either way.
    base, start = (name.parent(), None) if wildcard else (name, name)

    def answer(qtype: int, source: ZoneView = view, start=start) -> Answer:
        every_rrset = qtype == ANY_OVER_TCP
        response = resolve(source, start, dns.rdatatype.ANY if every_rrset else qtype,
                           encloser=base, minimal=minimal, every_rrset=every_rrset)
        return _to_answer(response, base)

    location = view.locate_below(base) if wildcard else view.locate(name, 0)
    data = view.rrsets(name) if isinstance(location, (Exact, Synthesized)) else None
    if data is not None and dns.rdatatype.CNAME not in data:
        qtypes = set(data) | {dns.rdatatype.ANY, ANY_OVER_TCP}
    elif isinstance(location, Delegated):
        # One referral answers every type, but DS at the cut itself (RFC 4035 §3.1.4.1).
        qtypes = {dns.rdatatype.DS} if location.cut == name and not wildcard else set()
    else:
        # Chains reach anything.
        qtypes = zone_types | set(ALWAYS_DISTINCT) | {ANY_OVER_TCP}
    unused = next(t for t in range(65280, 65535) if t not in zone_types)
    result = NodeAnswers(node, default=answer(unused))
    for qtype in sorted(qtypes):
        a = answer(qtype)
        if a != result.default:
            result.by_type[qtype] = a

    parent = _parent_zone_view(node, views)
    if parent is not None and name in parent.cuts:
        # RFC 4035 §3.1.4.1: DS belongs to the parent side of a cut; when the parent is
        # served too, it answers (as Knot does).
        result.by_type[dns.rdatatype.DS] = answer(dns.rdatatype.DS, parent, name)

    below = view.locate_below(name)
    if isinstance(below, Synthesized):
        result.miss_wildcard = below.source
    else:
        response = resolve(view, None, unused, encloser=name, minimal=minimal)
        result.miss = _to_answer(response, name)
    return result


def _parent_zone_view(node: Node, views: dict) -> ZoneView | None:
    if not node.is_apex or node.name == dns.name.root:
        return None
    name = node.name.parent()
    while name not in views:
        if name == dns.name.root:
            return None
        name = name.parent()
    return views[name]


def _to_answer(response: Response, base: dns.name.Name) -> Answer:
    overflow = None
    if response.dname is not None:
        # The query name's labels in front of the DNAME target may not fit 255 octets:
        # YXDOMAIN, with the DNAME alone (RFC 6672 §2.2).
        overflow = Answer(dns.rcode.YXDOMAIN, True, base,
                          tuple(response.answer[:response.dname.position]))
    return Answer(response.rcode, response.aa, base, tuple(response.answer),
                  tuple(response.authority), tuple(response.additional),
                  tuple(response.optional), response.dname, overflow)
