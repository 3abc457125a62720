"""compiler/toolchain/replacing.py: a finished output put in place of the last one, the name holding a
whole file throughout, and the old file handed back to be freed."""

from __future__ import annotations

import os

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
