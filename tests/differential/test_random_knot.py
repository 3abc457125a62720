"""zonebake against Knot DNS on random zone sets (tests/randomsets.py): CNAME chains, DNAMEs,
delegations, DS, wildcards, a parent and its child served together. The sets of a batch of
seeds are served at once, each below a name of its own, and every probe of every zone must
get the same response from both, or a difference listed in allowed.py. Sets the checks
refuse or warn about are left out: Knot serves what zonebake refuses, and a warning marks
what is not worth comparing (a DNAME into its own subtree loops in both, differently)."""

from __future__ import annotations

from pathlib import Path

import pytest

from randomsets import zone_set
from test_differential import run_probes
from zonebake.core import run as core
from zonebake.errors import CompileError

BATCHES = [range(0, 60), range(60, 120), range(120, 180)]
SETS_PER_BATCH = 15


def served_sets(seeds: range, tmp_path: Path) -> list[tuple[str, Path]]:
    zones = []
    used = 0
    for seed in seeds:
        directory = tmp_path / f"s{seed}"
        directory.mkdir()
        config = zone_set(seed, directory, f"s{seed}.test.")
        try:
            if core.bake(config, directory / "zonedata.bin").warnings:
                continue
        except CompileError:
            continue
        zones += [(zone.origin.to_text(), zone.path) for zone in config.zones]
        used += 1
        if used == SETS_PER_BATCH:
            return zones
    raise AssertionError(f"only {used} sets of seeds {seeds} compile without a word")


@pytest.mark.parametrize("seeds", BATCHES, ids=[f"{b.start}-{b.stop - 1}" for b in BATCHES])
def test_same_answers_as_knot(seeds, tmp_path):
    count, unexplained, allowed = run_probes(served_sets(seeds, tmp_path), tmp_path)
    print(f"seeds {seeds}: {count} probes, {sum(allowed.values())} allowed differences "
          f"{dict(allowed)}")
    assert count > 1000
    assert not unexplained, (f"{len(unexplained)} of {count} probes differ from Knot:\n\n"
                             + "\n\n".join(unexplained[:15]))
