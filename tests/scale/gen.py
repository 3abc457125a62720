"""Zones for the scale report (tests/scale/report.py), deterministic:

- `zone`: one zone in the shape of a hosting provider's or a country TLD's, NAMES owner names
  and about three records per name: sites with A, AAAA, MX and TXT, `www` aliases (CNAME),
  mail hosts, and delegations with in-zone glue.
- `zoneset`: COUNT small zones (a hosting provider's customers), each with SOA, NS, a few
  hosts, MX and TXT, and a zonebake.toml listing them.
- `handkept`: the same zone written as people write zone files by hand: TTL units, the SOA
  in parentheses with comments, owners inherited, TTLs and classes here and there, names in
  capitals, TXT escapes, half the records in an $INCLUDE file, a DNAME, and a child zone
  served in the same set.

And `change_zone`: the zone's text with one change of a kind (an address, a longer TXT, a
name added or removed, a delegation added, the SOA's serial bumped), for the report's change
loop.
"""

from __future__ import annotations

import argparse
from pathlib import Path

ORIGIN = "scale.example."


SOA = "@ SOA ns1 hostmaster 2026112101 7200 900 1209600 300"


def zone_lines(names: int):
    """Yield the zone's lines. Per 10 sites: 7 sites with two A, AAAA, MX, two TXT and a www
    CNAME (2 names, 7 records), 3 delegations with two glued name servers (3 names, 6
    records): 2.9 records per name."""
    yield f"$ORIGIN {ORIGIN}"
    yield "$TTL 3600"
    yield SOA
    yield "@ NS ns1"
    yield "@ NS ns2"
    yield "@ MX 10 mx1"
    yield "ns1 A 192.0.2.1"
    yield "ns2 A 192.0.2.2"
    yield "mx1 A 192.0.2.25"
    made, i = 4, 0
    while made < names:
        if i % 10 < 7:
            yield from site_lines(i)
            made += 2
        else:
            yield from delegation_lines(i)
            made += 3
        i += 1


def site_lines(i: int) -> list[str]:
    """Site i: two names (site<i>, www.site<i>), in this order: two A, AAAA, MX, the SPF
    TXT, the verification TXT, the www CNAME."""
    a, b, c = i >> 16 & 255, i >> 8 & 255, i & 255
    return [f"site{i} A 10.{a}.{b}.{c}", f"site{i} A 10.{a | 128}.{b}.{c}",
            f"site{i} AAAA 2001:db8:{a:x}:{b:x}::{c:x}", f"site{i} MX 10 mx1",
            f'site{i} TXT "v=spf1 ip4:10.{a}.{b}.{c} -all"',
            f'site{i} TXT "site-verification={i:08x}"', f"www.site{i} CNAME site{i}"]


def delegation_lines(i: int) -> list[str]:
    """Delegation i: three names (dom<i> and its two glued name servers)."""
    a, b, c = i >> 16 & 255, i >> 8 & 255, i & 255
    return [f"dom{i} NS ns1.dom{i}", f"dom{i} NS ns2.dom{i}", f"ns1.dom{i} A 198.51.{b}.{c}",
            f"ns1.dom{i} AAAA 2001:db8:fffe:{a:x}{b:02x}::{c:x}", f"ns2.dom{i} A 203.0.{b}.{c}",
            f"ns2.dom{i} AAAA 2001:db8:ffff:{a:x}{b:02x}::{c:x}"]


