"""The build writes the data once, into the server (cc.EarlyServer.place): the core is given
the server's temporary file, the placeholder's link around a hole the data's size, and no
zonedata.bin is left beside it. The next build copies what it can from the data inside that
server. Where elfsplice refuses the link, the data goes to a file of its own and is spliced
or linked in: the same server."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from blob import server_data
from buildsigned import ZONE, signed_set
from conftest import ZONES, data_beside
from zonebake import build
from zonebake.config import load_toml, zones_from_args
from zonebake.progress import Progress
from zonebake.toolchain import cc, elfsplice, scratch


def write_zone(path: Path, hosts: int) -> None:
    lines = ["$TTL 300", "@ SOA ns hostmaster 1 7200 900 1209600 300", "@ NS ns",
             "ns A 192.0.2.1"]
    lines += [f"host{i} A 10.0.{i >> 8}.{i & 255}" for i in range(hosts)]
    path.write_text("\n".join(lines) + "\n")


def build_into(outdir: Path, zone: Path) -> list[int]:
    """`zonebake build` in this process; the counts of regions reused the core reported."""
    progress = Progress(out=None)
    build.build(zones_from_args([f"inside.example.={zone}"]), outdir, progress=progress)
    return [detail.count for stage in progress.stages for detail in stage.details
            if detail.name == "regions reused"]


def assert_same_outputs(one: Path, other: Path) -> None:
    """The same server (but where a sanitizer build's debug information names the directory
    it was built in: then the same data inside it), zonedata.c and state."""
    assert server_data(one / "zonebake-server") == server_data(other / "zonebake-server")
    names = ["zonedata.c", "zonedata.state"]
    if not os.environ.get("ZONEBAKE_SANITIZE"):
        names.append("zonebake-server")
    for name in names:
        assert (one / name).read_bytes() == (other / name).read_bytes(), name


@pytest.fixture
def spies(monkeypatch):
    """The calls of elfsplice's prepare (the core writes into the server) and splice."""
    calls = {"prepare": [], "splice": []}
    for name in calls:
        real = getattr(elfsplice, name)

        def spy(*args, real=real, name=name):
            calls[name].append(args)
            return real(*args)
        monkeypatch.setattr(elfsplice, name, spy)
    return calls


def test_the_data_is_written_into_the_server_alone(tmp_path, spies, monkeypatch):
    zone = tmp_path / "inside.zone"
    write_zone(zone, 600)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "zonedata.bin").write_bytes(b"an earlier version's data")
    assert build_into(tmp_path / "out", zone) == []  # nothing to build over
    assert len(spies["prepare"]) == 1 and spies["splice"] == []
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "zonebake-server", "zonedata.c", "zonedata.image", "zonedata.state"]
    # The server the assembler and the linker make from zonedata.c and that data.
    data = data_beside(tmp_path / "out")
    memory, scratches = tmp_path / "shm", []  # the data object is written in memory
    memory.mkdir()
    monkeypatch.setattr(scratch, "RAM_DIRECTORY", memory)
    made = scratch._make_locked
    monkeypatch.setattr(scratch, "_make_locked", lambda parent: scratches.append(made(parent))
                        or scratches[-1])
    cc.compile_server(tmp_path / "out" / "zonedata.c", tmp_path / "full", splice=False)
    assert len(scratches) == 1 and scratches[0][0].parent == memory
    assert os.listdir(memory) == []  # and nothing left there
    assert (tmp_path / "full").read_bytes() == \
        (tmp_path / "out" / "zonebake-server").read_bytes()
    at, length = elfsplice.span(tmp_path / "out" / "zonebake-server")
    assert at % 4096 == 0 and length == data.stat().st_size


def test_a_build_over_an_earlier_one_copies_from_its_server(tmp_path, spies):
    zone = tmp_path / "inside.zone"
    write_zone(zone, 3000)
    build_into(tmp_path / "out", zone)
    write_zone(zone, 3001)  # one name more
    reused = build_into(tmp_path / "out", zone)
    assert len(reused) == 1 and reused[0] > 0
    build_into(tmp_path / "full", zone)
    assert_same_outputs(tmp_path / "out", tmp_path / "full")
    assert spies["splice"] == []
    assert not list((tmp_path / "out").glob(".*"))  # no temporary file or directory left


def test_an_earlier_server_without_its_data_gives_a_full_build(tmp_path):
    zone = tmp_path / "inside.zone"
    write_zone(zone, 3000)
    build_into(tmp_path / "out", zone)
    shutil.copy(ZONES / "example.zone", tmp_path / "out" / "zonebake-server")  # not ELF
    write_zone(zone, 3001)
    assert build_into(tmp_path / "out", zone) == []  # no region copied
    build_into(tmp_path / "full", zone)
    assert_same_outputs(tmp_path / "out", tmp_path / "full")


def test_a_link_elfsplice_refuses_gets_the_data_from_its_own_file(tmp_path, monkeypatch,
                                                                    spies):
    zone = tmp_path / "inside.zone"
    write_zone(zone, 600)
    build_into(tmp_path / "written", zone)

    def refuse(*_):
        raise elfsplice.Refused("for the test")
    monkeypatch.setattr(elfsplice, "prepare", refuse)
    build_into(tmp_path / "out", zone)
    assert len(spies["splice"]) == 1  # refused too: the assembler and the linker did it
    assert_same_outputs(tmp_path / "out", tmp_path / "written")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "zonebake-server", "zonedata.c", "zonedata.image", "zonedata.state"]


