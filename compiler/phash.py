"""Stage 6: a perfect hash over the lowercased wire-format names of the tree.

Hash-and-displace in the PTHash style: a 64-bit hash of the key picks a bucket; each bucket
stores a small "pilot" chosen at build time so that the keys of every bucket land on free,
distinct slots. Looking a key up costs one hash, one pilot load and one slot load, whatever
the size of the set. The table is minimal (one slot per key) below 1000 keys and 97% full above,
and every slot names its key so a miss is confirmed by one comparison.

`zb_hash` has a twin in runtime/hash.h; tests check they agree. Change both or neither.
"""

from __future__ import annotations

from dataclasses import dataclass

from .progress import Each, uncounted

MASK64 = (1 << 64) - 1
HASH_M = 0x9E3779B97F4A7C15  # 2^64 / golden ratio: an odd multiplier that spreads bits up
PILOT_M = 0xC2B2AE3D27D4EB4F
SLOT_M = 0xD6E8FEB86659FD93
MAX_PILOT = 0xFFFF  # pilots are stored as uint16
EMPTY_SLOT = 0xFFFFFFFF
KEYS_PER_BUCKET = 4
LOAD_FACTOR = 0.97  # near-minimal: 3% spare slots make the last buckets cheap to place


def fmix64(h: int) -> int:
    """MurmurHash3's 64-bit finalizer: every input bit affects every output bit."""
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK64
    h ^= h >> 33
    return h


def zb_hash(key: bytes, seed: int) -> int:
    """Eight bytes at a time, little-endian, the last word zero-padded."""
    h = (seed ^ (len(key) * HASH_M)) & MASK64
    for i in range(0, len(key), 8):
        h = ((h ^ int.from_bytes(key[i:i + 8], "little")) * HASH_M) & MASK64
        h ^= h >> 32
    return fmix64(h)


def bucket_of(h: int, nbuckets: int) -> int:
    return ((h >> 32) * nbuckets) >> 32


def slot_of(h: int, pilot: int, nslots: int) -> int:
    x = ((h ^ ((pilot * PILOT_M) & MASK64)) * SLOT_M) & MASK64
    return (x * nslots) >> 64


@dataclass(frozen=True)
class PerfectHash:
    seed: int
    pilots: tuple[int, ...]  # one per bucket
    slots: tuple[int, ...]  # key index per slot, EMPTY_SLOT where none

    def slot(self, key: bytes) -> int:
        h = zb_hash(key, self.seed)
        return slot_of(h, self.pilots[bucket_of(h, len(self.pilots))], len(self.slots))

    def lookup(self, key: bytes, keys: list[bytes]) -> int | None:
        """The index of key in keys, or None: what the responder does, for tests."""
        index = self.slots[self.slot(key)]
        return index if index != EMPTY_SLOT and keys[index] == key else None


def _find_pilot(member_hashes: list[int], slots: list[int]) -> int | None:
    """The first pilot that sends every hash of a bucket to its own free slot."""
    nslots = len(slots)
    for pilot in range(MAX_PILOT + 1):
        mix = (pilot * PILOT_M) & MASK64
        placed = set()
        for h in member_hashes:
            s = ((((h ^ mix) * SLOT_M) & MASK64) * nslots) >> 64
            if slots[s] != EMPTY_SLOT or s in placed:
                break
            placed.add(s)
        else:
            return pilot
    return None


class PerfectHashFailed(Exception):
    pass


def build_perfect_hash(keys: list[bytes], attempts: int = 32,
                       each: Each = uncounted) -> PerfectHash:
    """Build over distinct keys; deterministic (the seeds tried are 0, 1, 2, ...). `each`
    wraps the walks over the keys and the buckets (progress reports)."""
    if len(set(keys)) != len(keys):
        raise ValueError("perfect hash keys must be distinct")
    n = len(keys)
    nslots = max(1, n if n < 1000 else int(n / LOAD_FACTOR))
    nbuckets = max(1, (n + KEYS_PER_BUCKET - 1) // KEYS_PER_BUCKET)
    for seed in range(attempts):
        result = _try_seed(keys, seed, nbuckets, nslots, each)
        if result is not None:
            return result
    raise PerfectHashFailed(f"no perfect hash found for {n} keys in {attempts} seeds")


def _try_seed(keys: list[bytes], seed: int, nbuckets: int, nslots: int,
              each: Each) -> PerfectHash | None:
    again = f" (seed {seed})" if seed else ""  # a retry counts from zero again: say why
    hashes = [zb_hash(key, seed) for key in each(keys, len(keys), "keys hashed" + again)]
    buckets: list[list[int]] = [[] for _ in range(nbuckets)]
    for index, h in enumerate(hashes):
        buckets[bucket_of(h, nbuckets)].append(index)
    # Largest buckets first, while the table is empty enough to place them (ties by number,
    # so the result does not depend on anything but the keys and the seed); empty buckets
    # keep pilot 0.
    filled = [b for b in range(nbuckets) if buckets[b]]
    order = sorted(filled, key=lambda b: (-len(buckets[b]), b))
    slots = [EMPTY_SLOT] * nslots
    pilots = [0] * nbuckets
    for b in each(order, len(order), "buckets placed" + again):
        members = buckets[b]
        pilot = _find_pilot([hashes[i] for i in members], slots)
        if pilot is None:
            return None  # two keys with the same hash, or an unlucky seed
        pilots[b] = pilot
        for index in members:
            slots[slot_of(hashes[index], pilot, nslots)] = index
    return PerfectHash(seed, tuple(pilots), tuple(slots))
