"""A deterministic zone of a few thousand names in the shape of a hosting provider's: hosts
with A/AAAA, mail, aliases inside and outside the zone, service records, customer delegations
with glue, wildcards and empty non-terminals."""

from __future__ import annotations

import random
from pathlib import Path


def write_generated_zone(path: Path, origin: str, names: int, seed: int) -> None:
    rng = random.Random(seed)
    lines = [f"$ORIGIN {origin}", "$TTL 3600",
             "@ SOA ns1 hostmaster 2026112101 7200 900 1209600 300",
             "@ NS ns1", "@ NS ns2", "@ MX 10 mx1", "@ A 192.0.2.1",
             "ns1 A 192.0.2.2", "ns2 AAAA 2001:db8::2", "mx1 A 192.0.2.3",
             "*.apps A 192.0.2.99", "*.apps TXT \"wildcard\""]
    hosts = []
    for i in range(names):
        kind = rng.random()
        name = f"h{i}" if rng.random() < 0.7 else f"h{i}.{rng.choice(['eu', 'us', 'ap'])}.dc"
        if kind < 0.55:
            lines.append(f"{name} {rng.choice([300, 3600, 86400])} A "
                         f"198.51.{i // 250 % 256}.{i % 250 + 1}")
            if rng.random() < 0.5:
                lines.append(f"{name} AAAA 2001:db8:{i:x}::1")
            hosts.append(name)
        elif kind < 0.70 and hosts:
            lines.append(f"{name} CNAME {rng.choice(hosts)}")
        elif kind < 0.75:
            lines.append(f"{name} CNAME cdn{i}.provider.test.")
        elif kind < 0.82 and hosts:
            lines.append(f"{name} MX 10 {rng.choice(hosts)}")
            lines.append(f"{name} MX 20 mx1")
            lines.append(f'{name} TXT "v=spf1 mx -all"')
        elif kind < 0.88 and hosts:
            lines.append(f"_http._tcp.{name} SRV 0 5 80 {rng.choice(hosts)}")
        elif kind < 0.95:
            cut = f"cust{i}"
            lines.append(f"{cut} NS ns1.{cut}")
            lines.append(f"{cut} NS ns.external.test.")
            lines.append(f"ns1.{cut} A 203.0.113.{i % 250 + 1}")
            if rng.random() < 0.3:
                lines.append(f"{cut} DS 12345 13 2 {rng.getrandbits(256):064x}")
        else:
            lines.append(f'{name} TXT "generated {i}"')
    path.write_text("\n".join(lines) + "\n")
