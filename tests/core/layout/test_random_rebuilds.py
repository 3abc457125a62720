"""Rebuilds over rebuilds (compiler/core/layout/reuse.c) of random sets dense in what one
name's answer reads of others: wildcards above names that records name but no zone holds,
DNAMEs with names, wildcards and cuts below their targets and aliases into their images;
three rounds of random changes, each built over the last round's output and in full, which
must be the same octets. Sweeps like this one over thousands of sets found two misses of
the reach, which test_builds_over_earlier.py holds one test each; at this size it fails
without the reach from a wildcard to what it synthesizes, or from an image to the name below
a DNAME's owner, not without the reach below a name come or gone (its own test's)."""

from __future__ import annotations

import random

from randomsets import zone_set
from test_builds_over_earlier import build_over, change, filler, own_serial

SETS = 160
LABELS = ["a", "b", "c", "x", "y", "tg", "sub", "deep"]


def name(rng: random.Random, depth: int = 3) -> str:
    return ".".join(rng.choice(LABELS) for _ in range(rng.randint(1, depth)))


def block(rng: random.Random) -> list[str]:
    """DNAMEs, names below their targets and elsewhere, wildcards, aliases into the DNAMEs'
    images and of names that do not exist."""
    lines = [f"dn{i} DNAME {rng.choice([name(rng), 'tg', 'dn0', 'sub.tg', 'elsewhere.example.'])}"
             for i in range(rng.randint(0, 4))]
    for _ in range(rng.randint(5, 40)):
        owner = name(rng) + rng.choice(["", ".tg", ".sub.tg"])
        lines.append(rng.choice([
            f"{owner} A 192.0.2.{rng.randint(1, 250)}", f"{owner} A 192.0.2.{rng.randint(1, 250)}",
            f"{owner} TXT t{rng.randint(1, 9)}", f"{owner} MX 10 {name(rng)}.dn{rng.randint(0, 1)}",
            f"*.{owner} A 198.51.100.{rng.randint(1, 250)}",
            f"{owner} CNAME {name(rng)}.{rng.choice(['dn0', 'dn1', 'dn2', 'tg'])}"]))
    lines += [f"al{i} CNAME {name(rng)}.dn{rng.randint(0, 3)}" for i in range(rng.randint(0, 6))]
    lines += [f"nx{i} CNAME nx." + rng.choice([f"{name(rng, 2)}.tg", f"f{rng.randrange(0, 300, 10)}"])
              for i in range(rng.randint(0, 6))]
    if rng.random() < 0.8:
        lines.append(f"{rng.choice(['*', '*', '*.tg', '*.sub'])} MX 10 f{rng.randrange(0, 300, 10)}")
    return lines


def edit(rng: random.Random, lines: list[str]) -> list[str]:
    """One random change: lines of a new block, a line taken out, a name or a wildcard or a
    DNAME added, the DNAMEs' TTL changed, a cut below a target, the name above an alias's
    missing target taken out or put in, a wildcard's mail exchanger's address changed, or
    one of the fillers' own changes (test_builds_over_earlier.change)."""
    roll = rng.random()
    if roll < 0.25:
        return lines + block(rng)[:rng.randint(1, 3)]
    if roll < 0.5:
        at = rng.randrange(len(lines))
        return lines if lines[at].startswith(("$", "@ SOA")) else lines[:at] + lines[at + 1:]
    if roll < 0.55:
        return lines + [f"{name(rng)} A 198.18.8.{rng.randint(1, 9)}"]
    if roll < 0.6:
        return lines + [f"*.{name(rng)} TXT w"]
    if roll < 0.65:
        return lines + [f"dn{rng.randint(0, 5)} DNAME {rng.choice([name(rng), 'tg', 'sub.tg'])}"]
    if roll < 0.7:
        return [line.replace(" DNAME ", " 77 DNAME ", 1) for line in lines]
    if roll < 0.75:
        owner = name(rng) + ".tg"
        return lines + [f"{owner} NS ns.{owner}", f"ns.{owner} A 198.18.9.9"]
    aliases = [line.split()[2] for line in lines if line.startswith("nx")]
    if roll < 0.85 and aliases:  # the name above an alias's missing target, gone or come
        host = rng.choice(aliases).removeprefix("nx.")
        kept = [line for line in lines if not line.startswith(host + " ")]
        return kept if len(kept) < len(lines) else lines + [f"{host} A 198.18.6.6"]
    exchangers = [line.split()[3] for line in lines if line.startswith("*") and " MX " in line]
    if roll < 0.9 and exchangers:  # the address of a wildcard's mail exchanger changed
        host = rng.choice(exchangers)
        return [f"{host} A 198.18.5.{rng.randint(1, 250)}" if line.startswith(host + " A ")
                else line for line in lines]
    try:
        return change(rng, lines)[1]
    except ValueError:  # the host's line went in an earlier change
        return lines


def test_rebuilds_over_rebuilds_write_what_full_builds_write(tmp_path):
    compared = reused = 0
    for case in range(SETS):
        rng = random.Random(case)
        directory = tmp_path / str(case)
        directory.mkdir()
        config = zone_set(case, directory)
        first = config.zones[0].path
        lines = (own_serial(first.read_text().splitlines()) +
                 filler(rng)[:rng.choice([300, 1500, 3000])] + block(rng))
        first.write_text("\n".join(lines) + "\n")
        if build_over(config, directory, "0") is None:
            continue  # the random set is refused
        last = directory / "0"
        for step in range(1, 4):
            for _ in range(rng.randint(1, 2)):
                lines = edit(rng, lines)
            first.write_text("\n".join(lines) + "\n")
            full = build_over(config, directory / "full", str(step))
            over = build_over(config, directory, str(step), earlier=last)
            assert (full is None) == (over is None), (case, step)
            if full is None:
                continue  # refused: the next round builds over the last that was not
            assert over[0] == full[0], (case, step)  # the data, the state, the layout
            compared += 1
            reused += bool(over[1] and over[1][0])
            last = directory / str(step)
    assert compared >= 80 and reused >= compared // 2, (compared, reused)
