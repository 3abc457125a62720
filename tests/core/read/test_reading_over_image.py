"""A build over an earlier build of a one-zone set reads only the lines of the zone file that
changed since, into the earlier build's image of the zone's records (zonedata.image,
compiler/core/read/image.c), and writes what reading the whole file writes, octet for
octet: the data, the state the next build reads, the layout's numbers, the warnings. Held
over chains of random edits of every kind, each build over the one before; where an edit
leaves what the image holds in doubt (a directive, a record continuing the owner before it,
a duplicate, a name spelled two ways...), the file is read whole, with the same result."""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path

from randomsets import zone_set
from zonebake.config import ZoneSetConfig, zones_from_args
from zonebake.core import run as core
from zonebake.errors import CompileError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "layout"))
from test_builds_over_earlier import change, filler  # noqa: E402  (the same edits)


def one_zone(case: int, directory: Path) -> tuple[ZoneSetConfig, Path, list[str]]:
    """Random set CASE's first zone alone, with the fillers, but its DNAMEs (a zone with one
    keeps no image: its images are made from the names in the order they were interned):
    its config, file and lines."""
    config = zone_set(case, directory)
    config = ZoneSetConfig(config.zones[:1], config.server)
    path = config.zones[0].path
    lines = [line for line in path.read_text().splitlines() if " DNAME " not in line]
    return config, path, lines + filler(random.Random(case))


