"""What the build's cache (compiler/toolchain/objcache.py) trusts without reading it again: an
entry's files whose stats are those seen when their digests last matched; the compiler's
name for itself while its executables keep theirs; zonedata.c as rendered for the same
configuration. Whatever changes is read, asked or rendered again."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from zonebake import emit
from zonebake.config import ServerDefaults, zones_from_args
from zonebake.toolchain import cc, objcache


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "zonebake" / "objs"


@pytest.fixture
def digests_asked(monkeypatch):
    """The paths whose digests the cache takes, from now on."""
    asked: list[str] = []
    taking = objcache._manifest

    def recorded(entry, paths):
        asked.extend(paths)
        return taking(entry, paths)
    monkeypatch.setattr(objcache, "_manifest", recorded)
    return asked


def stored(tmp_path: Path) -> tuple[str, Path]:
    """An entry of one object, whose compile read one header outside it."""
    header = tmp_path / "system.h"
    header.write_text("/* version 1 */\n")
    with objcache.workspace() as objects:
        (objects / "main.o").write_bytes(b"\x7fELF an object")
        entry = objcache.store("0" * 64, objects, [str(header)])
    assert entry is not None
    return "0" * 64, header


def test_files_whose_stats_were_seen_are_not_read_again(tmp_path, cache, monkeypatch,
                                                        digests_asked):
    monkeypatch.setattr(objcache, "RACY", 0.0)
    key, header = stored(tmp_path)
    assert objcache.lookup(key) == cache / key
    assert objcache.lookup(key) == cache / key
    assert digests_asked == ["main.o", str(header)]  # by store, not by the lookups


def test_a_header_rewritten_with_its_size_and_times_kept_is_read_again(tmp_path, cache,
                                                                       monkeypatch):
    """Its change time moved, which no one can set back: the digest is taken, and differs."""
    monkeypatch.setattr(objcache, "RACY", 0.0)
    key, header = stored(tmp_path)
    assert objcache.lookup(key) is not None
    before = header.stat()
    time.sleep(0.05)  # past the file system's coarse clock
    header.write_text("/* version 2 */\n")
    os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert header.stat().st_size == before.st_size
    assert objcache.lookup(key) is None
    assert not (cache / key).exists()


def test_files_changed_lately_are_read_until_their_times_can_tell(tmp_path, cache,
                                                                  digests_asked):
    key, header = stored(tmp_path)  # both written just now: within RACY seconds
    del digests_asked[:]
    assert objcache.lookup(key) is not None
    assert objcache.lookup(key) is not None
    assert digests_asked == ["main.o", str(header)] * 2


def fake_compiler(tmp_path: Path) -> Path:
    """The system's compiler driver, copied: a binary of our own to change."""
    driver = Path(os.path.realpath(shutil.which("cc")))
    copy = tmp_path / "bin" / "cc"
    copy.parent.mkdir()
    shutil.copy2(driver, copy)
    return copy


@pytest.fixture
def compiler_runs(monkeypatch):
    runs: list[list[str]] = []
    running = subprocess.run

    def counted(command, *args, **kwargs):
        runs.append(command)
        return running(command, *args, **kwargs)
    monkeypatch.setattr(cc.subprocess, "run", counted)
    return runs


def test_the_compiler_is_asked_once_until_its_executable_changes(tmp_path, cache, monkeypatch,
                                                                 compiler_runs):
    monkeypatch.setattr(objcache, "RACY", 0.0)
    compiler = fake_compiler(tmp_path)
    first = cc.compiler_identity([str(compiler)], tmp_path)
    assert cc.compiler_identity([str(compiler)], tmp_path) == first
    assert len(compiler_runs) == 1
    time.sleep(0.05)
    compiler.write_bytes(compiler.read_bytes())  # as an upgrade in place would
    assert cc.compiler_identity([str(compiler)], tmp_path) == first  # the same bytes
    assert len(compiler_runs) == 2
    # `zonebake check` (cache false) asks, and keeps nothing.
    kept = sorted(cache.iterdir())
    time.sleep(0.05)
    compiler.write_bytes(compiler.read_bytes())
    cc.compiler_identity([str(compiler)], tmp_path, cache=False)
    assert len(compiler_runs) == 3 and sorted(cache.iterdir()) == kept


