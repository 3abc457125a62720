"""A build over an earlier build of a zone signed with NSEC3 whose chain changed (a name, a
type, a delegation, a wildcard come or gone) copies the regions whose proofs read the chain
as before, and lays out those whose proofs read an entry gone, renamed (its page or its place
there), covering another span, moved (a wildcard's own name holds its encloser's entry by
its offset) or written otherwise where it is held whole
(compiler/core/layout/proofuse.c). What it writes is what a full build writes, octet for
octet: the data, the state (the reads it keeps for the next build) and the layout's
numbers; each build is over the one before, so what a rebuild keeps is what the next reads."""

from __future__ import annotations

import pytest

from buildsigned import ZONE, keygen, signed_set
from test_signed_builds_over_earlier import (bake, fillers,  # noqa: F401 (a fixture)
                                             signatures_at_one_time)

# Names enough for some 30 groups of the perfect hash (about 256 each): a change reaches a
# few of them.
MORE = [f"h{i} A 198.51.100.{i % 250 + 1}" for i in range(6000)]

# In turn, each over the zone as the one before left it: the line it replaces, and what.
STEPS = [
    ("name added", "f200 A 192.0.2.201", ["f200 A 192.0.2.201", "new A 198.18.0.3"]),
    ("name removed", "f300 A 192.0.2.51", []),
    ("type added", "f400 A 192.0.2.151", ["f400 A 192.0.2.151", 'f400 TXT "more"']),
    ("delegation added", "f500 A 192.0.2.1", ["f500 A 192.0.2.1", "nd NS ns.nd",
                                              "ns.nd A 198.18.0.4"]),
    ("wildcard added", "f600 A 192.0.2.101", ["f600 A 192.0.2.101", '*.f600 TXT "any"']),
    ("type added at the wildcard", '*.wild TXT "wildcard"',
     ['*.wild TXT "wildcard"', "*.wild A 198.18.0.5"]),
    ("names added and removed", "f700 A 192.0.2.201",
     ["n1 A 198.18.0.6", "n2.n1 A 198.18.0.7", "zz A 198.18.0.8"]),
]


@pytest.mark.parametrize("opt_out", [False, True])
def test_a_changed_chain_copies_the_regions_whose_proofs_read_as_before(opt_out, tmp_path):
    text = ZONE + "\n".join(fillers() + MORE) + "\n"
    toml = signed_set(tmp_path, "nsec3", opt_out, zone=text)
    zone = tmp_path / "example.com.zone"
    earlier = tmp_path / "first"
    bake(toml, earlier, tmp_path / "none")
    for kind, line, replacement in STEPS:
        lines = text.splitlines()
        at = lines.index(line)
        text = "\n".join(lines[:at] + replacement + lines[at + 1:]) + "\n"
        zone.write_text(text)
        full, _ = bake(toml, tmp_path / kind / "full", tmp_path / "none")
        over, reused = bake(toml, tmp_path / kind / "over", earlier)
        assert over[0] == full[0], kind  # the data
        assert over[1] == full[1], kind  # the state
        assert over[2] == full[2], kind  # the layout's numbers
        groups = over[2].ngroups
        # Copied where the proofs read as before: most groups, not all (each step reaches
        # its own names' groups and those whose proofs read an entry it changed).
        assert reused and 0 < reused[0] < groups, (kind, reused, groups)
        earlier = tmp_path / kind / "over"


# An answer holds its zone's first six NSEC3 entries by their key (proofs.c, MAX_KEYS) and
# any after them whole, their records written into it. A CNAME through six wildcards, each
# expansion with its own proof of the name it stands for (RFC 5155 §7.2.6), to a name that
# does not exist below an existing one: that name's closest encloser (`z`, RFC 5155 §7.2.1)
# comes seventh, and is held whole.
WILDCARDS = ["start CNAME a.w1", *(f"*.w{i} CNAME a.w{i + 1}" for i in range(1, 6)),
             "*.w6 CNAME missing.z", 'z TXT "encloser"']


def test_an_entry_held_whole_and_written_otherwise_lays_its_answer_out_again(tmp_path):
    """A type added at `z` changes only its NSEC3's bitmap and signature: no entry comes or
    goes, no cover spans otherwise, nothing names `z` (changes.c's reach does not see the
    chain). The answers that hold z's entry whole must be laid out again (proofuse.c,
    PROOF_WHOLE) for the build over the earlier one to write what a full build writes."""
    text = ZONE + "\n".join(fillers() + MORE + WILDCARDS) + "\n"
    toml = signed_set(tmp_path, "nsec3", zone=text)
    zone = tmp_path / "example.com.zone"
    earlier = tmp_path / "first"
    bake(toml, earlier, tmp_path / "none")
    zone.write_text(text.replace('z TXT "encloser"\n', 'z TXT "encloser"\nz A 198.18.0.9\n'))
    full, _ = bake(toml, tmp_path / "full", tmp_path / "none")
    over, reused = bake(toml, tmp_path / "over", earlier)
    assert over == full
    assert reused and 0 < reused[0] < over[2].ngroups


# The same zone under another origin, signed too, with its own chain. Each build reads
# both chains (proofuse.c: a read names no zone; each zone's entries are told apart from
# the other's by their hashes).
OTHER = "example.net."


def test_a_changed_chain_in_a_set_of_signed_zones_copies_what_reads_as_before(tmp_path):
    text = ZONE + "\n".join(fillers() + MORE) + "\n"
    other_keys = tmp_path / "other-keys"
    keygen(other_keys, OTHER, ksk=True)
    keygen(other_keys, OTHER)
    other = tmp_path / f"{OTHER}zone"
    other.write_text(text.replace("$ORIGIN example.com.", f"$ORIGIN {OTHER}"))
    toml = signed_set(tmp_path, "nsec3", zone=text, extra=(
        f'[[zone]]\norigin = "{OTHER}"\nfile = "{other.name}"\n'
        f'dnssec = {{ keys = "{other_keys}", denial = "nsec3" }}\n'))
    earlier = tmp_path / "first"
    bake(toml, earlier, tmp_path / "none")
    for n, (kind, line, replacement) in enumerate(STEPS[:4]):
        zone = other if n % 2 else tmp_path / "example.com.zone"  # each zone in turn
        lines = zone.read_text().splitlines()
        at = lines.index(line)
        zone.write_text("\n".join(lines[:at] + replacement + lines[at + 1:]) + "\n")
        full, _ = bake(toml, tmp_path / kind / "full", tmp_path / "none")
        over, reused = bake(toml, tmp_path / kind / "over", earlier)
        assert over == full, kind
        assert reused and 0 < reused[0] < over[2].ngroups, (kind, reused, over[2].ngroups)
        earlier = tmp_path / kind / "over"
