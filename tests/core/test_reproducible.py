"""The same zones and compiler give byte-identical zonedata.c and binary (and so the data
inside it): no time stamps, no dependence on dict order, Python's hash seed, the output
directory, or whether the runtime's objects came from the cache
(compiler/toolchain/objcache.py), were compiled for it or compiled without one."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from blob import server_data
from conftest import ROOT, ZONES
from zonebake.core import program
from zonebake.toolchain import objcache

RUNTIME = ROOT / "runtime"


def build(outdir, hash_seed: str, cache):
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "XDG_CACHE_HOME": str(cache)}
    subprocess.run([sys.executable, "-m", "zonebake", "build", "-c",
                    str(ZONES / "resolution.toml"), "-o", str(outdir)], check=True, env=env,
                   capture_output=True)
    server = outdir / "zonebake-server"
    return (outdir / "zonedata.c").read_bytes(), server_data(server), server.read_bytes()


def test_builds_are_byte_identical(tmp_path):
    cache = tmp_path / "cache"
    settled = all(time.time_ns() - path.stat().st_ctime_ns >= objcache.RACY * 1e9
                  for path in [*program.SOURCES.rglob("*.[ch]"), *RUNTIME.rglob("*.h")])
    cold = build(tmp_path / "one", "1", cache)
    # Stored: the objects, and the server linked with a placeholder for its data; beside
    # them, the compiler's name for itself, zonedata.c as rendered (the warm build's) and
    # the digest of the core's sources, unless one changed too lately for its stat to tell
    # (objcache.RACY: a checkout made just now).
    stored = sorted(path.name.split("-")[0] if not path.is_dir() else
                    "linked" if path.name.startswith("linked-") else "objects"
                    for path in (cache / "zonebake" / "objs").iterdir())
    kept = ["compiler", "linked", "objects", "rendered"]
    assert stored == kept + ["sources"] or (not settled and stored == kept)
    warm = build(tmp_path / "elsewhere" / "two", "4242", cache)
    uncached = build(tmp_path / "three", "7", "/dev/null/no-cache")  # cannot be created
    # A sanitizer build (-g) records the directory it was compiled in: its binary differs.
    compared = 2 if os.environ.get("ZONEBAKE_SANITIZE") else 3
    for other in (warm, uncached):
        assert cold[:compared] == other[:compared]