def test_a_compiler_behind_a_script_is_asked_every_time(tmp_path, cache, monkeypatch,
                                                        compiler_runs):
    """A wrapper names nothing of what it runs: its stat proves nothing."""
    monkeypatch.setattr(objcache, "RACY", 0.0)
    script = tmp_path / "wrapper"
    script.write_text('#!/bin/sh\nexec cc "$@"\n')
    script.chmod(0o755)
    time.sleep(0.05)
    cc.compiler_identity([str(script)], tmp_path)
    cc.compiler_identity([str(script)], tmp_path)
    assert len(compiler_runs) == 2


def test_zonedata_c_is_rendered_once_for_a_configuration(tmp_path, cache, monkeypatch):
    config = zones_from_args(["example.=example.zone", "example.net.=example.net.zone"])
    text = emit.render(config)
    [kept] = [path for path in cache.iterdir() if path.name.startswith("rendered-")]

    def refused(_config):
        raise AssertionError("rendered again")
    rendering = emit._rendered
    monkeypatch.setattr(emit, "_rendered", refused)
    assert emit.render(config) == text
    # Another setting: rendered anew.
    other = type(config)(config.zones, ServerDefaults(udp_size=1400))
    with pytest.raises(AssertionError, match="rendered again"):
        emit.render(other)
    # A kept file damaged: rendered anew, the same text.
    damaged = bytearray(kept.read_bytes())
    damaged[-2] ^= 1
    kept.write_bytes(bytes(damaged))
    monkeypatch.setattr(emit, "_rendered", rendering)
    assert emit.render(config) == text == rendering(config)
    assert kept.read_bytes()[objcache.KEPT_DIGEST:] == text.encode()


def test_a_cache_that_cannot_be_made_keeps_nothing_and_fails_nothing(tmp_path, monkeypatch,
                                                                     compiler_runs):
    monkeypatch.setenv("XDG_CACHE_HOME", "/dev/null/no-cache")
    monkeypatch.setattr(objcache, "RACY", 0.0)
    compiler = fake_compiler(tmp_path)
    time.sleep(0.05)
    first = cc.compiler_identity([str(compiler)], tmp_path)
    assert cc.compiler_identity([str(compiler)], tmp_path) == first
    assert len(compiler_runs) == 2
    objcache.keep("rendered-x", b"text")
    assert objcache.read_kept("rendered-x") is None


def test_a_digest_of_files_is_taken_again_only_when_one_of_them_changes(tmp_path, cache,
                                                                      monkeypatch):
    """objcache.digested (the core's sources, core/program.py): kept under the files' stats;
    a file rewritten at its size and times, or changed too recently to tell, is read again,
    and `zonebake check` (write false) keeps nothing."""
    monkeypatch.setattr(objcache, "RACY", 0.0)
    files = [tmp_path / "a.c", tmp_path / "b.h"]
    for path in files:
        path.write_text(f"/* {path.name}, version 1 */\n")
    made: list[bytes] = []

    def make() -> bytes:
        made.append(b"".join(path.read_bytes() for path in files))
        return made[-1][:12]
    first = objcache.digested([b"flags"], files, make)
    assert objcache.digested([b"flags"], files, make) == first and len(made) == 1
    assert objcache.digested([b"other flags"], files, make) == first and len(made) == 2
    before = files[1].stat()
    time.sleep(0.05)
    files[1].write_text("/* b.h, version 2 */\n")
    os.utime(files[1], ns=(before.st_atime_ns, before.st_mtime_ns))
    assert objcache.digested([b"flags"], files, make) == first and len(made) == 3
    assert made[-1] != made[0]  # read again, and it changed
    objcache.digested([b"flags"], files, make, write=False)
    assert len(made) == 4
    monkeypatch.setattr(objcache, "RACY", 3600.0)  # every file changed lately
    objcache.digested([b"flags"], files, make)
    objcache.digested([b"flags"], files, make)
    assert len(made) == 6
