"""The change loop's edits (tests/scale/gen.py's change_zone, measured by the scale report's
change-loop section) change what their kind says and nothing else: the records of the
zone before and after, read by dnspython, differ in one record (the SOA, for a new serial),
or in a delegation's NS and its glue."""

from __future__ import annotations

import dns.rdatatype
import dns.zone
import pytest

from gen import CHANGE_KINDS, ORIGIN, change_zone, middle_site, zone_lines

NAMES = 300


def records(text: str) -> set[tuple[str, str, str]]:
    zone = dns.zone.from_text(text, origin=ORIGIN, relativize=False)
    return {(name.to_text(), dns.rdatatype.to_text(rdataset.rdtype), rdata.to_text())
            for name, rdataset in zone.iterate_rdatasets() for rdata in rdataset}


@pytest.fixture(scope="module")
def zone() -> str:
    return "".join(f"{line}\n" for line in zone_lines(NAMES))


# kind: the (owner, type) of the records it removes and of those it adds.
EXPECTED = {
    "A address changed": ([("site{i}", "A")], [("site{i}", "A")]),
    "TXT made longer": ([("site{i}", "TXT")], [("site{i}", "TXT")]),
    "name added": ([], [("host{i}", "A")]),
    "name removed": ([("www.site{i}", "CNAME")], []),
    "delegation added": ([], [("newdom{i}", "NS"), ("ns1.newdom{i}", "A")]),
    "serial bumped": ([("@", "SOA")], [("@", "SOA")]),
}


def owner(name: str, i: int) -> str:
    return ORIGIN if name == "@" else f"{name.format(i=i)}.{ORIGIN}"


def test_every_change_kind_is_pinned():
    assert set(CHANGE_KINDS) == set(EXPECTED)


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_change_differs_in_its_records_only(zone, kind):
    before, after = records(zone), records(change_zone(zone, kind, NAMES))
    i = middle_site(NAMES)
    removed, added = EXPECTED[kind]
    assert sorted((name, rdtype) for name, rdtype, _ in before - after) == \
        [(owner(name, i), rdtype) for name, rdtype in removed]
    assert sorted((name, rdtype) for name, rdtype, _ in after - before) == \
        [(owner(name, i), rdtype) for name, rdtype in added]


def test_names_come_and_go_with_their_records(zone):
    def names(text):
        return {name for name, _, _ in records(text)}
    i = middle_site(NAMES)
    assert names(change_zone(zone, "name removed", NAMES)) == \
        names(zone) - {f"www.site{i}.{ORIGIN}"}
    assert names(change_zone(zone, "name added", NAMES)) == names(zone) | {f"host{i}.{ORIGIN}"}


def test_a_missing_line_is_an_error():
    with pytest.raises(ValueError, match="not exactly one line"):
        change_zone("$ORIGIN scale.example.\n", "name removed", NAMES)
