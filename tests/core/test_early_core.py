"""A `zonebake build` begins its core before the driver's imports, on the manifest the last
build of the same command line recorded in the output directory (compiler/core/early.py);
the driver takes it over where its own manifest is the same text, and stops it where not.
Either way the outputs are those of a build into an empty directory, and nothing of the
early core is left: no process, no scratch directory."""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path

import pytest

from blob import server_data
from buildsigned import ZONE, signed_set
from conftest import ZONES, run_zonebake
from zonebake import build
from zonebake.config import Primary, load_toml, zones_from_args
from zonebake.core import early, run as core
from zonebake.progress import Progress
from zonebake.toolchain.cachehome import core_directories, zonebake_cache

ORIGIN = "early.example."
TAKEN = "begun before the driver"  # the driver's count when it takes the early core over


def write_zone(path: Path, hosts: int, extra: tuple[str, ...] = ()) -> None:
    lines = ["$TTL 300", "@ SOA ns hostmaster 1 7200 900 1209600 300", "@ NS ns",
             "ns A 192.0.2.1", *(f"host{i} A 10.0.{i >> 8}.{i & 255}" for i in range(hosts))]
    path.write_text("\n".join([*lines, *extra]) + "\n")


@pytest.fixture
def command(monkeypatch, tmp_path):
    """This process as a `zonebake build` command run in tmp_path: early.py's record of the
    command begins empty, and any early core left is stopped after."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(early, "_command", None)
    monkeypatch.setattr(early, "_pending", None)
    yield tmp_path
    early.stop_early()


def build_into(outdir: Path, config) -> list[str]:
    """`zonebake build` in this process, as the command runs it after its start: the names of
    the core's steps reported."""
    progress = Progress(out=None)
    build.build(config, outdir, progress=progress)
    return [detail.name for stage in progress.stages for detail in stage.details]


def assert_as_built_afresh(outdir: Path, config, fresh: Path) -> None:
    """OUTDIR holds what a build of CONFIG into the empty FRESH writes, and nothing of an
    early core."""
    assert TAKEN not in build_into(fresh, config)
    assert server_data(outdir / "zonebake-server") == server_data(fresh / "zonebake-server")
    assert (outdir / "zonedata.c").read_bytes() == (fresh / "zonedata.c").read_bytes()
    if not os.environ.get("ZONEBAKE_SANITIZE"):  # its debug information names the directory
        assert (outdir / "zonebake-server").read_bytes() == \
            (fresh / "zonebake-server").read_bytes()
    assert not [p.name for p in outdir.iterdir() if p.name.startswith(".zonebake-early")]


def test_the_next_build_takes_over_the_core_begun_early(command):
    zone, out = command / "z.zone", command / "out"
    args = ["build", "-q", "--zone", f"{ORIGIN}={zone}", "-o", str(out)]
    config = zones_from_args([f"{ORIGIN}={zone}"])
    write_zone(zone, 300)
    early.start(out, args)
    assert early._pending is None  # nothing recorded yet
    assert TAKEN not in build_into(out, config)
    recorded = (out / early.NEXT_FILE).read_text()
    assert recorded.startswith(early.MAGIC + "\n") and "\0scratch/signatures\n" in recorded
    assert f"\n-o\n{early.OUT}\n" in recorded and f"{early.OUT}/zonedata.state\n" in recorded

    write_zone(zone, 300, ("added A 192.0.2.7",))
    early.start(out, args)
    begun = early._pending
    assert begun is not None and begun.process.poll() is None  # holding for the driver
    assert build_into(out, config).count(TAKEN) == 1
    assert early._pending is None and begun.process.wait(timeout=30) == 0
    assert_as_built_afresh(out, config, command / "fresh")

    # Into a copy of the output directory, under another name, as a CI job restores it.
    write_zone(zone, 300, ("added A 192.0.2.8",))
    copy = command / "copy"
    os.system(f"cp -a {out} {copy}")
    early.start(copy, [*args[:-1], str(copy)])
    assert early._pending is not None
    assert build_into(copy, config).count(TAKEN) == 1
    assert_as_built_afresh(copy, config, command / "fresh-copy")


def test_a_manifest_that_changed_stops_the_early_core(command):
    """The same command line, but a setting its configuration file changed: the driver's
    manifest is not the one recorded."""
    zone, out = command / "z.zone", command / "out"
    args = ["build", "-c", "zonebake.toml", "-o", str(out)]
    config = zones_from_args([f"{ORIGIN}={zone}"])
    write_zone(zone, 300)
    early.start(out, args)
    build_into(out, config)

    write_zone(zone, 300, ("added A 192.0.2.7",))
    changed = dataclasses.replace(config, server=dataclasses.replace(
        config.server, minimal_responses=not config.server.minimal_responses))
    early.start(out, args)
    begun = early._pending
    assert begun is not None
    assert TAKEN not in build_into(out, changed)
    assert begun.process.poll() is not None  # killed, before the driver's own ran
    assert_as_built_afresh(out, changed, command / "fresh")


def test_a_zone_signed_at_a_fixed_time_is_begun_early_at_that_time_only(command, monkeypatch):
    """The build's signing time is SOURCE_DATE_EPOCH's, in the manifest (its signatures'
    inception and expiration): a build at another, or at its own time, begins none."""
    out = command / "out"
    toml = signed_set(command)
    config = load_toml(toml)
    args = ["build", "-c", str(toml), "-o", str(out)]
    epoch = int(time.time()) // 86400 * 86400  # this day's start: signatures valid now
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(epoch))
    early.start(out, args)
    build_into(out, config)
    assert f"\nsign nsec3 " in (out / early.NEXT_FILE).read_text()

    (command / "example.com.zone").write_text(ZONE + "added A 192.0.2.7\n")
    early.start(out, args)
    assert early._pending is not None
    assert build_into(out, config).count(TAKEN) == 1
    assert_as_built_afresh(out, config, command / "fresh")

    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(epoch - 86400))
    early.start(out, args)
    assert early._pending is None
    build_into(out, config)
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    early.start(out, args)
    assert early._pending is None
    build_into(out, config)
    assert not (out / early.NEXT_FILE).exists()  # the next build's times are its own


