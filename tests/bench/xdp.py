"""`make bench`'s AF_XDP part (`run.py --only xdp`): two network namespaces joined by a veth
pair (tests/transport/vethpair.py), kxdpgun (Knot's AF_XDP load generator) in the client's,
and in the server's, in alternation: zonebake over AF_XDP, Knot over AF_XDP (`xdp: listen` on
the same interface), zonebake on its sockets, and the AF_XDP echo reflector
(tests/bench/xdp_reflector.c, the floor of this path). With one queue the server runs on CPU
0 and kxdpgun on CPU 1; with `--queues N`, the veth has N queues, the server N workers on
CPUs 0..N-1 and kxdpgun N threads on CPUs N..2N-1.

The load: kxdpgun sends the benchmark's query mix at a fixed rate above what one of its
threads can send (RATE_PER_QUEUE); each server answers what it can, and its capacity is the
answers kxdpgun counts back per second. Which side is the limit is read from the CPU time:
a server that used less than BUSY of its cores had time left, so the generator was the limit,
and the comparison is then made on CPU per answer instead of answers per second.

Where the kernel's work lands on a veth: a frame sent on one end is received (the XDP
program, the copy into the AF_XDP socket's memory, or the kernel's receive path up to a
socket) on the sending side's CPU. So each side's CPU does its own work, its sends, and the
receiving of what it sent; the server's CPU per answer (user and system, from /proc) holds
the delivery of its answers into kxdpgun and not the receiving of its queries. For the
AF_XDP contenders the two are the same work (an XDP program and a copy); for zonebake on
sockets the kernel's receive path, the larger part of that path's cost, is kxdpgun's CPU's:
its figure is a floor, and kxdpgun's own CPU per query shows the rest.

A benchmark, not a test: compare within one run. Needs root, AF_XDP, iproute2, taskset and
kxdpgun (knot-dnsutils); nothing from the network."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
from pathlib import Path

import dns.message
import dns.query
import dns.rcode

from servers import ORIGIN, BenchServer
from knotd import knot_config, knotd_path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "transport"))
from vethpair import AF_XDP, SERVER_V4, VethPair, ip  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
XDP_SOURCES = ROOT / "runtime" / "transport" / "xdp"
PORT = 5300
# Queries per second asked of each kxdpgun thread: more than one thread sends on this
# machine's veth (about 0.8 to 1.4 million), so that the server, where it can, is the limit.
RATE_PER_QUEUE = 2_000_000
# A server that used this share of its cores or more was the limit; below it, the generator.
BUSY = 0.9
# Each kxdpgun run is bounded: its duration plus this for its start (the XDP program's
# attachment, the query file) and its end.
KXDPGUN_GRACE_S = 30


def kxdpgun_path() -> str | None:
    return shutil.which("kxdpgun") or (os.path.exists("/usr/sbin/kxdpgun")
                                       and "/usr/sbin/kxdpgun" or None)


def missing() -> str | None:
    """Why the AF_XDP part cannot run here, or None."""
    if os.geteuid() != 0:
        return "it needs root (network namespaces, XDP programs, AF_XDP sockets)"
    try:
        socket.socket(AF_XDP, socket.SOCK_RAW, 0).close()
    except OSError as error:
        return f"the kernel has no AF_XDP sockets ({error.strerror})"
    if not kxdpgun_path():
        return "kxdpgun is not installed (Debian's knot-dnsutils)"
    for tool in ("ip", "taskset"):
        if not shutil.which(tool):
            return f"{tool} is not installed"
    return None


def cpus(first: int, count: int) -> str:
    return f"{first}-{first + count - 1}" if count > 1 else str(first)


def compile_reflector(out: Path) -> Path:
    subprocess.run(["cc", "-std=gnu11", "-O2", "-Wall", "-pthread", f"-I{ROOT / 'runtime'}",
                    str(Path(__file__).resolve().parent / "xdp_reflector.c"),
                    *(str(XDP_SOURCES / name) for name in ("program.c", "xsk.c", "queues.c")),
                    "-o", str(out)], check=True)
    return out


def xdp_mode(log: Path) -> str:
    """The XDP mode and the AF_XDP socket's, as zonebake and the reflector log them."""
    found = re.search(r"(native|generic) XDP, (zero-copy|copy mode)", log.read_text())
    return f"{found.group(1)} XDP, {found.group(2)}" if found else "?"


