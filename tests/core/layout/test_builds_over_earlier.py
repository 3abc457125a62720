"""A build over an earlier build of the same set (compiler/core/layout/reuse.c) copies the
regions a change does not reach and writes what a full build of the changed set writes, octet
for octet: the data, the state the next build reads, the layout's numbers. Held over random
sets (tests/randomsets.py) grown to many groups of the perfect hash, each changed at random
the ways operators change zones; and a state that does not match its data, or settings
changed, give a full build."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from conftest import ZONES
from randomsets import zone_set
from zonebake.config import ServerDefaults, ZoneSetConfig, ZoneSource, parse_origin
from zonebake.core import run as core
from zonebake.errors import CompileError

FILLERS = 3000  # names enough for a dozen groups of the perfect hash (about 256 each)
# The host the directed changes are made at: none of its changes lands in the group of a
# name the aliases name.
HOST = 200


def filler(rng: random.Random) -> list[str]:
    """Hosts, aliases of two names and mail exchangers naming any host, delegations with
    glue: names whose answers read other names'."""
    lines = []
    for i in range(FILLERS):
        kind = i % 10
        if kind < 6:
            lines.append(f"f{i} A 192.0.2.{i % 250 + 1}")
        elif kind < 8:
            lines.append(f"w{i} CNAME {rng.choice(['ns1'] * 9 + ['f0'])}")
        elif kind == 8 and i % 100 == 8:  # a mail exchanger, an alias below a cut
            lines += [f"m{i} MX 10 ns.d{i + 1}", f"w{i} CNAME x.d{i + 1}"]
        elif kind == 8 and i % 100 == 18:  # an alias of a name a wildcard may come to match
            lines.append(f"w{i} CNAME nx.f{i - 18}")
        elif kind == 8:
            lines.append(f"m{i} MX 10 f{rng.randrange(0, FILLERS, 10)}")
        else:
            lines += [f"d{i} NS ns.d{i}", f"ns.d{i} A 198.51.100.{i % 250 + 1}"]
    return lines


def change(rng: random.Random, lines: list[str], kind: str | None = None,
           host: int | None = None) -> tuple[str, list[str]]:
    """One change of a kind, at a host, picked at random unless given: (the kind, the lines
    after it). Half the time a host with an alias of a name below it and a delegation next
    to it named by a mail exchanger and an alias (filler)."""
    if host is None:
        host = rng.randrange(0, FILLERS, 100 if rng.random() < 0.5 else 10)
    line = f"f{host} A 192.0.2.{host % 250 + 1}"
    cut = f"d{host + 9} NS ns.d{host + 9}"
    kinds = {  # what takes the host's line's place
        "address changed": [f"f{host} A 198.18.0.{host % 250 + 1}"],
        "TTL changed": [f"f{host} 60 A 192.0.2.{host % 250 + 1}"],
        "spelled otherwise": [f"F{host} A 192.0.2.{host % 250 + 1}"],
        "record added": [line, f'f{host} TXT "more"'],
        "name added": [line, f"new{host} A 198.18.1.1"],
        "name removed": [],
        "name below added": [line, f"x.y.f{host} A 198.18.1.2"],
        "alias added": [line, f"c{host} CNAME w{host + 6}"],
        "glue address added": [line, f"ns.d{host + 9} A 198.18.1.5"],
        "delegation added": [line, f"nd{host} NS ns.nd{host}", f"ns.nd{host} A 198.18.1.3"],
        "glue added": [line, f"ns.d{host + 9} AAAA 2001:db8::53"],
        "cut removed": [line],
        "wildcard added": [line, f"*.f{host} A 198.18.1.4"],
        "mail target added": [line, f"f{host} MX 5 f{(host + 10) % FILLERS}"],
        "apex record added": [line, '@ TXT "apex"'],
        "apex name server added": [line, f"@ NS f{host}"],
    }
    kind = kind or rng.choice(sorted(kinds) + ["random set's line", "serial bumped",
                                               "SOA changed otherwise"])
    if kind == "serial bumped":  # as every edit of a zone kept by hand does
        return kind, [bump(x) for x in lines]
    if kind == "SOA changed otherwise":  # its TTL: every negative answer's
        return kind, [x.replace("@ SOA ", "@ 120 SOA ", 1) for x in lines]
    if kind == "random set's line":  # a line of the random set's own: any role
        own = [k for k, x in enumerate(lines) if not x.startswith(("$", "@ SOA", "f", "w", "m",
                                                                   "d", "ns.d"))]
        at = rng.choice(own)
        owner = lines[at].split()[0]
        return kind, lines[:at] + rng.choice([[], [lines[at], f"{owner} A 198.18.2.1"],
                                              [lines[at], f"x.{owner} TXT new"]]) + lines[at + 1:]
    at = lines.index(line)
    changed = lines[:at] + kinds[kind] + lines[at + 1:]
    if kind == "cut removed":  # its glue stays: a name of the zone now
        changed.remove(cut)
    return kind, changed


