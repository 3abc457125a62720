"""A build over an earlier build of a signed set (compiler/core/layout/reuse.c) copies the
regions a change does not reach while the zone's chain is as it was (an address, a text, a
target changed: the same names with the same types), with the SOA's new serial and new
signature written over the old ones where they hold them, and writes what a full build
writes, octet for octet; a change of the chain (a name or a type come or gone) or of the SOA
but for its serial builds in full. Held for NSEC3, NSEC3 with opt-out and NSEC, signed at
build time."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildsigned import EPOCH, ZONE, signed_set
from zonebake.config import load_toml
from zonebake.core import run as core
from zonebake.dnssec import signatures, signing

FILLERS = 1500  # names enough for several groups of the perfect hash (about 256 each)


def fillers() -> list[str]:
    """Hosts, aliases, mail exchangers and delegations with glue: names whose answers read
    other names', so that a change reaches past its own name."""
    lines = []
    for i in range(FILLERS):
        kind = i % 10
        if kind < 6:
            lines.append(f"f{i} A 192.0.2.{i % 250 + 1}")
        elif kind == 6:
            lines.append(f"w{i} CNAME f{i - 6}")
        elif kind == 7:
            lines.append(f't{i} TXT "token-{i}"')
        elif kind == 8:
            lines.append(f"m{i} MX 10 f{i - 8}")
        else:
            lines += [f"d{i} NS ns.d{i}", f"ns.d{i} A 198.51.100.{i % 250 + 1}"]
    return lines


SOA = "@ IN SOA ns1 hostmaster 2026112601 7200 3600 1209600 300"


def bumped(line: str) -> str:
    return line.replace(" 2026112601 ", " 2026112602 ")


# Each change: the line it replaces and what takes its place, and whether the chain stays as
# it was (the regions it does not reach are copied).
CHANGES = {
    "address changed": ("f200 A 192.0.2.201", ["f200 A 198.18.0.1"], True),
    "text made longer": ('t207 TXT "token-207"', ['t207 TXT "token-207-and-more"'], True),
    "alias retargeted": ("w206 CNAME f200", ["w206 CNAME f10"], True),
    "mail exchanger changed": ("m208 MX 10 f200", ["m208 MX 20 f300"], True),
    "glue address changed": ("ns.d209 A 198.51.100.210", ["ns.d209 A 198.18.0.2"], True),
    "name added": ("f200 A 192.0.2.201", ["f200 A 192.0.2.201", "new A 198.18.0.3"], False),
    "name removed": ("f200 A 192.0.2.201", [], False),
    "type added": ("f200 A 192.0.2.201", ["f200 A 192.0.2.201", 'f200 TXT "more"'], False),
    "delegation added": ("f200 A 192.0.2.201", ["f200 A 192.0.2.201", "nd NS ns.nd",
                                                  "ns.nd A 198.18.0.4"], False),
    # A new SOA signature, written over the old in every negative answer copied.
    "serial bumped": (SOA, [bumped(SOA)], True),
    "SOA changed otherwise": (SOA, [SOA.replace(" 300", " 600")], False),
}


def changed(text: str, kind: str) -> str:
    """The zone's text with one change of KIND, and with the serial bumped too for
    `... and the serial bumped`, as an operator edits a zone."""
    kind, bump = kind.removesuffix(BUMPED), kind.endswith(BUMPED)
    line, replacement, _ = CHANGES[kind]
    lines = text.splitlines()
    at = lines.index(line)
    lines = lines[:at] + replacement + lines[at + 1:]
    return "\n".join(bumped(x) if bump and x == SOA else x for x in lines) + "\n"


BUMPED = " and the serial bumped"
# The regions copied (True) or a full build (False).
KINDS = {kind: kept for kind, (_, _, kept) in CHANGES.items()} | {
    "address changed" + BUMPED: True, "name added" + BUMPED: False}


