"""The libFuzzer targets (tests/fuzz/run.sh), under ASan and UBSan, each for a bounded time:
ZONEBAKE_FUZZ_SECONDS, 60 by default. The request handler's; the AF_XDP frame layer's; the
compiler core's zone-file reader; the whole core on small zone sets. Any finding fails the
test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

TARGETS = ["respond", "frame", "reader", "core"]


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_target_finds_nothing(target):
    if not shutil.which("clang"):
        if os.environ.get("CI"):
            pytest.fail("clang is missing: the fuzz test needs Debian's clang and "
                        "libclang-rt-14-dev")
        pytest.skip("clang is not installed (apt-get install clang libclang-rt-14-dev)")
    seconds = os.environ.get("ZONEBAKE_FUZZ_SECONDS", "60")
    result = subprocess.run([str(ROOT / "tests" / "fuzz" / "run.sh"), target, seconds],
                            env={**os.environ, "PYTHON": sys.executable},
                            capture_output=True, text=True, timeout=int(seconds) + 300)
    assert result.returncode == 0, result.stderr[-5000:]
    assert "stat::number_of_executed_units" in result.stderr
