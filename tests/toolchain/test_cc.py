"""The cc stage: the runtime's objects compile once per sources, flags and compiler, then come
from the cache (compiler/toolchain/objcache.py), and so does the server linked with a placeholder
for its data, once per zonedata.c (the set's configuration); C compiler failures are usage
errors that show the command."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from conftest import ZONES
from zonebake.toolchain import objcache

ZONE = f"example.={ZONES / 'example.zone'}"
OTHER_ZONE = f"example.net.={ZONES / 'example.net.zone'}"


def build(outdir, cache, cc="cc", sanitize=False, zone=ZONE) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "CC": cc}
    env.pop("ZONEBAKE_SANITIZE", None)
    if sanitize:
        env["ZONEBAKE_SANITIZE"] = "1"
    return subprocess.run([sys.executable, "-m", "zonebake", "build", "--zone", zone, "-o",
                           str(outdir)], capture_output=True, text=True, env=env)


def entries(cache) -> tuple[int, int]:
    """The cache's entries of objects, and of linked servers (not the small files kept
    beside them)."""
    found = [path for path in (cache / "zonebake" / "objs").iterdir() if path.is_dir()]
    linked = sum((entry / "zonebake-server").exists() for entry in found)
    return len(found) - linked, linked


@pytest.fixture
def logging_cc(tmp_path):
    """A CC that logs the file each run compiles ('-' for a link), then runs cc; the
    compiler's core, compiled with CC too on a first build, is not logged."""
    log = tmp_path / "cc.log"
    script = tmp_path / "logging-cc"
    script.write_text(f"""#!/bin/sh
case " $* " in *"/compiler/core/"*|*"/zonebake-core-"*) exec cc "$@";; esac
compiles=-
for arg; do case "$arg" in *.c) compiles=$arg;; esac; done
case " $* " in *" -v "*|*" --version "*) ;; *) echo "$compiles" >>{log};; esac
exec cc "$@"
""")
    script.chmod(0o755)

    def compiled() -> list[str]:
        """What the compiler ran for since the last call, in order."""
        runs = sorted(log.read_text().split()) if log.exists() else []
        log.unlink(missing_ok=True)
        return runs
    return str(script), compiled


def runtime_sources() -> list[str]:
    from zonebake.toolchain.cc import runtime_dir
    return sorted(p.name for p in runtime_dir().rglob("*.c"))


def test_second_build_compiles_only_zonedata_and_the_same_set_nothing(tmp_path, logging_cc):
    cc, compiled = logging_cc
    assert build(tmp_path / "one", tmp_path / "cache", cc).returncode == 0
    assert compiled() == sorted(["-", "zonedata.c", *runtime_sources()])
    assert build(tmp_path / "two", tmp_path / "cache", cc, zone=OTHER_ZONE).returncode == 0
    assert compiled() == ["-", "zonedata.c"]
    # The first set again, elsewhere: the same zonedata.c, linked already.
    assert build(tmp_path / "three", tmp_path / "cache", cc).returncode == 0
    assert compiled() == []
    assert (tmp_path / "one" / "zonebake-server").read_bytes() == \
        (tmp_path / "three" / "zonebake-server").read_bytes()
    assert entries(tmp_path / "cache") == (1, 2)


def test_a_changed_library_is_linked_again(tmp_path, logging_cc):
    """As after a libc upgrade: a file the link reads (here an archive CC names) is checked
    by the linked entry's manifest."""
    cc, compiled = logging_cc
    member = tmp_path / "unused.c"
    archive = tmp_path / "libunused.a"

    def make_archive(text: str) -> None:
        member.write_text(text)
        subprocess.run(["cc", "-c", str(member), "-o", str(tmp_path / "unused.o")], check=True)
        archive.unlink(missing_ok=True)
        subprocess.run(["ar", "rcs", str(archive), str(tmp_path / "unused.o")], check=True)

    make_archive("int zb_test_unused_one(void) { return 1; }\n")
    linking = f"{cc} -Wl,{archive}"
    assert build(tmp_path / "one", tmp_path / "cache", linking).returncode == 0
    compiled()
    assert build(tmp_path / "two", tmp_path / "cache", linking).returncode == 0
    assert compiled() == []
    make_archive("int zb_test_unused_two(void) { return 2; }\n")
    assert build(tmp_path / "three", tmp_path / "cache", linking).returncode == 0
    assert compiled() == ["-", "zonedata.c"]


