"""The core reads a zone file on one thread or on two (compiler/core/read/readzone.c): a
lexer on a thread of its own hands the records over in blocks, a few blocks ahead, and the
reading thread interns their names and files them in file order. Both ways must write the
same zonedata.bin byte for byte and, for a zone they decline, give the same reason: that of
the first problem in file order, whichever half of the reading finds it.

ZONEBAKE_BAKE_THREADS=1 reads on one thread, 2 on two (unset, files from 1 MiB get two). The
zone here has some 17,000 records: 17 blocks of 1024, so the ring of 8 blocks goes round
twice, and the edits sit late in it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gen import ORIGIN, zone_lines
from zonebake.config import ZoneSetConfig, ZoneSource, parse_origin
from zonebake.core import run as core


LINES = list(zone_lines(6000))
LATE, LATER = 9000, 16000  # 0-based indices into LINES; the file's lines are one more
assert len(LINES) > LATER + 1000 and len(LINES) > 16 * 1024


def _replace(lines: list[str], at: int, line: str) -> list[str]:
    return lines[:at] + [line] + lines[at + 1:]


def _parenthesized_soa(lines: list[str]) -> list[str]:
    soa = next(i for i, line in enumerate(lines) if " SOA " in line)
    head, numbers = lines[soa].split(" 2026")
    return lines[:soa] + [f"{head} ( ; the serial", f"  2026{numbers}", "  )"] + lines[soa + 1:]


def _blank_owners(lines: list[str]) -> list[str]:
    """Each record whose owner is the one before it written with a blank owner."""
    out, previous = [], None
    for line in lines:
        owner, _, rest = line.partition(" ")
        out.append(f"\t{rest}" if owner == previous and not owner.startswith("$") else line)
        previous = owner
    return out


def _origin_switch(lines: list[str]) -> list[str]:
    """After a record, an $ORIGIN, and the record's text again: another name now (were it
    taken for the previous owner, the record would be a duplicate)."""
    at = next(i for i in range(LATER, len(lines)) if re.match(r"site\d+ A ", lines[i]))
    return lines[:at + 1] + ["$ORIGIN www.scale.example.", lines[at],
                             f"$ORIGIN {ORIGIN}"] + lines[at + 1:]


SAME_AS_PLAIN = "baked, the same as the zone as generated"
BAKED = "baked"
# What is done to the zone, and what both ways must do: a reason to decline, or bake it.
EDITS = {
    "as generated": (lambda lines: lines, SAME_AS_PLAIN),
    "the SOA in parentheses over three lines": (_parenthesized_soa, SAME_AS_PLAIN),
    "blank owners": (_blank_owners, SAME_AS_PLAIN),
    "an owner's text again after an $ORIGIN": (_origin_switch, BAKED),
    "a type the fast reader does not read, late (the lexer's)": (
        lambda lines: _replace(lines, LATER, "late LOC 52 22 23 N 4 53 32 E 0m"),
        f"scale.zone:{LATER + 1}: type LOC"),
    "a bad owner and a bad type on one line (the name is read first)": (
        lambda lines: _replace(lines, LATER, "a..b LOC 52 22 23 N 4 53 32 E 0m"),
        f"scale.zone:{LATER + 1}: the name a..b needs the full reader"),
    "a duplicate record, late (the filing's warning: it is dropped)": (
        lambda lines: lines[:LATER] + [lines[LATER]] + lines[LATER:], SAME_AS_PLAIN),
    "the filing's error first, the lexer's decline after": (
        lambda lines: _replace(_replace(lines, LATER, "late LOC 52 22 23 N 4 53 32 E 0m"), LATE,
                               "outside.example. A 192.0.2.1"),
        f"scale.zone:{LATER + 1}: type LOC"),
    "the lexer's problem first, the filing's after": (
        lambda lines: _replace(_replace(lines, LATER, "a..b A 192.0.2.1"), LATE,
                               "late MX ten mx1"),
        f"scale.zone:{LATE + 1}: record data the full reader must read"),
    "a name in the record data the lexer leaves as text": (
        lambda lines: _replace(lines, LATER, "late MX 10 mx..1"),
        f"scale.zone:{LATER + 1}: the name mx..1 needs the full reader"),
}


def _outcome(config: ZoneSetConfig, data: Path, threads: str,
             monkeypatch: pytest.MonkeyPatch) -> tuple[str, object]:
    monkeypatch.setenv("ZONEBAKE_BAKE_THREADS", threads)
    data.unlink(missing_ok=True)
    try:
        core.bake(config, data, hand_over=False)
    except core.Unreadable as why:
        return "declined", str(why)
    return "baked", data.read_bytes()


@pytest.mark.parametrize("edit", EDITS)
def test_one_thread_and_two_read_a_zone_the_same(edit, tmp_path, monkeypatch):
    change, expected = EDITS[edit]
    path = tmp_path / "scale.zone"
    path.write_text("\n".join(change(LINES)) + "\n")
    config = ZoneSetConfig((ZoneSource(parse_origin(ORIGIN, "test"), path, path.name),))
    one = _outcome(config, tmp_path / "one.bin", "1", monkeypatch)
    two = _outcome(config, tmp_path / "two.bin", "2", monkeypatch)
    assert one == two
    if expected in (SAME_AS_PLAIN, BAKED):
        assert one[0] == "baked", one[1]
    else:
        assert one[0] == "declined"
        assert expected in one[1]
    path.write_text("\n".join(LINES) + "\n")
    plain = _outcome(config, tmp_path / "plain.bin", "1", monkeypatch)
    assert (one == plain) == (expected == SAME_AS_PLAIN)
