"""compiler/toolchain/replacing.py: a finished output put in place of the last one, the name holding a
whole file throughout, and the old file handed back to be freed."""

from __future__ import annotations

import os
import time

import pytest

from zonebake.toolchain import replacing


def _replaces_the_last_one(tmp_path, name: str) -> None:
    path, new = tmp_path / name, tmp_path / f".{name}.tmp"
    path.write_bytes(b"old")
    new.write_bytes(b"new")
    old = replacing.replace(new, path)
    try:
        assert path.read_bytes() == b"new"
        assert sorted(os.listdir(tmp_path)) == [name]
        assert os.pread(old, 3, 0) == b"old", "the old file, open until its descriptor closes"
        assert os.fstat(old).st_nlink == 0
    finally:
        os.close(old)


def test_a_file_takes_the_place_of_the_last_one(tmp_path):
    _replaces_the_last_one(tmp_path, "zonedata.state")


def test_a_file_where_there_was_none(tmp_path):
    path, new = tmp_path / "zonebake-server", tmp_path / ".zonebake-server.tmp"
    new.write_bytes(b"new")
    assert replacing.replace(new, path) is None
    assert sorted(os.listdir(tmp_path)) == ["zonebake-server"]
    assert path.read_bytes() == b"new"


def test_without_the_exchange_it_replaces(tmp_path, monkeypatch):
    monkeypatch.setattr(replacing, "_exchange", lambda a, b: False)
    _replaces_the_last_one(tmp_path, "zonedata.c")


def test_the_exchange_swaps_both_names_or_touches_neither(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"a")
    b.write_bytes(b"b")
    swapped = replacing._exchange(a, b)
    assert (a.read_bytes(), b.read_bytes()) == ((b"b", b"a") if swapped else (b"a", b"b"))


def test_what_is_not_a_readable_file_is_left_to_os_replace(tmp_path):
    """A directory in the way fails as os.replace fails, and changes nothing."""
    path, new = tmp_path / "zonebake-server", tmp_path / ".zonebake-server.tmp"
    path.mkdir()
    new.write_bytes(b"new")
    with pytest.raises(IsADirectoryError):
        replacing.replace(new, path)
    assert path.is_dir() and new.read_bytes() == b"new"


def test_the_old_file_is_released_to_a_child_that_holds_only_it(tmp_path, monkeypatch):
    """release: the pages of the last build's file are freed as a child exits, not as the
    build waits. The child has the file, the end of a pipe for its input and /dev/null for
    its output, so that a reader of the build's output is not kept waiting; it reads its
    input to the end, which comes once the build has closed its own descriptor of the file,
    so that the child's is the last."""
    seen, parent = tmp_path / "seen", tmp_path / "parent"
    child = tmp_path / "child"
    # The shell's own descriptors, listed by a command of its own (whose output is a pipe),
    # what the deleted file it holds has in it, and the descriptors of the build (its
    # parent) once its input ended.
    child.write_text(f"""#!/bin/sh
cat >/dev/null
ls -l /proc/$PPID/fd > {parent}
held=$(ls -l /proc/$$/fd)
for fd in /proc/$$/fd/*; do
    case "$(readlink $fd)" in *" (deleted)") cat $fd >{tmp_path / "content"};; esac
done
echo "$held" > {seen}
""")
    child.chmod(0o755)
    monkeypatch.setattr(replacing, "_WAITS_FOR_EOF", str(child))
    _replace_and_release(tmp_path)
    for _ in range(500):
        if seen.exists() and seen.read_text().endswith("\n"):
            break
        time.sleep(0.01)
    held = {line.split()[-3]: line.split(" -> ", 1)[1]
            for line in seen.read_text().splitlines() if " -> " in line}
    assert held["0"].startswith("pipe:") and {held["1"], held["2"]} == {"/dev/null"}
    assert (tmp_path / "content").read_bytes() == b"old"
    assert ".zonebake-server.tmp (deleted)" in "\n".join(held.values())
    assert ".zonebake-server.tmp" not in parent.read_text()  # closed before the child went on
    child = replacing._children[-1]
    for _ in range(500):  # the next release reaps it
        replacing._reap()
        if child not in replacing._children:
            break
        time.sleep(0.01)
    assert child not in replacing._children
    with pytest.raises(ChildProcessError):
        os.waitpid(child, os.WNOHANG)


def test_without_a_child_the_old_file_is_closed_here(tmp_path, monkeypatch):
    monkeypatch.setattr(replacing, "_WAITS_FOR_EOF", str(tmp_path / "missing"))
    _replace_and_release(tmp_path)


def _replace_and_release(tmp_path) -> None:
    path, new = tmp_path / "zonebake-server", tmp_path / ".zonebake-server.tmp"
    path.write_bytes(b"old")
    new.write_bytes(b"new")
    old = replacing.replace(new, path)
    replacing.release(old)
    with pytest.raises(OSError):
        os.fstat(old)  # closed here
