"""Answer bodies: put behind a question as the responder does, every body decodes with
dnspython to exactly the records its answer was made of, also when used for a longer name."""

from __future__ import annotations

import struct

import dns.flags
import dns.message
import dns.name
import pytest

from dnsassert import section
from zonebake.answers import Answer, Entry
from zonebake.layout import ANSWER, NODE, TYPE_ENTRY
from zonebake.wire import Body


def assemble(body: Body, qname: dns.name.Name, qtype: int, base_len: int) -> bytes:
    """What runtime/respond.c does: header, the question, the body, pointers shifted."""
    question = qname.to_wire() + struct.pack("!HH", qtype, 1)
    data = bytearray(body.data)
    delta = len(qname.to_wire()) - base_len
    for at in body.fixups:
        (pointer,) = struct.unpack_from("!H", data, at)
        struct.pack_into("!H", data, at, pointer + delta)
    return b"\x12\x34" + body.header + question + bytes(data)


def expected(entries: tuple[Entry, ...], qname: dns.name.Name) -> list[tuple]:
    rrsets = []
    for entry in entries:
        rrset = dns.rrset.RRset(entry.owner, entry.rdataset.rdclass, entry.rdataset.rdtype)
        rrset.update(entry.rdataset)
        rrsets.append(rrset)
    return section(rrsets)


def check(answer: Answer, body: Body, qname: dns.name.Name, qtype: int) -> None:
    message = dns.message.from_wire(assemble(body, qname, qtype, body.base_len))
    assert message.rcode() == answer.rcode
    assert bool(message.flags & dns.flags.AA) == answer.aa
    assert message.question[0].name == qname
    assert section(message.answer) == expected(answer.answer, qname)
    assert section(message.authority) == expected(answer.authority, qname)
    assert section(message.additional) == expected(answer.additional + answer.optional, qname)


def all_bodies(compiled):
    for na, nb in zip(compiled.answers, compiled.bodies):
        for rdtype, answer in na.by_type.items():
            yield na.node.name, rdtype, answer, nb.by_type[rdtype], False
        yield na.node.name, 65280, na.default, nb.default, False
        yield na.node.name, 1, na.miss, nb.miss, True


def test_every_body_decodes_to_its_records(testset_compiled):
    count = 0
    for name, rdtype, answer, body, is_miss in all_bodies(testset_compiled.compiled):
        assert body.base_len == len(name.to_wire())
        check(answer, body, name, rdtype)
        count += 1
    assert count > 40


@pytest.mark.parametrize("prefix", ["x", "a.b.c", "a" * 63 + "." + "b" * 60])
def test_miss_bodies_decode_for_longer_names(testset_compiled, prefix):
    """A closest encloser's NXDOMAIN body is compiled once and shifted for each query name."""
    for name, rdtype, answer, body, is_miss in all_bodies(testset_compiled.compiled):
        if not is_miss:
            continue
        qname = dns.name.from_text(prefix, name)
        assert body.fixups, "an NXDOMAIN body names the zone apex, which takes a pointer"
        check(answer, body, qname, rdtype)


def test_rdata_names_keep_the_zone_case(testset_compiled):
    """Owners may point into the client's question; names inside records never do."""
    body = testset_compiled.body_for("example.", dns.rdatatype.MX)
    packet = assemble(body, dns.name.from_text("EXAMPLE."), dns.rdatatype.MX, body.base_len)
    message = dns.message.from_wire(packet)
    assert message.answer[0].name.to_text() == "EXAMPLE."
    assert message.answer[0][0].exchange.to_text() == "mail.example."


def test_struct_sizes_match_zonedata_h():
    assert (NODE.size, TYPE_ENTRY.size, ANSWER.size) == (20, 8, 36)
