"""A rebuild whose inputs other than the zone files are the last build's is done by the
command's start without the driver (compiler/core/driverless.py): the same outputs as a build
into an empty directory, the same messages and exit status; anything the driver reads that
changed, and anything only the driver handles, gives the build to the driver.

Which of the two built is seen by zonedata.c: the driver writes it anew (another inode) on
every build; the rebuild without it leaves it as the record's digest says it is."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from blob import server_data
from buildsigned import signed_set
from conftest import run_zonebake
from zonebake.core import driverless

ORIGIN = "driverless.example."
HOSTS = 300


def write_zone(path: Path, extra: tuple[str, ...] = (), serial: int = 1) -> None:
    lines = ["$TTL 300", f"@ SOA ns hostmaster {serial} 7200 900 1209600 300", "@ NS ns",
             "ns A 192.0.2.1", *(f"host{i} A 10.0.{i >> 8}.{i & 255}" for i in range(HOSTS))]
    path.write_text("\n".join([*lines, *extra]) + "\n")


@pytest.fixture(scope="module")
def settled(tmp_path_factory):
    """The linked server of this module's set in the session's cache, and older than
    driverless.RACY: a build records what it read from then on."""
    work = tmp_path_factory.mktemp("settle")
    write_zone(work / "z.zone")
    for out in ("out", "fresh"):  # as the tests name them, which zonedata.c does not
        assert build(work, out)[0] == 0
    time.sleep(driverless.RACY + 0.1)


@pytest.fixture
def work(settled, tmp_path):
    return tmp_path


def build(work: Path, out: str, *more: str) -> tuple[int, str]:
    """`zonebake build` of the zone work/z.zone into work/OUT, from work: (status, stderr)."""
    result = run_zonebake("build", *more, "--zone", f"{ORIGIN}=z.zone", "-o", out, cwd=work)
    return result.returncode, result.stderr


def first_build(work: Path, out: str, *more: str) -> None:
    """The first build into work/OUT, and its record: a sanitized build's link names its
    output directory (cc.py's _link_key), so the first build into one links anew, and records
    nothing (made within RACY seconds) until the next."""
    assert build(work, out, *more)[0] == 0
    if not (work / out / driverless.RECORD_FILE).exists():
        time.sleep(driverless.RACY + 0.1)
        assert build(work, out, *more)[0] == 0
    assert (work / out / driverless.RECORD_FILE).is_file()


def zonedata_c(out: Path) -> int:
    return os.stat(out / "zonedata.c").st_ino


def assert_as_built_afresh(work: Path, out: Path, *more: str) -> None:
    """OUT holds what a build of the same set into an empty directory writes."""
    fresh = work / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    assert build(work, "fresh", *more)[0] == 0
    assert server_data(out / "zonebake-server") == server_data(fresh / "zonebake-server")
    if not os.environ.get("ZONEBAKE_SANITIZE"):  # its debug information names the directory
        assert (out / "zonebake-server").read_bytes() == \
            (fresh / "zonebake-server").read_bytes()
    for name in ("zonedata.c", "zonedata.state"):  # the image: updated in place, or not
        assert (out / name).read_bytes() == (fresh / name).read_bytes(), name
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


def test_a_rebuild_of_a_changed_zone_is_done_without_the_driver(work):
    out = work / "out"
    write_zone(work / "z.zone")
    first_build(work, "out")
    for extra in (("added A 192.0.2.7",), ("added A 192.0.2.7", "more TXT \"x\""), ()):
        before = zonedata_c(out)
        write_zone(work / "z.zone", extra)
        assert build(work, "out") == (0, "")
        assert zonedata_c(out) == before  # not the driver's
        assert_as_built_afresh(work, out)
    # Over a copy of the output directory, as a CI job restores it: the same (but for a
    # sanitized build, whose link names the directory).
    if os.environ.get("ZONEBAKE_SANITIZE"):
        return
    shutil.copytree(out, work / "copy")
    write_zone(work / "z.zone", ("copied A 192.0.2.9",), serial=2)
    before = zonedata_c(work / "copy")
    assert build(work, "copy") == (0, "")
    assert zonedata_c(work / "copy") == before
    assert_as_built_afresh(work, work / "copy")


@pytest.mark.parametrize("change", ["environment", "linked server", "zonedata.c",
                                    "record", "command line"])
def test_what_the_driver_reads_changed_has_the_driver_build(work, change):
    out = work / "out"
    write_zone(work / "z.zone")
    first_build(work, "out")
    write_zone(work / "z.zone", ("added A 192.0.2.7",))
    more: tuple[str, ...] = ()
    saved = os.environ.copy()
    if change == "environment":
        os.environ["ZONEBAKE_TEST_UNREAD"] = "1"  # unread, but the driver may read it
    elif change == "linked server":  # pruned from the cache: linked again
        record = (out / driverless.RECORD_FILE).read_text().splitlines()
        linked = Path(next(line for line in record if line.startswith("linked ")
                           ).removeprefix("linked "))
        shutil.rmtree(linked.parent)
    elif change == "zonedata.c":
        with open(out / "zonedata.c", "a") as file:
            file.write("/* edited */\n")
    elif change == "record":
        (out / driverless.RECORD_FILE).write_text(
            (out / driverless.RECORD_FILE).read_text().replace("\ninput ", "\ninput 1", 1))
    else:
        more = ("-q",)
    before = zonedata_c(out)
    try:
        assert build(work, "out", *more) == (0, "")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert zonedata_c(out) != before  # the driver's
    assert_as_built_afresh(work, out)
    # A link made just now: nothing recorded until it is older than RACY (for the tests
    # after this one too).
    assert (out / driverless.RECORD_FILE).is_file() == (change != "linked server")
    if change == "linked server":
        time.sleep(driverless.RACY + 0.1)


def test_errors_are_reported_by_the_driver_and_nothing_is_written(work):
    out = work / "out"
    write_zone(work / "z.zone")
    first_build(work, "out")
    server = (out / "zonebake-server").read_bytes()
    write_zone(work / "z.zone", ("bad A 192.0.2.300",))
    status, said = build(work, "out")
    assert status == 1
    line = HOSTS + 5
    assert said.startswith(f"z.zone:{line}: error: ")
    assert said.endswith("zonebake: 1 error(s); nothing written\n")
    assert (out / "zonebake-server").read_bytes() == server
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]
    write_zone(work / "z.zone", ("good A 192.0.2.30",))
    assert build(work, "out") == (0, "")
    assert_as_built_afresh(work, out)


def test_warnings_are_said_as_the_driver_says_them(work):
    out = work / "out"
    glue = ("sub NS ns.sub",)
    write_zone(work / "z.zone", glue)
    first_build(work, "out", "--lenient")
    status, first = build(work, "out", "--lenient")
    assert status == 0 and "warning: sub.driverless.example. NS ns.sub.driverless.example.: " \
        "no A or AAAA record for it in the zone (glue missing)" in first
    write_zone(work / "z.zone", (*glue, "added A 192.0.2.7"))
    before = zonedata_c(out)
    assert build(work, "out", "--lenient") == (0, first)
    assert zonedata_c(out) == before
    assert_as_built_afresh(work, out, "--lenient")


def test_warnings_of_a_name_added_above_come_in_the_order_of_their_lines(work):
    """Over an image a new name is numbered after the others; a check still speaks of the
    names in the order of their lines, as a build into an empty directory reads them."""
    out = work / "out"
    write_zone(work / "z.zone", ("zz NS ns.zz",))
    first_build(work, "out", "--lenient")
    write_zone(work / "z.zone", ("aa NS ns.aa", "zz NS ns.zz"))
    before = zonedata_c(out)
    status, said = build(work, "out", "--lenient")
    assert status == 0
    assert zonedata_c(out) == before
    assert [line.split(": ")[0] for line in said.splitlines()] == \
        [f"z.zone:{HOSTS + 5}", f"z.zone:{HOSTS + 6}"]
    assert build(work, "fresh", "--lenient") == (0, said)
    assert_as_built_afresh(work, out, "--lenient")


def test_a_zone_given_signed_has_the_driver_verify_it(work):
    """Signatures to verify are the driver's: the core's request of them ends the rebuild
    without it, and the driver builds."""
    out = work / "out"
    write_zone(work / "z.zone")
    first_build(work, "out")
    text = (work / "z.zone").read_text()
    rrsig = ("ns RRSIG A 15 3 300 20300101000000 20200101000000 1 driverless.example. "
             "AAAA")
    (work / "z.zone").write_text(text + rrsig + "\n")
    before = zonedata_c(out)
    status, said = build(work, "out")
    assert status == 1 and "RRSIG" in said and said.endswith("nothing written\n")
    assert zonedata_c(out) == before  # nothing written: the driver's report
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


def test_builds_the_driver_alone_handles_record_nothing(work):
    """A set it signs, --keep-going, and a TOML changed within RACY seconds of the build."""
    toml = signed_set(work)
    result = run_zonebake("build", "-c", str(toml), "-o", str(work / "signed"), cwd=work)
    assert result.returncode == 0, result.stderr
    assert not (work / "signed" / driverless.RECORD_FILE).exists()

    write_zone(work / "z.zone")
    assert build(work, "out", "--keep-going") == (0, "")
    assert not (work / "out" / driverless.RECORD_FILE).exists()

    (work / "set.toml").write_text(f'[[zone]]\norigin = "{ORIGIN}"\nfile = "z.zone"\n')
    result = run_zonebake("build", "-c", "set.toml", "-o", "toml", cwd=work)
    assert result.returncode == 0, result.stderr
    assert not (work / "toml" / driverless.RECORD_FILE).exists()
    time.sleep(driverless.RACY + 0.1)
    result = run_zonebake("build", "-c", "set.toml", "-o", "toml", cwd=work)
    assert result.returncode == 0, result.stderr
    assert (work / "toml" / driverless.RECORD_FILE).is_file()
    # The TOML edited (its size the same): the driver's build.
    (work / "set.toml").write_text(f'[[zone]]\norigin = "{ORIGIN}"\nfile = "y.zone"\n')
    (work / "y.zone").write_text((work / "z.zone").read_text() + "y A 192.0.2.8\n")
    before = zonedata_c(work / "toml")
    result = run_zonebake("build", "-c", "set.toml", "-o", "toml", cwd=work)
    assert result.returncode == 0, result.stderr
    assert zonedata_c(work / "toml") != before
