"""The core on random zone sets (tests/randomsets.py): whichever reader reads the files (the
fast reader, or dnspython with the records handed over), the core says the same and writes
the same bytes; one thread or three, the same bytes, and the same again when the answers'
octets go to their files through a buffer of 64 octets rather than 4 MiB
(compiler/core/base/spill.c: flushed every few bodies, most bodies written past it, and those
matched read back from the file), and when the blob is laid out in memory and written whole
rather than through a mapping of the file (compiler/core/layout/layout.c). What the answers say is held against
Knot DNS on the same sets (tests/differential/test_random_sets.py). Seeds are fixed: a
failure reproduces."""

from __future__ import annotations

import pytest

from conftest import bake_outcome
from randomsets import zone_set

SEEDS = range(200)


@pytest.mark.parametrize("seed", SEEDS)
def test_either_reader_and_any_number_of_threads_give_the_same(seed, tmp_path, monkeypatch):
    config = zone_set(seed, tmp_path)
    monkeypatch.setenv("ZONEBAKE_BAKE_THREADS", "1")
    fast = bake_outcome(config, tmp_path / "fast.bin")
    slow = bake_outcome(config, tmp_path / "dnspython.bin", dnspython_reads=True)
    assert fast == slow
    monkeypatch.setenv("ZONEBAKE_BAKE_THREADS", "3")  # three body tables, merged
    assert bake_outcome(config, tmp_path / "threads.bin") == fast
    monkeypatch.setenv("ZONEBAKE_SPILL_BUFFER", "64")
    assert bake_outcome(config, tmp_path / "small buffer.bin") == fast
    monkeypatch.setenv("ZONEBAKE_LAYOUT_IN_MEMORY", "1")
    assert bake_outcome(config, tmp_path / "in memory.bin") == fast


def test_random_sets_are_baked_warned_about_and_refused(tmp_path):
    """The generator is worth running only if the core compiles most of its sets, and it
    must make some the checks warn about and some they refuse."""
    outcomes = []
    for seed in SEEDS:
        directory = tmp_path / str(seed)
        directory.mkdir()
        result = bake_outcome(zone_set(seed, directory), directory / "zonedata.bin")
        outcomes.append("refused" if result[0] == "refused" else
                        "warned" if result[1] else "baked")
    assert outcomes.count("baked") >= len(SEEDS) // 2
    assert outcomes.count("warned") > 0 and outcomes.count("refused") > 0
