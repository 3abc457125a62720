"""The benchmark's abuse part: what rate limiting and cookies cost a hit (callgrind), and a
spoofed flood from one /24 with rate limiting on: whether clients of another prefix keep
their answers, and the octets the flood gets back per octet it sends (the amplification a
spoofer buys), against the same flood without rate limiting."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import dns.edns
import dns.message
import dns.query

import callgrind
from servers import ORIGIN, Zonebake

COOKIE = 10
RRL_RATE = 100  # responses a second per prefix and answer
FLOOD_RATE = 60_000  # queries a second


def hits(queries: Path) -> list[str]:
    return [line for line in queries.read_text().split("\n")
            if line and callgrind.KINDS["hit"](*line.split())]


def server_cookie(port: int) -> str:
    """The whole cookie the server gives a client at 127.0.0.1 (loadgen's address)."""
    query = dns.message.make_query("host1." + ORIGIN, "A", use_edns=0, options=[
        dns.edns.GenericOption(COOKIE, bytes.fromhex("2464c4abcf10c957"))])
    response = dns.query.udp(query, "127.0.0.1", port=port, timeout=5)
    (option,) = [o for o in response.options if o.otype == COOKIE]
    return option.to_wire().hex()


def instruction_costs(binary: Path, loadgen: Path, queries: Path, work: Path) -> dict:
    lines = hits(queries)
    count = lambda **how: callgrind.instructions(binary, loadgen, lines, 3200, work, edns=1,
                                                 **how)
    return {
        "hit with EDNS": count(),
        "hit, rate limiting on": count(server_args=("--rrl-responses-per-second", "1000000")),
        "hit, a valid server cookie": count(
            prepare=lambda port: ["--cookie", server_cookie(port)]),
        "hit, a client cookie alone": count(prepare=lambda port: ["--cookie", "2464c4abcf10c957"]),
    }


def loadgen_args(loadgen: Path, port: int, queries: Path, seconds: float, *more: str) -> list:
    return [str(loadgen), "127.0.0.1", str(port), str(queries), "--seconds", str(seconds),
            "--batch", "32", *more]


def parse(out: str) -> dict:
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


def flood(work: Path, binary: Path, loadgen: Path, queries: Path, port: int, rrl: bool,
          seconds: float = 3) -> dict:
    """A saturating flood of one name (what an amplifier picks: the name that answers most)
    from 127.0.0.1-8, one /24, at FLOOD_RATE (fixed: a spoofer waits for no answer), and at
    once a client at 127.0.1.1 asking the benchmark's hits, 2,000 a second."""
    flood_file, hit_file = work / "flood.queries", work / "hits.queries"
    flood_file.write_text(hits(queries)[0] + "\n")
    hit_file.write_text("\n".join(hits(queries)) + "\n")
    extra = ("--rrl-responses-per-second", str(RRL_RATE)) if rrl else ()
    server = Zonebake(work, port, binary, extra=extra)
    server.start()
    try:
        attacker = subprocess.Popen(
            loadgen_args(loadgen, port, flood_file, seconds, "--source", "127.0.0.1",
                         "--sockets", "8", "--rate", str(FLOOD_RATE), "--cpu", "1",
                         "--linger", "0.3"),
            stdout=subprocess.PIPE, text=True)
        honest = subprocess.run(
            loadgen_args(loadgen, port, hit_file, seconds, "--source", "127.0.1.1", "--sockets",
                         "1", "--rate", "2000", "--cpu", "-1", "--linger", "1"),
            capture_output=True, text=True, check=True)
        flood_out = attacker.communicate(timeout=seconds + 60)[0]
    finally:
        server.stop()
    return {"flood": parse(flood_out), "honest": parse(honest.stdout)}


def report(work: Path, binary: Path, loadgen: Path, queries: Path) -> None:
    costs = instruction_costs(binary, loadgen, queries, work)
    base = costs["hit with EDNS"]
    print("\ncallgrind, a hit with EDNS, user-space instructions per query:")
    for what, value in costs.items():
        print(f"  {what:28} {value:6.0f}  ({value - base:+.0f})")
    print(f"\na spoofed flood of one name from 127.0.0.0/24 (8 sources, {FLOOD_RATE:,}/s) and "
          f"a client at 127.0.1.1 (2,000 queries/s of other names), 3 s:")
    print(f"{'':22} {'flood answered':>15} {'octets out/in':>14} {'other prefix answered':>22}")
    for rrl in (False, True):
        got = flood(work, binary, loadgen, queries, 25320 + rrl, rrl)
        f, h = got["flood"], got["honest"]
        label = f"rate limit {RRL_RATE}/s" if rrl else "no rate limit"
        print(f"{label:22} {f['answered']:>7.0f}/{f['sent']:<7.0f} "
              f"{f['bytes_in'] / max(f['bytes_out'], 1):14.2f} "
              f"{h['answered']:>11.0f}/{h['sent']:<10.0f}")
