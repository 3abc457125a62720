"""One build at a time into an output directory (compiler/toolchain/outdirlock.py): a build
into a directory another build holds waits for it; builds started together each write a
whole build; what builds killed on their way left there is removed by the next, whose
outputs are a full build's."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from blob import server_data
from conftest import build_set
from gen import CHANGE_KINDS, ORIGIN, change_zone, write_zone

NAMES = 3000
OUTPUTS = ("zonebake-server", "zonedata.state", "zonedata.c")  # the first two: the build


def outputs(outdir: Path) -> dict[str, bytes]:
    """What a build wrote: the server's data (a sanitized server's debug information names
    the directory it was built in), its state, zonedata.c."""
    found = {name: (outdir / name).read_bytes() for name in OUTPUTS[1:]}
    return {OUTPUTS[0]: server_data(outdir / OUTPUTS[0]), **found}


def leftovers(outdir: Path) -> list[str]:
    return sorted(name for name in os.listdir(outdir) if name.startswith("."))


def start_build(zone: Path, outdir: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "zonebake", "build", "--zone",
                             f"{ORIGIN}={zone}", "-o", str(outdir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def zone(tmp_path_factory) -> Path:
    """The zone file every build of this module reads (zonedata.c names it)."""
    return tmp_path_factory.mktemp("zone") / "zone"


@pytest.fixture(scope="module")
def texts(zone) -> list[str]:
    """The zone, and each of the scale report's one-record changes of it."""
    write_zone(zone, NAMES)
    text = zone.read_text()
    return [text, *(change_zone(text, kind, NAMES) for kind in CHANGE_KINDS)]


@pytest.fixture(scope="module")
def full_builds(zone, texts, tmp_path_factory) -> list[dict[str, bytes]]:
    """Each of `texts` built into an empty directory."""
    made = []
    for i, text in enumerate(texts):
        zone.write_text(text)
        outdir = tmp_path_factory.mktemp(f"full{i}") / "out"
        build_set(outdir, "--zone", f"{ORIGIN}={zone}")
        made.append(outputs(outdir))
    return made


def test_a_build_waits_for_the_build_holding_its_directory(zone, texts, full_builds, tmp_path):
    outdir = tmp_path / "out"
    zone.write_text(texts[0])
    build_set(outdir, "--zone", f"{ORIGIN}={zone}")
    zone.write_text(texts[1])
    held = os.open(outdir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # as another build holds it
        waiting = start_build(zone, outdir)
        said = ""
        deadline = time.monotonic() + 30
        while "waiting" not in said and time.monotonic() < deadline:
            if select.select([waiting.stderr], [], [], 1)[0]:
                said += waiting.stderr.readline()
        assert said == f"zonebake: waiting for another build into {outdir} to end\n"
        time.sleep(0.3)
        assert waiting.poll() is None
        assert outputs(outdir) == full_builds[0]  # nothing written while it waits
    finally:
        os.close(held)  # the lock goes with it
    assert waiting.wait(60) == 0, waiting.stderr.read()
    assert outputs(outdir) == full_builds[1]
    assert leftovers(outdir) == []


def test_builds_started_together_each_write_a_whole_build(zone, texts, full_builds, tmp_path):
    """Each round, two builds of different zone files into one directory at once: both
    succeed, the directory holds one of the two (its server and state: zonedata.c names
    the file), and the build over it is a full build's."""
    zones = [tmp_path / "a", tmp_path / "b"]
    outdir = tmp_path / "out"
    for round_ in range(3):
        pair = (round_ + 1, round_ + 2)
        for path, i in zip(zones, pair):
            path.write_text(texts[i])
        builds = [start_build(path, outdir) for path in zones]
        for build in builds:
            assert build.wait(60) == 0, build.stderr.read()
            build.stderr.close()
        found = outputs(outdir)
        assert any(all(found[name] == full_builds[i][name] for name in OUTPUTS[:2])
                   for i in pair), round_
        assert leftovers(outdir) == []
    zone.write_text(texts[0])
    build_set(outdir, "--zone", f"{ORIGIN}={zone}")
    assert outputs(outdir) == full_builds[0]


def test_what_killed_builds_left_is_removed_and_nothing_else(zone, texts, tmp_path):
    outdir = tmp_path / "out"
    zone.write_text(texts[0])
    build_set(outdir, "--zone", f"{ORIGIN}={zone}")
    # As a build killed on its way leaves them: its scratch directories (the early core's,
    # the compile's) and temporary files; and what is the user's.
    (outdir / ".zonebake-early-4194000").mkdir()
    (outdir / ".zonebake-early-4194000" / "manifest").write_text("zone\n")
    (outdir / ".zonebake-cc-k1b2").mkdir()
    for name in (".zonebake-server.tmp", ".zonedata.state.tmp", ".zonedata.next.4194000"):
        (outdir / name).write_bytes(b"left")
    (outdir / ".keep").write_text("the user's")
    (outdir / "NOTES").write_text("the user's")
    build_set(outdir, "--zone", f"{ORIGIN}={zone}")
    assert leftovers(outdir) == [".keep"]
    assert (outdir / "NOTES").read_text() == "the user's"


@pytest.mark.parametrize("signal_", [signal.SIGKILL, signal.SIGINT])
def test_a_build_killed_anywhere_leaves_a_directory_the_next_build_builds_over(
        signal_, zone, texts, full_builds, tmp_path):
    """A rebuild stopped at moments from its start to its end: each output in the directory
    is the earlier build's or the new one's, whole (the server is put in place before the
    state that describes it: a state that is not the server's makes the next build a full
    one); the next build over it, of another change, writes a full build's outputs and
    leaves nothing else there."""
    outdir = tmp_path / "out"
    zone.write_text(texts[0])
    build_set(outdir, "--zone", f"{ORIGIN}={zone}")
    last = 0
    for n, delay in enumerate((0.005, 0.02, 0.04, 0.07, 0.1, 0.15, 0.25)):
        killed = 1 + n % (len(texts) - 1)
        zone.write_text(texts[killed])
        build = start_build(zone, outdir)
        time.sleep(delay)
        build.send_signal(signal_)
        code = build.wait(60)
        build.stderr.close()
        found = outputs(outdir)
        if code == 0:
            assert found == full_builds[killed], delay
        for name in OUTPUTS:
            assert found[name] in (full_builds[last][name], full_builds[killed][name]), \
                (delay, code, name)
        nxt = (killed + 1) % len(texts)
        zone.write_text(texts[nxt])
        build_set(outdir, "--zone", f"{ORIGIN}={zone}")
        assert outputs(outdir) == full_builds[nxt], delay
        assert leftovers(outdir) == [], delay
        last = nxt
