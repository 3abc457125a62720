"""A name added to a zone signed with NSEC3 moves the compiled data only where the zone moved
(issue 40): the chain's pages other than the new hash's keep their bytes, and the groups'
regions other than those whose answers hold the changed entries keep theirs: an answer
names an entry by its own hash (runtime/zonedata.h, struct zb_chain, zb_answer_denial and
zb_entry_key), which no other hash coming renames. And the chain's directories find, for
any hash, the entry covering it, as the responder searches them."""

from __future__ import annotations

import bisect
import random
import re
import struct
from pathlib import Path

import pytest

from blob import HEAD
from buildsigned import EPOCH, ZONE, build, signed_set
from conftest import data_beside

NAMES = 20_000
CHAIN_AT = 72  # the head (64 octets), then the denial region: "zbdenial", the first zone's chain
CHAIN = struct.Struct("<BBBBHHIIIII")
PAGE = struct.Struct("<8sII")
DENIAL = struct.Struct("<HHHH")
PAGE_CUT = 2  # a page starts at a hash whose last octet is below it (ZB_NSEC3_PAGE_CUT)


def zone(extra: str = "") -> str:
    hosts = "".join(f"h{k} A 192.0.2.{k % 250 + 1}\n" for k in range(NAMES))
    return ZONE + hosts + extra


def built(directory: Path, text: str, keys: Path | None, cache: Path) -> bytes:
    directory.mkdir()
    toml = signed_set(directory, zone=text, keys=keys)
    made = build(toml, directory / "out", "-q", epoch=EPOCH, cache=cache)
    assert made.returncode == 0, made.stderr
    return data_beside(directory / "out").read_bytes()


def pages(data: bytes) -> list[bytes]:
    """The NSEC3 chain's pages, each from its hashes to its last entry's last octet."""
    kind, _, _, _, _, _, count, _, pages_off, _, npages = CHAIN.unpack_from(data, CHAIN_AT)
    assert kind == 3 and count > NAMES and npages > 50
    found = []
    for k in range(npages):
        _, off, entries = PAGE.unpack_from(data, pages_off + PAGE.size * k)
        _, nbuckets = struct.unpack_from("<II", data, off)  # struct zb_page_buckets
        hashes = off + 8 + 4 * (nbuckets + 1)
        assert nbuckets <= entries
        last = struct.unpack_from("<I", data, hashes + 20 * entries + 4 * (entries - 1))[0]
        _, _, npointers, _ = DENIAL.unpack_from(data, off + last)
        length = DENIAL.unpack_from(data, off + last)[0]
        found.append(data[off:off + last + DENIAL.size + 2 * npointers + length])
    assert sum(len(page) for page in found) < len(data)
    return found


def regions(data: bytes) -> list[bytes]:
    """Each group's region, from its pilots to the next one's."""
    _, _, groups, ngroups = HEAD.unpack_from(data)[:4]
    starts = []
    for g in range(ngroups):
        nodes_off, _, nbuckets = struct.unpack_from("<IHH", data, groups + 8 * g)
        starts.append(nodes_off - 2 * nbuckets)
    starts.append(len(data))
    return [data[starts[g]:starts[g + 1]] for g in range(ngroups)]


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> tuple[bytes, bytes]:
    """The zone built, and built again with one name added."""
    tmp_path = tmp_path_factory.mktemp("chain")
    cache = tmp_path / "cache"
    old = built(tmp_path / "old", zone(), None, cache)
    new = built(tmp_path / "new", zone("added A 192.0.2.200\n"), tmp_path / "old" / "keys",
                cache)
    return old, new


