"""The perfect hash: the responder's hash function (runtime/hash.h) gives the values pinned
here, and the core's perfect hash (compiler/core/layout/phash.c) gives every key a slot of its
own, in a table no bigger than it must be, the same for the same keys."""

from __future__ import annotations

import random
import struct
import subprocess

import dns.name
import pytest

from conftest import ROOT, TESTS

# Pinned: a change to the hash changes every compiled binary's layout, and must be meant.
KNOWN = [
    (b"", 0, 0x7F96844C7F94E810),
    (b"\x03www\x07example\x00", 0, 0xFBD40F842B5AF354),
    (b"\x03www\x07example\x00", 7, 0xE7750C63CA3B3812),
]
MASK = (1 << 64) - 1
CFLAGS = ["-std=gnu11", "-O2", "-pthread", "-Wall", "-Werror", f"-I{ROOT / 'runtime'}"]


@pytest.fixture(scope="module")
def c_hash(tmp_path_factory):
    binary = tmp_path_factory.mktemp("hash") / "hash_vectors"
    subprocess.run(["cc", *CFLAGS, str(TESTS / "c" / "hash_vectors.c"), "-o", str(binary)],
                   check=True)
    return binary


@pytest.fixture(scope="module")
def c_phash(tmp_path_factory):
    binary = tmp_path_factory.mktemp("phash") / "phash_slots"
    core = ROOT / "compiler" / "core"
    subprocess.run(["cc", *CFLAGS, f"-I{core}", str(TESTS / "c" / "phash_slots.c"),
                    str(core / "layout" / "phash.c"), str(core / "base" / "util.c"), "-o",
                    str(binary)], check=True)
    return binary


def test_known_values(c_hash):
    stdin = "".join(f"{seed} 1 1 0 {key.hex() or '-'}\n" for key, seed, _ in KNOWN)
    output = subprocess.run([str(c_hash)], input=stdin, capture_output=True, text=True,
                            check=True).stdout.split("\n")
    assert [int(line.split()[0]) for line in output[:len(KNOWN)]] == [v for _, _, v in KNOWN]


def mum(a: int, b: int) -> int:
    product = a * b
    return (product & MASK) ^ (product >> 64)


def reference_hash(key: bytes, seed: int) -> int:
    """runtime/hash.h's zb_hash as its comment states it: from the seed's key, a multiply a
    block of sixteen octets, the last zero-padded, then one more."""
    k = ((seed + 1) * 0x9E3779B97F4A7C15 & MASK) ^ 0xA0761D6478BD642F
    h = ((k << 32 | k >> 32) & MASK) ^ len(key)
    for i in range(0, len(key), 16):
        lo, hi = struct.unpack("<QQ", key[i:i + 16].ljust(16, b"\0"))
        h = mum(lo ^ h, hi ^ k)
    return mum(h, 0xE7037ED1A0B428DB)


def test_known_values_are_the_stated_hash():
    assert [reference_hash(key, seed) for key, seed, _ in KNOWN] == [v for _, _, v in KNOWN]


def test_every_length_and_seed(c_hash):
    rng = random.Random(9)
    cases = [(bytes(rng.randrange(256) for _ in range(n)), rng.choice([0, 1, 31, 2**40]))
             for n in range(0, 300)]
    stdin = "".join(f"{seed} 1 1 0 {key.hex() or '-'}\n" for key, seed in cases)
    output = subprocess.run([str(c_hash)], input=stdin, capture_output=True, text=True,
                            check=True).stdout.split("\n")
    assert [int(line.split()[0]) for line in output[:len(cases)]] == \
        [reference_hash(key, seed) for key, seed in cases]


def perfect_hash(binary, keys: list[bytes]) -> tuple[list[int], list[tuple], list[tuple]]:
    """(seed, ngroups, nslots, max_pilot), each group's (nslots, nbuckets), and each key's
    (group, slot in the group)."""
    output = subprocess.run([str(binary)], input="".join(k.hex() + "\n" for k in keys),
                            capture_output=True, text=True, check=True).stdout.split("\n")
    head = [int(x) for x in output[0].split()]
    rows = [tuple(int(x) for x in line.split()) for line in output[1:] if line]
    return head, rows[:head[1]], rows[head[1]:]


def reference_group(h: int, ngroups: int) -> int:
    """runtime/hash.h's zb_group_of: linear hashing on the hash's low bits."""
    mask = 1
    while mask < ngroups:
        mask = mask << 1 | 1
    g = h & mask
    return g if g < ngroups else g & (mask >> 1)


def names(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return list(dict.fromkeys(
        dns.name.from_text(f"h{rng.randrange(10**9)}.z{i % 7}.example").to_wire()
        for i in range(n)))


@pytest.mark.parametrize("n", [1, 2, 3, 10, 999, 1000, 5000])
def test_every_key_gets_its_own_slot(c_phash, n):
    keys = names(n, n)
    (seed, ngroups, nslots, max_pilot), groups, placed = perfect_hash(c_phash, keys)
    assert len(placed) == len(keys) and len(set(placed)) == len(keys)
    assert ngroups == -(-len(keys) // 256)
    assert [g for g, _ in placed] == [reference_group(reference_hash(k, seed), ngroups)
                                      for k in keys]
    assert all(0 <= s < groups[g][0] for g, s in placed)
    assert sum(slots for slots, _ in groups) == nslots
    if n < 16:
        assert nslots == len(keys)  # minimal
    else:
        assert nslots <= len(keys) / 0.97 + ngroups  # near-minimal, group by group
    assert max_pilot <= 0xFFFF


def test_the_same_keys_give_the_same_hash(c_phash):
    keys = [dns.name.from_text(f"n{i}.example").to_wire() for i in range(3000)]
    head, groups, placed = perfect_hash(c_phash, keys)
    assert perfect_hash(c_phash, keys) == (head, groups, placed)
    # In another order too: a group's placement depends on its keys, not on their order.
    assert perfect_hash(c_phash, keys[::-1]) == (head, groups, placed[::-1])


@pytest.mark.parametrize("change", ["add", "remove"])
def test_one_key_more_or_less_moves_one_group(c_phash, change):
    """A layout that moves only where the zone moved (DESIGN.md): one name added or removed
    re-places the names of its group, and when the count of groups changes, of the group
    linear hashing splits (or joins) and the new one; every other name keeps its group and
    slot."""
    for n in (3000, 3072, 3073):  # inside a group count, and one each side of a split
        keys = names(n + 50, n)[:n]
        other = keys + [dns.name.from_text("added.example").to_wire()] if change == "add" \
            else keys[:-1]
        _, _, before = perfect_hash(c_phash, keys)
        _, _, after = perfect_hash(c_phash, other)
        common = min(len(keys), len(other))
        moved = {before[i][0] for i in range(common) if before[i] != after[i]} | \
            {after[i][0] for i in range(common) if before[i] != after[i]}
        assert len(moved) <= (1 if n == 3000 else 3), (n, moved)
