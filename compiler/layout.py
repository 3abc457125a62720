"""Stage 7: pack the tree, its answers and the perfect hash into the one byte blob the
responder reads, in the struct layouts of runtime/zonedata.h. Change both or neither.

The blob holds, each table 8-byte aligned: nodes (one per hash slot), type entries, pilots,
then every distinct answer (its record, its body, its pointer fixups, together), then the
names. Answers are referred to by their offset in the blob.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .phash import EMPTY_SLOT, PerfectHash
from .progress import Each, uncounted
from .wire import Body, NodeBodies

NODE = struct.Struct("<IIIIHBB")  # struct zb_node
TYPE_ENTRY = struct.Struct("<HHI")  # struct zb_type_entry
ANSWER = struct.Struct("<10sHHHHHIIHBBI")  # struct zb_answer
MISS_ANSWER, MISS_WILDCARD = 0, 1  # enum zb_miss_kind
ALIGN = 8


@dataclass(frozen=True)
class Layout:
    data: bytes | None  # None when the native baker wrote it to its file already
    nodes_off: int
    types_off: int
    pilots_off: int
    nnodes: int  # one per hash slot: some are empty
    nanswers: int
    nbuckets: int
    seed: int
    # CH-class names answered with a TXT (compiler/chaos.py): (lowercased wire name, answer
    # offset), for the zoneset's `chaos` table.
    chaos: tuple[tuple[bytes, int], ...] = ()
    size: int = 0  # of the data, when `data` is None

    @property
    def data_size(self) -> int:
        return self.size if self.data is None else len(self.data)


def _align(n: int, to: int = ALIGN) -> int:
    return (n + to - 1) & ~(to - 1)


def pack(nodes: list[NodeBodies], phash: PerfectHash, chaos: list[tuple[bytes, Body]] = (),
         each: Each = uncounted) -> Layout:
    """Nodes in the order of the perfect hash's slots (a node's slot is its index; empty
    slots hold empty nodes), and each answer's record right before its body, so a lookup
    touches as few cache lines as it can. The CH answers go after the zones' answers.
    `each` wraps the walks over the slots and the answers (progress reports)."""
    answers: list[Body] = []
    answer_number: dict[Body, int] = {}

    def number_of(body: Body) -> int:
        if body not in answer_number:
            answer_number[body] = len(answers)
            answers.append(body)
            if body.overflow is not None:
                number_of(body.overflow)
        return answer_number[body]

    slot_of_key = {nodes[index].key: slot for slot, index in enumerate(phash.slots)
                   if index != EMPTY_SLOT}
    rows = []  # per slot: (node, types, default, miss, miss_kind) with answer numbers
    type_count = 0
    for index in each(phash.slots, len(phash.slots), "slots gathered"):
        if index == EMPTY_SLOT:
            rows.append(None)
            continue
        node = nodes[index]
        types = [(rdtype, number_of(node.by_type[rdtype])) for rdtype in sorted(node.by_type)]
        if node.miss_wildcard is not None:
            miss, miss_kind = slot_of_key[node.miss_wildcard], MISS_WILDCARD
        else:
            miss, miss_kind = number_of(node.miss), MISS_ANSWER
        rows.append((node, types, number_of(node.default), miss, miss_kind))
        type_count += len(types)
    chaos_numbers = [(key, number_of(body)) for key, body in chaos]

    nodes_off = 0
    types_off = _align(NODE.size * len(rows))
    pilots_off = _align(types_off + TYPE_ENTRY.size * type_count)
    answers_off = _align(pilots_off + 2 * len(phash.pilots))

    # Where each answer goes: its record, its body, its fixups.
    answer_at, position = [], answers_off
    for body in each(answers, len(answers), "answers placed"):
        position = _align(position, 4)
        answer_at.append(position)
        position += ANSWER.size + len(body.data) + len(body.data) % 2 + 2 * len(body.fixups)
    names_off = position

    def offset(number: int) -> int:
        return answer_at[number]

    out = bytearray()
    name_at = names_off
    names = bytearray()
    type_rows = bytearray()
    for row in each(rows, len(rows), "slots written"):
        if row is None:
            out += bytes(NODE.size)  # name_len 0: no query name matches
            continue
        node, types, default, miss, miss_kind = row
        if miss_kind == MISS_ANSWER:
            miss = offset(miss)
        out += NODE.pack(name_at, len(type_rows) // TYPE_ENTRY.size, offset(default), miss,
                         len(types), len(node.key), miss_kind)
        for rdtype, number in types:
            type_rows += TYPE_ENTRY.pack(rdtype, 0, offset(number))
        names += node.key
        name_at += len(node.key)
    out += bytes(types_off - len(out))
    out += type_rows
    out += bytes(pilots_off - len(out))
    out += struct.pack(f"<{len(phash.pilots)}H", *phash.pilots)
    for body, at in each(zip(answers, answer_at), len(answers), "answers written"):
        out += bytes(at - len(out))
        body_at = at + ANSWER.size
        fixups_at = _align(body_at + len(body.data), 2)
        overflow = offset(answer_number[body.overflow]) if body.overflow is not None else 0
        out += ANSWER.pack(body.header, len(body.data), body.base_len, len(body.fixups),
                           body.trunc_len, body.trunc_arcount, body_at, fixups_at,
                           body.dname_split, body.dname_owner_len, body.dname_max_prefix,
                           overflow)
        out += body.data
        out += bytes(fixups_at - len(out))
        out += struct.pack(f"<{len(body.fixups)}H", *body.fixups)
    out += bytes(names_off - len(out))
    out += names
    out += bytes(8)  # the responder compares names a word at a time: let it read past the last
    return Layout(bytes(out), nodes_off, types_off, pilots_off, len(rows), len(answers),
                  len(phash.pilots), phash.seed,
                  tuple((key, offset(number)) for key, number in chaos_numbers))
