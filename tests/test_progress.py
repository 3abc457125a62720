"""Progress on stderr (compiler/progress.py): nothing for a build under five seconds; past
that, a line every few seconds with the stage, the count, the total and the rate, each step
of the native baker as it ends, and a summary of every stage's time; nothing at all with -q.
The tree, perfect hash and layout stages count each of their walks over the items in a unit
of its own, and a compile keeps what earlier stages made out of the collector's full passes
(long silences of their own). The clock is a fake one, moved by the test, but in the
end-to-end builds."""

from __future__ import annotations

import gc
import io
import re
import subprocess
import sys
from dataclasses import dataclass, field

import dns.name
import pytest

from conftest import ZONES
from zonebake import cli, phash, progress as progress_module
from zonebake.build import compile_zoneset
from zonebake.chaos import chaos_answers
from zonebake.config import load_toml, zones_from_args
from zonebake.errors import CompileError
from zonebake.layout import pack
from zonebake.progress import EVERY, QUIET_FOR, Progress
from zonebake.config import ZoneSource
from zonebake.parse import parse_zone
from zonebake.tree import build_tree
from zonebake.validate import build_zone

# One DNAME (old -> new) over four owner names: example.test., ns1, old and www.new.
DNAME_SET = ZONES / "native" / "declined" / "dname" / "zonebake.toml"


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run_stage(progress: Progress, clock: Clock, items: int, total: int | None,
              seconds_each: float) -> None:
    with progress.stage("answers", "names"):
        for _ in range(items):
            progress.tick(total)
            clock.now += seconds_each


def test_a_short_build_says_nothing():
    out, clock = io.StringIO(), Clock()
    progress = Progress(out=out, clock=clock)
    run_stage(progress, clock, 5000, 5000, 0.0001)
    progress.finish()
    assert out.getvalue() == ""


