"""Random zone sets, small and dense in what makes answers differ: CNAME chains (in zone,
across zones, out of the set, loops), DNAMEs, delegations with and without glue, DS at cuts, a
parent and its child zone in one set, wildcards, empty non-terminals, MX/SRV/NS targets
everywhere. Seeds are fixed: a set reproduces."""

from __future__ import annotations

import random
from pathlib import Path

from zonebake.config import ServerDefaults, ZoneSetConfig, ZoneSource, parse_origin

LABELS = ["a", "b", "www", "mail", "ns1", "sub", "deep", "x"]


def _name(rng: random.Random, origins: list[str], here: str) -> str:
    """A name in this zone (relative), in another of the set, or outside the set."""
    roll = rng.random()
    labels = [rng.choice(LABELS) for _ in range(rng.randint(1, 3))]
    if roll < 0.7:
        return ".".join(labels)
    if roll < 0.9:
        return ".".join(labels[:2]) + "." + rng.choice(origins)
    return ".".join(labels[:2]) + ".elsewhere.example."


def _zone_text(rng: random.Random, origins: list[str], origin: str) -> str:
    """Owners each get one role (alias, delegation or host), so that most sets are valid."""
    lines = ["$TTL 3600", f"@ SOA ns1 hostmaster 1 7200 900 1209600 {rng.choice([60, 300])}",
             "@ NS ns1", f"@ NS ns1.{rng.choice(origins + ['elsewhere.example.'])}",
             "ns1 A 192.0.2.1",
             f"@ MX 10 {_name(rng, origins, origin)}"]
    owners = {".".join(rng.choice(LABELS) for _ in range(rng.randint(1, 3)))
              for _ in range(rng.randint(4, 14))} - {"ns1"}
    if rng.random() < 0.5:
        owners.add(rng.choice(["*", "*.sub", "*.deep"]))
    # An alias to a wildcard's own name (RFC 4592 §2.2.1: it matches the wildcard's node),
    # without a draw from `rng`, so that the sets are otherwise as they were.
    wildcards = sorted(o for o in owners if o.startswith("*"))
    if wildcards:
        lines.append(f"to-star CNAME {wildcards[0]}")
    for owner in sorted(owners):
        role = rng.random()
        if role < 0.25:
            lines.append(f"{owner} CNAME {_name(rng, origins, origin)}")
        elif role < 0.33 and not owner.startswith("*"):
            lines.append(f"{owner} DNAME {_name(rng, origins, origin)}")
        elif role < 0.45 and not owner.startswith("*"):
            glued = rng.random() < 0.6
            lines.append(f"{owner} NS " + (f"ns.{owner}" if glued else
                                            f"ns1.{rng.choice(origins)}"))
            lines.append(f"{owner} NS ns1")
            if glued:
                lines.append(f"ns.{owner} A 198.51.100.{rng.randint(1, 250)}")
                if rng.random() < 0.5:
                    lines.append(f"ns.{owner} AAAA 2001:db8:1::{rng.randint(1, 999):x}")
            if rng.random() < 0.3:
                lines.append(f"{owner} DS {rng.randint(1, 65535)} 8 2 {'ab' * 32}")
        else:
            for rdtype in rng.sample(["A", "AAAA", "MX", "TXT", "SRV", "CAA", "PTR", "TXT2"],
                                     rng.randint(1, 4)):
                for i in range(rng.randint(1, 2)):
                    lines.append(f"{owner} " + {
                        "A": f"A 192.0.2.{10 * i + rng.randint(2, 9)}",
                        "AAAA": f"AAAA 2001:db8::{10 * i + rng.randint(1, 9):x}",
                        "MX": f"MX {i} {_name(rng, origins, origin)}",
                        "TXT": f'TXT "t {i}" "u"',
                        "TXT2": f"TXT word{i} more",
                        "SRV": f"SRV {i} 2 80 {_name(rng, origins, origin)}",
                        "CAA": f'CAA 0 issue "ca{i}.example"',
                        "PTR": f"PTR {_name(rng, origins, origin)}",
                    }[rdtype])
    # The same record twice is a warning: keep the first (`ns1.` + this origin is `ns1`).
    lines = [line.replace(f" ns1.{origin}", " ns1") for line in lines]
    return "\n".join(dict.fromkeys(lines)) + "\n"


def _delegation(rng: random.Random, child: str) -> str:
    """The parent's side of a child zone served in the same set: NS, glue, perhaps DS and
    a record of the parent's own below the cut."""
    label = child.split(".")[0]
    lines = [f"{label} NS ns.{label}", f"{label} NS ns1", f"ns.{label} A 198.51.100.7"]
    if rng.random() < 0.5:
        lines.append(f"{label} DS 4711 8 2 {'cd' * 32}")
    if rng.random() < 0.3:
        lines.append(f"www.{label} A 192.0.2.99")  # occluded: the child answers
    return "\n".join(lines) + "\n"


def zone_set(seed: int, directory: Path, tld: str = "test.") -> ZoneSetConfig:
    """The set of a seed; `tld` below which its zones lie (sets of several seeds can then be
    served together)."""
    rng = random.Random(seed)
    origins = [f"z{i}.{tld}" for i in range(rng.randint(1, 3))]
    # A child of the first zone served in the same set, listed before or after it.
    child = f"{rng.choice(['c', 'sub'])}.z0.{tld}" if rng.random() < 0.3 else None
    if child:
        origins.insert(rng.choice([0, len(origins)]), child)
    sources = []
    for origin in origins:
        path = directory / f"{origin}zone"
        text = _zone_text(rng, origins, origin)
        if child and origin == f"z0.{tld}":
            text += _delegation(rng, child)
        path.write_text(text)
        sources.append(ZoneSource(parse_origin(origin, "test"), path, path.name))
    server = ServerDefaults(minimal_responses=rng.random() < 0.3,
                            identity="ns.test" if rng.random() < 0.3 else "")
    return ZoneSetConfig(tuple(sources), server)