def bump(line: str) -> str:
    """The line with its SOA's serial one more."""
    if not line.startswith("@ SOA "):
        return line
    fields = line.split()
    fields[4] = str(int(fields[4]) + 1)
    return " ".join(fields)


def own_serial(lines: list[str]) -> list[str]:
    """The zone's SOA with a serial no other zone of a random set has (they all start at 1):
    a new serial is patched in only where no other zone's SOA could be taken for it."""
    return [line.replace(" hostmaster 1 ", " hostmaster 41 ") for line in lines]


def bake(config, data: Path, state: core.State) -> tuple | None:
    reused = []
    try:
        baked = core.bake(config, data, state=state,
                          on_phase=lambda name, seconds, count, unit:
                          reused.append(count) if name == "regions reused" else None)
    except CompileError:
        return None
    return (data.read_bytes(), state.out.read_bytes(), baked.layout), reused


def build_over(config, tmp_path: Path, name: str, earlier: Path | None = None):
    """A build of CONFIG into tmp_path/NAME, over the build in EARLIER when given."""
    out = tmp_path / name
    out.mkdir(parents=True)
    before = earlier or tmp_path / "none"
    return bake(config, out / "zonedata.bin",
                core.State(out / "zonedata.state", before / "zonedata.state",
                           before / "zonedata.bin"))


def test_a_build_over_an_earlier_one_writes_what_a_full_build_writes(tmp_path):
    """Each case: a random set with the fillers built, one change, then the changed set built
    over the earlier build and in full. Most changes reach a few groups: the others are
    reused."""
    reusing = []
    for case in range(48):
        rng = random.Random(case)
        directory = tmp_path / str(case)
        directory.mkdir()
        config = zone_set(case, directory)
        first = config.zones[0].path
        lines = first.read_text().splitlines() + filler(rng)
        first.write_text("\n".join(lines) + "\n")
        if build_over(config, directory, "earlier") is None:
            continue  # the random set is refused
        kinds = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            kind, lines = change(rng, lines)
            kinds.append(kind)
        first.write_text("\n".join(lines) + "\n")
        kind = ", ".join(kinds)
        full = build_over(config, directory, "full")
        over = build_over(config, directory, "over", earlier=directory / "earlier")
        assert (full is None) == (over is None), (case, kind)
        if full is None:
            continue
        assert over[0][0] == full[0][0], (case, kind)  # the data
        assert over[0][1] == full[0][1], (case, kind)  # the state
        assert over[0][2] == full[0][2], (case, kind)  # the layout's numbers
        assert full[1] == []  # no earlier build: nothing reused
        reusing.append((kind, over[1]))
    assert len(reusing) >= 30
    print(reusing)


@pytest.mark.parametrize("kind", ["wildcard added", "glue added", "glue address added",
                                  "cut removed", "name removed", "name added", "alias added",
                                  "serial bumped"])
def test_each_way_a_change_reaches_other_names(kind, tmp_path):
    """The changes whose reach goes past their own name, at a host with every filler that
    reads it: an alias of a name below it (a wildcard matches it), a delegation next to it
    whose glue a mail exchanger and an alias below the cut read, mail exchangers naming it."""
    rng = random.Random(kind)
    config = zone_set(1, tmp_path)  # a set the core compiles
    first = config.zones[0].path
    lines = own_serial(first.read_text().splitlines()) + filler(rng)
    first.write_text("\n".join(lines) + "\n")
    assert build_over(config, tmp_path, "earlier") is not None
    first.write_text("\n".join(change(rng, lines, kind, host=HOST)[1]) + "\n")
    full = build_over(config, tmp_path, "full")
    over = build_over(config, tmp_path, "over", earlier=tmp_path / "earlier")
    assert over[0] == full[0]
    assert over[1][0] > 0  # groups reused


