"""Where a built server's data goes, by kind (issue 41: a signed server's memory against
Knot's): the answers with DO clear, with DO set, those both share, the answers to ANY over
TCP, the nodes and type entries, the names, the denial region (NSEC/NSEC3 chains with their
signatures, the tables that find them) and the rest (the pilots, the groups' table, padding).
Read back from the data inside OUTDIR/zonebake-server as tests/blob.py reads it, each answer counted once per
group's region as it is stored.

    .venv/bin/python tests/scale/breakdown.py OUTDIR
"""

from __future__ import annotations

import argparse
import struct
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]
from blob import ALIAS, ANSWER, GROUP, HEAD, NODE, TYPE_ENTRY, Head, server_data  # noqa: E402

ANY_OVER_TCP = 0  # runtime/zonedata.h: ZB_KEY_ANY_OVER_TCP
MISS_NODE = 1


DENIAL = 20  # struct zb_answer_denial, then its keys (struct zb_entry_key, 12 octets)


def answer_size(data: bytes, at: int) -> int:
    fields = ANSWER.unpack_from(data, at)
    fixups_off, nfixups, denial = fields[7], fields[3], fields[12]
    end = fixups_off + 2 * nfixups
    if fields[8] and not fields[9]:  # an alias's: its struct zb_answer_alias after
        return max(end, fields[11] + ALIAS.size)
    return max(end, denial + DENIAL + 12 * data[at + denial + 2] if denial else 0)


def breakdown(outdir: Path) -> Counter:
    data = server_data(outdir / "zonebake-server")
    n = Head._make(HEAD.unpack_from(data))
    runs = 1 + n.signed_nodes
    octets: Counter = Counter()
    # After the head: the denial region, the CH answers, the zones' numbers.
    octets["denial region and CH answers"] = n.groups_off - HEAD.size
    kinds: dict[int, set] = {}  # answer offset -> the kinds that use it

    def node(at: int, run: int, seen_nodes: set) -> None:
        if at in seen_nodes:
            return
        seen_nodes.add(at)
        name_off, types_off, default, miss, ntypes, name_len, miss_kind = NODE.unpack_from(data, at)
        octets["nodes"] += NODE.size
        if default == 0:
            return  # an empty slot
        octets["names"] += -(-name_len // 16) * 16
        octets["type entries"] += TYPE_ENTRY.size * ntypes
        label = "DO set" if run else "DO clear"
        for k in range(ntypes):
            entry = at + types_off + TYPE_ENTRY.size * k
            qtype, _, offset = TYPE_ENTRY.unpack_from(data, entry)
            kind = "ANY over TCP" if qtype == ANY_OVER_TCP else label
            kinds.setdefault(entry + offset, set()).add(kind)
        kinds.setdefault(at + default, set()).add(label)
        if miss_kind == MISS_NODE:
            node(at + miss, run, seen_nodes)
        elif miss:
            kinds.setdefault(at + miss, set()).add(label)

    for g in range(n.ngroups):
        nodes_off, nslots, _ = GROUP.unpack_from(data, n.groups_off + GROUP.size * g)
        seen: set = set()
        for slot in range(nslots):
            for run in range(runs):
                node(nodes_off + NODE.size * (runs * slot + run), run, seen)
    for at, used in kinds.items():
        kind = next(iter(used)) if len(used) == 1 else \
            "ANY over TCP" if "ANY over TCP" in used else "both DO clear and set"
        octets[f"answers: {kind}"] += answer_size(data, at)
    octets["pilots, groups' table, padding"] = len(data) - sum(octets.values())
    return octets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir", type=Path)
    args = parser.parse_args()
    octets = breakdown(args.outdir)
    total = sum(octets.values())
    for kind, size in octets.most_common():
        print(f"{kind:34} {size / 2**20:10.1f} MiB {100 * size / total:5.1f}%")
    print(f"{'the whole data':34} {total / 2**20:10.1f} MiB")


if __name__ == "__main__":
    main()
