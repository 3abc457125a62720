"""The core on broken and odd zone files: mutants of the accepted corpus (lines dropped,
doubled, swapped, cut short; octets replaced by the characters zone syntax cares about). For
every mutant the core says and writes what it says and writes when dnspython reads the file
and hands the records over: the fast reader never reads a file otherwise than dnspython, nor
lets through what dnspython refuses; and nothing crashes or fails. In the sanitizer pass the
core runs under ASan and UBSan. Seeds are fixed: a failure reproduces.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import ZONES, bake_outcome
from zonebake.core import run as core
from zonebake.config import ZoneSetConfig, ZoneSource, load_toml
from zonebake.errors import CompileError

ACCEPTED = ZONES / "native" / "accepted"
SEEDS = range(300)
# What zone syntax treats specially, and what it must refuse.
SPECIAL = [b" ", b"\t", b"(", b")", b'"', b";", b".", b"@", b"*", b"\\", b"$", b"0", b"9",
           b"A", b"\n", b"\r", b"\x00", b"\x80", b"\xff", b"-", b":", b"x" * 70]


def _sources() -> list[ZoneSource]:
    return sorted((zone for toml in sorted(ACCEPTED.glob("*/zonebake.toml"))
                   for zone in load_toml(toml).zones), key=lambda z: str(z.path))


SOURCES = _sources()


def _mutate(text: bytes, rng: random.Random) -> bytes:
    lines = text.split(b"\n")
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(6)
        i = rng.randrange(len(lines))
        if kind == 0:
            del lines[i]
        elif kind == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif kind == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 3 and lines[i]:
            at = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:at] + rng.choice(SPECIAL) + lines[i][at + 1:]
        elif kind == 4 and lines[i]:
            lines[i] = lines[i][:rng.randrange(len(lines[i]))]
        else:
            lines[i] = rng.choice(SPECIAL) + lines[i]
    return b"\n".join(lines)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_mutant_reads_as_dnspython_reads_it(seed, tmp_path):
    rng = random.Random(seed)
    source = SOURCES[seed % len(SOURCES)]
    path = tmp_path / source.path.name
    path.write_bytes(_mutate(source.path.read_bytes(), rng))
    config = ZoneSetConfig((ZoneSource(source.origin_text, path, path.name),))
    fast = bake_outcome(config, tmp_path / "fast.bin")  # a failure of the core: core.Failed
    assert fast == bake_outcome(config, tmp_path / "dnspython.bin", dnspython_reads=True)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_mutant_is_read_the_same_on_one_thread_and_two(seed, tmp_path, monkeypatch):
    """The same bytes, or the same reason to decline (test_reading_threads.py)."""
    rng = random.Random(seed)
    source = SOURCES[seed % len(SOURCES)]
    path = tmp_path / source.path.name
    path.write_bytes(_mutate(source.path.read_bytes(), rng))
    config = ZoneSetConfig((ZoneSource(source.origin_text, path, path.name),))
    outcomes = []
    for threads in ("1", "2"):
        monkeypatch.setenv("ZONEBAKE_BAKE_THREADS", threads)
        data = tmp_path / f"zonedata-{threads}.bin"
        try:
            core.bake(config, data, hand_over=False)
            outcomes.append(data.read_bytes())
        except (core.Unreadable, CompileError) as why:
            outcomes.append(str(why))
    assert outcomes[0] == outcomes[1]
