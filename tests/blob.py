"""zonedata.bin read back: every node's answers, each put behind a question for the node's
own name as the responder puts it (runtime/respond.c), and decoded with dnspython. For tests
that compare what two builds serve rather than their bytes."""

from __future__ import annotations

import struct

import dns.message
import dns.name

NODE = struct.Struct("<IIIIHBB")  # runtime/zonedata.h: struct zb_node
TYPE_ENTRY = struct.Struct("<HHI")  # struct zb_type_entry
ANSWER = struct.Struct("<10sHHHHHIIHBBI")  # struct zb_answer
DEFAULT_QTYPE = 65280  # the question the default answer is decoded under
MISS_ANSWER = 0


def _message(data: bytes, offset: int, qname: dns.name.Name, qtype: int):
    """The answer at `offset` as a message for qname (a DNAME synthesis: its raw fields)."""
    (header, body_len, base_len, nfixups, _, _, body_off, fixups_off, dname_split, _, _,
     _) = ANSWER.unpack_from(data, offset)
    body = bytearray(data[body_off:body_off + body_len])
    if dname_split:
        return ("dname", header, bytes(body))
    delta = len(qname.to_wire()) - base_len
    for at in struct.unpack_from(f"<{nfixups}H", data, fixups_off):
        (pointer,) = struct.unpack_from("!H", body, at)
        struct.pack_into("!H", body, at, pointer + delta)
    question = qname.to_wire() + struct.pack("!HH", qtype, 1)
    return dns.message.from_wire(b"\0\0" + header + question + bytes(body))


def served(data: bytes, nodes_off: int, types_off: int, nnodes: int) -> dict:
    """{node name: {qtype or 'default' or 'miss': message, or ('wildcard', name)}}."""
    out = {}
    names = {}
    for slot in range(nnodes):
        name_off, _, _, _, _, name_len, _ = NODE.unpack_from(data, nodes_off + NODE.size * slot)
        if name_len:
            names[slot] = dns.name.from_wire(data[name_off:name_off + name_len], 0)[0]
    for slot, name in names.items():
        _, first, default, miss, ntypes, _, miss_kind = NODE.unpack_from(
            data, nodes_off + NODE.size * slot)
        answers = {}
        for k in range(ntypes):
            qtype, _, answer = TYPE_ENTRY.unpack_from(data, types_off + TYPE_ENTRY.size *
                                                      (first + k))
            answers[qtype] = _message(data, answer, name, qtype)
        answers["default"] = _message(data, default, name, DEFAULT_QTYPE)
        answers["miss"] = (_message(data, miss, dns.name.Name((b"x",)) + name, 1)
                           if miss_kind == MISS_ANSWER else ("wildcard", names[miss]))
        out[name] = answers
    return out
