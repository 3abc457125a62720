"""A name added to a zone signed with NSEC3 moves the compiled data only where the zone moved
(issue 40): the chain's pages other than the new hash's keep their bytes, and the groups'
regions other than those whose answers hold the changed entries keep theirs
(runtime/zonedata.h, struct zb_chain and zb_answer_denial)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

from buildsigned import ZONE, build, signed_set

NAMES = 20_000
EPOCH = 1_795_000_000
CHAIN_AT = 72  # 64 zeros, then the denial region: "zbdenial", the first zone's chain
CHAIN = struct.Struct("<BBBBHHIIIII")
PAGE = struct.Struct("<8sII")
DENIAL = struct.Struct("<HHHH")


def zone(extra: str = "") -> str:
    hosts = "".join(f"h{k} A 192.0.2.{k % 250 + 1}\n" for k in range(NAMES))
    return ZONE + hosts + extra


def built(directory: Path, text: str, keys: Path | None, cache: Path) -> tuple[bytes, str]:
    directory.mkdir()
    toml = signed_set(directory, zone=text, keys=keys)
    made = build(toml, directory / "out", "-q", epoch=EPOCH, cache=cache)
    assert made.returncode == 0, made.stderr
    return ((directory / "out" / "zonedata.bin").read_bytes(),
            (directory / "out" / "zonedata.c").read_text())


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


def regions(data: bytes, zonedata: str) -> list[bytes]:
    """Each group's region, from its pilots to the next one's."""
    groups = int(re.search(r"zb_data \+ (\d+)\)", zonedata).group(1))
    ngroups = int(re.search(r"\.ngroups = (\d+)u", zonedata).group(1))
    starts = []
    for g in range(ngroups):
        nodes_off, _, nbuckets = struct.unpack_from("<IHH", data, groups + 8 * g)
        starts.append(nodes_off - 2 * nbuckets)
    starts.append(len(data))
    return [data[starts[g]:starts[g + 1]] for g in range(ngroups)]


def test_a_name_added_changes_its_page_and_few_regions(tmp_path):
    cache = tmp_path / "cache"
    old, old_c = built(tmp_path / "old", zone(), None, cache)
    new, new_c = built(tmp_path / "new", zone("added A 192.0.2.200\n"), tmp_path / "old" / "keys",
                       cache)
    old_pages, new_pages = pages(old), pages(new)
    # The new hash's page, and its predecessor's when the new hash starts a page or the
    # predecessor's NSEC3 (whose next hash changed) is the last of the page before.
    assert len(set(old_pages) - set(new_pages)) <= 2
    assert 1 <= len(set(new_pages) - set(old_pages)) <= 3
    assert abs(len(new_pages) - len(old_pages)) <= 1
    old_regions, new_regions = regions(old, old_c), regions(new, new_c)
    assert len(old_regions) == len(new_regions) > 70
    changed = [g for g, (a, b) in enumerate(zip(old_regions, new_regions)) if a != b]
    # The added name's group; the groups of answers that hold the NSEC3 whose interval the
    # new hash cut (its owner's NODATA, the NXDOMAIN below names whose wildcard it covered).
    assert 1 <= len(changed) <= 8, changed