def test_a_long_stage_reports_count_total_and_rate():
    out, clock = io.StringIO(), Clock()
    progress = Progress(out=out, clock=clock)
    run_stage(progress, clock, 10240, 20000, 0.001)  # 1,000 names a second: 10.24 s in all
    lines = out.getvalue().splitlines()
    assert lines, "a stage past five seconds reports"
    # The first line comes once the build has run QUIET_FOR seconds, at a multiple of 1024.
    assert lines[0] == "zonebake: answers: 5120/20000 names, 1000/s"
    assert len(lines) == 1 + int((10.24 - QUIET_FOR) // EVERY)


def test_the_bakers_steps_are_said_past_five_seconds_and_summed_up():
    out, clock = io.StringIO(), Clock()
    progress = Progress(out=out, clock=clock)
    with progress.stage("native bake"):
        clock.now += 1.5
        progress.detail("read", 1.5, 3000, "records")
        clock.now += 4.0
        progress.detail("answers", 4.0, 1000, "names")
    with progress.stage("cc"):
        clock.now += 1.0
    progress.finish()
    lines = out.getvalue().splitlines()
    assert lines[0] == "zonebake: native bake: answers: 1000 names in 4.0 s, 250/s"
    assert lines[1].startswith("zonebake: built in 6.5 s (native bake 5.5 s (read 1.5 s, "
                               "answers 4.0 s), cc 1.0 s); peak memory ")
    assert len(lines) == 2


def test_quiet_says_nothing_however_long():
    clock = Clock()
    progress = Progress(out=None, clock=clock)
    run_stage(progress, clock, 4096, None, 1.0)
    with progress.stage("native bake"):
        progress.detail("read", 1.0, 1, "records")
    progress.finish()  # no output stream to write to: it would raise if it tried


def test_quiet_build_prints_nothing(tmp_path):
    result = subprocess.run([sys.executable, "-m", "zonebake", "build", "-q", "--zone",
                             f"example.={ZONES / 'example.zone'}", "-o", str(tmp_path / "out")],
                            capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stderr == ""


def test_a_step_counts_from_zero_in_its_own_unit():
    out, clock = io.StringIO(), Clock()
    progress = Progress(out=out, clock=clock)
    with progress.stage("tree"):
        for _ in progress.each(range(6144), 6144, "owner names added"):
            clock.now += 0.001  # 1,000 a second: past QUIET_FOR at 5,120
        for _ in progress.each(range(8192), 8192, "names checked for cuts"):
            clock.now += 0.0005  # 2,000 a second, from the step's own start
    assert out.getvalue().splitlines() == [
        "zonebake: tree: 5120/6144 owner names added, 1000/s",
        # EVERY seconds after the first line, at the next multiple of 1024.
        "zonebake: tree: 8192/8192 names checked for cuts, 2000/s",
    ]


class Walks:
    """An `each` for the stages that notes every walk: [unit, total, items gone by]."""

    def __init__(self):
        self.walks = []

    def __call__(self, items, total, unit):
        walk = [unit, total, 0]
        self.walks.append(walk)
        for item in items:
            walk[2] += 1
            yield item


@pytest.fixture(scope="module")
def dname_set():
    return compile_zoneset(load_toml(DNAME_SET))


def test_the_tree_counts_every_walk_over_the_names(dname_set):
    walks = Walks()
    tree = build_tree(list(dname_set.tree.zones), walks)
    assert list(tree.nodes.items()) == list(dname_set.tree.nodes.items())
    assert walks.walks == [
        ["owner names added", 4, 4],
        # ... and new.example.test., an empty non-terminal.
        ["names checked against the DNAME of old.example.test.", 5, 5],
        ["names checked for cuts", 5, 5],
        ["sort keys made", 6, 6],  # www.old.example.test., the image of www.new, is a node too
        ["nodes made", 6, 6],
    ]
    assert len(tree.nodes) == 6


def filled_buckets(keys: list[bytes], seed: int, nbuckets: int) -> int:
    return len({phash.bucket_of(phash.zb_hash(key, seed), nbuckets) for key in keys})


def test_the_perfect_hash_counts_keys_hashed_and_buckets_placed(dname_set):
    keys = [b.key for b in dname_set.bodies]
    walks = Walks()
    ph = phash.build_perfect_hash(keys, each=walks)
    assert ph == dname_set.phash
    filled = filled_buckets(keys, ph.seed, len(ph.pilots))
    assert walks.walks == [["keys hashed", 6, 6], ["buckets placed", filled, filled]]


def test_a_seed_tried_again_says_so_and_counts_from_zero(dname_set, monkeypatch):
    find_pilot, calls = phash._find_pilot, []

    def failing_first(member_hashes, slots):
        calls.append(1)
        return None if len(calls) == 1 else find_pilot(member_hashes, slots)

    monkeypatch.setattr(phash, "_find_pilot", failing_first)
    keys = [b.key for b in dname_set.bodies]
    walks = Walks()
    ph = phash.build_perfect_hash(keys, each=walks)
    assert ph.seed == 1
    first, again = (filled_buckets(keys, seed, len(ph.pilots)) for seed in (0, 1))
    assert walks.walks == [
        ["keys hashed", 6, 6], ["buckets placed", first, 1],  # the first bucket failed
        ["keys hashed (seed 1)", 6, 6], ["buckets placed (seed 1)", again, again],
    ]


def test_the_layout_counts_slots_and_answers(dname_set):
    walks = Walks()
    layout = pack(dname_set.bodies, dname_set.phash,
                  chaos_answers(dname_set.config.server), walks)
    assert layout == dname_set.layout
    slots, answers = layout.nnodes, layout.nanswers
    assert walks.walks == [["slots gathered", slots, slots], ["answers placed", answers, answers],
                           ["slots written", slots, slots], ["answers written", answers, answers]]
    assert slots == len(dname_set.phash.slots)


PROGRESS_LINE = re.compile(r"^zonebake: (tree|perfect hash|layout): (\d+)/(\d+) ([^,]+)"
                           r"(, \d+/s)?$")


def loud_build(tmp_path, monkeypatch, capsys, *args: str) -> str:
    """The Python pipeline's build of the DNAME set, with a line for every item counted."""
    monkeypatch.setenv("ZONEBAKE_NATIVE", "0")
    monkeypatch.setattr(progress_module, "QUIET_FOR", 0.0)
    monkeypatch.setattr(progress_module, "EVERY", 0.0)
    monkeypatch.setattr(progress_module, "LOOK_EVERY", 1)
    assert cli.main(["build", *args, "-c", str(DNAME_SET), "-o", str(tmp_path / "out")]) == 0
    return capsys.readouterr().err


def test_a_python_build_says_how_far_the_tree_hash_and_layout_are(tmp_path, monkeypatch,
                                                                   capsys, dname_set):
    lines = loud_build(tmp_path, monkeypatch, capsys).splitlines()
    ours = [line for line in lines if line.startswith(("zonebake: tree: ",
                                                       "zonebake: perfect hash: ",
                                                       "zonebake: layout: "))]
    said = [PROGRESS_LINE.match(line) for line in ours]
    assert all(said), ours
    # The lines of each walk, one per item: ((stage, unit, total), the counts said).
    walks: list[tuple[tuple[str, str, int], list[int]]] = []
    for line in said:
        walk = (line[1], line[4], int(line[3]))
        if not walks or walks[-1][0] != walk:
            walks.append((walk, []))
        walks[-1][1].append(int(line[2]))
    assert all(counts == list(range(1, total + 1)) for (_, _, total), counts in walks)
    keys = [b.key for b in dname_set.bodies]
    buckets = filled_buckets(keys, dname_set.phash.seed, len(dname_set.phash.pilots))
    answers = dname_set.layout.nanswers
    assert [walk for walk, _ in walks] == [
        ("tree", "owner names added", 4),
        ("tree", "names checked against the DNAME of old.example.test.", 5),
        ("tree", "names checked for cuts", 5),
        ("tree", "sort keys made", 6),
        ("tree", "nodes made", 6),
        ("perfect hash", "keys hashed", 6),
        ("perfect hash", "buckets placed", buckets),
        ("layout", "slots gathered", 6),
        ("layout", "answers placed", answers),
        ("layout", "slots written", 6),
        ("layout", "answers written", answers),
    ]
    assert lines[-1].startswith("zonebake: built in ")


def test_a_quiet_python_build_says_nothing_however_loud(tmp_path, monkeypatch, capsys):
    assert loud_build(tmp_path, monkeypatch, capsys, "-q") == ""


@dataclass
class NotingCollector(Progress):
    """Notes, at every item counted, whether the cyclic collector is on."""
    collecting: list[bool] = field(default_factory=list)

    def tick(self, total=None):
        self.collecting.append(gc.isenabled())
        super().tick(total)


def test_a_compile_runs_without_the_cyclic_collector_and_turns_it_back_on():
    progress = NotingCollector(out=None)
    assert gc.isenabled()
    compiled = compile_zoneset(load_toml(DNAME_SET), progress=progress)
    assert progress.collecting and not any(progress.collecting)
    assert gc.isenabled()
    # What it made waits in the oldest generation, not the youngest, which the next
    # collection would go through whole.
    made = {id(o) for o in gc.get_objects(generation=2)}
    assert id(compiled.layout) in made and id(compiled.tree) in made
    assert len(gc.get_objects(generation=0)) < 1000 < len(made)


def test_a_compile_that_fails_turns_it_back_on_too():
    with pytest.raises(CompileError):
        compile_zoneset(zones_from_args([f"example.={ZONES / 'broken' / 'no-soa.zone'}"]))
    assert gc.isenabled()


def test_a_compile_leaves_the_collector_off_when_it_was():
    gc.disable()
    try:
        compile_zoneset(load_toml(DNAME_SET))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_check_counts_the_records_it_groups_and_every_walk_over_the_names():
    source = ZoneSource(dns.name.from_text("example."), ZONES / "example.zone",
                        str(ZONES / "example.zone"))
    parsed = parse_zone(source)
    walks = Walks()
    zone, warnings = build_zone(parsed, each=walks)
    plain_zone, plain_warnings = build_zone(parsed)
    assert list(zone.nodes) == list(plain_zone.nodes) and warnings == plain_warnings
    records, names = len(parsed.records), len(zone.nodes)
    assert walks.walks == [["records grouped into RRsets", records, records]] + [
        [f"names checked for {check}", names, names]
        for check in ("SOA", "CNAME", "DNAME", "glue", "warnings")]
    assert records > names > 1
