"""Stage 5: serialize each answer once, with name compression, into the bytes that follow the
question in a response.

The body is written as if it followed a question for its `base` name at offset 12, so names can
point into the client's own question (RFC 1035 §4.1.4). When the responder uses a body for a
longer query name (a miss answered by the closest encloser), everything after offset 12 moves
by the difference; `fixups` lists the body positions of every compression pointer, and the
responder adds the difference to each. For an exact match the difference is zero and nothing
is patched.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

import dns.name
import dns.rdataclass
import dns.rdatatype

from .answers import DNAME_IMAGE, QNAME, Answer, Entry, NodeAnswers

HEADER_LEN = 12
QUESTION_TAIL = 4  # QTYPE and QCLASS
MAX_NAME = 255
MAX_POINTER = 0x3FFF
MAX_MESSAGE = 65535

FLAG_QR = 0x8000
FLAG_AA = 0x0400


class BodyTooLarge(Exception):
    pass


@dataclass(frozen=True)
class Body:
    header: bytes  # response header bytes 2-11: flags (RD, CD clear), QDCOUNT=1, AN, NS, AR
    data: bytes
    base_len: int  # wire length of the base name
    fixups: tuple[int, ...]  # body offsets of compression pointers to shift
    trunc_len: int  # body length without the optional additional records
    trunc_arcount: int  # ARCOUNT without them
    # DNAME synthesis (RFC 6672 §3.3): the query name's labels in front of the DNAME owner
    # (of `dname_owner_len` octets) go at body offset `dname_split`, as the start of the
    # synthesized CNAME's target; `dname_max_prefix` is the most that fits 255 octets, and
    # `overflow` answers when more would be needed.
    dname_split: int = 0
    dname_owner_len: int = 0
    dname_max_prefix: int = 0
    overflow: Body | None = None


@dataclass(frozen=True)
class NodeBodies:
    """A node's answers, serialized: what the layout stage packs."""

    key: bytes  # the lowercased wire-format name: the perfect hash key
    by_type: dict[int, Body]
    default: Body
    miss: Body | None
    miss_wildcard: bytes | None  # the key of the wildcard child that answers misses


def key_of(name: dns.name.Name) -> bytes:
    return name.canonicalize().to_wire()


def serialize_node(answers: NodeAnswers) -> NodeBodies:
    return NodeBodies(key_of(answers.node.name),
                      {rdtype: serialize(a) for rdtype, a in answers.by_type.items()},
                      serialize(answers.default),
                      serialize(answers.miss) if answers.miss else None,
                      key_of(answers.miss_wildcard) if answers.miss_wildcard else None)


class _CompressionTable:
    """Where each name suffix already written starts (RFC 1035 §4.1.4), keyed by its lowercased
    labels, noting where each pointer goes and refusing targets a shift could push past the
    14-bit pointer range. (Tuples of labels, not dnspython names: building a dnspython name per
    suffix was most of this stage's time.)

    Names in the question carry the client's letter case. Owner names may point there (they
    compare case-insensitively, and the answer's owner then reads as the client wrote it);
    names inside rdata may not, so they keep the zone's case, as BIND and Knot keep it."""

    def __init__(self, out: io.BytesIO, question_end: int, limit: int):
        self.out = out
        self.question_end = question_end
        self.limit = limit
        self.frozen = False
        self.positions: dict[tuple[bytes, ...], int] = {}
        self.pointers: list[int] = []

    def add(self, suffix: tuple[bytes, ...], pos: int) -> None:
        if pos <= self.limit and not self.frozen:
            self.positions[suffix] = pos

    def write_name(self, name: dns.name.Name, owner: bool = False) -> None:
        """Write an absolute name, ending in a pointer to the longest suffix already written."""
        out = self.out
        labels = name.labels
        lowered = [label.lower() for label in labels]
        for i in range(len(labels) - 1):  # the root label is never a pointer target
            suffix = tuple(lowered[i:])
            pos = self.positions.get(suffix)
            if pos is not None and (owner or pos >= self.question_end):
                self.pointers.append(out.tell())
                out.write(struct.pack("!H", 0xC000 | pos))
                return
            self.add(suffix, out.tell())
            out.write(bytes((len(labels[i]),)))
            out.write(labels[i])
        out.write(b"\0")


