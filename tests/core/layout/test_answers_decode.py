"""The answers the core serialized (tests/zones/testset.toml, read back from zonedata.bin):
put behind a question as the responder puts it, every one decodes with dnspython, with the
counts its header gives, also when a closest encloser's answer serves a longer name."""

from __future__ import annotations

import struct

import dns.message
import dns.name
import dns.rdatatype
import pytest

from blob import ANSWER, GROUP, NODE, TYPE_ENTRY


def counts(message: dns.message.Message) -> tuple[int, int, int]:
    return tuple(sum(len(rrset) for rrset in section)
                 for section in (message.answer, message.authority, message.additional))


def test_every_answer_decodes_with_its_counts(testset_compiled):
    blob = testset_compiled.blob
    decoded = aliases = 0
    for name in blob.nodes:
        for key, answer in blob.answers(name).items():
            if isinstance(answer, tuple):  # a miss answered by a wildcard child
                continue
            qname = dns.name.Name((b"x",)) + name if key == "miss" else name
            assert answer.base_len == len(name.to_wire())
            qtype = 1 if key in ("miss", "default") else key
            message = answer.message(qname, qtype)
            assert message.question[0].name == qname
            expected = struct.unpack("!3H", answer.header[4:10])
            if answer.is_alias:  # the CNAME part's, and its target's answer's
                expected = tuple(a + b for a, b in zip(
                    expected, struct.unpack("!3H", answer.target(qtype).header[4:10])))
                aliases += 1
            assert counts(message) == expected
            decoded += 1
    assert decoded > 40 and aliases > 0


@pytest.mark.parametrize("prefix", ["x", "a.b.c", "a" * 63 + "." + "b" * 60])
def test_a_miss_answer_decodes_for_longer_names(testset_compiled, prefix):
    """A closest encloser's NXDOMAIN is compiled once and shifted for each query name."""
    blob = testset_compiled.blob
    for name in blob.nodes:
        miss = blob.answers(name)["miss"]
        if isinstance(miss, tuple):
            continue
        qname = dns.name.from_text(prefix, name)
        message = miss.message(qname, 1)
        assert message.question[0].name == qname
        if message.authority and message.authority[0].rdtype == dns.rdatatype.SOA:
            assert miss.fixups, "the zone's SOA owner is a pointer, shifted by the longer name"


def test_rdata_names_keep_the_zone_case(testset_compiled):
    """Owners may point into the client's question; names inside records never do."""
    answer = testset_compiled.body_for("example.", dns.rdatatype.MX)
    message = answer.message(dns.name.from_text("EXAMPLE."), dns.rdatatype.MX)
    assert message.answer[0].name.to_text() == "EXAMPLE."
    assert message.answer[0][0].exchange.to_text() == "mail.example."


def test_struct_sizes_match_zonedata_h():
    """runtime/zonedata.h asserts the same sizes (_Static_assert)."""
    assert (NODE.size, TYPE_ENTRY.size, ANSWER.size, GROUP.size) == (20, 8, 40, 8)