def test_a_zone_with_a_primary_records_no_manifest(tmp_path):
    """The driver transfers such a zone (transfer.py) before the core reads its file: after
    an early core would have read it."""
    zone = tmp_path / "z.zone"
    write_zone(zone, 5)
    config = zones_from_args([f"{ORIGIN}={zone}"])
    state = core.State(tmp_path / ".state", tmp_path / "state", None)
    program = Path(zonebake_cache()) / "core-0123456789abcdef"
    assert core.next_manifest(config, False, program, state) is not None
    following = dataclasses.replace(config, zones=(dataclasses.replace(
        config.zones[0], primary=Primary("192.0.2.53", 53)),))
    assert core.next_manifest(following, False, program, state) is None


def test_an_early_core_no_build_takes_is_stopped(command):
    zone, out = command / "z.zone", command / "out"
    args = ["build", "--zone", f"{ORIGIN}={zone}", "-o", str(out)]
    write_zone(zone, 50)
    early.start(out, args)
    build_into(out, zones_from_args([f"{ORIGIN}={zone}"]))

    early.start(out, [*args, "--lenient"])  # another command line: nothing begun
    assert early._pending is None
    early.start(out, args)
    begun = early._pending
    assert begun is not None and Path(begun.scratch).is_dir()
    early.stop_early()  # as the command does when it failed before its build
    assert begun.process.poll() is not None and not Path(begun.scratch).exists()


def test_a_zone_the_fast_reader_declines_is_read_after_the_early_core(command):
    """The early core declines the zone as the driver's would: dnspython reads it, and the
    core runs again on its records."""
    source = ZONES / "native" / "declined" / "generate" / "example.test.zone"
    zone, out = command / "g.zone", command / "out"
    zone.write_text(source.read_text())
    args = ["build", "--zone", f"example.test.={zone}", "-o", str(out)]
    config = zones_from_args([f"example.test.={zone}"])
    early.start(out, args)
    build_into(out, config)
    zone.write_text(source.read_text() + "added A 192.0.2.7\n")
    early.start(out, args)
    assert early._pending is not None
    steps = build_into(out, config)
    assert TAKEN in steps
    assert_as_built_afresh(out, config, command / "fresh")


def test_the_command_rebuilds_with_its_early_core(tmp_path):
    """`zonebake build` twice, the zone changed between: the second is the build of the
    changed zone into an empty directory."""
    zone, out = tmp_path / "z.zone", tmp_path / "out"
    write_zone(zone, 300)
    args = ["build", "-q", "--zone", f"{ORIGIN}={zone}", "-o", str(out)]
    assert run_zonebake(*args, cwd=tmp_path).returncode == 0
    assert (out / early.NEXT_FILE).is_file()
    write_zone(zone, 300, ("added A 192.0.2.7",))
    again = run_zonebake(*args, cwd=tmp_path)
    assert again.returncode == 0 and again.stderr == ""
    fresh = run_zonebake(*args[:-1], str(tmp_path / "fresh"), cwd=tmp_path)
    assert fresh.returncode == 0
    assert server_data(out / "zonebake-server") == \
        server_data(tmp_path / "fresh" / "zonebake-server")
    assert sorted(p.name for p in out.iterdir()) == [
        "zonebake-server", "zonedata.c", "zonedata.image", "zonedata.next", "zonedata.state"]


def test_what_the_output_directory_names_runs_only_as_the_build_made_it(command):
    """The output directory may have come from elsewhere (a cache a CI job restores): its
    record is run only with the core's program from this user's cache, writing nowhere but
    the output directory and the scratch one."""
    zone, out = command / "z.zone", command / "out"
    args = ["build", "--zone", f"{ORIGIN}={zone}", "-o", str(out)]
    write_zone(zone, 50)
    early.start(out, args)
    build_into(out, zones_from_args([f"{ORIGIN}={zone}"]))
    recorded = (out / early.NEXT_FILE).read_text()
    program = recorded.split("\n")[4 + len(args)]
    assert str(Path(program).parent) in core_directories()

    marker = command / "ran"
    script = command / "core-0123456789abcdef"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    elsewhere = recorded.replace(f"\n{program}\n", f"\n{script}\n")
    # A folder named as the fallback in the temporary directory, elsewhere.
    named = command / f"zonebake-{os.getuid()}"
    named.mkdir(mode=0o755)
    shutil.copy(script, named / script.name)
    named_elsewhere = recorded.replace(f"\n{program}\n", f"\n{named / script.name}\n")
    outside = recorded.replace(f"state\n{early.OUT}/", f"state\n{command}/")
    escaping = recorded.replace(f"state\n{early.OUT}/", f"state\n{early.OUT}/../")
    signing = recorded.replace("\nend", "\nwrite-signed /tmp/signed.zone\nend")
    for text in (elsewhere, named_elsewhere, outside, escaping, signing):
        assert text != recorded
        (out / early.NEXT_FILE).write_text(text)
        early.start(out, args)
        assert early._pending is None
    (out / early.NEXT_FILE).write_text(recorded)
    early.start(out, args)
    assert early._pending is not None
    assert not marker.exists()