@pytest.mark.parametrize("kind", ["apex record added", "apex name server added"])
def test_a_change_at_an_apex_reaches_what_reads_it_only(kind, tmp_path):
    """An apex is a name like any other but for its SOA: a record added there reaches the
    apex and whatever names it, and the regions of the rest are copied."""
    config, first, lines = small_set(tmp_path)
    assert build_over(config, tmp_path, "earlier") is not None
    first.write_text("\n".join(change(random.Random(0), lines, kind, host=HOST)[1]) + "\n")
    full = build_over(config, tmp_path, "full")
    over = build_over(config, tmp_path, "over", earlier=tmp_path / "earlier")
    assert over[0] == full[0]
    assert over[1][0] > 0  # groups reused


def test_the_aliases_of_a_group_placed_again_get_its_names_new_places(tmp_path):
    """Every host aliased, the aliases spread over every group: a name added places its
    group again (phash.c), which moves the names there. Each region holding an alias of one
    is copied with the target's new place written in (reuse.c), not laid out again."""
    config, first, lines = small_set(tmp_path)
    lines += [f"a{i} CNAME f{i}" for i in range(FILLERS) if i % 10 < 6]
    first.write_text("\n".join(lines) + "\n")
    earlier = build_over(config, tmp_path, "earlier")
    groups = earlier[0][2].ngroups
    for name in ("new1", "new2", "new3"):
        first.write_text("\n".join(lines + [f"{name} A 198.18.1.1"]) + "\n")
        full = build_over(config, tmp_path / name, "full")
        over = build_over(config, tmp_path / name, "over", earlier=tmp_path / "earlier")
        assert over[0] == full[0], name
        assert over[1][0] >= groups - 2, name  # all but the name's group and its parent's


@pytest.mark.parametrize("kind", ["name removed", "name added"])
def test_a_name_come_or_gone_reaches_the_names_below_it(kind, tmp_path):
    """An alias of a name that does not exist, below a host: a wildcard at the apex
    synthesizes its target once the host is gone, and no more once a host comes above it
    (RFC 4592 §3.3.1: the closest encloser is the host then)."""
    config, first, lines = small_set(tmp_path)
    lines += ["* A 198.18.4.4", "al1 CNAME nx.new1"]  # and the fillers' w218 CNAME nx.f200
    first.write_text("\n".join(lines) + "\n")
    assert build_over(config, tmp_path, "earlier") is not None
    if kind == "name removed":
        changed = change(random.Random(0), lines, kind, host=HOST)[1]
    else:
        changed = lines + ["new1 A 198.18.4.5"]
    first.write_text("\n".join(changed) + "\n")
    full = build_over(config, tmp_path, "full")
    over = build_over(config, tmp_path, "over", earlier=tmp_path / "earlier")
    assert over[0] == full[0]
    assert over[1][0] > 0  # groups reused


def test_a_change_a_wildcard_reads_reaches_the_aliases_of_what_it_synthesizes(tmp_path):
    """A wildcard at the apex with a mail exchanger, and an alias of a name it synthesizes:
    the exchanger's address changed, the alias's answer to MX holds the new one in its
    additional section (RFC 1035 §3.3.9), as the wildcard's own does."""
    config, first, lines = small_set(tmp_path)
    lines += [f"* MX 10 f{HOST}", "al9 CNAME sub.nowhere"]
    first.write_text("\n".join(lines) + "\n")
    assert build_over(config, tmp_path, "earlier") is not None
    first.write_text("\n".join(change(random.Random(0), lines, "address changed",
                                      host=HOST)[1]) + "\n")
    full = build_over(config, tmp_path, "full")
    over = build_over(config, tmp_path, "over", earlier=tmp_path / "earlier")
    assert over[0] == full[0]
    assert over[1][0] > 0  # groups reused


