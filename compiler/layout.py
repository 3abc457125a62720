"""Stage 7: pack the tree, its answers and the perfect hash into the one byte blob the
responder reads, in the struct layouts of runtime/zonedata.h. Change both or neither.

The blob holds, each table 8-byte aligned: nodes, type entries, answers, pilots, slots, then
the byte regions (pointer fixups, names, answer bodies). Identical bodies are stored once.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .phash import PerfectHash
from .wire import Body, NodeBodies

NODE = struct.Struct("<IIIIHBB")  # struct zb_node
TYPE_ENTRY = struct.Struct("<HHI")  # struct zb_type_entry
ANSWER = struct.Struct("<10sHHHHHIIHBBI")  # struct zb_answer
MISS_ANSWER, MISS_WILDCARD = 0, 1  # enum zb_miss_kind
ALIGN = 8


@dataclass(frozen=True)
class Layout:
    data: bytes
    nodes_off: int
    types_off: int
    answers_off: int
    pilots_off: int
    slots_off: int
    nnodes: int
    nanswers: int
    nbuckets: int
    nslots: int
    seed: int


def _align(n: int) -> int:
    return (n + ALIGN - 1) & ~(ALIGN - 1)


class _Region:
    """Append-only bytes with identical pieces stored once."""

    def __init__(self):
        self.data = bytearray()
        self.offsets: dict[bytes, int] = {}

    def add(self, piece: bytes, align: int = 1) -> int:
        if piece not in self.offsets:
            self.data += bytes(-len(self.data) % align)
            self.offsets[piece] = len(self.data)
            self.data += piece
        return self.offsets[piece]


def pack(nodes: list[NodeBodies], phash: PerfectHash) -> Layout:
    """Lay out nodes in the order of the perfect hash's key indexes."""
    answer_index: dict[Body, int] = {}
    answer_list: list[Body] = []

    def index_of(body: Body) -> int:
        if body not in answer_index:
            answer_index[body] = len(answer_list)
            answer_list.append(body)
            if body.overflow is not None:
                index_of(body.overflow)
        return answer_index[body]

    node_index = {node.key: i for i, node in enumerate(nodes)}

    type_entries: list[tuple[int, int]] = []
    node_rows = []
    for node in nodes:
        types_off = len(type_entries)
        for rdtype in sorted(node.by_type):
            type_entries.append((rdtype, index_of(node.by_type[rdtype])))
        if node.miss_wildcard is not None:
            miss, miss_kind = node_index[node.miss_wildcard], MISS_WILDCARD
        else:
            miss, miss_kind = index_of(node.miss), MISS_ANSWER
        node_rows.append((types_off, len(type_entries) - types_off, index_of(node.default),
                          miss, miss_kind))

    nodes_off = 0
    types_off = _align(nodes_off + NODE.size * len(node_rows))
    answers_off = _align(types_off + TYPE_ENTRY.size * len(type_entries))
    pilots_off = _align(answers_off + ANSWER.size * len(answer_list))
    slots_off = _align(pilots_off + 2 * len(phash.pilots))
    bytes_off = _align(slots_off + 4 * len(phash.slots))

    region = _Region()
    answer_rows = []
    for body in answer_list:
        fixups_at = region.add(struct.pack(f"<{len(body.fixups)}H", *body.fixups), 2)
        body_at = region.add(body.data)
        overflow = answer_index[body.overflow] if body.overflow is not None else 0
        answer_rows.append(ANSWER.pack(body.header, len(body.data), body.base_len,
                                       len(body.fixups), body.trunc_len, body.trunc_arcount,
                                       bytes_off + body_at, bytes_off + fixups_at,
                                       body.dname_split, body.dname_owner_len,
                                       body.dname_max_prefix, overflow))
    keys = [node.key for node in nodes]
    name_offsets = [bytes_off + region.add(key) for key in keys]

    out = bytearray()
    for (t_off, ntypes, default, miss, miss_kind), key, name_off in zip(node_rows, keys,
                                                                        name_offsets):
        out += NODE.pack(name_off, t_off, default, miss, ntypes, len(key), miss_kind)
    out += bytes(types_off - len(out))
    for rdtype, answer in type_entries:
        out += TYPE_ENTRY.pack(rdtype, 0, answer)
    out += bytes(answers_off - len(out))
    for row in answer_rows:
        out += row
    out += bytes(pilots_off - len(out))
    out += struct.pack(f"<{len(phash.pilots)}H", *phash.pilots)
    out += bytes(slots_off - len(out))
    out += struct.pack(f"<{len(phash.slots)}I", *phash.slots)
    out += bytes(bytes_off - len(out))
    out += region.data
    out += bytes(8)  # the responder compares names a word at a time: let it read past the last
    return Layout(bytes(out), nodes_off, types_off, answers_off, pilots_off, slots_off,
                  len(node_rows), len(answer_list), len(phash.pilots), len(phash.slots),
                  phash.seed)