class Contender(BenchServer):
    """A server in the pair's server namespace, on CPUs 0..queues-1, stopped by its PID (its
    process group: `ip netns exec` and taskset exec it), the interface left without an XDP
    program (Knot leaves its own attached for a successor)."""

    pinned = False  # taskset inside the namespace instead
    xdp = True      # serves over AF_XDP: the interface has its program while it runs

    def __init__(self, workdir: Path, pair: VethPair, queues: int):
        self.pair, self.queues = pair, queues
        super().__init__(workdir, PORT)

    def server_command(self) -> list[str]:
        raise NotImplementedError

    def command(self) -> list[str]:
        return [*self.pair.exec("server"), "taskset", "-c", cpus(0, self.queues),
                *self.server_command()]

    def start(self) -> None:
        if self.pair.xdp_on_server():
            raise RuntimeError(f"{self.pair.server_if} still has an XDP program: "
                               f"{self.pair.xdp_on_server()}")
        super().start()
        if self.xdp and not self.pair.xdp_on_server():
            self.stop()
            raise RuntimeError(f"{self.name} answers, but no XDP program is attached")

    def answers(self) -> bool:
        """An answer over the veth, from a socket in the client's namespace."""
        query = dns.message.make_query("host1." + ORIGIN, "A", use_edns=False)
        with self.pair.socket("client", socket.AF_INET) as s:
            s.setblocking(False)  # as dnspython makes its own: its timeout holds
            try:
                response = dns.query.udp(query, SERVER_V4, port=self.port, timeout=0.5,
                                         sock=s)
            except Exception:
                return False
        return response.rcode() == dns.rcode.NOERROR and bool(response.answer)

    def stop(self) -> None:
        super().stop()
        ip("-n", self.pair.namespaces["server"], "link", "set", "dev", self.pair.server_if,
           "xdp", "off")

    def mode(self) -> str:
        """The XDP mode the interface's program runs in, as `ip link` says."""
        shown = self.pair.xdp_on_server().split()
        return {"xdp": "native XDP", "xdpgeneric": "generic XDP"}.get(
            shown[0] if shown else "", "no XDP")

    def counted(self) -> dict | None:
        """The server's own counters, where it keeps them."""
        return None


class ZonebakeXdp(Contender):
    name = "zonebake-xdp"

    def __init__(self, workdir, pair, queues, binary: Path):
        self.binary = binary
        super().__init__(workdir, pair, queues)
        self.control = self.workdir / "control"

    def server_command(self):
        # Its sockets on the namespace's loopback only: every answer kxdpgun gets came over
        # AF_XDP.
        return [str(self.binary), "--listen", f"127.0.0.1:{self.port}", "--xdp",
                f"{self.pair.server_if}@{self.port}", *self.options()]

    def options(self) -> list[str]:
        return ["--threads", str(self.queues), "--cpu-affinity", "--control",
                str(self.control), *(["--allow-root"] if os.geteuid() == 0 else [])]

    def mode(self):
        return xdp_mode(self.workdir / "log")

    def counted(self):
        out = subprocess.run([str(self.binary), "stats", "--control", str(self.control)],
                             capture_output=True, text=True, timeout=10, check=True).stdout
        stats = json.loads(out)
        return {"queries": stats["queries"]["udp"], "xdp_queries": stats["xdp_queries"],
                "responses": sum(stats["responses"].values())}


class ZonebakeSockets(ZonebakeXdp):
    name = "zonebake-sockets"
    xdp = False

    def server_command(self):
        return [str(self.binary), "--listen", f"{SERVER_V4}:{self.port}", *self.options()]

    def mode(self):
        return "sockets"


class KnotXdp(Contender):
    name = "knot-xdp"

    def __init__(self, workdir, pair, queues, zone: Path):
        self.zone = zone
        super().__init__(workdir, pair, queues)

    def server_command(self):
        # One XDP worker per queue of the interface (Knot counts them); its UDP and TCP
        # socket workers on the namespace's loopback, idle here.
        config = self.workdir / "knot.conf"
        config.write_text(knot_config(
            self.workdir, self.port, [(ORIGIN, self.zone)],
            "    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n"
            f"xdp:\n    listen: {self.pair.server_if}@{self.port}\n"))
        return [knotd_path(), "-c", str(config)]


class ReflectorXdp(Contender):
    name = "reflector-xdp"

    def __init__(self, workdir, pair, queues, binary: Path):
        self.binary = binary
        super().__init__(workdir, pair, queues)

    def server_command(self):
        return [str(self.binary), "-q", str(self.queues), "-c", "0", self.pair.server_if,
                str(self.port)]

    def answers(self) -> bool:
        """It echoes: the datagram comes back as it went."""
        with self.pair.socket("client", socket.AF_INET) as s:
            s.settimeout(0.5)
            s.sendto(b"ping", (SERVER_V4, self.port))
            try:
                return s.recv(16) == b"ping"
            except OSError:
                return False

    def mode(self):
        return xdp_mode(self.workdir / "log")


