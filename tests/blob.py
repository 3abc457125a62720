"""zonedata.bin read back: every node's answers as the core wrote them (runtime/zonedata.h),
and each put behind a question for the node's own name as the responder puts it
(runtime/query/respond.c) and decoded with dnspython. For tests that look at what a build
serves."""

from __future__ import annotations

import struct
from collections import namedtuple
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import dns.message
import dns.name

NODE = struct.Struct("<IIIIHBB")  # runtime/zonedata.h: struct zb_node
TYPE_ENTRY = struct.Struct("<HHI")  # struct zb_type_entry
ANSWER = struct.Struct("<10sHHHHHiIHBBiI")  # struct zb_answer
ALIAS = struct.Struct("<IIHH")  # struct zb_answer_alias
GROUP = struct.Struct("<IHH")  # struct zb_group
# struct zb_head, the data's first 64 octets: its layout's numbers.
HEAD = struct.Struct("<QQIIIIIIIIII8x")
Head = namedtuple("Head", "data_len seed groups_off ngroups group_mask nanswers max_labels "
                          "signed_nodes zones_off nzones chaos_off nchaos")
DEFAULT_QTYPE = 65280  # the question the default answer is decoded under
MISS_ANSWER = 0  # enum zb_miss_kind


def head(path: Path) -> Head:
    """The layout's numbers in the head of the data in PATH; what Blob.read takes as its
    layout."""
    with open(path, "rb") as data:
        return Head._make(HEAD.unpack(data.read(HEAD.size)))


def server_data(server: Path) -> bytes:
    """The data inside a built server: the build writes it there alone."""
    from zonebake.toolchain import elfsplice
    at, length = elfsplice.span(server)
    with open(server, "rb") as file:
        file.seek(at)
        return file.read(length)


@dataclass(frozen=True)
class Answer:
    header: bytes  # response header bytes 2-11
    body: bytes
    base_len: int
    fixups: tuple[int, ...]
    dname_split: int
    # Where its record and its body are in the data: the body right after the record, or
    # inside another answer's (compiler/core/layout/sharing.c). Not what it serves.
    at: int = field(default=0, compare=False)
    body_at: int = field(default=0, compare=False)
    # An alias's (runtime/zonedata.h, struct zb_answer_alias): its target's answer to a
    # type, and where in the body the CNAME's target is written; None otherwise.
    target: Callable[[int], Answer] | None = field(default=None, compare=False)
    target_at: int = 0

    @property
    def is_alias(self) -> bool:
        return self.target is not None

    def message(self, qname: dns.name.Name, qtype: int):
        """The response to qname (below the name the answer was made for, or that name), as
        the responder assembles it; a DNAME synthesis is left as it is (None)."""
        if self.is_alias:
            return self.composed(qname, qtype)
        if self.dname_split:
            return None
        body = bytearray(self.body)
        delta = len(qname.to_wire()) - self.base_len
        for at in self.fixups:
            (pointer,) = struct.unpack_from("!H", body, at)
            struct.pack_into("!H", body, at, pointer + delta)
        question = qname.to_wire() + struct.pack("!HH", qtype, 1)
        return dns.message.from_wire(b"\0\0" + self.header + question + bytes(body))

    def composed(self, qname: dns.name.Name, qtype: int):
        """An alias's response: the CNAME part, then its target's answer to the type with
        its pointers moved, as runtime/query/respond.c composes it."""
        target = self.target(qtype)
        question = qname.to_wire() + struct.pack("!HH", qtype, 1)
        start = 12 + len(question)
        own_start = 12 + target.base_len + 4
        tail = bytearray(target.body)
        for at in target.fixups:
            (pointer,) = struct.unpack_from("!H", tail, at)
            to = pointer & 0x3FFF
            to = (start + self.target_at + to - 12 if to < own_start
                  else start + len(self.body) + to - own_start)
            struct.pack_into("!H", tail, at, 0xC000 | to)
        counts = [a + b for a, b in zip(struct.unpack("!4H", self.header[2:]),
                                         struct.unpack("!4H", target.header[2:]))]
        header = self.header[:2] + struct.pack("!4H", 1, *counts[1:])
        return dns.message.from_wire(b"\0\0" + header + question + self.body + bytes(tail))


