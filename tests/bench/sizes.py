"""zonebake against the echo reflector at several zone sizes (issue 19: the kernel's pace at any
size): the benchmark's hosting zone generated with 100, 100,000 and 1,000,000 names, each
compiled, then every (size, server) pair measured in alternation for several rounds, one
worker on CPU 0 and the load generator on CPU 1. Prints, per size, the medians of answers/s
and CPU per query, as ratios to the reflector's measured in the same round, and how much of
that CPU was the server's own code (user time; the rest is the kernel's).

    .venv/bin/python tests/bench/sizes.py [--sizes 100,100000,1000000] [--rounds 3]
                                          [--seconds 5] [--workdir build/bench/sizes]
                                          [--no-huge-pages] [--before CHECKOUT]

--no-huge-pages measures zonebake with --no-huge-pages too (the data on the binary's own
4 KiB pages), in the same alternation.
--before CHECKOUT also builds the zones with another checkout of zonebake (say, `git worktree
add /tmp/before COMMIT`) and measures its servers in the same alternation: a change's effect
in one run.

A benchmark, not a test: compare ratios within one run."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gen
from run import ROOT, compile_tool, loadgen_run, measure, spread
from servers import ORIGIN, Reflector, Zonebake


def build(work: Path, names: int, checkout: Path | None = None) -> tuple[Path, Path]:
    """The zone of `names` names compiled (by the zonebake of `checkout`, when given), and its
    query file."""
    zone, queries = work / f"{names}.zone", work / f"{names}.queries"
    if not zone.exists() or not queries.exists():
        gen.generate(zone, queries, names=names)
    env = dict(os.environ)
    out = work / f"zonebake-{names}"
    if checkout:
        # `import zonebake` finds the other checkout's package first (runtime/ beside it).
        (work / "before-path").mkdir(exist_ok=True)
        link = work / "before-path" / "zonebake"
        if link.is_symlink():
            link.unlink()
        link.symlink_to(checkout.resolve() / "compiler")
        env["PYTHONPATH"] = str(work / "before-path")
        out = work / f"before-{names}"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "zonebake", "build", "-q", "--zone",
                    f"{ORIGIN}={zone}", "-o", str(out)], check=True, env=env)
    print(f"zonebake{' (before)' if checkout else ''} compiled {names} names in "
          f"{time.monotonic() - started:.1f} s", file=sys.stderr)
    return out / "zonebake-server", queries


# zonebake's variants measured, by the name in the table: the checkout that builds it (None:
# this one) and the server's options.
VARIANTS = {"zonebake": (None, ())}
SMALL_PAGES = {"4 KiB pages": (None, ("--no-huge-pages",))}


def report(work: Path, sizes: list[int], rounds: int, seconds: float,
           loadgen: Path, reflector_binary: Path, variants: dict = VARIANTS) -> None:
    """Measure and print the table (`make bench` runs it after run.py)."""
    checkouts = {checkout for checkout, _ in variants.values()} | {None}
    built = {(names, checkout): build(work, names, checkout)
             for names in sizes for checkout in checkouts}
    reflector = Reflector(work, 25321, reflector_binary)
    # qps and cpu_us of each (size, server) per round, and the reflector's in that round
    results = {names: {name: [] for name in ["reflector", *variants]} for names in sizes}
    for round_ in range(rounds):
        for names in sizes:
            queries = built[names, None][1]
            servers = {"reflector": reflector}
            servers.update({name: Zonebake(work / str(names), 25322,
                                           built[names, checkout][0], extra=extra)
                            for name, (checkout, extra) in variants.items()})
            for name, server in servers.items():
                print(f"sizes, round {round_ + 1}: {name}, {names} names", file=sys.stderr)
                server.start()
                try:
                    loadgen_run(loadgen, server.port, queries, 1)  # warm up
                    results[names][name].append(measure(server, loadgen, queries, seconds))
                finally:
                    server.stop()
    print(f"\nzonebake and the echo reflector by zone size; {rounds} alternating rounds of "
          f"{seconds:.0f} s, server on CPU 0, load on CPU 1; medians [min-max] of each "
          f"round's ratio to the reflector's round")
    print(f"{'names':>9} {'':12} {'answered/s':>24} {'of reflector':>18} "
          f"{'CPU µs/q':>17} {'x reflector':>17} {'user µs/q':>17}")
    smallest = None
    for names in sizes:
        ref = results[names]["reflector"]
        for variant in variants:
            zb = results[names][variant]
            qps = [z["qps"] / r["qps"] for z, r in zip(zb, ref)]
            cpu = [z["cpu_us"] / r["cpu_us"] for z, r in zip(zb, ref)]
            print(f"{names:9} {variant:12} {spread([z['qps'] for z in zb]):>24} "
                  f"{spread(qps, '{:.2f}'):>18} "
                  f"{spread([z['cpu_us'] for z in zb], '{:.2f}'):>17} "
                  f"{spread(cpu, '{:.2f}'):>17} "
                  f"{spread([z['user_us'] for z in zb], '{:.2f}'):>17}")
        print(f"{names:9} {'reflector':12} {spread([r['qps'] for r in ref]):>24} "
              f"{'':>18} {spread([r['cpu_us'] for r in ref], '{:.2f}'):>17} {'':>17} "
              f"{spread([r['user_us'] for r in ref], '{:.2f}'):>17}")
        median = statistics.median(z["qps"] for z in results[names]["zonebake"])
        smallest = smallest or (names, median)
    if len(sizes) > 1:
        largest = statistics.median(z["qps"] for z in results[sizes[-1]]["zonebake"])
        print(f"{sizes[-1]} names answer at {largest / smallest[1]:.2f} of {smallest[0]} "
              f"names' rate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,100000,1000000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--workdir", type=Path, default=ROOT / "build" / "bench" / "sizes")
    parser.add_argument("--no-huge-pages", action="store_true",
                        help="zonebake also with --no-huge-pages, in the same alternation")
    parser.add_argument("--before", type=Path, metavar="CHECKOUT",
                        help="also zonebake as that checkout builds it")
    args = parser.parse_args()
    work = args.workdir
    (work / "tools").mkdir(parents=True, exist_ok=True)
    loadgen = compile_tool("loadgen.c", work / "tools" / "loadgen")
    reflector = compile_tool("reflector.c", work / "tools" / "reflector")
    variants = dict(VARIANTS)
    if args.no_huge_pages:
        variants.update(SMALL_PAGES)
    if args.before:
        variants["before"] = (args.before, ())
    report(work, [int(n) for n in args.sizes.split(",")], args.rounds, args.seconds,
           loadgen, reflector, variants)


if __name__ == "__main__":
    main()
