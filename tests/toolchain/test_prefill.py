"""compiler/toolchain/prefill.py and compiler/entry.py: the earlier server's data copied into
the next server's file from the command's start. The command line's output directory is
found as argparse would find it, or not at all; a copy begun early is taken over by the
build that finds the same earlier server, and stopped, its file gone, otherwise."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import ZONES, run_zonebake
from zonebake import entry
from zonebake.toolchain import elfsplice, prefill


@pytest.mark.parametrize("argv, output", [
    (["build", "-c", "z.toml", "-o", "out"], "out"),
    (["build", "--zone", "a.=a.zone", "--output", "out"], "out"),
    (["build", "--output=out", "-q"], "out"),
    (["build", "-oout"], "out"),
    (["build", "-o", "first", "-o", "last"], "last"),  # argparse: the last one
    (["check", "-c", "z.toml"], None),
    (["build", "-q"], None),
    (["build", "-o"], None),
    (["build", "-o", "out", "--", "x"], None),
])
def test_the_output_directory_is_read_off_the_command_line(argv, output):
    assert entry._output(argv) == output


@pytest.fixture
def built(tmp_path) -> Path:
    out = tmp_path / "out"
    result = run_zonebake("build", "--zone", f"example.={ZONES / 'example.zone'}", "-o",
                          str(out))
    assert result.returncode == 0, result.stderr
    return out


def test_a_copy_begun_early_is_taken_over_by_the_build_of_the_same_server(built):
    server = built / prefill.SERVER_FILE
    temporary = Path(prefill.temporary_for(server))
    prefill.start_early(built)
    assert temporary.exists()
    taken = prefill.take(built, server, elfsplice.span(server))
    assert taken is not None and taken.done() == elfsplice.span(server)
    at, length = elfsplice.span(server)
    assert temporary.read_bytes()[at:at + length] == server.read_bytes()[at:at + length]
    prefill.stop_early()  # nothing left to stop
    assert temporary.exists()
    taken.stop()
    assert not temporary.exists()


def test_a_copy_no_build_takes_over_is_stopped_and_its_file_removed(built):
    temporary = Path(prefill.temporary_for(built / prefill.SERVER_FILE))
    prefill.start_early(built)
    at, length = elfsplice.span(built / prefill.SERVER_FILE)
    assert prefill.take(built, built / prefill.SERVER_FILE, (at, length + 1)) is None
    assert not temporary.exists()  # another span: stopped
    prefill.start_early(built)
    prefill.stop_early()
    assert not temporary.exists()


def test_no_copy_without_an_earlier_build(tmp_path, built):
    (built / prefill.STATE_FILE).unlink()
    prefill.start_early(built)
    prefill.start_early(tmp_path / "none")
    assert prefill._early == {}


def test_a_command_that_fails_leaves_no_copy_behind(tmp_path, built):
    broken = tmp_path / "broken.zone"
    broken.write_text((ZONES / "example.zone").read_text() + "bad A 300.1.2.3\n")
    result = run_zonebake("build", "--zone", f"example.={broken}", "-o", str(built))
    assert result.returncode == 1 and "broken.zone:" in result.stderr
    assert sorted(p.name for p in built.iterdir() if p.name.startswith(".")) == []
    # Refused before any build began (no EarlyServer to take the copy over): cli.run stops it.
    result = run_zonebake("build", "--zone", "example.", "-o", str(built))
    assert result.returncode == 2 and "expected ORIGIN=FILE" in result.stderr
    assert sorted(p.name for p in built.iterdir() if p.name.startswith(".")) == []
