"""zonedata.bin read back: every node's answers as the core wrote them (runtime/zonedata.h),
and each put behind a question for the node's own name as the responder puts it
(runtime/query/respond.c) and decoded with dnspython. For tests that look at what a build
serves."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import dns.message
import dns.name

NODE = struct.Struct("<IIIIHBB")  # runtime/zonedata.h: struct zb_node
TYPE_ENTRY = struct.Struct("<HHI")  # struct zb_type_entry
ANSWER = struct.Struct("<10sHHHHHIIHBBI")  # struct zb_answer
DEFAULT_QTYPE = 65280  # the question the default answer is decoded under
MISS_ANSWER = 0  # enum zb_miss_kind


@dataclass(frozen=True)
class Answer:
    header: bytes  # response header bytes 2-11
    body: bytes
    base_len: int
    fixups: tuple[int, ...]
    dname_split: int

    def message(self, qname: dns.name.Name, qtype: int):
        """The response to qname (below the name the answer was made for, or that name), as
        the responder assembles it; a DNAME synthesis is left as it is (None)."""
        if self.dname_split:
            return None
        body = bytearray(self.body)
        delta = len(qname.to_wire()) - self.base_len
        for at in self.fixups:
            (pointer,) = struct.unpack_from("!H", body, at)
            struct.pack_into("!H", body, at, pointer + delta)
        question = qname.to_wire() + struct.pack("!HH", qtype, 1)
        return dns.message.from_wire(b"\0\0" + self.header + question + bytes(body))


class Blob:
    def __init__(self, data: bytes, layout):
        self.data = data
        self.layout = layout
        self.nodes: dict[dns.name.Name, int] = {}  # name -> slot
        self.slot_names: dict[int, dns.name.Name] = {}
        for slot in range(layout.nnodes):
            name_off, _, _, _, _, name_len, _ = self._node(slot)
            if name_len:
                name = dns.name.from_wire(data[name_off:name_off + name_len], 0)[0]
                self.nodes[name] = slot
                self.slot_names[slot] = name

    @classmethod
    def read(cls, path: Path, layout) -> Blob:
        return cls(path.read_bytes(), layout)

    def _node(self, slot: int) -> tuple:
        return NODE.unpack_from(self.data, self.layout.nodes_off + NODE.size * slot)

    def _answer(self, offset: int) -> Answer:
        (header, body_len, base_len, nfixups, _, _, body_off, fixups_off, dname_split, _, _,
         _) = ANSWER.unpack_from(self.data, offset)
        fixups = struct.unpack_from(f"<{nfixups}H", self.data, fixups_off)
        return Answer(header, self.data[body_off:body_off + body_len], base_len, fixups,
                      dname_split)

    def _typed(self, index: int) -> dict:
        """The answers of the node at `index`: {qtype, 'default': Answer}."""
        _, first, default, _, ntypes, _, _ = self._node(index)
        out = {}
        for k in range(ntypes):
            qtype, _, offset = TYPE_ENTRY.unpack_from(
                self.data, self.layout.types_off + TYPE_ENTRY.size * (first + k))
            out[qtype] = self._answer(offset)
        out["default"] = self._answer(default)
        return out

    def answers(self, name: dns.name.Name) -> dict:
        """{qtype, 'default': Answer, 'miss': Answer, or ('wildcard', name), or ('by type',
        {qtype, 'default': Answer}) for a node of answers after the hash's slots}."""
        slot = self.nodes[name]
        out = self._typed(slot)
        _, _, _, miss, _, _, miss_kind = self._node(slot)
        if miss_kind == MISS_ANSWER:
            out["miss"] = self._answer(miss)
        elif miss in self.slot_names:
            out["miss"] = ("wildcard", self.slot_names[miss])
        else:
            out["miss"] = ("by type", self._typed(miss))
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
