"""The native baker against the Python pipeline on random zone sets: whenever the baker
compiles a set, the Python pipeline compiles it with the same warnings and its zonedata.bin is
the baker's, byte for byte; when the baker refuses one, the pipeline refuses it with the same
errors; whenever the baker declines, it says why.

The sets are small and dense in what makes answers differ: CNAME chains (in zone, across
zones, out of the set, loops), DNAMEs, delegations with and without glue, DS at cuts, a
parent and its child zone in one set, wildcards,
empty non-terminals, MX/SRV/NS targets everywhere. Seeds are fixed: a failure reproduces.
"""

from __future__ import annotations

import pytest

from against_pipeline import bake_as_the_pipeline
from randomsets import zone_set

SEEDS = range(200)


@pytest.mark.parametrize("seed", SEEDS)
def test_baker_writes_what_the_pipeline_writes(seed, tmp_path, monkeypatch):
    # Sets this small get one thread; odd seeds get three, whose body tables are merged.
    monkeypatch.setenv("ZONEBAKE_BAKE_THREADS", "3" if seed % 2 else "1")
    bake_as_the_pipeline(zone_set(seed, tmp_path), tmp_path / "zonedata.bin")


def test_random_sets_are_baked_and_warned_about(tmp_path):
    """The generator is worth running only if the baker compiles most of its sets, and it
    must make some the zone checks warn about."""
    outcomes = []
    for seed in SEEDS:
        directory = tmp_path / str(seed)
        directory.mkdir()
        outcomes.append(bake_as_the_pipeline(zone_set(seed, directory),
                                             directory / "zonedata.bin"))
    assert outcomes.count("baked") + outcomes.count("warned") >= len(SEEDS) // 2
    assert outcomes.count("warned") > 0
