"""The responder's C compiles without a warning (gcc, -Wall -Wextra -Wshadow), against a real
compiled zone set."""

from __future__ import annotations

import subprocess

from conftest import ROOT, data_beside


def test_runtime_compiles_without_warnings(testset_binary, tmp_path):
    zonedata = testset_binary.parent / "zonedata.c"
    data_beside(tmp_path, testset_binary)  # as the build wrote it, into the server
    (tmp_path / "zonedata.c").write_bytes(zonedata.read_bytes())
    zonedata = tmp_path / "zonedata.c"
    sources = sorted(str(p) for p in (ROOT / "runtime").rglob("*.c"))
    result = subprocess.run(["cc", "-std=gnu11", "-O2", "-pthread", "-fno-strict-aliasing", "-Wall",
                             "-Wextra", "-Wshadow", "-Werror", f"-I{ROOT / 'runtime'}",
                             f"-Wa,-I{zonedata.parent}", *sources,
                             str(zonedata), "-o", str(tmp_path / "server")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
