"""The benchmark's zone and queries, deterministic: a zone of 100,000 names (hosts with A and
some AAAA, delegations with glue) and a query file of about 70% existing names, 10% NODATA,
10% NXDOMAIN and 10% referrals, letter case randomised. Lines are `NAME TYPE`, as dnsperf
reads them; the same file drives tests/bench/loadgen.c."""

from __future__ import annotations

import argparse
import random
from pathlib import Path

ORIGIN = "bench.example."


def mixed_case(name: str, rng: random.Random) -> str:
    return "".join(c.upper() if c.isalpha() and rng.random() < 0.5 else c for c in name)


def generate(zone: Path, queries: Path, names: int = 100_000, count: int = 200_000,
             seed: int = 1) -> None:
    rng = random.Random(seed)
    cuts = names // 20
    hosts = names - cuts
    lines = [f"$ORIGIN {ORIGIN}", "$TTL 3600",
             "@ SOA ns1 hostmaster 1 7200 900 1209600 300", "@ NS ns1", "@ NS ns2",
             "ns1 A 192.0.2.1", "ns2 A 192.0.2.2"]
    for i in range(hosts):
        lines.append(f"host{i} A 10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}")
        if i % 3 == 0:
            lines.append(f"host{i} AAAA 2001:db8::{i >> 16:x}:{i & 0xffff:x}")
    for i in range(cuts):
        lines += [f"cust{i} NS ns1.cust{i}", f"cust{i} NS ns2.cust{i}",
                  f"ns1.cust{i} A 198.51.{i >> 8 & 255}.{i & 255}",
                  f"ns2.cust{i} A 203.0.{i >> 8 & 255}.{i & 255}"]
    zone.write_text("\n".join(lines) + "\n")

    out = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.70:
            i = rng.randrange(hosts)
            name, qtype = f"host{i}.{ORIGIN}", "AAAA" if i % 3 == 0 and rng.random() < 0.3 else "A"
        elif kind < 0.80:
            name, qtype = f"host{rng.randrange(hosts)}.{ORIGIN}", "TXT"
        elif kind < 0.90:
            name, qtype = f"nx{rng.randrange(10**9)}.{ORIGIN}", "A"
        else:
            name, qtype = f"www.cust{rng.randrange(cuts)}.{ORIGIN}", "A"
        out.append(f"{mixed_case(name, rng)} {qtype}")
    queries.write_text("\n".join(out) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("zone", type=Path)
    parser.add_argument("queries", type=Path)
    parser.add_argument("--names", type=int, default=100_000)
    parser.add_argument("--count", type=int, default=200_000)
    args = parser.parse_args()
    generate(args.zone, args.queries, args.names, args.count)


if __name__ == "__main__":
    main()
