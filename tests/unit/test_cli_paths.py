"""Paths the commands are given that name nothing they can use: a name too long for the
kernel (ENAMETOOLONG), a file where a directory must be, below a file. pathlib's exists,
is_dir and is_file raise for some of these (compiler/paths.py): each is a usage error, exit
2, with the reason, never a traceback."""

from __future__ import annotations

import pytest

from conftest import ZONES, run_zonebake

LONG = "x" * 300  # a name longer than NAME_MAX (255)


@pytest.mark.parametrize("args,message", [
    (["build", "--zone", f"example.={ZONES / 'example.zone'}", "-o", LONG],
     f"{LONG}: cannot make the output directory: File name too long"),
    (["keygen", "example.com.", "-d", LONG], f"{LONG}: no such directory: File name too long"),
    (["keygen", "example.com.", "-d", "a-file"], "a-file: no such directory"),
    (["ds", "example.com.", "--keys", LONG],
     f"{LONG}: not a directory of keys: File name too long"),
    (["delta", LONG, "a-file", "-o", "d.zst"], f"{LONG}: no such file: File name too long"),
    (["delta", "a-file/x", "a-file", "-o", "d.zst"], "a-file/x: no such file: Not a directory"),
    (["delta", "a-file", "a-file", "-o", f"{LONG}/d.zst"],
     f"{LONG}/d.zst: no such directory to write it in"),
])
def test_a_path_that_names_nothing_usable_is_a_usage_error(args, message, tmp_path):
    (tmp_path / "a-file").write_text("a file\n")
    result = run_zonebake(*args, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"zonebake: {message}\n")
    assert (tmp_path / "a-file").read_text() == "a file\n"
