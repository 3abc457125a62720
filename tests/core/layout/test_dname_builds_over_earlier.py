"""A build over an earlier build of a set with DNAMEs (compiler/core/layout/reuse.c): a
DNAME's images answer with what the lookup finds below its target (RFC 6672 §3.3), through
CNAMEs no zone file holds, so a change below a target reaches the images of the names it
reaches (compiler/core/semantics/changes.c, dname.c's dname_readers), a DNAME made, gone or
changed every name below its owner, and any change the owners' nodes. The rebuild writes
what a full build writes, octet for octet, and copies the regions the change does not
reach."""

from __future__ import annotations

import random

import pytest

from test_builds_over_earlier import FILLERS, build_over, small_set

TARGETS = 24  # names below the first target, each with an image below `al`


def dname_lines() -> list[str]:
    """DNAMEs into the zone (one to the owner of another: images of images), names below
    their targets at several depths, a wildcard and a cut there, and names whose answers
    follow into the images: aliases, a mail exchanger, a service, an alias of an alias."""
    lines = ["al DNAME tg", "al2 DNAME al", "far DNAME other.example.", "up DNAME deep.tg",
             "solo DNAME lone.tg", "lone.tg TXT lone", "g2 TXT g2"]
    # Owners in most groups whose targets do not exist: what they answer below them is
    # what the lookup finds at the target's closest encloser, which no image shows.
    lines += [f"ghost{i} DNAME nothere{i}.g2" for i in range(12)]
    for i in range(TARGETS):
        lines.append(f"x{i}.tg A 192.0.2.{i + 1}")
        if i % 3 == 0:
            lines.append(f"x{i}.tg MX 10 x{i + 1}.tg")
        if i % 4 == 0:
            lines.append(f"a.x{i}.tg TXT deep{i}")
    lines += ["*.w.tg A 198.51.100.9", "deep.tg TXT deep", "y.deep.tg AAAA 2001:db8::7",
              "cut.tg NS ns.cut.tg", "ns.cut.tg A 198.51.100.53",
              "c1 CNAME x1.al", "c2 CNAME x2.al2", "c3 CNAME nx.al", "c4 CNAME q.w.al",
              "c5 CNAME c1", "c6 CNAME y.up", "m1 MX 5 x5.al", "s1 SRV 0 1 53 x6.al"]
    return lines


# Each change: the line it takes out (None: none), and the lines it puts in its place.
EDITS = {
    "address below a target": ("x4.tg A 192.0.2.5", ["x4.tg A 198.18.0.5"]),
    "name below a target added": (None, ["new.tg A 198.18.0.1"]),
    "name deeper below a target added": (None, ["b.x3.tg A 198.18.0.2"]),
    "name below a target removed": ("x9.tg A 192.0.2.10", []),
    "mail target below a target removed": ("x1.tg A 192.0.2.2", []),
    "wildcard below a target added": (None, ["*.x2.tg TXT wild"]),
    "wildcard at a target added": (None, ["*.tg TXT wild"]),
    "wildcard below a target changed": ("*.w.tg A 198.51.100.9", ["*.w.tg A 198.18.0.9"]),
    "record at a target added": (None, ["tg TXT here"]),
    "cut below a target added": (None, ["x8.tg NS ns.x8.tg", "ns.x8.tg A 198.18.0.8"]),
    "glue below a target changed": ("ns.cut.tg A 198.51.100.53", ["ns.cut.tg A 198.18.0.53"]),
    "target changed": ("al DNAME tg", ["al DNAME deep.tg"]),
    "TTL of a DNAME changed": ("al DNAME tg", ["al 60 DNAME tg"]),
    "wildcard below a lone target added": (None, ["*.lone.tg TXT wild"]),
    "wildcard above a missing target added": (None, ["*.g2 TXT wild"]),
    "DNAME removed": ("al2 DNAME al", []),
    "DNAME added": (None, ["al3 DNAME tg"]),
    "DNAME out of the zone changed": ("far DNAME other.example.",
                                      ["far DNAME another.example."]),
    "alias into an image added": (None, ["c7 CNAME x11.al"]),
    "name at an image's place added": (None, ["z.tg A 198.18.0.3", "c8 CNAME z.al"]),
    "host elsewhere changed": ("f200 A 192.0.2.201", ["f200 A 198.18.0.201"]),
}
KINDS = list(EDITS)


def edit(kind: str, lines: list[str]) -> list[str]:
    """One change of KIND to the set's lines (ValueError: the line it takes out is gone)."""
    old, new = EDITS[kind]
    if old is None:
        return lines + new
    at = lines.index(old)
    return lines[:at] + new + lines[at + 1:]


@pytest.mark.parametrize("kind", KINDS)
def test_a_change_reaches_the_images_that_read_it(kind, tmp_path):
    """Each kind of change alone, over the set with the DNAMEs: a full build's output, with
    regions copied (of 13 groups, 1 where every image changes, up to 11)."""
    config, first, lines = small_set(tmp_path)
    lines += dname_lines()
    first.write_text("\n".join(lines) + "\n")
    earlier = build_over(config, tmp_path, "earlier")
    assert earlier is not None
    first.write_text("\n".join(edit(kind, lines)) + "\n")
    full = build_over(config, tmp_path, "full")
    over = build_over(config, tmp_path, "over", earlier=tmp_path / "earlier")
    assert over[0] == full[0]  # the data, the state, the layout's numbers
    # A DNAME added brings a node for each name below its target, into most groups: those
    # are laid out again as their keys changed (phash.c). Any other change leaves regions.
    assert over[1][0] > 0 or kind == "DNAME added", earlier[0][2].ngroups


def test_random_changes_of_a_set_with_dnames(tmp_path):
    """Several changes at once, drawn from the kinds above and from the fillers' hosts, each
    rebuild over the last: what a full build of the same lines writes each time."""
    config, first, lines = small_set(tmp_path)
    lines += dname_lines()
    first.write_text("\n".join(lines) + "\n")
    last = tmp_path / "0"
    assert build_over(config, tmp_path, "0") is not None
    rng = random.Random(40)
    for step in range(1, 9):
        for kind in rng.sample(KINDS, 2):
            try:
                lines = edit(kind, lines)
            except ValueError:  # its line went with an earlier change
                pass
        host = rng.randrange(0, FILLERS, 10)
        lines = [x.replace(f"f{host} A 192.0.2.", f"f{host} A 198.18.3.") for x in lines]
        first.write_text("\n".join(lines) + "\n")
        full = build_over(config, tmp_path / "full", str(step))
        over = build_over(config, tmp_path, str(step), earlier=last)
        assert (full is None) == (over is None), step
        if full is not None:
            assert over[0] == full[0], step
            last = tmp_path / str(step)
