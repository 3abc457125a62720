"""An answer whose records another answer of its region holds already is not stored again
(compiler/core/layout/sharing.c): its record points into the other's body, which the
responder reads as it reads any (runtime/zonedata.h, body_off). What each answer serves is
pinned by the tests that decode and query them; these pin that the octets are stored once."""

from __future__ import annotations

from pathlib import Path

import dns.name

from blob import ANSWER, Blob, head
from buildsigned import EPOCH, ZONE, build, signed_set
from conftest import data_beside

MIN_SHARED = 16  # sharing.c: a shorter body keeps its own octets
MAX_PREFIX, MAX_RUN = 64, 8  # sharing.c: the runs of a host's records looked in


def record_starts(body: bytes) -> list[int]:
    """Where each record of a body starts, and its end (RFC 1035 §4.1.3)."""
    starts, at = [0], 0
    while at < len(body):
        while body[at] and body[at] < 0xC0:
            at += 1 + body[at]
        at += 2 if body[at] else 1
        at += 10 + int.from_bytes(body[at + 8:at + 10], "big")
        starts.append(at)
    assert at == len(body)
    return starts


def stored_once(blob: Blob) -> tuple[int, int]:
    """(answers read from another's body, answers in all), each region checked: no body
    that keeps its own octets could have been read from another's."""
    shared = total = 0
    for group in range(blob.layout.ngroups):
        answers = blob.region_answers(group)
        total += len(answers)
        bodies = [a for a in answers if a.body_at == a.at + ANSWER.size]
        for answer in answers:
            if answer.body_at != answer.at + ANSWER.size:
                shared += 1
                # Inside a body that is stored, at one of its records' starts.
                host = next(b for b in bodies
                            if b.body_at <= answer.body_at < b.body_at + len(b.body))
                assert answer.body_at - host.body_at in record_starts(host.body)
        for answer in bodies:
            if len(answer.body) < MIN_SHARED or (answer.dname_split and not answer.is_alias):
                continue
            for other in bodies:
                if other is answer or len(other.body) < len(answer.body):
                    continue
                starts = record_starts(other.body)
                for i, start in enumerate(starts):
                    ends = starts[1:1 + MAX_PREFIX] if i == 0 else \
                        starts[i + 1:i + 1 + MAX_RUN]
                    assert not (start + len(answer.body) in ends and
                                other.body[start:start + len(answer.body)] == answer.body), \
                        f"{len(answer.body)} octets stored twice in group {group}"
    return shared, total


def test_the_answer_to_a_is_read_from_the_answer_to_any(testset_compiled):
    """At a name with several RRsets, the answer to A holds the same records as the start of
    the answer to ANY over TCP (key 0): one copy, read by both."""
    blob = testset_compiled.blob
    checked = 0
    for name in blob.nodes:
        answers = blob.answers(name)
        whole, a = answers.get(0), answers.get(1)
        if whole is None or a is None or a is answers["default"] or len(a.body) < MIN_SHARED:
            continue
        if a.body in whole.body and whole.body_at == whole.at + ANSWER.size:
            assert whole.body_at <= a.body_at < whole.body_at + len(whole.body), name
            checked += 1
    assert checked >= 3


def test_no_octets_are_stored_twice_in_a_region(testset_compiled):
    shared, total = stored_once(testset_compiled.blob)
    assert 0 < shared < total


def test_a_signed_zone_shares_its_signed_records(tmp_path):
    """With DO set and clear: a NODATA without DO is the SOA that starts the NODATA with DO,
    and the signed RRsets repeat across a name's answers."""
    hosts = "".join(f"h{k} A 192.0.2.{k % 250 + 1}\nh{k} TXT \"host {k}\"\n"
                    for k in range(300))
    toml = signed_set(tmp_path, zone=ZONE + hosts)
    made = build(toml, tmp_path / "out", "-q", epoch=EPOCH, cache=tmp_path / "cache")
    assert made.returncode == 0, made.stderr
    layout = head(data_beside(tmp_path / "out"))
    assert layout.signed_nodes == 1
    blob = Blob.read(tmp_path / "out" / "zonedata.bin", layout)
    shared, total = stored_once(blob)
    assert shared > total // 4
    # h7's NODATA: the one without DO is the SOA that starts the one with DO, and is read
    # from a body that holds it (that one, or another name's of the same length).
    node = blob.nodes[dns.name.from_text("h7.example.com.")]
    plain = blob._answer(node + blob._node(node)[2])
    twin = node + blob.node_size // 2
    signed = blob._answer(twin + blob._node(twin)[2])
    assert signed.body.startswith(plain.body) and len(signed.body) > len(plain.body)
    assert plain.body_at != plain.at + ANSWER.size
