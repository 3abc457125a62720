"""The perfect hash: the Python and C hash functions agree, and every key gets its own slot."""

from __future__ import annotations

import random
import subprocess

import dns.name
import pytest

from conftest import ROOT, TESTS
from zonebake import phash

# Pinned so that a change to the hash (in both languages at once) is noticed: it changes
# every compiled binary's layout.
KNOWN = [
    (b"", 0, 0x0),
    (b"\x03www\x07example\x00", 0, 0xA695F8E4529BE096),
    (b"\x03www\x07example\x00", 7, 0x8E34C13CE8736369),
]


def vectors() -> list[tuple[int, int, int, int, bytes]]:
    rng = random.Random(2026)
    keys = [b"", b"\x00", b"\x03www\x07example\x00", bytes(range(256)), b"\xff" * 255]
    keys += [bytes(rng.randrange(256) for _ in range(n)) for n in range(1, 40)]
    keys += [dns.name.from_text(f"host{i}.example.com").to_wire() for i in range(50)]
    out = []
    for i, key in enumerate(keys):
        seed = rng.choice([0, 1, 7, 2**63 + 5, 2**64 - 1])
        out.append((seed, rng.randrange(1, 2**32), rng.randrange(1, 2**32),
                    rng.randrange(65536), key))
    return out


@pytest.fixture(scope="module")
def c_hash(tmp_path_factory):
    binary = tmp_path_factory.mktemp("hash") / "hash_vectors"
    subprocess.run(["cc", "-std=gnu11", "-O2", "-Wall", "-Werror", f"-I{ROOT / 'runtime'}",
                    str(TESTS / "c" / "hash_vectors.c"), "-o", str(binary)], check=True)
    return binary


def test_python_and_c_agree(c_hash):
    cases = vectors()
    stdin = "".join(f"{s} {b} {n} {p} {k.hex() or '-'}\n" for s, b, n, p, k in cases)
    output = subprocess.run([str(c_hash)], input=stdin, capture_output=True, text=True,
                            check=True).stdout.split("\n")
    assert len(output) == len(cases) + 1
    for (seed, nbuckets, nslots, pilot, key), line in zip(cases, output):
        h = phash.zb_hash(key, seed)
        expected = f"{h} {phash.bucket_of(h, nbuckets)} {phash.slot_of(h, pilot, nslots)}"
        assert line == expected, key.hex()


def test_known_values():
    for key, seed, value in KNOWN:
        assert phash.zb_hash(key, seed) == value


@pytest.mark.parametrize("n", [1, 2, 3, 10, 999, 1000, 5000])
def test_every_key_gets_its_own_slot(n):
    rng = random.Random(n)
    keys = list({dns.name.from_text(f"h{rng.randrange(10**9)}.z{i % 7}.example").to_wire()
                 for i in range(n)})
    ph = phash.build_perfect_hash(keys)
    slots = [ph.slot(key) for key in keys]
    assert len(set(slots)) == len(keys)
    assert all(ph.slots[s] == i for i, s in enumerate(slots))
    assert sum(s != phash.EMPTY_SLOT for s in ph.slots) == len(keys)
    if n < 1000:
        assert len(ph.slots) == len(keys)  # minimal
    else:
        assert len(ph.slots) <= len(keys) / 0.97 + 1  # near-minimal
    assert max(ph.pilots) <= phash.MAX_PILOT
    # Keys not in the set are recognised as absent.
    for i in range(100):
        stranger = dns.name.from_text(f"stranger{i}.example").to_wire()
        assert ph.lookup(stranger, keys) is None


def test_build_is_deterministic():
    keys = [dns.name.from_text(f"n{i}.example").to_wire() for i in range(3000)]
    assert phash.build_perfect_hash(keys) == phash.build_perfect_hash(list(keys))


def test_duplicate_keys_are_refused():
    with pytest.raises(ValueError):
        phash.build_perfect_hash([b"\x01a\x00", b"\x01a\x00"])