def counts_of(outdir: Path, lines: list[str], zone: Path) -> dict[str, int]:
    """LINES built into OUTDIR: the regions the core reused and found in place, by name."""
    zone.write_text("\n".join(lines) + "\n")
    progress = Progress(out=None)
    build.build(zones_from_args([f"inside.example.={zone}"]), outdir, progress=progress)
    return {detail.name: detail.count for stage in progress.stages
            for detail in stage.details if detail.name.startswith("regions ")}


def test_a_rebuild_keeps_the_earlier_data_where_it_lies_and_writes_only_the_rest(tmp_path):
    """The driver copies the earlier server's data into the next server's file while the
    build begins (EarlyServer, elfsplice.prefill); the core leaves each region reused that
    lies where it lay and makes the rest what a new file holds (layout.c, keep_in_place):
    edit after edit, the server a full build writes, whether the data grew, shrank or was
    all laid out again."""
    zone = tmp_path / "inside.zone"
    head = ["$TTL 300", "@ SOA ns hostmaster 1 7200 900 1209600 300", "@ NS ns",
            "ns A 192.0.2.1"]
    # 9,000 names: over a MiB of data, so that where all of it is laid out again the copy
    # gets a hole punched in it rather than zeros written (layout.c, zeros_again).
    hosts = [f"host{i} A 10.{i >> 16}.{i >> 8 & 255}.{i & 255}" for i in range(9000)] + \
        ['@ TXT "kept"']
    # Four kilobytes at one name: taken out, its region loses a page or more.
    big = [f'big TXT "{n}{"x" * 240}" "{"y" * 250}" "{"z" * 250}" "{"w" * 250}"'
           for n in range(4)]
    soa_changed = [head[0], head[1].replace(" 7200 ", " 3600 "), *head[2:]]
    assert counts_of(tmp_path / "out", head + hosts + big, zone) == {}  # nothing before it
    edits = [
        ("an address changed",
         head + hosts[:4500] + ["host4500 A 192.0.2.9"] + hosts[4501:] + big, True),
        ("a name added", head + hosts + big + ["added A 192.0.2.10"], True),
        ("the big name removed: the data shrank", head + hosts, True),
        ("the SOA changed but for its serial: all laid out again", soa_changed + hosts, False),
        ("the big name back: the data grew", soa_changed + hosts + big, True),
    ]
    for step, (what, lines, reused) in enumerate(edits):
        counts = counts_of(tmp_path / "out", lines, zone)
        assert (counts["regions in place"] > 0) == reused, what
        assert counts["regions in place"] <= counts["regions reused"], what
        counts_of(tmp_path / f"full{step}", lines, zone)
        assert_same_outputs(tmp_path / "out", tmp_path / f"full{step}")
        assert not list((tmp_path / "out").glob(".*")), what  # no temporary file left


def test_a_build_does_not_wait_for_its_cores_exit(tmp_path, monkeypatch):
    """The core says it is done once its outputs are written and closed (core/run.py), and
    the build goes on while the kernel takes back the core's memory in its exit: a reap made
    slow has not ended when the build has, and the core exits with 0 all the same. A
    sanitized core says nothing, and its exit is waited for."""
    from zonebake.core import run
    reaped, reaping = [], []
    real = run._reap

    def reap(process):  # as if the kernel took its time over the exit
        reaping.append(process)
        time.sleep(1)
        real(process)
        reaped.append(process)
    monkeypatch.setattr(run, "_reap", reap)
    zone = tmp_path / "inside.zone"
    write_zone(zone, 3000)
    build_into(tmp_path / "out", zone)
    said_done = not os.environ.get("ZONEBAKE_SANITIZE")
    assert len(reaping) == (1 if said_done else 0) and reaped == []
    for _ in range(100):
        if len(reaped) == len(reaping):
            break
        time.sleep(0.05)
    assert reaped == reaping and all(core.returncode == 0 for core in reaped)


def test_a_signed_rebuild_writes_its_denial_region_over_the_earlier_one_in_place(
        tmp_path, monkeypatch):
    """A signed zone's denial region (its NSEC3 entries, about 200 octets a name) lies after
    the head in the earlier server too: the core writes the new one over the octets the
    prefill copied there rather than into a hole punched first (layout.c, zeros_but_denial),
    and makes zeros of what the earlier region held past the new one's end. Edit after edit
    (a name added: it grows; names removed: it shrinks), the server a full build writes."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(time.time())))  # the same signatures
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    hosts = [f"host{i} A 10.0.{i >> 8}.{i & 255}" for i in range(8000)]
    toml = signed_set(tmp_path, zone=ZONE + "\n".join(hosts) + "\n")
    zone = tmp_path / "example.com.zone"

    def build_signed(outdir: Path) -> dict[str, int]:
        progress = Progress(out=None)
        build.build(load_toml(toml), outdir, progress=progress)
        return {detail.name: detail.count for stage in progress.stages
                for detail in stage.details if detail.name.startswith("regions ")}

    assert build_signed(tmp_path / "out") == {}
    edits = [("a name added", hosts + ["added A 192.0.2.10"]),
             ("names removed", hosts[:3000] + hosts[3002:]),
             ("an address changed", hosts[:3000] + ["host3000 A 192.0.2.11"] + hosts[3002:])]
    for step, (what, lines) in enumerate(edits):
        zone.write_text(ZONE + "\n".join(lines) + "\n")
        counts = build_signed(tmp_path / "out")
        assert counts["regions in place"] > 0, what
        build_signed(tmp_path / f"full{step}")
        assert_same_outputs(tmp_path / "out", tmp_path / f"full{step}")
