"""The data object's directory in memory (compiler/toolchain/scratch.py): each build's own,
removed when done, and what a killed build left there removed by the next one, never a
directory a running build holds."""

import os
import signal
import subprocess
import sys
import time

import pytest

from zonebake.toolchain import scratch

OLD = time.time() - 3600  # a directory made an hour ago


@pytest.fixture
def memory(tmp_path, monkeypatch):
    root = tmp_path / "shm"
    root.mkdir()
    monkeypatch.setattr(scratch, "RAM_DIRECTORY", root)
    return root


def _made_long_ago(path):
    os.utime(path, (OLD, OLD))
    return path


def test_a_build_writes_in_a_directory_of_its_own_removed_after(memory, tmp_path):
    with scratch.directory_for(1, tmp_path) as first:
        assert first.parent == memory and first.name.startswith(scratch.PREFIX)
        (first / "zonedata.o").write_bytes(b"x" * 4096)
        with scratch.directory_for(1, tmp_path) as second:
            assert second != first and second.parent == memory
            _made_long_ago(first)  # held: the second build leaves it
        assert first.is_dir() and not second.exists()
    assert os.listdir(memory) == []


def test_without_room_in_memory_the_fallback_is_used(memory, tmp_path):
    free = os.statvfs(memory)
    with scratch.directory_for(free.f_bavail * free.f_frsize + 1, tmp_path) as where:
        assert where == tmp_path
    assert tmp_path.is_dir()  # the fallback is the output's directory: never removed


def test_what_a_killed_build_left_is_removed_and_nothing_else(memory, tmp_path):
    # A build killed while it held its directory: its lock went with it.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from pathlib import Path\n"
         "from zonebake.toolchain import scratch\n"
         f"scratch.RAM_DIRECTORY = Path({str(memory)!r})\n"
         f"with scratch.directory_for(1, Path({str(tmp_path)!r})) as d:\n"
         "    (d / 'zonedata.o').write_bytes(bytes(1 << 20))\n"
         "    print(d, flush=True)\n"
         "    time.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        left = memory / os.path.basename(holder.stdout.readline().strip())
        assert (left / "zonedata.o").stat().st_size == 1 << 20
        _made_long_ago(left)
        with scratch.directory_for(1, tmp_path):
            assert left.is_dir()  # its build runs still: kept
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    young = memory / f"{scratch.PREFIX}young"  # made a moment ago, about to be locked
    young.mkdir()
    others = [memory / "another-program", memory / ".zonebake-other"]
    for path in others:
        _made_long_ago(path.mkdir() or path)
    (memory / f"{scratch.PREFIX}file").write_bytes(b"")  # not a directory: not a build's
    _made_long_ago(memory / f"{scratch.PREFIX}file")
    with scratch.directory_for(1, tmp_path) as mine:
        assert not left.exists()
        assert young.is_dir() and all(path.is_dir() for path in others)
        assert (memory / f"{scratch.PREFIX}file").exists()
    assert sorted(os.listdir(memory)) == sorted(
        [young.name, *(path.name for path in others), f"{scratch.PREFIX}file"])
    assert not mine.exists()