@pytest.fixture(autouse=True)
def signatures_at_one_time(tmp_path, monkeypatch):
    """Each test's own signing and verification caches, its signatures made at EPOCH."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    monkeypatch.setattr(signing, "cache_path", lambda origins: tmp_path / "cache" / "signed")
    monkeypatch.setattr(signatures, "cache_path", lambda origins: tmp_path / "cache" / "checked")


def bake(toml: Path, out: Path, earlier: Path, counts: dict | None = None
         ) -> tuple[tuple, list[int]]:
    """(the data, the state, the layout's numbers), and the regions reused; COUNTS gets
    every count the core reports, by its name."""
    out.mkdir(parents=True)
    reused: list[int] = []
    counts = {} if counts is None else counts

    def on_phase(name, seconds, count, unit):
        counts[name] = count
        if name == "regions reused":
            reused.append(count)

    state = core.State(out / "zonedata.state", earlier / "zonedata.state",
                       earlier / "zonedata.bin")
    baked = core.bake(load_toml(toml), out / "zonedata.bin", state=state, on_phase=on_phase)
    return ((out / "zonedata.bin").read_bytes(), state.out.read_bytes(), baked.layout), reused


# The changes that add or remove a name or a type: the chain changes with them, and is
# checked again (compiler/core/dnssec/chaincheck.c). Every other leaves it as the earlier
# build checked it.
NEW_CHAIN = {"name added", "name removed", "type added", "delegation added",
             "name added" + BUMPED}


@pytest.mark.parametrize("denial, opt_out", [("nsec3", False), ("nsec3", True),
                                             ("nsec", False)])
def test_a_signed_build_over_an_earlier_one_writes_what_a_full_build_writes(
        denial, opt_out, tmp_path):
    text = ZONE + "\n".join(fillers()) + "\n"
    toml = signed_set(tmp_path, denial, opt_out, zone=text)
    zone = tmp_path / "example.com.zone"
    earlier = tmp_path / "earlier"
    first, _ = bake(toml, earlier, tmp_path / "none")
    for kind, copied in KINDS.items():
        zone.write_text(changed(text, kind))
        full_counts, over_counts = {}, {}
        full, _ = bake(toml, tmp_path / kind / "full", tmp_path / "none", full_counts)
        over, reused = bake(toml, tmp_path / kind / "over", earlier, over_counts)
        assert "chains as checked before" not in full_counts, kind
        assert over_counts.get("chains as checked before", 0) == (kind not in NEW_CHAIN), kind
        assert over[0] == full[0], kind  # the data
        assert over[1] == full[1], kind  # the state
        assert over[2] == full[2], kind  # the layout's numbers
        assert full[0] != first[0], kind  # a change the data shows
        # An insecure delegation has no NSEC3 of its own in an opt-out chain (RFC 5155 §6):
        # the chain stays as it was.
        copied = copied or (kind == "delegation added" and opt_out)
        if copied:
            assert reused and reused[0] > 0, kind  # regions copied
        elif denial == "nsec" or kind.startswith("SOA"):
            assert not any(reused), kind  # a full build
        # An NSEC3 chain changed: the regions whose proofs read as before are copied
        # (compiler/core/layout/proofuse.c); here a few groups, all reached or not.


def test_a_plain_zone_beside_a_signed_one_gets_its_new_serial(tmp_path):
    """Beside a signed zone every node has its DO twin after it: a new serial of the unsigned
    zone is written into both, in every copied region."""
    plain = ZONE.replace("example.com.", "example.org.").replace(" 2026112601 ", " 41 ")
    org = tmp_path / "example.org.zone"
    org.write_text(plain + "\n".join(fillers()) + "\n")
    toml = signed_set(tmp_path, "nsec3", zone=ZONE + "\n".join(fillers()) + "\n",
                      extra='[[zone]]\norigin = "example.org."\nfile = "example.org.zone"\n')
    earlier = tmp_path / "earlier"
    bake(toml, earlier, tmp_path / "none")
    org.write_text(org.read_text().replace(" 41 ", " 42 ", 1).replace(
        "f200 A 192.0.2.201", "f200 A 198.18.0.1"))
    full, _ = bake(toml, tmp_path / "full", tmp_path / "none")
    over, reused = bake(toml, tmp_path / "over", earlier)
    assert over == full
    assert reused and reused[0] > 0


@pytest.mark.parametrize("kind", ["address changed", "name added"])
def test_a_signed_zone_with_a_dname_copies_regions_while_its_chain_stays(kind, tmp_path):
    """The denials of a DNAME's images are the responder's, from the denial region's image
    entries (compiler/core/layout/denialdata.c), which the proofs' reads kept in the state do
    not follow: regions are copied while the chain is as it was, and a change of the chain
    builds in full."""
    text = ZONE + "\n".join(fillers() + ["al DNAME tg", "c1 CNAME x1.al", "c2 CNAME nx.al"] +
                            [f"x{i}.tg A 192.0.2.{i + 1}" for i in range(20)]) + "\n"
    toml = signed_set(tmp_path, "nsec3", zone=text)
    earlier = tmp_path / "earlier"
    bake(toml, earlier, tmp_path / "none")
    (tmp_path / "example.com.zone").write_text(changed(text, kind))
    full, _ = bake(toml, tmp_path / "full", tmp_path / "none")
    over, reused = bake(toml, tmp_path / "over", earlier)
    assert over == full
    if kind == "address changed":
        assert reused and reused[0] > 0  # regions copied
    else:
        assert not any(reused)  # a full build