def test_the_linked_servers_used_last_are_kept(tmp_path):
    """One linked server per zone set's configuration: the cache keeps the LINKED_KEPT used
    last, and every entry of objects (until unused for a week)."""
    root = tmp_path / "objs"
    (root / ("0" * 64)).mkdir(parents=True)
    now = time.time()
    for i in range(objcache.LINKED_KEPT + 4):
        entry = root / f"{objcache.LINKED_PREFIX}{i:02}"
        entry.mkdir()
        os.utime(entry, (now - 100 + i, now - 100 + i))
    os.utime(root / ("0" * 64), (now - 1000, now - 1000))
    objcache._prune(root)
    assert sorted(path.name for path in root.iterdir()) == \
        ["0" * 64, *(f"{objcache.LINKED_PREFIX}{i:02}" for i in range(4, objcache.LINKED_KEPT + 4))]


def test_a_damaged_entry_is_compiled_again(tmp_path, logging_cc):
    cc, compiled = logging_cc
    assert build(tmp_path / "one", tmp_path / "cache", cc).returncode == 0
    [entry] = [e for e in (tmp_path / "cache" / "zonebake" / "objs").iterdir()
               if (e / "main.o").exists()]
    (entry / "main.o").write_bytes((entry / "main.o").read_bytes()[:100])  # a crash's leftover
    compiled()
    assert build(tmp_path / "two", tmp_path / "cache", cc).returncode == 0
    # The link, from objects with the same bytes, is still the cache's.
    assert compiled() == sorted(runtime_sources())
    assert (tmp_path / "one" / "zonebake-server").read_bytes() == \
        (tmp_path / "two" / "zonebake-server").read_bytes()


def test_a_changed_system_header_is_compiled_again(tmp_path, logging_cc):
    """As after a libc upgrade: a header outside runtime/ (here one that -include names) is
    not in the key, but in the entry's manifest."""
    cc, compiled = logging_cc
    header = tmp_path / "libc-ish.h"
    header.write_text("/* version 1 */\n")
    assert build(tmp_path / "one", tmp_path / "cache", f"{cc} -include {header}").returncode == 0
    header.write_text("/* version 2 */\n")
    compiled()
    assert build(tmp_path / "two", tmp_path / "cache", f"{cc} -include {header}").returncode == 0
    assert compiled() == sorted(["-", "zonedata.c", *runtime_sources()])
    assert build(tmp_path / "three", tmp_path / "cache", f"{cc} -include {header}").returncode == 0
    assert compiled() == []


def test_sanitized_builds_have_objects_of_their_own(tmp_path, logging_cc):
    cc, compiled = logging_cc
    assert build(tmp_path / "plain", tmp_path / "cache", cc).returncode == 0
    compiled()
    assert build(tmp_path / "sanitized", tmp_path / "cache", cc, sanitize=True).returncode == 0
    assert compiled() == sorted(["-", "zonedata.c", *runtime_sources()])
    assert entries(tmp_path / "cache") == (2, 2)


def test_concurrent_cold_builds_share_one_entry(tmp_path):
    # Plain builds: a sanitizer build (-g) records its directory, so its binaries differ.
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("ZONEBAKE_SANITIZE", None)
    builds = [subprocess.Popen([sys.executable, "-m", "zonebake", "build", "--zone", ZONE, "-o",
                                str(tmp_path / name)], env=env, stderr=subprocess.PIPE)
              for name in ("one", "two", "three")]
    for process in builds:
        assert process.wait() == 0, process.stderr.read()
        process.stderr.close()
    binaries = {(tmp_path / name / "zonebake-server").read_bytes()
                for name in ("one", "two", "three")}
    assert len(binaries) == 1
    assert entries(tmp_path / "cache") == (1, 1)


def test_check_writes_no_cache(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, "-m", "zonebake", "check", "--zone", ZONE],
                            capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_failing_compiler_is_a_usage_error_naming_the_command(tmp_path):
    result = build(tmp_path / "out", tmp_path / "cache", cc="cc -include /nonexistent/zb.h")
    assert result.returncode == 2
    assert "the C compiler failed (" in result.stderr
    assert "cc -include /nonexistent/zb.h" in result.stderr
    assert "/nonexistent/zb.h: No such file or directory" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out" / "zonebake-server").exists()


def test_a_missing_compiler_is_a_usage_error(tmp_path):
    result = build(tmp_path / "out", tmp_path / "cache", cc="/nonexistent/cc")
    assert result.returncode == 2
    assert "cannot run the C compiler '/nonexistent/cc'" in result.stderr
