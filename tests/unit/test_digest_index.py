"""Where a digest falls among sorted ones (compiler/core/base/digestindex.c): the NSEC3 owner
that matches or covers a hash, and whether the verification cache holds a signature's key;
and the sort of a build's cache keys, which is Python's sorted for each set below.
Each rank and match is bisect's, for evenly spread digests, for digests that share their
first octets (a zone's author chooses its NSEC3 owners, and the index's table must then
leave a binary search, not a wrong answer), for repeated ones, and for sets of 0 to 3."""

from __future__ import annotations

import bisect
import random
import subprocess

import pytest

from conftest import ROOT, c_harness


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    return c_harness(tmp_path_factory, "digest_ranks",
                     ROOT / "compiler" / "core" / "base" / "digestindex.c")


def ranks(binary, width: int, digests: list[bytes], queries: list[bytes]) -> list[tuple]:
    text = "\n".join([str(width), *(d.hex() for d in digests), "-",
                      *(q.hex() for q in queries)]) + "\n"
    out = subprocess.run([str(binary)], input=text, capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return [tuple(map(int, line.split())) for line in out.splitlines()]


def expected(digests: list[bytes], query: bytes) -> tuple[int, int]:
    rank = bisect.bisect_right(digests, query)
    return rank, int(rank > 0 and digests[rank - 1] == query)


def neighbours(digest: bytes) -> list[bytes]:
    """The digest, and the ones just before and after it."""
    value, width = int.from_bytes(digest, "big"), len(digest)
    return [(v % 2 ** (8 * width)).to_bytes(width, "big") for v in (value - 1, value, value + 1)]


def sets(width: int) -> dict[str, list[bytes]]:
    rng = random.Random(width)
    shared = rng.randbytes(3)
    return {
        "empty": [],
        "one": [rng.randbytes(width)],
        "three": [rng.randbytes(width) for _ in range(3)],
        "spread": [rng.randbytes(width) for _ in range(3000)],
        "a shared prefix": [shared + rng.randbytes(width - 3) for _ in range(2000)]
        + [rng.randbytes(width) for _ in range(500)],
        "repeated": [d for d in (rng.randbytes(width) for _ in range(300)) for _ in range(3)],
        "ends": [bytes(width), b"\xff" * width] + [rng.randbytes(width) for _ in range(100)],
        "forty equal": [shared + bytes(width - 3)] * 40 + [rng.randbytes(width) for _ in range(50)],
    }


@pytest.mark.parametrize("width", [20, 32])
@pytest.mark.parametrize("kind", ["empty", "one", "three", "spread", "a shared prefix",
                                  "repeated", "ends", "forty equal"])
def test_rank_and_match_are_bisects(binary, width, kind):
    digests = sorted(sets(width)[kind])
    rng = random.Random(kind)
    queries = [q for d in digests for q in neighbours(d)]
    queries += [rng.randbytes(width) for _ in range(500)]
    queries += [bytes(width), b"\xff" * width]
    if digests:
        queries += [digests[0][:3] + rng.randbytes(width - 3) for _ in range(200)]
    got = ranks(binary, width, digests, queries)
    want = [expected(digests, q) for q in queries]
    wrong = [(q.hex(), g, w) for q, g, w in zip(queries, got, want) if g != w]
    assert len(got) == len(queries)
    assert wrong == []


@pytest.mark.parametrize("width", [20, 32])
@pytest.mark.parametrize("kind", ["empty", "one", "three", "spread", "a shared prefix",
                                  "repeated", "ends", "forty equal"])
def test_the_sort_is_pythons(binary, width, kind):
    digests = sets(width)[kind]
    random.Random(kind).shuffle(digests)
    text = "\n".join([str(width), *(d.hex() for d in digests), "-"]) + "\n"
    out = subprocess.run([str(binary), "--sort"], input=text, capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert [bytes.fromhex(line) for line in out.split()] == sorted(digests)
