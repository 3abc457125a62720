"""A large zone set's TOML (compiler/configcache.py): read as tomllib reads it, the second time
from the document kept in the user's cache under a digest of its octets; an edit of the file,
a damaged cache, a document JSON cannot hold are read again by tomllib; a file that is not
UTF-8 is refused clearly."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib

import pytest

from zonebake import configcache
from zonebake.config import load_toml
from zonebake.errors import UsageError


def large_set(zones: int = 2000) -> str:
    text = "[server]\nidentity = \"ns.test\"\n\n" + "".join(
        f"[[zone]]\norigin = \"customer{i}.test.\"\nfile = \"customer{i}.zone\"\n\n"
        for i in range(zones))
    assert len(text.encode()) >= configcache.CACHED_FROM
    return text


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "zonebake" / configcache.CACHE_FILE


def parses(monkeypatch) -> list[str]:
    """tomllib's parses from here on, counted."""
    seen: list[str] = []
    loads = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: seen.append(text) or loads(text))
    return seen


def test_a_large_file_is_read_from_the_cache_the_second_time(tmp_path, cache, monkeypatch):
    path = tmp_path / "zonebake.toml"
    path.write_text(large_set())
    seen = parses(monkeypatch)
    first = load_toml(path)
    assert len(seen) == 1 and cache.is_file()
    second = load_toml(path)
    assert len(seen) == 1  # not parsed again
    assert second == first and len(second.zones) == 2000
    assert second.server.identity == "ns.test"


def test_an_edit_of_the_same_size_is_read_again(tmp_path, cache, monkeypatch):
    path = tmp_path / "zonebake.toml"
    text = large_set()
    path.write_text(text)
    load_toml(path)
    path.write_text(text.replace("customer7.test.", "customer8.test.", 1))  # same size
    seen = parses(monkeypatch)
    with pytest.raises(UsageError, match="zone customer8.test. is given twice"):
        load_toml(path)
    assert len(seen) == 1


@pytest.mark.parametrize("damage", ["cut short", "another file's key", "not a document"])
def test_a_damaged_cache_is_not_used(damage, tmp_path, cache, monkeypatch):
    path = tmp_path / "zonebake.toml"
    path.write_text(large_set())
    first = load_toml(path)
    kept = json.loads(cache.read_text())
    if damage == "cut short":
        cache.write_text(cache.read_text()[:-100])
    elif damage == "another file's key":
        kept["document"]["zone"] = kept["document"]["zone"][:1]
        cache.write_text(json.dumps({"key": "0" * 32, "document": kept["document"]}))
    else:
        cache.write_text(json.dumps({"key": kept["key"], "document": [1, 2]}))
    seen = parses(monkeypatch)
    assert load_toml(path) == first
    assert len(seen) == 1  # parsed again


def test_a_document_json_cannot_hold_is_not_kept(tmp_path, cache):
    path = tmp_path / "zonebake.toml"
    path.write_text("when = 2026-11-30T12:00:00Z\n" + large_set())
    with pytest.raises(UsageError, match="unknown table"):  # as without the cache
        load_toml(path)
    assert not cache.exists()


def test_a_small_file_is_not_kept(tmp_path, cache):
    path = tmp_path / "zonebake.toml"
    path.write_text('[[zone]]\norigin = "example.com."\nfile = "example.com.zone"\n')
    assert len(load_toml(path).zones) == 1
    assert not cache.exists()


@pytest.mark.parametrize("size", ["small", "large"])
def test_a_file_that_is_not_utf8_is_refused_clearly(size, tmp_path, cache):
    path = tmp_path / "zonebake.toml"
    text = large_set() if size == "large" else ""
    path.write_bytes(text.encode() + b'[server]\nidentity = "\xff"\n')
    run = subprocess.run([sys.executable, "-m", "zonebake", "build", "-c", str(path), "-o",
                          str(tmp_path / "out")], capture_output=True, text=True)
    at = len(text.encode()) + len('[server]\nidentity = "') + 1
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == f"zonebake: {path}: not UTF-8 text (octet {at})\n"
    assert not (tmp_path / "out").exists()