def test_an_soa_changed_but_for_its_serial_lays_out_its_zone_again(tmp_path):
    """Every negative answer holds the SOA (RFC 2308 §3): its TTL changed, nothing of its
    zone is copied (here every group holds some of it)."""
    config, first, lines = small_set(tmp_path)
    assert build_over(config, tmp_path, "earlier") is not None
    first.write_text("\n".join(change(random.Random(0), lines, "SOA changed otherwise")[1])
                     + "\n")
    full = build_over(config, tmp_path, "full")
    over = build_over(config, tmp_path, "over", earlier=tmp_path / "earlier")
    assert over[0] == full[0] and not any(over[1])  # nothing reused


def small_set(tmp_path: Path):
    """Set 1 (one the core compiles) with the fillers: its config, first file and lines."""
    config = zone_set(1, tmp_path)
    first = config.zones[0].path
    lines = own_serial(first.read_text().splitlines()) + filler(random.Random(0))
    first.write_text("\n".join(lines) + "\n")
    return config, first, lines


@pytest.mark.parametrize("spoil", ["state cut short", "names miscounted", "state changed",
                                   "data not the state's", "settings changed", "another set"])
def test_an_earlier_build_that_does_not_match_gives_a_full_build(spoil, tmp_path):
    """What the earlier build left is not trusted: a state that does not read whole or was
    changed, data that is not the one the state describes, other settings, other zones: a
    full build."""
    config, first, lines = small_set(tmp_path)
    assert build_over(config, tmp_path, "earlier") is not None
    earlier = tmp_path / "earlier"
    if spoil == "state cut short":
        state = earlier / "zonedata.state"
        state.write_bytes(state.read_bytes()[:-7])
    elif spoil == "names miscounted":  # so many that their size wraps around 64 bits
        state = earlier / "zonedata.state"
        octets = bytearray(state.read_bytes())
        count = int.from_bytes(octets[56:64], "little")  # struct state_head's nnames
        octets[56:64] = (count + (1 << 59)).to_bytes(8, "little")
        state.write_bytes(bytes(octets))
    elif spoil == "state changed":  # a name's digest, as a bad disk would
        state = earlier / "zonedata.state"
        octets = bytearray(state.read_bytes())
        octets[88 + 16] ^= 1  # the first name's (struct name_state) after the 88-octet head
        state.write_bytes(bytes(octets))
    elif spoil == "data not the state's":
        data = earlier / "zonedata.bin"
        octets = bytearray(data.read_bytes())
        octets[core.bake(config, tmp_path / "x.bin").layout.groups_off] ^= 1
        data.write_bytes(bytes(octets))
    elif spoil == "settings changed":
        config = dataclasses.replace(config, server=dataclasses.replace(
            config.server, minimal_responses=not config.server.minimal_responses))
    else:
        (tmp_path / "another").mkdir()  # the same zones under other names
        config = zone_set(1, tmp_path / "another", tld="other.")
    first.write_text("\n".join(change(random.Random(0), lines, "address changed",
                                      host=HOST)[1]) + "\n")
    full = build_over(config, tmp_path, "full")
    over = build_over(config, tmp_path, "over", earlier=earlier)
    assert over[0] == full[0]
    assert over[1] == []  # nothing reused: a full build


def test_a_new_serial_is_patched_into_the_copied_regions(tmp_path):
    """A serial bumped with a record changed, as an operator edits a zone: the regions the
    record does not reach are copied, their SOAs (every negative answer's) with the new
    serial; and where another zone of the set has the same SOA numbers, a body may hold
    either's, so nothing is patched: a full build."""
    config, first, lines = small_set(tmp_path)
    # Names below a wildcard's parent get its answers (a CNAME's, to a type its target lacks,
    # holds the SOA) from a node of answers in the parent's region (layout.c).
    lines += [f"*.wild{i} CNAME f{i * 10}" for i in range(40)]
    # An alias of the apex answers a query for its SOA with the SOA in the answer section.
    lines += [f"top{i} CNAME @" for i in range(40)]
    first.write_text("\n".join(lines) + "\n")
    assert build_over(config, tmp_path, "earlier") is not None
    changed = change(random.Random(0), lines, "address changed", host=HOST)[1]
    first.write_text("\n".join(bump(line) for line in changed) + "\n")
    full = build_over(config, tmp_path, "full")
    over = build_over(config, tmp_path, "over", earlier=tmp_path / "earlier")
    assert over[0] == full[0] and over[1][0] > 0

    twins = tmp_path / "twins"
    twins.mkdir()
    soa = "@ SOA ns1 hostmaster 7 7200 900 1209600 300\n@ NS ns1\nns1 A 192.0.2.1\n"
    a, b = twins / "a.zone", twins / "b.zone"
    a.write_text(soa + "".join(f"h{i} A 192.0.2.{i % 250 + 1}\n" for i in range(1500)))
    b.write_text(soa + "nx CNAME nothing.a.test.\n")  # b's answers hold a's SOA too
    config = ZoneSetConfig((ZoneSource(parse_origin("a.test.", "t"), a, "a.zone"),
                            ZoneSource(parse_origin("b.test.", "t"), b, "b.zone")),
                           ServerDefaults())
    assert build_over(config, twins, "earlier") is not None
    a.write_text(bump_serial(a.read_text()))
    full = build_over(config, twins, "full")
    over = build_over(config, twins, "over", earlier=twins / "earlier")
    assert over[0] == full[0] and not any(over[1])  # nothing reused


