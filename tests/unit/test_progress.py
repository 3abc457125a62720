"""Progress on stderr (compiler/progress.py): nothing for a build under five seconds; past
that, a line every few seconds with the stage, the count and the rate, each phase of the
core as it ends, and a summary of every stage's time; nothing at all with -q. The clock is a
fake one, moved by the test, but in the end-to-end builds."""

from __future__ import annotations

import io
import subprocess
import sys

from conftest import ZONES
from zonebake import cli, progress as progress_module
from zonebake.progress import EVERY, QUIET_FOR, Progress


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


def test_the_cores_phases_are_said_past_five_seconds_and_summed_up():
    out, clock = io.StringIO(), Clock()
    progress = Progress(out=out, clock=clock)
    with progress.stage("core"):
        clock.now += 1.5
        progress.detail("read", 1.5, 3000, "records")
        clock.now += 4.0
        progress.detail("answers", 4.0, 1000, "names")
    with progress.stage("cc"):
        clock.now += 1.0
    progress.finish()
    lines = out.getvalue().splitlines()
    assert lines[0] == "zonebake: core: answers: 1000 names in 4.0 s, 250/s"
    assert lines[1].startswith("zonebake: built in 6.5 s (core 5.5 s (read 1.5 s, "
                               "answers 4.0 s), cc 1.0 s); peak memory ")
    assert len(lines) == 2


def test_quiet_says_nothing_however_long():
    clock = Clock()
    progress = Progress(out=None, clock=clock)
    run_stage(progress, clock, 4096, None, 1.0)
    with progress.stage("core"):
        progress.detail("read", 1.0, 1, "records")
    progress.finish()  # no output stream to write to: it would raise if it tried


def test_quiet_build_prints_nothing(tmp_path):
    result = subprocess.run([sys.executable, "-m", "zonebake", "build", "-q", "--zone",
                             f"example.={ZONES / 'example.zone'}", "-o", str(tmp_path / "out")],
                            capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stderr == ""




def test_a_zone_file_dnspython_reads_is_counted(tmp_path, monkeypatch, capsys):
    """A file the fast reader leaves (here for its $GENERATE) is read by dnspython, whose
    records are counted in the core's stage."""
    zone = tmp_path / "example.zone"
    zone.write_text("$TTL 300\n@ SOA ns1 hostmaster 1 7200 900 1209600 300\n@ NS ns1\n"
                    "ns1 A 192.0.2.1\n$GENERATE 1-3000 host$ A 192.0.2.2\n")
    monkeypatch.setattr(progress_module, "QUIET_FOR", 0.0)
    monkeypatch.setattr(progress_module, "EVERY", 0.0)
    assert cli.main(["build", "--zone", f"example.={zone}", "-o", str(tmp_path / "out")]) == 0
    lines = capsys.readouterr().err.splitlines()
    counted = [line for line in lines if line.startswith("zonebake: core: ")
               and "records read by dnspython" in line]
    assert counted[0].startswith("zonebake: core: 1024 records read by dnspython")
    assert counted[-1].startswith("zonebake: core: 2048 records read by dnspython")  # of 3003
    assert lines[-1].startswith("zonebake: built in ")


def test_signatures_made_outside_the_core_are_told_along_the_way():
    """The driver signs and verifies for the core, in the core's stage: how far, with the
    rate since the step began, at most every few seconds, once the build has run a while."""
    out, clock = io.StringIO(), Clock()
    progress = Progress(out=out, clock=clock)
    with progress.stage("core"):
        for done in range(0, 100_001, 10_000):  # 10,000 a second
            progress.along("signing", done, 100_000, "signatures")
            clock.now += 1.0
    lines = out.getvalue().splitlines()
    # From QUIET_FOR seconds of the build on, every EVERY seconds.
    assert lines == ["zonebake: core: signing: 50000/100000 signatures, 10000/s",
                     "zonebake: core: signing: 100000/100000 signatures, 10000/s"]


def test_a_count_the_core_reports_is_said_as_a_count():
    """The regions a build over an earlier one copied are a count, not a step that took
    0.0 s."""
    out = io.StringIO()
    times = iter([0.0, 0.0, 10.0, 10.0, 11.0, 11.0, 11.0])
    progress = Progress(out=out, clock=lambda: next(times))
    with progress.stage("core"):
        progress.detail("read", 1.0, 5, "records")
        progress.detail("regions reused", 0.0, 2805, "regions")
    assert str(progress.stages[0]) == "core 11.0 s (read 1.0 s, regions reused 2,805)"
    assert "core: regions reused: 2805 regions\n" in out.getvalue()