def test_a_name_added_changes_its_page_and_few_octets_elsewhere(builds):
    old, new = builds
    old_pages, new_pages = pages(old), pages(new)
    # The new hash's page, and its predecessor's when the new hash starts a page or the
    # predecessor's NSEC3 (whose next hash changed) is the last of the page before.
    assert len(set(old_pages) - set(new_pages)) <= 2
    assert 1 <= len(set(new_pages) - set(old_pages)) <= 3
    assert abs(len(new_pages) - len(old_pages)) <= 1
    old_regions, new_regions = regions(old), regions(new)
    assert len(old_regions) == len(new_regions) > 70
    changed = {g: sum(x != y for x, y in zip(a, b)) if len(a) == len(b) else len(b)
               for g, (a, b) in enumerate(zip(old_regions, new_regions)) if a != b}
    # Rewritten: the added name's group, its size changed.
    rewritten = [g for g, octets in changed.items() if octets > 32]
    assert 1 <= len(rewritten) <= 8, changed
    # Touched: answers whose cover is now the new hash's NSEC3 (its key, 12 octets), and a
    # wildcard's own-name answer naming its encloser's entry by its offset in the data, which
    # moved on (an octet or two, in the wildcard's group and its parent's). No answer names
    # an entry by its place.
    touched = {g: octets for g, octets in changed.items() if g not in rewritten}
    assert len(touched) <= 6 and sum(touched.values()) <= 5 * 12, changed


def covering(data: bytes, target: bytes) -> bytes:
    """The hash of the NSEC3 covering `target` as the responder finds it (runtime/query/
    denial.c, nsec3_entry): the directory's slot, the pages that start below the target, the
    page's own bucket, the last hash below the target in it; below every hash, the last."""
    _, _, _, bits, _, _, _, _, pages_off, dir_off, npages = CHAIN.unpack_from(data, CHAIN_AT)
    key = int.from_bytes(target[:8], "big")
    slot = key >> (64 - bits) if bits else 0
    below, end = struct.unpack_from("<II", data, dir_off + 4 * slot)

    def page(k):
        first, off, count = PAGE.unpack_from(data, pages_off + PAGE.size * k)
        shift, nbuckets = struct.unpack_from("<B3xI", data, off)
        hashes = off + 8 + 4 * (nbuckets + 1)
        return first, off, count, shift, nbuckets, hashes

    while below < end and data[page(below)[5]:page(below)[5] + 20] < target:
        below += 1
    first, off, count, shift, nbuckets, hashes = page(below - 1 if below else npages - 1)
    if not below:
        return data[hashes + 20 * (count - 1):hashes + 20 * count]
    bucket = min((key - int.from_bytes(first, "big")) >> shift, nbuckets - 1)
    lo, hi = struct.unpack_from("<II", data, off + 8 + 4 * bucket)
    while lo < hi and data[hashes + 20 * lo:hashes + 20 * lo + 20] < target:
        lo += 1
    assert lo >= 1
    return data[hashes + 20 * (lo - 1):hashes + 20 * lo]


def page_hashes(data: bytes) -> list[list[bytes]]:
    """Each page's hashes."""
    _, _, _, _, _, _, _, _, pages_off, _, npages = CHAIN.unpack_from(data, CHAIN_AT)
    found = []
    for k in range(npages):
        _, off, entries = PAGE.unpack_from(data, pages_off + PAGE.size * k)
        _, nbuckets = struct.unpack_from("<II", data, off)
        hashes = off + 8 + 4 * (nbuckets + 1)
        found.append([data[hashes + 20 * i:hashes + 20 * i + 20] for i in range(entries)])
    return found


def test_the_directories_find_the_covering_hash(builds):
    data = builds[0]
    by_page = page_hashes(data)
    every = [h for hashes in by_page for h in hashes]
    assert len(every) == CHAIN.unpack_from(data, CHAIN_AT)[6] and every == sorted(every)
    # Pages start where the hashes' last octet says, and only there.
    assert [hashes[0] for hashes in by_page] == [h for i, h in enumerate(every)
                                                 if i == 0 or h[19] < PAGE_CUT]
    rng = random.Random(7)
    targets = [rng.randbytes(20) for _ in range(3000)] + [h[:19] + bytes([h[19] ^ 1])
                                                          for h in every[::50]]
    targets += [bytes(20), b"\xff" * 20, every[0], every[-1]]
    for target in targets:
        i = bisect.bisect_left(every, target)
        assert covering(data, target) == every[i - 1], target.hex()
