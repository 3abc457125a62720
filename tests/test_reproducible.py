"""The same zones and compiler give byte-identical zonedata.c, zonedata.bin and binary: no time stamps, no
dependence on dict order, Python's hash seed or the output directory."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ZONES


def build(outdir, hash_seed: str):
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    subprocess.run([sys.executable, "-m", "zonebake", "build", "-c",
                    str(ZONES / "resolution.toml"), "-o", str(outdir)], check=True, env=env,
                   capture_output=True)
    return tuple((outdir / name).read_bytes()
                 for name in ("zonedata.c", "zonedata.bin", "zonebake-server"))


def test_two_builds_are_byte_identical(tmp_path):
    first = build(tmp_path / "one", "1")
    second = build(tmp_path / "elsewhere" / "two", "4242")
    assert first[0] == second[0]
    assert first[1] == second[1]
    assert first[2] == second[2]