def middle_site(names: int) -> int:
    """The index of a site halfway through the zone of NAMES names: a change there moves
    what a change in a real zone would, not just the first or the last entries."""
    count = max(1, (names - 4) * 10 // 23)  # 23 names per 10 indexes, after the head's 4
    return count // 2 // 10 * 10  # i % 10 == 0: a site


def changes(i: int) -> dict[str, tuple[str, list[str]]]:
    """The one-record changes of the change loop (tests/scale/report.py) at site i, by kind:
    (a line of the zone, the lines that take its place). Addresses from 198.18.0.0/15
    (RFC 2544), which the zone uses nowhere else."""
    first_a, _, _, _, _, verification, www = site_lines(i)
    b, c = i >> 8 & 255, i & 255
    return {
        "A address changed": (first_a, [f"site{i} A 198.18.{b}.{c}"]),
        "TXT made longer": (verification, [verification[:-1] + '-and-a-longer-token"']),
        "name added": (www, [www, f"host{i} A 198.18.{b}.{c}"]),
        "name removed": (www, []),
        # A delegation needs its NS and, below the cut, the glue that makes it reachable.
        "delegation added": (www, [www, f"newdom{i} NS ns1.newdom{i}",
                                   f"ns1.newdom{i} A 198.19.{b}.{c}"]),
        # What every edit of a zone kept by hand comes with: the answers holding the SOA
        # (every negative one) change with it.
        "serial bumped": (SOA, [SOA.replace(" 2026112101 ", " 2026112102 ")]),
    }


CHANGE_KINDS = tuple(changes(0))  # in the order the report measures them


def change_zone(text: str, kind: str, names: int) -> str:
    """The text of the zone of NAMES names (as write_zone writes it) with one change of KIND:
    one line replaced, found as a whole line, so that it is cheap at a million names."""
    line, replacement = changes(middle_site(names))[kind]
    old = f"\n{line}\n"
    if text.count(old) != 1:
        raise ValueError(f"the zone has not exactly one line {line!r}")
    return text.replace(old, "\n" + "".join(f"{new}\n" for new in replacement), 1)


def write_zone(path: Path, names: int) -> None:
    with path.open("w") as out:
        for line in zone_lines(names):
            out.write(line + "\n")


CHILD = f"child.{ORIGIN}"


HAND_KEPT_HEAD = [
    "$ORIGIN " + ORIGIN, "$TTL 1h",
    "@ IN SOA ns1 hostmaster ( 2026112101 ; serial", "            2h  ; refresh",
    "            15m ; retry", "            2w  ; expire", "            5m ) ; minimum",
    "@ NS ns1", "  NS ns2", "@ MX 10 mx1", "ns1 A 192.0.2.1", "ns2 A 192.0.2.2",
    "mx1 A 192.0.2.25", "child NS ns.child", "ns.child A 192.0.2.53", "old-www DNAME site1",
    "; the sites and their delegations"]
GENERATED_HEAD = 9  # zone_lines' own head, which HAND_KEPT_HEAD stands for


def _hand_kept(names: int):
    """(owner, line) of the sites and delegations as a person keeps them: a TTL and class
    here and there, capitals, TXT escapes, and a blank owner for the one before."""
    previous = None
    for n, line in enumerate(zone_lines(names)):
        if n < GENERATED_HEAD:
            continue
        n -= GENERATED_HEAD
        owner, rest = line.split(" ", 1)
        if n % 7 == 3:
            rest = "1h IN " + rest
        elif n % 11 == 5:
            rest = "IN 3600 " + rest
        if n % 13 == 0:
            owner = owner.upper()
        if rest.endswith('-all"'):
            rest = rest[:-1] + '\\059 \\"hand\\"\"'
        inherited = owner.lower() == previous
        previous = owner.lower()
        yield inherited, ("\t" if inherited else owner + " ") + rest


def write_handkept(directory: Path, names: int) -> list[tuple[str, Path]]:
    """The hand-kept zone of NAMES names in DIRECTORY, the second half of its records in an
    included file, and its child zone: (origin, file) for each zone of the set. Written as
    it is made: a million names' lines are not held at once."""
    directory.mkdir(parents=True, exist_ok=True)
    records = sum(1 for _ in zone_lines(names)) - GENERATED_HEAD
    include = "sites-part2.inc"
    with (directory / "scale.zone").open("w") as main, \
            (directory / include).open("w") as rest:
        main.write("\n".join(HAND_KEPT_HEAD) + "\n")
        rest.write(f"$ORIGIN {ORIGIN}\n$TTL 1h\n")
        out = main
        for n, (inherited, line) in enumerate(_hand_kept(names)):
            if out is main and n >= records // 2 and not inherited:
                main.write(f"$INCLUDE {include}\n")
                out = rest
            out.write(line + "\n")
    (directory / "child.zone").write_text(
        "$TTL 1d\n@ SOA ns hostmaster ( 1 2h 15m 2w 5m )\n@ NS ns\nns A 192.0.2.53\n"
        "www A 192.0.2.54\n")
    return [(ORIGIN, directory / "scale.zone"), (CHILD, directory / "child.zone")]


def write_zoneset(directory: Path, count: int) -> Path:
    """COUNT zones customer0.test. ... in DIRECTORY, and DIRECTORY/zonebake.toml."""
    directory.mkdir(parents=True, exist_ok=True)
    toml = ['[server]', 'listen = ["127.0.0.1:5300"]', '']
    for i in range(count):
        origin = f"customer{i}.test."
        a, b = i >> 8 & 255, i & 255
        (directory / f"customer{i}.zone").write_text(
            f"$TTL 3600\n"
            f"@ SOA ns1.hoster.test. hostmaster.hoster.test. 1 7200 900 1209600 300\n"
            f"@ NS ns1.hoster.test.\n@ NS ns2.hoster.test.\n"
            f"@ A 10.1.{a}.{b}\n@ MX 10 mail\n@ TXT \"customer {i}\"\n"
            f"www CNAME @\nmail A 10.2.{a}.{b}\nmail AAAA 2001:db8:2::{i:x}\n")
        toml += ["[[zone]]", f'origin = "{origin}"', f'file = "customer{i}.zone"', ""]
    config = directory / "zonebake.toml"
    config.write_text("\n".join(toml))
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    commands = parser.add_subparsers(dest="what", required=True)
    z = commands.add_parser("zone")
    z.add_argument("path", type=Path)
    z.add_argument("--names", type=int, default=1_000_000)
    s = commands.add_parser("zoneset")
    s.add_argument("directory", type=Path)
    s.add_argument("--count", type=int, default=10_000)
    args = parser.parse_args()
    if args.what == "zone":
        write_zone(args.path, args.names)
    else:
        write_zoneset(args.directory, args.count)


if __name__ == "__main__":
    main()