def server_mac(pair: VethPair) -> str:
    shown = ip("-j", "-n", pair.namespaces["server"], "link", "show", "dev", pair.server_if)
    return json.loads(shown)[0]["address"]


def kxdpgun(pair: VethPair, queues: int, queries: Path, seconds: float) -> dict:
    """kxdpgun in the client's namespace on CPUs queues..2*queues-1, one thread per queue at
    RATE_PER_QUEUE each: what it sent and got back, per second, and its own CPU time (it is
    this process's only child to end meanwhile). Its XDP program is taken off after it."""
    command = [*pair.exec("client"), "taskset", "-c", cpus(queues, queues), kxdpgun_path(),
               "-t", str(seconds), "-Q", str(RATE_PER_QUEUE * queues), "-i", str(queries),
               "-I", pair.client_if, "-p", str(PORT), "-F", f"{queues}s1",
               "-R", server_mac(pair), SERVER_V4]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        out = subprocess.run(command, capture_output=True, text=True, check=True,
                             timeout=seconds + KXDPGUN_GRACE_S).stdout
    finally:
        ip("-n", pair.namespaces["client"], "link", "set", "dev", pair.client_if, "xdp", "off")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    sent = re.search(r"total queries:\s+(\d+) \((\d+) pps\)", out)
    got = re.search(r"total replies:\s+(\d+) \((\d+) pps\)", out)
    if not sent or not got:
        raise RuntimeError(f"kxdpgun said: {out}")
    return {"sent": int(sent.group(1)), "sent_per_s": int(sent.group(2)),
            "answered": int(got.group(1)), "answered_per_s": int(got.group(2)),
            "gen_cpu_s": (after.ru_utime + after.ru_stime - before.ru_utime
                          - before.ru_stime)}


def measure(server: Contender, pair: VethPair, queries: Path, seconds: float) -> dict:
    counted = server.counted()
    (user, system) = server.cpu_times()
    result = kxdpgun(pair, server.queues, queries, seconds)
    (user_after, system_after) = server.cpu_times()
    answered = max(result["answered"], 1)
    result["user_us"] = (user_after - user) * 1e6 / answered
    result["system_us"] = (system_after - system) * 1e6 / answered
    result["cpu_us"] = result["user_us"] + result["system_us"]
    # Of its cores, the share the server used while kxdpgun sent.
    result["busy"] = (user_after + system_after - user - system) / seconds / server.queues
    result["gen_busy"] = result["gen_cpu_s"] / seconds / server.queues
    result["gen_us"] = result["gen_cpu_s"] * 1e6 / max(result["sent"], 1)
    result["answered_share"] = result["answered"] / max(result["sent"], 1)
    if counted is not None:
        now = server.counted()
        result.update({key: now[key] - counted[key] for key in now})
    return result


def spread(values: list[float], fmt: str = "{:,.0f}") -> str:
    return (f"{fmt.format(statistics.median(values))} "
            f"[{fmt.format(min(values))}-{fmt.format(max(values))}]")


def report(work: Path, binary: Path, zone: Path, queries: Path, rounds: int = 3,
           seconds: float = 5, queues: int = 1) -> None:
    why = missing()
    if why:
        print(f"\nno AF_XDP part: {why}", file=sys.stderr)
        return
    available = os.sched_getaffinity(0)
    if not set(range(2 * queues)) <= available:
        print(f"\nno AF_XDP part: {queues} queue(s) take CPUs 0-{2 * queues - 1}",
              file=sys.stderr)
        return
    work = work / "xdp"
    work.mkdir(parents=True, exist_ok=True)
    reflector = compile_reflector(work / "xdp_reflector")

    # Stopped from outside (a timeout's SIGTERM), it still stops its server and removes the
    # namespaces on the way out.
    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        results, modes = alternate(work, binary, zone, queries, rounds, seconds, queues,
                                   reflector)
    finally:
        signal.signal(signal.SIGTERM, previous)
    print_table(results, modes, rounds, seconds, queues)


def terminated(signum, frame):
    raise SystemExit(128 + signum)