def bump_serial(text: str) -> str:
    return text.replace("hostmaster 7 ", "hostmaster 8 ", 1)



def zones_of(tmp_path: Path, *zones: tuple[str, str]):
    """A set of ZONES, each (origin, text), written into tmp_path: its config and files."""
    paths = [tmp_path / f"{origin}zone" for origin, _ in zones]
    for path, (_, text) in zip(paths, zones):
        path.write_text(text)
    return ZoneSetConfig(tuple(ZoneSource(parse_origin(origin, "t"), path, path.name)
                               for path, (origin, _) in zip(paths, zones)),
                         ServerDefaults()), paths


def rebuilt(config, tmp_path: Path, edit) -> tuple:
    """CONFIG built, EDIT made, then built in full and over the first build: both."""
    assert build_over(config, tmp_path, "earlier") is not None
    edit()
    return (build_over(config, tmp_path, "full"),
            build_over(config, tmp_path, "over", earlier=tmp_path / "earlier"))


def replaced(path: Path, old: str, new: str):
    return lambda: path.write_text(path.read_text().replace(old, new, 1))


def test_a_body_is_shared_with_the_first_run_of_its_octets(tmp_path):
    """Of several runs of a region holding a body's octets, sharing takes the first added,
    wherever the table's probe meets it: in this zone, with serial 10 a probe met another
    first than with serial 8, and the copy patched to 10 pointed elsewhere than a full
    build (layout/sharing.c)."""
    config, (zone,) = zones_of(
        tmp_path, ("z0.test.", (ZONES / "rebuilds" / "shared-run.zone").read_text()))
    full, over = rebuilt(config, tmp_path, replaced(zone, "hostmaster 8 ", "hostmaster 10 "))
    assert over[0] == full[0] and over[1][0] > 0


def test_a_serial_made_another_zones_lays_out_what_holds_its_soa(tmp_path):
    """A zone's new SOA numbers the same as another zone's: their negative answers' bodies
    may be alike now, which a full build shares and a patched copy holds apart."""
    soa = "@ SOA ns.hoster.example. hostmaster.hoster.example. {} 7200 900 1209600 300\n"
    config, (_, b) = zones_of(tmp_path, ("a.test.", soa.format(8) + "@ NS ns1.b.test.\n"),
                              ("b.test.", soa.format(7) + "@ NS ns1.a.test.\n"))
    full, over = rebuilt(config, tmp_path, replaced(b, " 7 7200 ", " 8 7200 "))
    assert over[0] == full[0] and not any(over[1])  # one group, holding both: laid out


# A hoster's zones made from one template: the same SOA, serial and all, and hosts enough
# for a few dozen groups of the perfect hash among them.
TEMPLATE = ("@ SOA ns.hoster.example. hostmaster.hoster.example. {serial} 7200 900 1209600 300\n"
            "@ NS ns1.hoster.example.\n@ NS ns2.hoster.example.\n@ MX 10 mail\n"
            "mail A 192.0.2.25\n"
            + "".join(f"h{i} A 198.51.100.{i % 250 + 1}\nwww.h{i} CNAME h{i}\n" for i in range(40)))


