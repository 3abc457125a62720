"""`make bench`: zonebake against Knot, NSD, gdnsd and a bare echo reflector on one
100,000-name zone, each server with one worker on CPU 0 and the load generator on CPU 1,
in alternation (A B C D E, A B C D E, ...) for several rounds; then zonebake with 2 workers
unpinned, and callgrind's instructions per query. Prints the table of medians. Then the zone
signed (NSEC3), queried with DO set, against Knot and NSD, and its instruction counts. Last,
the AF_XDP part (xdp.py): over a veth pair with kxdpgun as the load, zonebake over AF_XDP,
Knot over AF_XDP, zonebake on sockets and the AF_XDP reflector (`--only xdp` runs it alone;
`--queues N` sets its queues).

A benchmark, not a test: the figures depend on the machine; compare ratios within one run."""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import abuse
import callgrind
import gen
import xdp
from servers import ORIGIN, Gdnsd, Knot, Nsd, Reflector, Zonebake
import signzone  # noqa: E402 (tests/, on the path servers.py sets)

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def compile_tool(source: str, out: Path) -> Path:
    subprocess.run(["cc", "-O2", "-Wall", "-o", str(out), str(HERE / source)], check=True)
    return out


def loadgen_run(loadgen: Path, port: int, queries: Path, seconds: float, rate: float = 0,
                cpu: int = 1, edns: int = 0) -> dict:
    args = [str(loadgen), "127.0.0.1", str(port), str(queries), "--seconds", str(seconds),
            "--cpu", str(cpu), "--window", "512", "--batch", "32", "--sockets", "8",
            "--edns", str(edns)]
    if rate:
        args += ["--rate", str(rate)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


def measure(server, loadgen: Path, queries: Path, seconds: float, rate: float = 0,
            cpu: int = 1, edns: int = 0) -> dict:
    (user, system) = server.cpu_times()
    result = loadgen_run(loadgen, server.port, queries, seconds, rate, cpu, edns)
    (user_after, system_after) = server.cpu_times()
    answered = max(result["answered"], 1)
    result["cpu_us"] = (user_after + system_after - user - system) * 1e6 / answered
    result["user_us"] = (user_after - user) * 1e6 / answered  # the rest: the kernel's
    return result


def spread(values: list[float], fmt: str = "{:.0f}") -> str:
    return (f"{fmt.format(statistics.median(values))} "
            f"[{fmt.format(min(values))}-{fmt.format(max(values))}]")


def signed(args, work: Path, zone: Path, queries: Path, loadgen: Path) -> None:
    """The same zone signed (NSEC3; NSEC for its NXDOMAIN): every query with DO set, against
    Knot and NSD serving the signed file, in alternation; then callgrind's instructions per
    query with DO clear and set."""
    if not shutil.which("dnssec-signzone"):
        print("\ndnssec-signzone is not installed (bind9-utils): no signed zone", file=sys.stderr)
        return
    files = signzone.sign(zone, ORIGIN, work / "signed")
    binaries = {}
    for kind, path in files.items():
        out = work / "signed" / f"zonebake-{kind}"
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "zonebake", "build", "-q", "--zone",
                        f"{ORIGIN}={path}", "-o", str(out)], check=True)
        print(f"zonebake compiled the {kind.upper()}-signed zone (every signature verified) in "
              f"{time.monotonic() - started:.0f} s", file=sys.stderr)
        binaries[kind] = out / "zonebake-server"
    candidates = [Zonebake(work / "signed", 25312, binaries["nsec3"]),
                  Nsd(work / "signed", 25314, files["nsec3"]),
                  Knot(work / "signed", 25315, files["nsec3"])]
    servers = [s for s in candidates
               if s.name == "zonebake" or shutil.which({"nsd": "nsd", "knot": "knotd"}[s.name])]
    results = {s.name: [] for s in servers}
    for round_ in range(args.rounds):
        for server in servers:
            print(f"signed, round {round_ + 1}: {server.name}", file=sys.stderr)
            server.start()
            try:
                loadgen_run(loadgen, server.port, queries, 1, edns=2)
                results[server.name].append(measure(server, loadgen, queries, args.seconds,
                                                    edns=2))
            finally:
                server.stop()
    zb = statistics.median(r["qps"] for r in results["zonebake"])
    print(f"\nsigned zone (NSEC3), every query with DO set; medians [min-max]:")
    for name, runs in results.items():
        qps = statistics.median(r["qps"] for r in runs)
        print(f"  {name:10} {spread([r['qps'] for r in runs]):>26} answered/s, CPU "
              f"{spread([r['cpu_us'] for r in runs], '{:.2f}'):>12} µs/q, zonebake/x "
              f"{zb / qps:.2f}")
    lines = [l for l in queries.read_text().split("\n") if l]
    chosen = {kind: [l for l in lines if matches(*l.split())]
              for kind, matches in callgrind.KINDS.items()}
    print("\ncallgrind on the signed zone, user-space instructions per query:")
    for label, kind, chain, edns in [("hit, EDNS, DO clear", "hit", "nsec3", 1),
                                     ("hit, DO set", "hit", "nsec3", 2),
                                     ("NXDOMAIN, DO set, NSEC", "nxdomain", "nsec", 2),
                                     ("NXDOMAIN, DO set, NSEC3", "nxdomain", "nsec3", 2),
                                     ("NODATA, DO set, NSEC3", "nodata", "nsec3", 2),
                                     ("referral, DO set, NSEC3", "referral", "nsec3", 2)]:
        count = callgrind.instructions(binaries[chain], loadgen, chosen[kind], 3200, work,
                                       edns=edns)
        print(f"  {label:26} {count:6.0f}")
        if chain == "nsec3" and kind == "nxdomain":
            # valgrind hides the SHA extensions (its CPUID says none), so the batch hashed its
            # names together in vector lanes (runtime/query/denial.c); on a processor with them
            # each is hashed alone by the SHA extensions' block, which does not branch.
            lanes = callgrind.inclusive(work / "callgrind.out", "zb_hash_pending") / 3200
            ni = callgrind.straight_line(binaries[chain], "zb_sha1_block_ni")
            print(f"  {'  with the SHA extensions':26} {count - lanes + ni:6.0f} "
                  f"(the lanes' {lanes:.0f} replaced by the SHA extensions' {ni})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--names", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--only", choices=["xdp"],
                        help="run one part alone: xdp, the AF_XDP part")
    parser.add_argument("--queues", type=int, default=1,
                        help="the AF_XDP part's queues: the server on CPUs 0..N-1, kxdpgun "
                             "on CPUs N..2N-1 (default: 1)")
    args = parser.parse_args()
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)

    zone, queries = work / "bench.zone", work / "bench.queries"
    if not zone.exists() or not queries.exists():
        gen.generate(zone, queries, names=args.names)
    (work / "tools").mkdir(exist_ok=True)
    loadgen = compile_tool("loadgen.c", work / "tools" / "loadgen")
    reflector = compile_tool("reflector.c", work / "tools" / "reflector")
    binary = work / "zonebake" / "zonebake-server"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "zonebake", "build", "--zone", f"{ORIGIN}={zone}",
                    "-o", str(work / "zonebake")], check=True)
    print(f"zonebake compiled {args.names} names in {time.monotonic() - started:.0f} s",
          file=sys.stderr)
    if args.only == "xdp":
        xdp.report(work, binary, zone, queries, args.rounds, args.seconds, args.queues)
        return

    candidates = [Reflector(work, 25301, reflector), Zonebake(work, 25302, binary),
                  Gdnsd(work, 25303, zone), Nsd(work, 25304, zone), Knot(work, 25305, zone)]
    tools = {"gdnsd": "gdnsd", "nsd": "nsd", "knot": "knotd"}
    servers = [s for s in candidates if s.name not in tools or shutil.which(tools[s.name])]
    missing = [s.name for s in candidates if s not in servers]
    if missing:
        print(f"not installed, left out: {', '.join(missing)}", file=sys.stderr)

    results = {s.name: {"sat": [], "fixed": []} for s in servers}
    for round_ in range(args.rounds):
        for server in servers:
            print(f"round {round_ + 1}: {server.name}", file=sys.stderr)
            server.start()
            try:
                loadgen_run(loadgen, server.port, queries, 1)  # warm up
                results[server.name]["sat"].append(measure(server, loadgen, queries,
                                                           args.seconds))
                results[server.name]["fixed"].append(measure(server, loadgen, queries,
                                                             args.seconds, rate=50_000))
            finally:
                server.stop()

    two = Zonebake(work, 25306, binary, threads=2, pinned=False)
    two.start()
    try:
        loadgen_run(loadgen, two.port, queries, 1, cpu=-1)
        two_workers = measure(two, loadgen, queries, args.seconds, cpu=-1)
    finally:
        two.stop()

    counts = {}
    for kind, matches in callgrind.KINDS.items():
        lines = [l for l in queries.read_text().split("\n") if l and matches(*l.split())]
        counts[kind] = callgrind.instructions(binary, loadgen, lines, 3200, work)

    med = {name: {m: {k: statistics.median(r[k] for r in runs[m]) for k in runs[m][0]}
                  for m in runs} for name, runs in results.items()}
    zb = med["zonebake"]
    print(f"\n{args.rounds} rounds of {args.seconds:.0f} s each; server on CPU 0, load on CPU 1; "
          f"medians [min-max]\n")
    print(f"{'server':10} {'answered/s (saturation)':>26} {'lost':>7} {'mean µs':>8} "
          f"{'p99 µs':>7} {'CPU µs/q':>17} {'at 50k/s: mean µs':>18} {'p99 µs':>7} "
          f"{'zonebake/x':>10}")
    for name, runs in results.items():
        sat, fixed = runs["sat"], runs["fixed"]
        ratio = zb["sat"]["qps"] / med[name]["sat"]["qps"]
        print(f"{name:10} {spread([r['qps'] for r in sat]):>26} "
              f"{statistics.median(r['lost'] for r in sat):7.0f} "
              f"{med[name]['sat']['mean_us']:8.0f} {med[name]['sat']['p99_us']:7.0f} "
              f"{spread([r['cpu_us'] for r in sat], '{:.2f}'):>17} "
              f"{spread([r['mean_us'] for r in fixed], '{:.1f}'):>18} "
              f"{med[name]['fixed']['p99_us']:7.0f} {ratio:10.2f}")
    if "reflector" in med:
        ref = med["reflector"]
        print(f"\nzonebake vs the reflector: {zb['sat']['qps'] / ref['sat']['qps']:.0%} of its "
              f"answers/s, {zb['sat']['cpu_us'] / ref['sat']['cpu_us']:.2f}x its CPU per query, "
              f"{zb['fixed']['mean_us'] - ref['fixed']['mean_us']:+.1f} µs mean latency at 50k/s")
    print(f"\nzonebake, 2 workers, nothing pinned: {two_workers['qps']:.0f} answered/s, "
          f"{two_workers['lost']:.0f} lost, mean {two_workers['mean_us']:.0f} µs, "
          f"p99 {two_workers['p99_us']:.0f} µs, CPU {two_workers['cpu_us']:.2f} µs/q")
    print("\ncallgrind, user-space instructions per query (batches of 32, kernel excluded):")
    for kind, value in counts.items():
        print(f"  {kind:10} {value:6.0f}")
    abuse.report(work, binary, loadgen, queries)
    signed(args, work, zone, queries, loadgen)
    xdp.report(work, binary, zone, queries, args.rounds, args.seconds, args.queues)


if __name__ == "__main__":
    main()