def edit(rng: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    """An edit as an operator makes one: test_builds_over_earlier's, or one of the line's
    forms the image must read as the whole file reads it."""
    body = [i for i, line in enumerate(lines)
            if i > 2 and line and not line.startswith(("$", ";", "\t"))]
    at = rng.choice(body)
    line = lines[at]
    owner = line.split()[0]
    forms = {
        "line removed": [],
        "line moved": None,
        "line twice": [line, line],  # a duplicate: warned of, the file read whole
        "blank owner after": [line, "\t300 TXT \"continued\""],  # the owner before
        "comment": [line + " ; a comment", "; and a line of one"],
        "record over lines": [line, f"{owner} TXT ( \"one\"", "  \"two\" )"],
        "TTL of its own": [f"{owner} 77 TXT \"ttl\""] + [line],  # 77 differs: warned
        "spelled in capitals": [line.replace(owner, owner.upper(), 1)],
        "directive": [line, "$TTL 120", f"z{at} A 192.0.2.77"],
        "name below": [line, f"n{at}.{owner.lstrip('*.') or 'x'} A 198.18.3.{at % 250 + 1}"],
    }
    kind = rng.choice(sorted(forms) + ["change"] * 6)
    if kind == "change":
        return change(rng, lines)
    if kind == "line moved":
        to = rng.choice(body)
        moved = lines[:at] + lines[at + 1:]
        return kind, moved[:to] + [line] + moved[to:]
    return kind, lines[:at] + forms[kind] + lines[at + 1:]


# Edits after which no image is kept while they stay in the file: the reading says something
# (a duplicate, TTLs of an RRset apart), a directive after a record, a name spelled two ways.
LASTING = {"line twice", "TTL of its own", "directive", "spelled in capitals",
           "spelled otherwise"}


def bake(config: ZoneSetConfig, out: Path, errors: list[str] | None = None):
    """A build into OUT, over the one there if any, its outputs put in place as `zonebake
    build` puts them (compiler/build.py): (data, state, layout, warnings), or None when the
    zone has errors (into ERRORS, when given); and whether the image was read."""
    out.mkdir(parents=True, exist_ok=True)
    data, state = out / "zonedata.bin", out / "zonedata.state"
    temporary = core.State(out / ".zonedata.state.tmp", state, data)
    phases: list[str] = []
    try:
        baked = core.bake(config, out / ".zonedata.bin.tmp", state=temporary,
                          on_phase=lambda name, *_: phases.append(name))
    except CompileError as e:
        temporary.image_out.unlink(missing_ok=True)
        if errors is not None:
            errors.extend(str(d) for d in e.diagnostics)
        return None, "changed lines read" in phases
    (out / ".zonedata.bin.tmp").replace(data)
    temporary.out.replace(state)
    if temporary.image_out.exists():  # empty: no image (compiler/build.py's _put_image)
        if temporary.image_out.stat().st_size:
            temporary.image_out.replace(out / "zonedata.image")
        else:
            temporary.image_out.unlink()
            (out / "zonedata.image").unlink(missing_ok=True)
    outputs = (data.read_bytes(), state.read_bytes(), baked.layout,
               [str(d) for d in baked.warnings])
    return outputs, "changed lines read" in phases


def test_builds_over_images_write_what_reading_whole_files_writes(tmp_path):
    """Chains of edits, each built over the build before and in full, compared."""
    read_over = 0
    for case in range(12):
        rng = random.Random(1000 + case)
        directory = tmp_path / str(case)
        directory.mkdir()
        config, path, lines = one_zone(case, directory)
        path.write_text("\n".join(lines) + "\n")
        over_dir = directory / "over"
        if bake(config, over_dir)[0] is None:
            continue  # the random set is refused
        undo = None
        for step in range(1, 11):
            if undo is not None:  # back to the lines before an edit no image is kept over
                kind, lines, undo = "undone", undo, None
            else:
                before = lines
                kind, lines = edit(rng, lines)
                undo = before if kind in LASTING else None
            path.write_text("\n".join(lines) + "\n")
            full, _ = bake(config, directory / f"full{step}")
            over, over_image = bake(config, over_dir)
            assert over == full, (case, step, kind)
            shutil.rmtree(directory / f"full{step}")
            read_over += over_image
    assert read_over >= 50  # most edits are read over the image


def test_a_damaged_image_is_not_read(tmp_path):
    """An image changed on its way (a bad disk) fails its digest: the file is read whole."""
    config, path, lines = one_zone(1, tmp_path)
    path.write_text("\n".join(lines) + "\n")
    assert bake(config, tmp_path / "over")[0] is not None
    image = tmp_path / "over" / "zonedata.image"
    octets = bytearray(image.read_bytes())
    octets[octets.index(b"ns1 A 192.0.2.1") + 4] ^= 1  # in the text it was read from
    image.write_bytes(bytes(octets))
    _, lines = change(random.Random(0), lines, "address changed", host=200)
    path.write_text("\n".join(lines) + "\n")
    full, _ = bake(config, tmp_path / "full")
    over, over_image = bake(config, tmp_path / "over")
    assert over == full and not over_image


def test_a_build_over_the_image_a_refused_build_left_writes_a_full_builds_state(tmp_path):
    """A refused build has written what it read into the image in place, made beside no
    state: the next build makes every name's state, not the changed names' alone. An RRset
    that came back to a name lies after the others in the image's array, linked in its
    place: each name's records are mixed in file order, as a reading of the file whole has
    them (changes.c's compute_name_states), not in the array's."""
    path = tmp_path / "z.zone"
    good = ["$TTL 3600", "@ SOA ns1 hostmaster 8 7200 900 1209600 300", "@ NS ns1",
            "ns1 A 192.0.2.1", "@ MX 10 sub.y.mail", '*.deep TXT "long long long long"',
            '*.deep TXT "t30"', "a.deep.y PTR x.deep"]  # a random sweep's find, made smaller
    config = zones_from_args([f"z.test.={path}"])
    path.write_text("\n".join(good) + "\n")
    assert bake(config, tmp_path / "over")[0] is not None
    path.write_text("\n".join(good[:1] + good[2:]) + "\n")  # no SOA: refused
    errors: list[str] = []
    assert bake(config, tmp_path / "over", errors)[0] is None and "SOA" in " ".join(errors)
    path.write_text("\n".join(good) + "\n")
    full, _ = bake(config, tmp_path / "full")
    over, over_image = bake(config, tmp_path / "over")
    assert over == full and over_image


def test_a_set_of_several_zones_keeps_no_image(tmp_path):
    """The image holds one zone's records: a set of more keeps none, and leaves none of an
    earlier build behind."""
    config, path, lines = one_zone(0, tmp_path)  # random set 0 has two zones
    path.write_text("\n".join(lines) + "\n")
    assert bake(config, tmp_path / "out")[0] is not None
    assert (tmp_path / "out" / "zonedata.image").exists()
    several = zone_set(0, tmp_path)
    assert len(several.zones) == 2
    path.write_text("\n".join(lines) + "\n")
    outputs, over_image = bake(several, tmp_path / "out")
    assert outputs is not None and not over_image
    assert not (tmp_path / "out" / "zonedata.image").exists()


def test_an_image_written_in_place_is_read_over_again(tmp_path):
    """A build over an image writes what changed into it in place (image.c,
    update_in_place), and digests the image so written: the next build takes it, edit after
    edit, at either end of its parts and in the middle, and writes what reading the whole
    file writes, the same text included. (Otherwise a wrong digest would only make every other build read the whole
    file, which the chains above would not notice.)"""
    path = tmp_path / "big.zone"
    head = ["$TTL 300", "@ SOA ns hostmaster 1 7200 900 1209600 300", "@ NS ns",
            "ns A 192.0.2.1"]
    lines = head + [f"host{i:05} A 10.{i >> 16}.{i >> 8 & 255}.{i & 255}"
                    for i in range(60000)]  # its text, lines and records: MiBs each
    config = zones_from_args([f"big.example.={path}"])
    edits = [
        ("an address in the middle", lambda ls: ls[:30004] + ["host30000 A 192.0.2.9"] +
         ls[30005:]),
        ("a name added in the middle", lambda ls: ls[:20000] + ["added A 192.0.2.10"] +
         ls[20000:]),
        ("an address at the end", lambda ls: ls[:-1] + ["host59999 A 192.0.2.11"]),
        ("a name removed at the start", lambda ls: ls[:4] + ls[5:]),
        ("a longer line at the start", lambda ls: ls[:5] + [ls[5] + " ; said"] + ls[6:]),
        # The file compared from both ends at once (changedlines.c's scan): where the two
        # meet with nothing between them, and where the last octets differ.
        ("the same text again", lambda ls: ls),
        ("the last line longer", lambda ls: ls[:-1] + [ls[-1] + " ; said"]),
        # Names added stay after the image's RRsets (changedlines.c's apply_change) until
        # an RRset goes: then all are put back in file order, the added ones among them.
        ("a name added near the end", lambda ls: ls[:-100] + ["late A 192.0.2.12"] +
         ls[-100:]),
        ("a type added to a name", lambda ls: ls + ["host00007 TXT \"more\""]),
        ("the name added first removed", lambda ls: [x for x in ls if x.split()[0] != "added"]),
        ("a name added at the start", lambda ls: ls[:4] + ["early A 192.0.2.13"] + ls[4:]),
        # The records a change takes out are found by a binary search of those the reading
        # whole filed (image.c's ordered_from), passing by those taken out since; those
        # builds over the image added, after them, are looked at one by one.
        ("a run of names removed", lambda ls: ls[:40000] + ls[40050:]),
        ("an address just after the run", lambda ls: ls[:40000] + ["host40046 A 192.0.2.14"] +
         ls[40001:]),
        ("an address just before the run", lambda ls: ls[:39999] + ["host39995 A 192.0.2.15"] +
         ls[40000:]),
        ("the address of a name an earlier build added", lambda ls: [
            "late A 192.0.2.16" if x == "late A 192.0.2.12" else x for x in ls]),
    ]
    edited_over_image(config, path, lines, edits, tmp_path)


def test_the_tree_made_again_where_names_come_and_go(tmp_path):
    """A name or an RRset come or gone makes the tree again from the image's where the change
    reached (changedlines.c's rederive_touched): empty non-terminals come and go with the
    names below them (RFC 4592 §2.2.2), a wildcard with its parent's memo of it, the zone's
    types with the last RRset of one."""
    path = tmp_path / "tree.zone"
    lines = ["$TTL 300", "@ SOA ns hostmaster 1 7200 900 1209600 300", "@ NS ns",
             "ns A 192.0.2.1", "a.b.c A 192.0.2.2", "p A 192.0.2.3", "q.p A 192.0.2.4",
             "*.w A 192.0.2.5", "w TXT \"only\"", "z.y.x A 192.0.2.6", "y.x A 192.0.2.7"]
    lines += [f"host{i} A 10.0.0.{i}" for i in range(1, 200)]
    config = zones_from_args([f"tree.example.={path}"])
    drop = lambda *gone: lambda ls: [x for x in ls if x.split()[0] not in gone]  # noqa: E731
    edits = [
        ("a leaf below two empty non-terminals removed", drop("a.b.c")),
        ("a name with one below it removed", drop("p")),
        ("the one below it removed", drop("q.p")),
        ("a wildcard removed", drop("*.w")),
        ("the last TXT removed", drop("w")),
        ("a name and the one above it removed at once", drop("z.y.x", "y.x")),
        ("names added below empty non-terminals", lambda ls: ls + ["m.n.o A 192.0.2.8",
                                                                   "*.k.j TXT \"back\""]),
        ("the name between them given data", lambda ls: ls + ["n.o MX 10 m.n.o"]),
        ("the deepest removed: the one above keeps its data", drop("m.n.o")),
    ]
    edited_over_image(config, path, lines, edits, tmp_path)


def edited_over_image(config: ZoneSetConfig, path: Path, lines: list[str], edits,
                      tmp_path: Path) -> None:
    """LINES built in full into tmp_path/over, keeping an image; then each of EDITS (what,
    a function of the lines) made and built over the build before, read over its image,
    and compared with a full build. The image as a build left it is taken without its
    digest (image.c's stamp_image); every third, its modification time moved, is digested:
    the digest each build wrote in place, from the chunks it wrote, must be the image's."""
    path.write_text("\n".join(lines) + "\n")
    assert bake(config, tmp_path / "over")[1] is False  # a full build keeps the image
    image = tmp_path / "over" / "zonedata.image"
    for step, (what, edit_lines) in enumerate(edits):
        lines = edit_lines(lines)
        path.write_text("\n".join(lines) + "\n")
        if step % 3 == 2:
            stamp = image.stat().st_mtime_ns
            os.utime(image, ns=(stamp, stamp + 1))
        over, over_image = bake(config, tmp_path / "over")
        full, _ = bake(config, tmp_path / f"full{step}")
        assert over_image, what
        assert over == full, what
        shutil.rmtree(tmp_path / f"full{step}")


def test_who_names_a_name_is_kept_from_build_to_build(tmp_path):
    """The image keeps who names each name (image.c's P_NAMED_BY), and a build over it adds
    the records it put in (P_NAMED_SINCE): a name added by one build that names another must
    be reached when a later build changes that other, its region laid out again, not copied
    with the answer it had. Aliases and mail exchangers of a host, added one build, then the
    host's address changed, then the aliases gone and the address changed back."""
    path = tmp_path / "named.zone"
    head = ["$TTL 300", "@ SOA ns hostmaster 1 7200 900 1209600 300", "@ NS ns",
            "ns A 192.0.2.1"]
    lines = head + [f"host{i:05} A 10.0.{i >> 8}.{i & 255}" for i in range(4000)]
    config = zones_from_args([f"named.example.={path}"])
    target = "host01000"
    namers = [f"alias{k} CNAME {target}" for k in range(8)] + \
        [f"mail{k} MX 10 {target}" for k in range(8)]
    at = lines.index(f"{target} A 10.0.3.232")
    edits = [
        ("aliases and exchangers added", lambda ls: ls[:at + 1] + namers + ls[at + 1:]),
        ("the host's address changed", lambda ls: [x.replace("10.0.3.232", "192.0.2.50")
                                                  for x in ls]),
        ("the aliases gone, the address back", lambda ls: [x.replace("192.0.2.50",
                                                                     "10.0.3.232")
                                                          for x in ls if "CNAME" not in x]),
    ]
    edited_over_image(config, path, lines, edits, tmp_path)