@pytest.mark.parametrize("serial", ["9", "7"])  # a number no zone has; another zone's
def test_a_serial_bumped_among_zones_alike_lays_out_only_what_holds_its_soa(serial, tmp_path):
    """The old numbers another zone's too (and the new ones, for 7): the new serial cannot be
    written over the old in the copied regions (those of the other zones hold it alike), so
    the groups holding the zone's names are laid out again, and only those; and its child
    zone's apex, whose DS the zone answers (with its SOA where it has none)."""
    zones = [(f"c{k}.test.", TEMPLATE.format(serial=7 if k == 5 else 8)) for k in range(60)]
    zones[17] = (zones[17][0], zones[17][1] + "sub NS ns.sub\nns.sub A 192.0.2.53\n")
    zones.append(("sub.c17.test.", TEMPLATE.format(serial=8)))
    config, paths = zones_of(tmp_path, *zones)
    full, over = rebuilt(config, tmp_path,
                         replaced(paths[17], " 8 7200 ", f" {serial} 7200 "))
    assert over[0] == full[0]
    assert over[1] and 0 < over[1][0] < full[0][2].ngroups - 2, (over[1], full[0][2].ngroups)


@pytest.mark.parametrize("edit", [(" 7200 900 ", " 3600 900 "),  # its refresh timer
                                  ("@ SOA ns.hoster", "@ 600 SOA ns.hoster")])  # its TTL
def test_an_soa_changed_but_for_its_serial_lays_out_only_what_holds_it(edit, tmp_path):
    """Another zone's SOA as it was: the groups holding none of the zone's names (nor its
    child zone's apex, whose DS it answers) are copied."""
    zones = [(f"c{k}.test.", TEMPLATE.format(serial=8)) for k in range(60)]
    zones[17] = (zones[17][0], zones[17][1] + "sub NS ns.sub\nns.sub A 192.0.2.53\n")
    zones.append(("sub.c17.test.", TEMPLATE.format(serial=8)))
    config, paths = zones_of(tmp_path, *zones)
    full, over = rebuilt(config, tmp_path, replaced(paths[17], *edit))
    assert over[0] == full[0]
    assert over[1] and 0 < over[1][0] < full[0][2].ngroups - 2, (over[1], full[0][2].ngroups)


# A parent zone and its child zone served together, the parent's view of the child's
# namespace its referral there (views.c): the parent's own names, and a cut to the child.
PARENT = ("$TTL 60\n@ SOA ns1 h 1 7200 900 1209600 60\n@ NS ns1\nns1 A 192.0.2.1\n" +
          "".join(f"f{i} A 192.0.2.{i % 250 + 1}\n" for i in range(3000)))
CHILD = "$TTL 60\n@ SOA ns1 h 1 7200 900 1209600 60\n"


def test_a_delegation_to_a_zone_of_the_set_reaches_what_names_below_it(tmp_path):
    """What the parent's records name below the cut is answered, in the parent, with the
    referral. Its NS target's address changed: the aliases of names there are reached, as
    below a cut in one zone."""
    config, (child, parent) = zones_of(
        tmp_path, ("sub.z.test.", CHILD + "@ NS ns.elsewhere.example.\nns1 A 192.0.2.1\n"),
        ("z.test.", PARENT + "sub NS ns1\n" +
         "".join(f"w{i} CNAME ns1.m{i}.sub\n" for i in range(3))))
    full, over = rebuilt(config, tmp_path, replaced(parent, "ns1 A 192.0.2.1\n",
                                                    "ns1 A 192.0.2.1\nns1 A 198.18.5.42\n"))
    assert over[0] == full[0] and over[1][0] > 0


def test_a_dname_into_a_delegated_zone_of_the_set_reaches_its_images(tmp_path):
    """A DNAME of the parent whose target is the child's apex: the answers it synthesizes
    hold, in the parent's view, the referral to the child (RFC 6672 §3.3, RFC 1034 §4.3.2
    step 3b). Its glue's address changed: every image is reached."""
    config, (parent, child) = zones_of(
        tmp_path, ("z.test.", PARENT + "sub NS ns.sub\nns.sub A 198.51.100.7\n"
                   "dn DNAME sub.z.test.\n"),
        ("sub.z.test.", CHILD + "@ NS ns\nns A 198.51.100.7\n" +
         "".join(f"h{i} A 192.0.2.{i % 250 + 1}\n" for i in range(20))))
    full, over = rebuilt(config, tmp_path, replaced(parent, "198.51.100.7", "198.18.5.211"))
    assert over[0] == full[0] and over[1][0] > 0
