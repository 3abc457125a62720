"""The libFuzzer targets (tests/fuzz/run.sh), under ASan and UBSan, each for a bounded time:
ZONEBAKE_FUZZ_SECONDS, 60 by default. The request handler's; the AF_XDP frame layer's; the
compiler core's zone-file reader; the whole core on small zone sets. Any finding fails the
test. The targets are built and run at once, side by side: each still fuzzes for its whole
time, and the suite waits for the longest alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

TARGETS = ["respond", "frame", "reader", "core"]


@pytest.fixture(scope="module")
def fuzz_runs(tmp_path_factory) -> dict[str, tuple[int, str]]:
    """Each target's exit status and what it printed."""
    if not shutil.which("clang"):
        if os.environ.get("CI"):
            pytest.fail("clang is missing: the fuzz test needs Debian's clang and "
                        "libclang-rt-14-dev")
        pytest.skip("clang is not installed (apt-get install clang libclang-rt-14-dev)")
    seconds = os.environ.get("ZONEBAKE_FUZZ_SECONDS", "60")
    logs = tmp_path_factory.mktemp("fuzz")
    runs = {}
    for target in TARGETS:
        # Into a file, not a pipe: a target whose pipe nobody reads would stop at a full one.
        log = open(logs / f"{target}.log", "w")
        runs[target] = (subprocess.Popen(
            [str(ROOT / "tests" / "fuzz" / "run.sh"), target, seconds], stdout=log,
            stderr=subprocess.STDOUT, env={**os.environ, "PYTHON": sys.executable}), log)
    results = {}
    for target, (process, log) in runs.items():
        try:
            status = process.wait(timeout=int(seconds) + 300)
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
        log.close()
        results[target] = (status, Path(log.name).read_text(errors="replace"))
    return results


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_target_finds_nothing(target, fuzz_runs):
    status, output = fuzz_runs[target]
    assert status == 0, output[-5000:]
    assert "stat::number_of_executed_units" in output
