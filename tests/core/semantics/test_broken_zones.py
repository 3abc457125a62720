"""A zone the compiler cannot serve stops the build: `FILE:LINE: error: ...` on stderr,
exit status 1, and nothing written. Each file of tests/zones/broken says what it must produce
in its `; expect: LINE: MESSAGE` comments; each signed one also what --lenient makes of it, in
its `; lenient: LINE: SEVERITY: MESSAGE` comments (at its end, every line of them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ZONES, run_zonebake

BROKEN = sorted((ZONES / "broken").glob("*.zone"))


def expectations(path: Path, kind: str = "expect") -> list[str]:
    return [line.split(f"{kind}:", 1)[1].strip() for line in path.read_text().splitlines()
            if line.startswith(f"; {kind}:")]


@pytest.mark.parametrize("zone", BROKEN, ids=[z.stem for z in BROKEN])
def test_broken_zone_is_refused_with_its_position(zone, tmp_path):
    out = tmp_path / "out"
    result = run_zonebake("build", "--zone", f"example.={zone}", "-o", str(out))
    assert result.returncode == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    wanted = expectations(zone)
    assert wanted, f"{zone.name} has no expect: line"
    assert len(errors) == len(wanted), result.stderr
    for line, expected in zip(errors, wanted):
        assert line.startswith(f"{zone}:{expected}"), (line, expected)
    assert "Traceback" not in result.stderr
    assert not (out / "zonebake-server").exists()
    assert not (out / "zonedata.c").exists()


def test_errors_of_every_zone_are_reported_together(tmp_path):
    zones = [ZONES / "broken" / "no-soa.zone", ZONES / "example.zone",
             ZONES / "broken" / "out-of-zone.zone"]
    result = run_zonebake("build", "--zone", f"example.={zones[0]}", "--zone",
                          f"example.net.={zones[1]}", "--zone", f"example.org.={zones[2]}",
                          "-o", str(tmp_path))
    assert result.returncode == 1
    assert f"{zones[0]}:1: error: no SOA record" in result.stderr
    assert f"{zones[2]}:6: error: www.example.org. is outside" not in result.stderr  # in-zone
    assert f"{zones[2]}:7: error: other. is outside the zone example.org." in result.stderr
    assert f"{zones[1]}" in result.stderr  # example.zone's names are outside example.net.


@pytest.mark.parametrize("broken_as", ["another file", "the same file"])
def test_a_failed_build_leaves_the_previous_binary_alone(tmp_path, broken_as):
    """Whether the command line is the last build's (its core begun before the driver's
    imports: compiler/core/early.py) or not."""
    out, zone = tmp_path / "out", tmp_path / "example.zone"
    zone.write_text((ZONES / "example.zone").read_text())
    good = run_zonebake("build", "--zone", f"example.={zone}", "-o", str(out))
    assert good.returncode == 0, good.stderr
    before = {name: (out / name).read_bytes()
              for name in ("zonebake-server", "zonedata.state", "zonedata.next")}
    broken = ZONES / "broken" / "no-soa.zone"
    if broken_as == "the same file":
        zone.write_text(broken.read_text())
        broken = zone
    bad = run_zonebake("build", "--zone", f"example.={broken}", "-o", str(out))
    assert bad.returncode == 1
    assert f"{broken}:1: error: no SOA record" in bad.stderr
    for name, octets in before.items():  # the state and the record: the next build's
        assert (out / name).read_bytes() == octets, name
    assert sorted(p.name for p in out.iterdir()) == [
        "zonebake-server", "zonedata.c", "zonedata.image", "zonedata.next", "zonedata.state"]


@pytest.mark.parametrize("args,message", [
    (["--zone", "example.zone"], "expected ORIGIN=FILE"),
    (["--zone", "bad..name=example.zone"], "bad zone origin"),
    (["-c", "/nonexistent/zonebake.toml"], "No such file or directory"),
])
def test_usage_errors_exit_2(args, message, tmp_path):
    result = run_zonebake("build", *args, "-o", str(tmp_path / "out"), cwd=ZONES)
    assert result.returncode == 2
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where,message", [
    ("a-file", "a-file: not a directory (the output directory)"),
    ("a-file/out", "a-file/out: cannot make the output directory: Not a directory"),
    ("/proc/zonebake-out", "/proc/zonebake-out: cannot make the output directory: No such "
                           "file or directory"),
])
def test_an_output_directory_that_cannot_be_made_is_a_usage_error(where, message, tmp_path):
    (tmp_path / "a-file").write_text("not a directory\n")
    result = run_zonebake("build", "--zone", f"example.={ZONES / 'example.zone'}", "-o", where,
                          cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, f"zonebake: {message}\n")
    assert (tmp_path / "a-file").read_text() == "not a directory\n"


def test_missing_zone_file(tmp_path):
    result = run_zonebake("build", "--zone", "example.=/nonexistent.zone", "-o", str(tmp_path))
    assert result.returncode == 1
    assert "/nonexistent.zone: error: cannot read zone file: No such file or directory" \
        in result.stderr


def test_check_accepts_a_good_set_and_writes_nothing(tmp_path):
    result = run_zonebake("check", "-c", str(ZONES / "testset.toml"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("zone", BROKEN, ids=[z.stem for z in BROKEN])
def test_check_reports_what_build_reports(zone, tmp_path):
    checked = run_zonebake("check", "--zone", f"example.={zone}", cwd=tmp_path)
    built = run_zonebake("build", "--zone", f"example.={zone}", "-o", str(tmp_path / "out"))
    assert checked.returncode == built.returncode == 1
    assert checked.stderr == built.stderr
    assert list(tmp_path.iterdir()) == []


def test_check_usage_error_exits_2():
    assert run_zonebake("check", "--zone", "nonsense").returncode == 2


def test_lenient_turns_missing_glue_into_a_warning(tmp_path):
    zone = ZONES / "broken" / "missing-glue.zone"
    result = run_zonebake("build", "--lenient", "--zone", f"example.={zone}", "-o",
                          str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (f"{zone}:6: warning: sub.example. NS ns.sub.example.: no A or AAAA record for it "
            f"in the zone (glue missing)") in result.stderr
    assert (tmp_path / "zonebake-server").exists()


SIGNED = [zone for zone in BROKEN if zone.stem.startswith("signed-")]


@pytest.mark.parametrize("zone", SIGNED, ids=[z.stem for z in SIGNED])
def test_lenient_serves_a_signed_zone_a_validator_can_still_verify(zone, tmp_path):
    """A finding a validator gets past becomes a warning and the zone is built (signatures
    outside their validity period); one that leaves an answer bogus stays an error (a
    signature that fails, a broken chain, no key, an RRset no key signs, too many NSEC3
    iterations)."""
    out = tmp_path / "out"
    result = run_zonebake("build", "--lenient", "--zone", f"example.={zone}", "-o", str(out))
    wanted = [f"{zone}:{line}" for line in expectations(zone, "lenient")]
    assert wanted, f"{zone.name} has no lenient: line"
    said = [line for line in result.stderr.splitlines()
            if ": error: " in line or ": warning: " in line]
    assert said == wanted, result.stderr
    refused = any(": error: " in line for line in wanted)
    assert result.returncode == (1 if refused else 0), result.stderr
    assert (out / "zonebake-server").exists() != refused


@pytest.mark.parametrize("zone", [ZONES / "broken" / "no-soa.zone",
                                  ZONES / "broken" / "cname-and-other.zone",
                                  ZONES / "broken" / "out-of-zone.zone"])
def test_lenient_keeps_the_real_errors(zone, tmp_path):
    result = run_zonebake("check", "--lenient", "--zone", f"example.={zone}")
    assert result.returncode == 1


def test_warnings_are_printed_and_the_zone_served(tmp_path):
    zone = ZONES / "warnings" / "advice.zone"
    wanted = [line.split("warn:", 1)[1].strip() for line in zone.read_text().splitlines()
              if line.startswith("; warn:")]
    result = run_zonebake("build", "--zone", f"example.={zone}", "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    warnings = sorted(line for line in result.stderr.splitlines() if ": warning: " in line)
    assert warnings == sorted(f"{zone}:{w}" for w in wanted)


def test_include_cycle_through_two_files_is_named(tmp_path):
    zone = ZONES / "include-cycle" / "zone"
    result = run_zonebake("check", "--zone", f"example.={zone}")
    assert result.returncode == 1
    assert (f"{ZONES / 'include-cycle' / 'b.inc'}:2: error: $INCLUDE cycle: {zone} -> a.inc -> "
            f"b.inc -> a.inc") in result.stderr


def test_include_is_relative_to_the_zone_file(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "hosts.inc").write_text("extra A 192.0.2.77\n")
    zone = tmp_path / "sub" / "zone"
    zone.write_text((ZONES / "example.zone").read_text() + "$INCLUDE hosts.inc\n")
    result = run_zonebake("check", "--zone", f"example.={zone}")
    assert result.returncode == 0, result.stderr


def test_a_file_shows_at_most_a_hundred_diagnostics(tmp_path):
    """A zone given under the wrong origin has an error on every line: the first hundred are
    shown, then how many more, then the count of them all."""
    zone = tmp_path / "wrong-origin.zone"
    zone.write_text("$ORIGIN example.\n@ SOA ns h 1 2 3 4 5\n@ NS ns\n" +
                    "".join(f"h{i} A 192.0.2.1\n" for i in range(150)))
    result = run_zonebake("build", "--zone", f"example.net.={zone}", "-o",
                          str(tmp_path / "out"))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 102
    assert all(line.startswith(f"{zone}:") and ": error: " in line for line in lines[:100])
    assert lines[100:] == [f"{zone}: 53 more error(s) and warning(s) not shown",
                           "zonebake: 153 error(s); nothing written"]