class Blob:
    """Nodes are known by their offsets in the data; the offsets a region holds count from
    where they are written (runtime/zonedata.h)."""

    def __init__(self, data: bytes, layout):
        self.data = data
        self.layout = layout
        self.node_size = NODE.size * (1 + layout.signed_nodes)
        self.nodes: dict[dns.name.Name, int] = {}  # name -> its node's offset
        for g in range(layout.ngroups):
            nodes_off, nslots, _ = GROUP.unpack_from(data, layout.groups_off + GROUP.size * g)
            for slot in range(nslots):
                at = nodes_off + self.node_size * slot
                name_off, _, _, _, _, name_len, _ = self._node(at)
                if name_len:
                    name = dns.name.from_wire(data[at + name_off:at + name_off + name_len], 0)[0]
                    self.nodes[name] = at

    @classmethod
    def read(cls, path: Path, layout) -> Blob:
        return cls(path.read_bytes(), layout)

    def _node(self, at: int) -> tuple:
        return NODE.unpack_from(self.data, at)

    def _answer(self, offset: int) -> Answer:
        (header, body_len, base_len, nfixups, _, _, body_off, fixups_off, dname_split,
         owner_len, _, overflow, _) = ANSWER.unpack_from(self.data, offset)
        fixups = struct.unpack_from(f"<{nfixups}H", self.data, offset + fixups_off)
        body_at = offset + body_off
        target, target_at = None, 0
        if dname_split and not owner_len:  # an alias's
            group, node, target_at, _ = ALIAS.unpack_from(self.data, offset + overflow)
            nodes_off = GROUP.unpack_from(self.data, self.layout.groups_off + GROUP.size * group)[0]
            typed = self._typed(nodes_off + node)
            target = lambda qtype: typed.get(qtype, typed["default"])  # noqa: E731
        return Answer(header, self.data[body_at:body_at + body_len], base_len, fixups,
                      dname_split, offset, body_at, target, target_at)

    def region_answers(self, group: int) -> list[Answer]:
        """Every answer the nodes of a group's region use (with DO set too), each once."""
        nodes_off, nslots, _ = GROUP.unpack_from(self.data,
                                                 self.layout.groups_off + GROUP.size * group)
        found: dict[int, Answer] = {}
        seen: set[int] = set()

        def visit(at: int) -> None:
            if at in seen:
                return
            seen.add(at)
            _, first, default, miss, ntypes, _, miss_kind = self._node(at)
            if default == 0:
                return  # an empty slot
            places = [at + default]
            for k in range(ntypes):
                entry = at + first + TYPE_ENTRY.size * k
                places.append(entry + TYPE_ENTRY.unpack_from(self.data, entry)[2])
            if miss_kind != MISS_ANSWER:
                visit(at + miss)
            elif miss:
                places.append(at + miss)
            for place in places:
                found.setdefault(place, self._answer(place))

        for slot in range(nslots * (1 + self.layout.signed_nodes)):
            visit(nodes_off + NODE.size * slot)
        return list(found.values())

    def _typed(self, at: int) -> dict:
        """The answers of the node at `at`: {qtype, 'default': Answer}."""
        _, first, default, _, ntypes, _, _ = self._node(at)
        out = {}
        for k in range(ntypes):
            entry = at + first + TYPE_ENTRY.size * k
            qtype, _, offset = TYPE_ENTRY.unpack_from(self.data, entry)
            out[qtype] = self._answer(entry + offset)
        out["default"] = self._answer(at + default)
        return out

    def answers(self, name: dns.name.Name) -> dict:
        """{qtype, 'default': Answer, 'miss': Answer, or ('wildcard', name) when the
        wildcard child's answers serve (the node holds a copy of them), or ('by type',
        {qtype, 'default': Answer}) for a DNAME's answers by type}."""
        at = self.nodes[name]
        out = self._typed(at)
        _, _, _, miss, _, _, miss_kind = self._node(at)
        if miss_kind == MISS_ANSWER:
            out["miss"] = self._answer(at + miss)
            return out
        below = self._typed(at + miss)
        wildcard = dns.name.Name((b"*",)) + name
        if wildcard in self.nodes and self._typed(self.nodes[wildcard]) == below:
            out["miss"] = ("wildcard", wildcard)
        else:
            out["miss"] = ("by type", below)
        return out

    def answer(self, name: str, qtype: int) -> Answer:
        answers = self.answers(dns.name.from_text(name))
        return answers.get(qtype, answers["default"])

    def served(self) -> dict:
        """{node name: {qtype, 'default', 'miss': message, or ('wildcard', name)}}: each
        answer decoded for the node's own name (a miss for a name one label below it)."""
        out = {}
        for name in self.nodes:
            decoded = {}
            for key, answer in self.answers(name).items():
                if key == "miss" and isinstance(answer, Answer):
                    decoded[key] = answer.message(dns.name.Name((b"x",)) + name, 1)
                elif isinstance(answer, Answer):
                    decoded[key] = answer.message(name, DEFAULT_QTYPE if key == "default"
                                                  else key)
                else:
                    decoded[key] = answer
            out[name] = decoded
        return out
