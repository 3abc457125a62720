"""zonebake is at least as strict as the peers' zone checkers: whenever both named-checkzone
(Debian bind9-utils) and kzonecheck (knot-dnssecutils) reject a zone, `zonebake check`
rejects it too. Run over every zone file the tests have, broken or not."""

from __future__ import annotations

import subprocess

import pytest

from conftest import ROOT, ZONES, require, run_zonebake

DIFF = ROOT / "tests" / "differential" / "zones"
CASES = [("example.", z) for z in sorted((ZONES / "broken").glob("*.zone"))] + [
    ("example.", ZONES / "warnings" / "advice.zone"),
    ("example.", ZONES / "example.zone"),
    ("example.net.", ZONES / "example.net.zone"),
    ("example.", DIFF / "rfc4592" / "example.zone"),
    ("example.", DIFF / "features" / "example.zone"),
    ("example.com.", DIFF / "parentchild" / "example.com.zone"),
    ("sub.example.com.", DIFF / "parentchild" / "sub.example.com.zone"),
    ("example.com.", ROOT / "zones" / "example.com.zone"),
    ("2.0.192.in-addr.arpa.", ROOT / "zones" / "2.0.192.in-addr.arpa.zone"),
]


def peers() -> list[str]:
    return require("bind9-utils and knot-dnssecutils", "named-checkzone", "kzonecheck")


@pytest.mark.parametrize("origin,zone", CASES,
                         ids=[f"{z.parent.name}/{z.name}" for _, z in CASES])
def test_both_peers_reject_implies_zonebake_rejects(origin, zone):
    named, knot = peers()
    # The peers read $INCLUDE relative to their working directory: run them from the zone's.
    named_rejects = subprocess.run([named, "-q", origin, zone.name], cwd=zone.parent,
                                   capture_output=True).returncode != 0
    knot_rejects = subprocess.run([knot, "-o", origin, zone.name], cwd=zone.parent,
                                  capture_output=True).returncode != 0
    ours = run_zonebake("check", "--zone", f"{origin}={zone}")
    assert ours.returncode in (0, 1), ours.stderr
    if named_rejects and knot_rejects:
        assert ours.returncode == 1, f"both peers reject {zone.name}; zonebake accepts it"