def alternate(work: Path, binary: Path, zone: Path, queries: Path, rounds: int,
              seconds: float, queues: int, reflector: Path) -> tuple[dict, dict]:
    """Each contender in turn, `rounds` times: started, warmed up, measured, stopped."""
    with VethPair(queues=queues) as pair:
        candidates = [ZonebakeXdp(work, pair, queues, binary),
                      KnotXdp(work, pair, queues, zone),
                      ZonebakeSockets(work, pair, queues, binary),
                      ReflectorXdp(work, pair, queues, reflector)]
        contenders = [c for c in candidates if c.name != "knot-xdp" or knotd_path()]
        if len(contenders) < len(candidates):
            print("knotd is not installed: no Knot over AF_XDP", file=sys.stderr)
        results = {c.name: [] for c in contenders}
        modes = {}
        for round_ in range(rounds):
            for server in contenders:
                print(f"AF_XDP, round {round_ + 1}: {server.name}", file=sys.stderr)
                server.start()
                try:
                    modes[server.name] = server.mode()
                    kxdpgun(pair, queues, queries, 1)  # warm up
                    results[server.name].append(measure(server, pair, queries, seconds))
                finally:
                    server.stop()
    return results, modes


def print_table(results: dict, modes: dict, rounds: int, seconds: float, queues: int) -> None:
    med = {name: {k: statistics.median(r[k] for r in runs) for k in runs[0]}
           for name, runs in results.items()}
    print(f"\nAF_XDP over a veth pair, {queues} queue{'s' if queues > 1 else ''}: servers on "
          f"CPU {cpus(0, queues)}, kxdpgun on CPU {cpus(queues, queues)} asked for "
          f"{RATE_PER_QUEUE * queues:,} queries/s (more than it sends: each server answers "
          f"what it can); {rounds} rounds of {seconds:.0f} s; medians [min-max]")
    print("modes: " + ", ".join(f"{name} {mode}" for name, mode in modes.items()))
    print(f"\n{'contender':17} {'answered/s':>28} {'sent/s':>10} {'answered':>8} "
          f"{'server busy':>11} {'CPU µs/answer':>19} {'user':>5} {'system':>6} "
          f"{'kxdpgun busy':>12} {'µs/query':>8}  limit")
    for name, runs in results.items():
        m = med[name]
        limit = "server" if m["busy"] >= BUSY else "kxdpgun"
        print(f"{name:17} {spread([r['answered_per_s'] for r in runs]):>28} "
              f"{m['sent_per_s']:10,.0f} {m['answered_share']:8.0%} {m['busy']:11.0%} "
              f"{spread([r['cpu_us'] for r in runs], '{:.2f}'):>19} {m['user_us']:5.2f} "
              f"{m['system_us']:6.2f} {m['gen_busy']:12.0%} {m['gen_us']:8.2f}  {limit}")
    print("server busy: its CPU time over the seconds kxdpgun sent, per core; kxdpgun busy "
          "likewise (its start included), µs/query its CPU per query sent. On a veth a frame "
          "is received on the sender's CPU: a server's CPU holds the delivery of its answers "
          "into kxdpgun, not the receiving of its queries, which for zonebake-sockets is the "
          "kernel's whole receive path (a floor, then).")
    for name in ("zonebake-xdp", "zonebake-sockets"):
        if name in med and "responses" in med[name]:
            m = med[name]
            print(f"{name}: {m['queries']:,.0f} queries counted by the server "
                  f"({m['xdp_queries'] / max(m['queries'], 1):.0%} over AF_XDP), "
                  f"{m['responses']:,.0f} answers sent, {m['answered']:,.0f} of them back at "
                  f"kxdpgun (medians)")

    if "zonebake-xdp" not in med:
        return
    zb = med["zonebake-xdp"]
    print("\nzonebake over AF_XDP against (issue 39's targets; answers/s per server core where "
          "both servers were the limit, else answers per CPU-second, the inverse of CPU per "
          "answer):")
    for name, least in [("knot-xdp", 2.0), ("reflector-xdp", 0.9), ("zonebake-sockets", 2.0)]:
        if name not in med:
            continue
        other = med[name]
        both_servers = zb["busy"] >= BUSY and other["busy"] >= BUSY
        if both_servers:
            ratio, what = zb["answered_per_s"] / other["answered_per_s"], "answers/s per core"
        else:
            ratio, what = other["cpu_us"] / zb["cpu_us"], "answers per CPU-second"
            which = [n for n, m in (("zonebake-xdp", zb), (name, other)) if m["busy"] < BUSY]
            what += (f" (kxdpgun the limit of {' and '.join(which)}; answers/s "
                     f"{zb['answered_per_s'] / other['answered_per_s']:.2f}x)")
        line = (f"  {name:17} {ratio:5.2f}x {what}: target >= {least}: "
                f"{'met' if ratio >= least else 'NOT met'}")
        if name == "knot-xdp":
            cpu = zb["cpu_us"] / other["cpu_us"]
            line += (f"; CPU per answer {cpu:.2f}x: target <= 0.5: "
                     f"{'met' if cpu <= 0.5 else 'NOT met'}")
        print(line)