def serialize(answer: Answer) -> Body:
    base_wire = answer.base.to_wire()
    body_start = HEADER_LEN + len(base_wire) + QUESTION_TAIL
    out = io.BytesIO()
    out.write(bytes(HEADER_LEN))
    # A later shift adds at most MAX_NAME - len(base) to a pointer; keep targets below that.
    table = _CompressionTable(out, body_start, MAX_POINTER - (MAX_NAME - len(base_wire)))
    _seed_question(table, answer.base, HEADER_LEN)
    out.write(base_wire)
    out.write(bytes(QUESTION_TAIL))

    answer_entries = list(answer.answer)
    dname_split = 0
    ancount = 0
    if answer.dname is not None:
        before = answer_entries[:answer.dname.position]
        answer_entries = answer_entries[answer.dname.position:]
        ancount += sum(_write_entry(out, table, entry) for entry in before)
        dname_split = _write_dname_cname(out, table, answer)
        ancount += 1
    counts = [ancount + sum(_write_entry(out, table, entry, dname_split)
                            for entry in answer_entries)]
    for section in (answer.authority, answer.additional):
        counts.append(sum(_write_entry(out, table, entry, dname_split) for entry in section))
    trunc_len = out.tell() - body_start
    optional = sum(_write_entry(out, table, entry, dname_split) for entry in answer.optional)

    data = out.getvalue()[body_start:]
    if body_start + len(data) > MAX_MESSAGE:
        raise BodyTooLarge(f"the response for {answer.base} would be {body_start + len(data)} "
                           f"octets; a DNS message holds at most {MAX_MESSAGE}")
    flags = FLAG_QR | (FLAG_AA if answer.aa else 0) | (answer.rcode & 0xF)
    ancount, nscount, arcount = counts[0], counts[1], counts[2] + optional
    header = struct.pack("!HHHHH", flags, 1, ancount, nscount, arcount)
    fixups = tuple(p - body_start for p in table.pointers)
    if answer.dname is None:
        return Body(header, data, len(base_wire), fixups, trunc_len, counts[2])
    return Body(header, data, len(base_wire), fixups, trunc_len, counts[2],
                dname_split - body_start, len(answer.dname.owner.to_wire()),
                MAX_NAME - len(answer.dname.target.to_wire()), serialize(answer.overflow))


def _write_dname_cname(out: io.BytesIO, table: _CompressionTable, answer: Answer) -> int:
    """The CNAME a DNAME synthesizes for the query name: owner the question, target the query
    name's own labels (inserted by the responder) then a pointer to the DNAME target, which
    the DNAME record just wrote. Returns where the labels go."""
    dname = answer.dname
    # The DNAME record was the last written, its target uncompressed (RFC 6672 §2.5).
    target_at = out.tell() - len(dname.target.to_wire())
    assert target_at <= MAX_POINTER - (MAX_NAME - len(answer.base.to_wire())), \
        "the DNAME target must stay within pointer range"
    out.write(b"\xc0\x0c")
    out.write(struct.pack("!HHIH", dns.rdatatype.CNAME, dns.rdataclass.IN, dname.ttl, 2))
    split = out.tell()
    table.pointers.append(split)
    out.write(struct.pack("!H", 0xC000 | target_at))
    table.frozen = True  # nothing may point past the insertion: it would move
    return split


def _seed_question(table: _CompressionTable, base: dns.name.Name, offset: int) -> None:
    """Make every suffix of the question name a compression target (the root is never one)."""
    labels = base.labels
    lowered = [label.lower() for label in labels]
    for i in range(len(labels) - 1):
        table.add(tuple(lowered[i:]), offset)
        offset += 1 + len(labels[i])


def _write_entry(out: io.BytesIO, table: _CompressionTable, entry: Entry,
                 dname_split: int = 0) -> int:
    """Write one RRset; return how many records it holds."""
    rdataset = entry.rdataset
    fixed = struct.pack("!HHI", rdataset.rdtype, rdataset.rdclass, rdataset.ttl)
    for rdata in rdataset:
        if entry.owner is QNAME:
            out.write(b"\xc0\x0c")  # the question's name, whatever it is: never shifted
        elif entry.owner is DNAME_IMAGE:
            table.pointers.append(out.tell())  # the synthesized CNAME's target, as completed
            out.write(struct.pack("!H", 0xC000 | dname_split))
        else:
            table.write_name(entry.owner, owner=True)
        out.write(fixed)
        length_at = out.tell()
        out.write(b"\0\0")
        _write_rdata(out, table, rdata)
        end = out.tell()
        out.seek(length_at)
        out.write(struct.pack("!H", end - length_at - 2))
        out.seek(end)
    return len(rdataset)


# The types whose names RFC 1035 §4.1.4 and RFC 3597 §4 let a server compress; every other
# type is written as dnspython writes it without compression.
_COMPRESSED_NAME = {dns.rdatatype.NS, dns.rdatatype.CNAME, dns.rdatatype.PTR}
# id(rdata) -> (rdata, its wire form); holding the rdata keeps its id from being reused.
_uncompressed: dict[int, tuple[object, bytes]] = {}


def _write_rdata(out: io.BytesIO, table: _CompressionTable, rdata) -> None:
    rdtype = rdata.rdtype
    if rdtype in _COMPRESSED_NAME:
        table.write_name(rdata.target)
    elif rdtype == dns.rdatatype.MX:
        out.write(struct.pack("!H", rdata.preference))
        table.write_name(rdata.exchange)
    elif rdtype == dns.rdatatype.SOA:
        table.write_name(rdata.mname)
        table.write_name(rdata.rname)
        out.write(struct.pack("!IIIII", rdata.serial, rdata.refresh, rdata.retry, rdata.expire,
                              rdata.minimum))
    else:
        known = _uncompressed.get(id(rdata))
        if known is None:
            known = _uncompressed[id(rdata)] = (rdata, rdata.to_wire())
        out.write(known[1])
