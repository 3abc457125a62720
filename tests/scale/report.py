"""The scale report: build a 1,000,000-name zone, the same zone written as people keep zone
files by hand (units, parentheses, inherited owners, escapes, $INCLUDE, a DNAME, a child
zone: tests/scale/gen.py), and a set of 10,000 small zones, and measure, in one run on this
machine:

- compile time per stage and the compiler's peak memory (from `zonebake build`'s summary),
  with cold caches (the first build on a machine) and warm; for the set of zones, a build
  over the last output after one zone's edit (a record added, its serial bumped);
- binary and data size against the zone files' size;
- the built binary's time from exec to its first answer (median of 5);
- Knot's time from exec to its first answer on the same zones, and its peak RSS;
- that both serve the same answers: a deterministic sample of questions sent to both and
  compared section by section (tests/differential/compare.py);
- the hand-kept zone's build time against the plain zone's;
- the zone signed with NSEC3 (dnssec-signzone, Ed25519; made once per WORKDIR, about seven
  minutes for a million names): the build with every signature verified against Knot's load
  with `dnssec-validation: on`, which checks every signature and the chain too; the build
  with the verification cache warm against Knot's load without validation; the sizes;
- the zone signed by the build (a `dnssec` table: Ed25519 KSK and ZSK, NSEC3 without salt or
  iterations) against Knot's `kzonesign` signing the same file with the same keys and policy
  (both on every core, both deterministic at a fixed time), peak memory of each, a
  rebuild after one changed record against the full build, the built server's exec to first
  answer (cold and warm), the signed zone written out (`--write-signed`, a rebuild)
  against kzonesign's writing of its own, and the signed server's memory: where its data
  goes (breakdown.py) and its RSS once serving against Knot's serving that written zone;
- the set of 10,000 zones with one broken: `zonebake build --keep-going` with every zone good
  (it keeps each zone's last good copy) and with one zone broken (compiled from its copy),
  against the plain build;
- the change loop (change-loop; issue 40): a full build of the zone, then for each
  one-record change (an address, a longer TXT, a name added, a name removed, a delegation
  added, the SOA's serial bumped: tests/scale/gen.py's change_zone) a rebuild over a copy
  of the full build's output,
  its time against the full build's (each the median of three: either varies by a fifth
  from one run to the next here), the server's binary delta (`zstd --patch-from -19
  --long`), whether it wrote the bytes a full build of the changed zone writes, exec to first
  answer cold and warm, and Knot's load of the changed zone; against the issue's targets.
  change-loop-signed, only when asked, does the same with the zone signed by the build
  (Ed25519, NSEC3; --signed-names, 200,000 by default), Knot signing as it loads.
  --no-deltas leaves the deltas out: zstd -19 takes minutes per GiB, and the issue asks
  for them at a million names plain and 200,000 signed, not for the signed million.

    .venv/bin/python tests/scale/report.py WORKDIR [--names N] [--zones N] [--only SECTION]
                                                   [--signed-names N] [--no-deltas]

Not part of the test suite: it takes minutes (Knot's load, the 2000 questions).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import dns.message
import dns.query
import dns.rcode

from zonebake.core import driverless
from zonebake.toolchain import elfsplice

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "differential")]
from breakdown import breakdown  # noqa: E402
from compare import differences, normalize, show  # noqa: E402
from gen import (CHANGE_KINDS, ORIGIN, change_zone, write_handkept,  # noqa: E402
                 write_zone, write_zoneset)
from knotd import knot_config  # noqa: E402
from signzone import sign  # noqa: E402

AS_ROOT = ["--allow-root"] if os.geteuid() == 0 else []


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Runs a command and then says its peak resident set and its wall time: a child's ru_maxrss
# also counts the memory of the process that started it (Linux keeps it across the exec),
# and this report grows to hundreds of megabytes; a small launcher in between keeps that
# out. The wall time is the command's, from its start to its exit, as a user who runs it
# sees it: not the launcher's own start (an interpreter, 25-35 ms here). The peak is of
# every process the command started too, those it left to finish their exits after it (the
# core, whose exit a build does not wait for): the launcher is their reaper
# (PR_SET_CHILD_SUBREAPER), and waits for them all before it reads its children's use.
LAUNCHER = ("import ctypes, os, resource, subprocess, sys, time\n"
            "ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)\n"
            "started = time.monotonic()\n"
            "code = subprocess.run(sys.argv[1:]).returncode\n"
            "wall = time.monotonic() - started\n"
            "while True:\n"
            "    try:\n"
            "        os.wait()\n"
            "    except ChildProcessError:\n"
            "        break\n"
            "print('peak-rss', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
            " file=sys.stderr)\n"
            "print('wall-seconds', wall, file=sys.stderr)\n"
            "sys.exit(code)\n")


def build(zonebake: str, args: list[str], outdir: Path, cache: Path,
          status: int = 0) -> tuple[str, float, int]:
    """(summary line, wall seconds, peak RSS MiB) of one `zonebake build`, with CACHE for its
    caches (the compiler's core and the runtime's objects), which must exit with `status`."""
    process = subprocess.run([sys.executable, "-c", LAUNCHER, zonebake, "build", *args, "-o",
                              str(outdir)], stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    if process.returncode != status:
        raise SystemExit(f"build exited {process.returncode}:\n{process.stderr[-3000:]}")
    lines = process.stderr.splitlines()
    summary = [line for line in lines if "built in" in line]
    rss = [int(line.split()[1]) for line in lines if line.startswith("peak-rss ")]
    wall = [float(line.split()[1]) for line in lines if line.startswith("wall-seconds ")]
    return (summary[-1] if summary else "(no summary)", wall[-1], rss[-1] // 1024)


def first_answer(command: list[str], port: int, qname: str, limit: float = 300) -> tuple:
    """Seconds from exec to the first NOERROR answer to qname (a server that failed to load
    the zone answers SERVFAIL), and the running process."""
    query = dns.message.make_query(qname, "SOA", use_edns=False).to_wire()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(0.001)
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.monotonic() - started < limit:
            sock.sendto(query, ("127.0.0.1", port))
            try:
                reply = dns.message.from_wire(sock.recv(4096))
                if reply.rcode() == dns.rcode.NOERROR:
                    return time.monotonic() - started, process
            except (socket.timeout, ConnectionRefusedError):
                if process.poll() is not None:
                    raise SystemExit(f"{command[0]} exited with {process.returncode}")
        raise SystemExit(f"{command[0]} did not answer within {limit} s")
    finally:
        sock.close()


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(timeout=60)


def peak_rss_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0


def drop_caches() -> bool:
    """Empties the page cache, so that the next exec reads its binary from the disk (a cold
    start, as after a deploy to a fresh machine); False where this process may not."""
    subprocess.run(["sync"], check=True)
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


def exec_times(binary: Path, probe: str, cold: bool = False,
               runs: int = 5) -> tuple[list[float], int]:
    """Seconds from exec to the first answer of RUNS starts of the built server on one
    worker, each after drop_caches() when COLD; and its RSS after the last answer in MiB."""
    times = []
    for _ in range(runs):
        if cold:
            drop_caches()
        port = free_port()
        seconds, process = first_answer([str(binary), "--listen", f"127.0.0.1:{port}",
                                         "--threads", "1", *AS_ROOT], port, probe)
        times.append(seconds)
        rss = peak_rss_mib(process.pid)
        stop(process)
    return times, rss


def settled_rss_mib(process: subprocess.Popen, settle: float = 60) -> int:
    """A server's resident MiB once it serves and holds still: its RSS polled until it has
    not changed for a second (zonebake's data moving to huge pages behind its first answers,
    runtime/ops/hugepages.c), SETTLE seconds at most."""
    last, since, deadline = -1, time.monotonic(), time.monotonic() + settle
    while time.monotonic() < deadline:
        status = Path(f"/proc/{process.pid}/status").read_text()
        rss = int(re.search(r"^VmRSS:\s+(\d+)", status, re.M).group(1)) // 1024
        if rss != last:
            last, since = rss, time.monotonic()
        elif time.monotonic() - since >= 1:
            break
        time.sleep(0.1)
    return last


def sample_questions(names: int, count: int = 2000) -> list[tuple[str, str]]:
    """Questions over the generated zone's shapes: sites, their aliases, delegations, glue,
    missing names and types."""
    rng = random.Random(7)
    sites = max(1, names * 7 // 23)
    out = []
    for _ in range(count):
        i = rng.randrange(sites * 10 // 7)
        kind = rng.choice(["A", "AAAA", "MX", "TXT", "CAA", "ANY"])
        if i % 10 < 7:
            name = rng.choice([f"site{i}", f"www.site{i}", f"nx{i}.site{i}", f"nosuch{i}"])
        else:
            name = rng.choice([f"dom{i}", f"ns1.dom{i}", f"www.dom{i}"])
            kind = rng.choice([kind, "NS", "DS"])
        out.append((f"{name}.{ORIGIN}", kind))
    return out


def compare(port_a: int, port_b: int, questions) -> list[str]:
    unexplained = []
    for qname, qtype in questions:
        query = dns.message.make_query(qname, qtype, use_edns=False)
        query.flags = 0
        ours = dns.query.udp(query, "127.0.0.1", port=port_a, timeout=2)
        theirs = dns.query.udp(query, "127.0.0.1", port=port_b, timeout=2)
        diff = differences(normalize(ours), normalize(theirs))
        if diff:
            unexplained.append(f"{qname} {qtype}: {diff}\n{show(ours)}\n knot:\n{show(theirs)}")
    return unexplained


def measure(title: str, zones: list[tuple[str, Path]], build_args: list[str], probe: str,
            workdir: Path, zonebake: str, questions, edited: Path | None = None
            ) -> tuple[float, float]:
    """Prints the figures; returns the warm build's seconds and Knot's to its first answer.
    EDITED: a zone file of the set (SOA serial 1) to edit and build over the last output."""
    print(f"== {title}", flush=True)
    outdir = workdir / f"out-{title}"
    # Cold: the first build on a machine, which compiles the compiler's core and the runtime's
    # objects; warm: every build after it. Both into an empty directory, as in CI; then a
    # rebuild over the last build's output, which also frees the old files' pages. Each
    # starts with the last one's writes on disk (sync), not being written back meanwhile.
    cache = workdir / f"cache-{title}"
    subprocess.run(["rm", "-rf", str(cache)], check=True)
    for kind in ("cold cache", "warm cache", "warm cache, over the last output"):
        if "over" not in kind:
            subprocess.run(["rm", "-rf", str(outdir)], check=True)
        subprocess.run(["sync"], check=True)
        summary, wall, rss = build(zonebake, build_args, outdir, cache)
        print(f"compile ({kind}): {wall:.1f} s wall, peak RSS {rss} MiB; {summary}",
              flush=True)
        if kind == "warm cache":
            warm = wall
    if edited is not None:
        # What a hoster's every edit is: one zone's record added and its serial bumped, the
        # other zones (made from one template: the same SOA numbers) as they were.
        text = edited.read_text()
        edited.write_text(text.replace(" 1 7200 ", " 2 7200 ", 1) + "added A 192.0.2.77\n")
        subprocess.run(["sync"], check=True)
        summary, wall, rss = build(zonebake, build_args, outdir, cache)
        edited.write_text(text)
        print(f"compile (one zone edited, over the last output): {wall:.1f} s wall, peak RSS "
              f"{rss} MiB; {summary}", flush=True)
        subprocess.run(["sync"], check=True)
        build(zonebake, build_args, outdir, cache)  # back to the set as it was
    zone_bytes = sum(path.stat().st_size for _, path in zones)
    binary = outdir / "zonebake-server"
    print(f"sizes: zone files {zone_bytes / 2**20:.1f} MiB, data "
          f"{elfsplice.span(outdir / 'zonebake-server')[1] / 2**20:.1f} MiB, binary "
          f"{binary.stat().st_size / 2**20:.1f} MiB")
    times, rss_ours = exec_times(binary, probe)
    print(f"zonebake exec to first answer: median {statistics.median(times) * 1000:.1f} ms "
          f"(of {', '.join(f'{t * 1000:.1f}' for t in times)}); RSS after it {rss_ours} MiB")

    kdir = workdir / f"knot-{title}"
    kdir.mkdir(parents=True, exist_ok=True)
    kport = free_port()
    (kdir / "knot.conf").write_text(knot_config(kdir, kport, zones))
    subprocess.run(["sync"], check=True)
    seconds, knot = first_answer(["knotd", "-c", str(kdir / "knot.conf")], kport, probe)
    print(f"knot exec to first answer: {seconds:.2f} s, peak RSS {peak_rss_mib(knot.pid)} MiB",
          flush=True)
    try:
        port = free_port()
        _, ours = first_answer([str(binary), "--listen", f"127.0.0.1:{port}", *AS_ROOT],
                               port, probe)
        try:
            wrong = compare(port, kport, questions)
        finally:
            stop(ours)
    finally:
        stop(knot)
    print(f"same answers as knot: {len(questions) - len(wrong)} of {len(questions)}")
    for text in wrong[:5]:
        print(text)
    print(f"build / knot: {warm / seconds:.2f}", flush=True)
    return warm, seconds


def knot_load(workdir: Path, zones: list[tuple[str, Path]], probe: str,
              template_extra: str = "") -> tuple[float, int]:
    """Knot's seconds from exec to its first answer, and its peak RSS in MiB."""
    workdir.mkdir(parents=True, exist_ok=True)
    subprocess.run(["rm", "-rf", str(workdir / "db")], check=True)
    port = free_port()
    (workdir / "knot.conf").write_text(knot_config(workdir, port, zones,
                                                   template_extra=template_extra))
    return knot_first_answer(workdir / "knot.conf", port, probe)


def knot_first_answer(conf: Path, port: int, probe: str) -> tuple[float, int]:
    """knotd with CONF, listening on PORT: its seconds from exec to its first answer, and its
    peak RSS in MiB."""
    subprocess.run(["sync"], check=True)
    seconds, knot = first_answer(["knotd", "-c", str(conf)], port, probe, limit=3600)
    rss = peak_rss_mib(knot.pid)
    stop(knot)
    return seconds, rss


def measure_signed(zone: Path, workdir: Path, zonebake: str) -> None:
    """The NSEC3-signed zone: zonebake's build, every signature verified, against Knot's load
    with validation; the rebuild with the verification cache warm against Knot's load
    without; the sizes."""
    print("== signed with NSEC3", flush=True)
    started = time.monotonic()
    signed = sign(zone, ORIGIN, workdir / "signed", kinds=("nsec3",))["nsec3"]
    print(f"signed by dnssec-signzone (or found from an earlier run) in "
          f"{time.monotonic() - started:.0f} s: {signed.stat().st_size / 2**20:.0f} MiB",
          flush=True)
    outdir, cache = workdir / "out-signed", workdir / "cache-signed"
    zones = [(ORIGIN, signed)]
    args = ["--zone", f"{ORIGIN}={signed}"]
    # The core and the runtime's objects compiled by a build of the unsigned zone first, so
    # that the two builds differ only in what the verification cache holds.
    build(zonebake, ["--zone", f"{ORIGIN}={zone}"], outdir, cache)
    figures = {}
    for kind in ("verification cache cold", "verification cache warm"):
        if "cold" in kind:
            subprocess.run(["rm", "-rf", str(cache / "zonebake" / "signatures")], check=True)
        subprocess.run(["rm", "-rf", str(outdir)], check=True)
        subprocess.run(["sync"], check=True)
        summary, wall, rss = build(zonebake, args, outdir, cache)
        figures[kind] = (wall, rss)
        print(f"compile ({kind}): {wall:.1f} s wall, peak RSS {rss} MiB; {summary}",
              flush=True)
    print(f"sizes: zone file {signed.stat().st_size / 2**20:.1f} MiB, data "
          f"{elfsplice.span(outdir / 'zonebake-server')[1] / 2**20:.1f} MiB, binary "
          f"{(outdir / 'zonebake-server').stat().st_size / 2**20:.1f} MiB", flush=True)
    knot = {}
    for kind, extra in (("validation on", "    dnssec-validation: on\n"),
                        ("validation off", "")):
        knot[kind] = knot_load(workdir / f"knot-signed-{kind.split()[1]}", zones, ORIGIN,
                               template_extra=extra)
        print(f"knot exec to first answer, {kind}: {knot[kind][0]:.1f} s, peak RSS "
              f"{knot[kind][1]} MiB", flush=True)
    cold, warm = figures["verification cache cold"], figures["verification cache warm"]
    print(f"build (every signature verified) / knot with validation: time "
          f"{cold[0] / knot['validation on'][0]:.2f}, memory "
          f"{cold[1] / knot['validation on'][1]:.2f}")
    print(f"build (verification cache warm) / knot without validation: time "
          f"{warm[0] / knot['validation off'][0]:.2f}, memory "
          f"{warm[1] / knot['validation off'][1]:.2f}", flush=True)


SIGNING_POLICY = """policy:
  - id: zonebake
    algorithm: ed25519
    manual: on
    nsec3: on
    nsec3-iterations: 0
    nsec3-salt-length: 0
    rrsig-lifetime: 14d
    rrsig-refresh: 7d
    reproducible-signing: on
    signing-threads: {threads}
"""


# The change loop's builds, full and over the earlier one, each timed this many times: the
# median goes into the ratio.
TIMED = 3


def full_build(zonebake: str, zone: Path, args: list[str], outdir: Path,
               cache: Path, times: int = 1) -> tuple[str, float, int]:
    """build() of ARGS into an empty OUTDIR as the first build of a zone on a machine where
    zonebake has run before: the core and the runtime's objects compiled (by a build of the
    unsigned ZONE first), no signature cached. Its summary, median seconds of TIMES and
    largest peak RSS."""
    # Twice: a build that compiles the runtime's objects links the server without keeping
    # the link (cc.py), the next one keeps it.
    for _ in range(2):
        build(zonebake, ["--zone", f"{ORIGIN}={zone}"], outdir, cache)
    # What those builds put in the cache older than driverless.RACY, as a user's is by the
    # next build: a build records what it read for a rebuild without the driver only then.
    time.sleep(driverless.RACY)
    runs = []
    for _ in range(times):
        subprocess.run(["rm", "-rf", str(cache / "zonebake" / "signatures"), str(outdir)],
                       check=True)
        subprocess.run(["sync"], check=True)
        runs.append(build(zonebake, args, outdir, cache))
    return (runs[-1][0], statistics.median(seconds for _, seconds, _ in runs),
            max(rss for _, _, rss in runs))


def signing_config(workdir: Path, zone: Path, zonebake: str) -> tuple[Path, Path]:
    """A zonebake.toml in WORKDIR that signs ZONE with an Ed25519 KSK and ZSK (made once per
    WORKDIR) and NSEC3 without salt or iterations; and the keys' directory."""
    keys = workdir / "keys"
    if not keys.exists():
        keys.mkdir()
        for kind in (["--ksk"], []):
            subprocess.run([zonebake, "keygen", ORIGIN, "-d", str(keys), *kind], check=True,
                           capture_output=True)
    toml = workdir / "zonebake.toml"
    toml.write_text(f'[[zone]]\norigin = "{ORIGIN}"\nfile = "{zone}"\n'
                    f'dnssec = {{ keys = "{keys}", denial = "nsec3" }}\n')
    return toml, keys


def knot_signing_config(kdir: Path, zone: Path, keys: Path, at: int, port: int) -> Path:
    """A fresh KDIR with Knot's configuration that signs ZONE as signing_config's build does
    (SIGNING_POLICY, the same keys, in use at the time AT), for kzonesign or for knotd on
    PORT."""
    subprocess.run(["rm", "-rf", str(kdir)], check=True)
    (kdir / "db").mkdir(parents=True)
    conf = kdir / "knot.conf"
    conf.write_text(knot_config(kdir, port, [(ORIGIN, zone)],
                                template_extra="    dnssec-signing: on\n"
                                               "    dnssec-policy: zonebake\n")
                    .replace("template:", SIGNING_POLICY.format(threads=os.cpu_count()) +
                             "template:"))
    for key in sorted(keys.glob("*.private")):
        made = subprocess.run(["keymgr", "-c", str(conf), ORIGIN, "import-bind", str(key)],
                              check=True, capture_output=True, text=True)
        # keymgr dates an imported key at the import: it must be in use at `at` already.
        subprocess.run(["keymgr", "-c", str(conf), ORIGIN, "set", made.stdout.split()[0],
                        f"created={at - 7200}", f"publish={at - 7200}", f"active={at - 7200}"],
                       check=True, capture_output=True)
    return conf


def kzonesign(conf: Path, out: Path, at: int) -> tuple[float, int, float]:
    """kzonesign of ORIGIN with CONF into the empty directory OUT at the time AT: (wall
    seconds, peak RSS MiB, seconds from its output file's first appearance to its exit, what
    writing the signed zone takes it)."""
    log = out.with_name(out.name + ".stderr")
    with log.open("w") as errors:
        process = subprocess.Popen([sys.executable, "-c", LAUNCHER, "kzonesign", "-c",
                                    str(conf), "-o", str(out), "-t", str(at), ORIGIN],
                                   stdout=subprocess.DEVNULL, stderr=errors)
        appeared = None
        while process.poll() is None:
            if appeared is None and any(out.iterdir()):
                appeared = time.monotonic()
            time.sleep(0.02)
    ended = time.monotonic()
    stderr = log.read_text()
    if process.returncode != 0:
        raise SystemExit(f"kzonesign failed:\n{stderr[-3000:]}")
    lines = stderr.splitlines()
    rss = [int(line.split()[1]) for line in lines if line.startswith("peak-rss ")][-1] // 1024
    wall = [float(line.split()[1]) for line in lines if line.startswith("wall-seconds ")][-1]
    return wall, rss, ended - (appeared or ended)


def measure_signing(zone: Path, workdir: Path, zonebake: str) -> None:
    """The zone signed by the build against kzonesign with the same keys and policy; the
    rebuild after one changed record."""
    print("== signing at build time: Ed25519, NSEC3", flush=True)
    workdir.mkdir(parents=True, exist_ok=True)
    unsigned = workdir / "zone"
    unsigned.write_bytes(zone.read_bytes())
    toml, keys = signing_config(workdir, unsigned, zonebake)
    at = int(time.time())
    os.environ["SOURCE_DATE_EPOCH"] = str(at)
    outdir, cache = workdir / "out", workdir / "cache"
    summary, full, rss = full_build(zonebake, unsigned, ["-c", str(toml)], outdir, cache)
    print(f"build, signing everything: {full:.1f} s wall, peak RSS {rss} MiB; {summary}",
          flush=True)
    text = unsigned.read_text()
    unsigned.write_text(text.replace("site5 A 10.0.0.5\n", "site5 A 10.0.0.55\n", 1))
    subprocess.run(["sync"], check=True)
    summary, again, again_rss = build(zonebake, ["-c", str(toml)], outdir, cache)
    unsigned.write_text(text)
    print(f"rebuild after one changed record: {again:.1f} s wall, peak RSS {again_rss} MiB; "
          f"{summary}", flush=True)
    print(f"sizes: zone file {zone.stat().st_size / 2**20:.1f} MiB, data "
          f"{elfsplice.span(outdir / 'zonebake-server')[1] / 2**20:.1f} MiB, binary "
          f"{(outdir / 'zonebake-server').stat().st_size / 2**20:.1f} MiB", flush=True)
    server = outdir / "zonebake-server"
    print(f"exec to first answer (median of 5, ms; * over {EXEC_TARGET * 1000:.0f}): cold "
          f"{exec_median(server, True).strip()}, warm {exec_median(server, False).strip()}",
          flush=True)
    written = workdir / "signed.zone"
    summary, with_it, _ = build(zonebake, ["-c", str(toml), "--write-signed", str(written)],
                                outdir, cache)
    writing = re.search(r"signed zone written ([0-9.]+) s", summary)  # a build of 5 s or more
    print(f"--write-signed (a rebuild): the signed zone ({written.stat().st_size / 2**20:.1f} "
          f"MiB) written in {writing.group(1) + ' s' if writing else '(not said)'}; the "
          f"rebuild {with_it:.1f} s against {again:.1f} s without", flush=True)
    signed_server_memory(outdir, written, workdir)
    written.unlink()

    kdir = workdir / "kzonesign"
    conf = knot_signing_config(kdir, unsigned, keys, at, free_port())
    (kdir / "out").mkdir()
    knot, knot_rss, knot_writing = kzonesign(conf, kdir / "out", at)
    print(f"kzonesign: {knot:.1f} s wall, peak RSS {knot_rss} MiB; its signed zone written in "
          f"{knot_writing:.1f} s (from the file's first appearance to its exit)", flush=True)
    print(f"build / kzonesign: time {full / knot:.2f}, memory {rss / knot_rss:.2f}; "
          f"rebuild / build: {again / full:.2f}", flush=True)
    del os.environ["SOURCE_DATE_EPOCH"]


def signed_server_memory(outdir: Path, signed: Path, workdir: Path) -> None:
    """Where the signed server's data goes (breakdown.py), and the server's RSS once it
    serves against Knot's serving the same signed file (issue 41): settled, and Knot's peak
    (its load) besides."""
    print("where the signed server's data goes:", flush=True)
    octets = breakdown(outdir)
    total = sum(octets.values())
    for kind, size in octets.most_common():
        print(f"  {kind:34} {size / 2**20:8.1f} MiB {100 * size / total:5.1f}%")
    port = free_port()
    _, ours = first_answer([str(outdir / "zonebake-server"), "--listen", f"127.0.0.1:{port}",
                            "--threads", "1", *AS_ROOT], port, ORIGIN)
    try:
        rss = settled_rss_mib(ours)
    finally:
        stop(ours)
    kdir = workdir / "knot-serving"
    kdir.mkdir(parents=True, exist_ok=True)
    subprocess.run(["rm", "-rf", str(kdir / "db")], check=True)
    port = free_port()
    (kdir / "knot.conf").write_text(knot_config(kdir, port, [(ORIGIN, signed)]))
    _, knot = first_answer(["knotd", "-c", str(kdir / "knot.conf")], port, ORIGIN, limit=3600)
    try:
        knot_rss, knot_peak = settled_rss_mib(knot), peak_rss_mib(knot.pid)
    finally:
        stop(knot)
    print(f"signed server: data {total / 2**20:.1f} MiB, RSS serving {rss} MiB; Knot serving "
          f"the same signed file: RSS {knot_rss} MiB (peak {knot_peak} MiB); zonebake / Knot "
          f"{rss / knot_rss:.2f} (of its peak {rss / knot_peak:.2f})", flush=True)


# Issue 40's targets for the loop of changing a zone and shipping the change.
REBUILD_TARGET = 0.10  # an incremental build, as a share of the full build's time
DELTA_TARGET = 2**20  # bytes of the server's binary delta for one changed record
EXEC_TARGET = 0.050  # seconds from exec to the first answer


def zstd_options(*files: Path) -> list[str]:
    """zstd -19 with a 2**27-byte window, or one as large as the largest of FILES: a delta
    (--patch-from) reaches back one window only, and beyond 128 MiB zstd also asks for
    --memory."""
    log = max(27, (max(path.stat().st_size for path in files) - 1).bit_length())
    return ["-19", f"--long={log}", *([f"--memory={1 << log - 20}MiB"] if log > 27 else [])]


def zstd_bytes(new: Path, out: Path, reference: Path | None = None) -> int:
    """Bytes of NEW compressed into OUT, or of its delta against REFERENCE: what shipping it
    costs."""
    references = [reference] if reference else []
    # zstd prints advice on --patch-from's options even with -q: kept for a failure only.
    process = subprocess.run(["zstd", "-q", "-f", *zstd_options(new, *references),
                              *(f"--patch-from={path}" for path in references), str(new),
                              "-o", str(out)], capture_output=True, text=True)
    if process.returncode != 0:
        raise SystemExit(f"zstd exited {process.returncode}:\n{process.stderr[-3000:]}")
    return out.stat().st_size


# The build's record of its own reading of a one-zone set (compiler/core/read/image.c): a
# build over an earlier one brings it up to date in place, records taken out staying where
# they were and new names numbered after the rest, so it is its history's, not a full
# build's; nothing served, shipped or compiled is read from it. Nor from the record of what
# the driver read (compiler/core/driverless.py), which a build whose inputs changed within
# two seconds of it does not write.
NOT_OUTPUT = {"zonedata.image", driverless.RECORD_FILE}


def digests(outdir: Path) -> dict[str, str]:
    """sha256 of each file of a build's output: the server, its data, its C source, the
    state the next build reads."""
    found = {}
    for path in sorted(p for p in outdir.iterdir() if p.name not in NOT_OUTPUT):
        with path.open("rb") as file:
            found[path.name] = hashlib.file_digest(file, "sha256").hexdigest()
    return found


def rebuild_changed(zonebake: str, args: list[str], full: Path, workdir: Path,
                    cache: Path, deltas: bool) -> tuple[float, int | None, list[str], Path]:
    """Rebuilds the changed zone over a copy of FULL, the unchanged zone's output (where an
    incremental build would find what it reuses): its median seconds of TIMED (each over a
    fresh copy), the server's delta in bytes
    (None unless `deltas`), the files that differ from a full build of the changed zone into
    an empty directory (none: the same bytes), and the rebuilt server."""
    rebuilt, fresh = workdir / "rebuilt", workdir / "fresh"
    runs = []
    for _ in range(TIMED):  # the median; the last one's output is compared and kept
        subprocess.run(["rm", "-rf", str(rebuilt), str(fresh)], check=True)
        subprocess.run(["cp", "-a", str(full), str(rebuilt)], check=True)
        subprocess.run(["sync"], check=True)
        runs.append(build(zonebake, args, rebuilt, cache)[1])
    seconds = statistics.median(runs)
    server = rebuilt / "zonebake-server"
    delta = zstd_bytes(server, workdir / "delta.zst", reference=full / "zonebake-server") \
        if deltas else None
    build(zonebake, args, fresh, cache)
    ours, theirs = digests(rebuilt), digests(fresh)
    differing = sorted(name for name in ours.keys() | theirs.keys()
                       if ours.get(name) != theirs.get(name))
    return seconds, delta, differing, server


def missed(value: float, target: float) -> str:
    return "*" if value > target else " "


def exec_median(server: Path, cold: bool) -> str:
    """The median exec to first answer in ms, marked when it misses its target."""
    seconds = statistics.median(exec_times(server, ORIGIN, cold=cold)[0])
    return f"{seconds * 1000:7.1f}{missed(seconds, EXEC_TARGET)}"


def change_loop_inputs(workdir: Path, live: Path, zonebake: str, signed: bool):
    """The build's arguments for the zone at LIVE, and how Knot loads it: as it is, or,
    when SIGNED, signing it with the build's keys and policy at the build's time."""
    if not signed:
        return (["--zone", f"{ORIGIN}={live}"],
                lambda: knot_load(workdir / "knot", [(ORIGIN, live)], ORIGIN))
    toml, keys = signing_config(workdir, live, zonebake)
    at = int(time.time())
    os.environ["SOURCE_DATE_EPOCH"] = str(at)

    def knot() -> tuple[float, int]:
        port = free_port()
        return knot_first_answer(knot_signing_config(workdir / "knot", live, keys, at, port),
                                 port, ORIGIN)
    return ["-c", str(toml)], knot


def measure_change_loop(zone: Path, names: int, workdir: Path, zonebake: str,
                        signed: bool, deltas: bool = True) -> None:
    """Issue 40's loop: a full build, then for each one-record change (gen.py's change_zone)
    a rebuild over the last output, the server's binary delta, whether the rebuild wrote a
    full build's bytes, exec to first answer cold and warm, and Knot loading the changed
    zone (signing it too, when the build signs)."""
    kind = "signed at build time (Ed25519, NSEC3)" if signed else "plain"
    print(f"== change loop, {names} names, {kind}", flush=True)
    workdir.mkdir(parents=True, exist_ok=True)
    # Edited in place, as an operator edits a zone file: every build reads the same path.
    live = workdir / "zone"
    text = zone.read_text()
    live.write_text(text)
    cache, full = workdir / "cache", workdir / "full"
    args, knot = change_loop_inputs(workdir, live, zonebake, signed)
    try:
        summary, full_seconds, rss = full_build(zonebake, live, args, full, cache, TIMED)
        server = full / "zonebake-server"
        output = sum(path.stat().st_size for path in full.iterdir())
        compressed = (f"zstd {' '.join(zstd_options(server))}: "
                      f"{zstd_bytes(server, workdir / 'server.zst') / 2**20:.1f} MiB"
                      if deltas else "no deltas asked")
        print(f"full build: {full_seconds:.2f} s wall (median of {TIMED}), peak RSS {rss} MiB, "
              f"output "
              f"{output / 2**20:.1f} MiB (server {server.stat().st_size / 2**20:.1f} MiB; "
              f"{compressed}); {summary}")
        # Every build first, then the starts: dropping the page cache for a cold start would
        # slow the next build, which the full build did not suffer.
        built = []
        for n, change in enumerate(CHANGE_KINDS):
            live.write_text(change_zone(text, change, names))
            *figures, rebuilt = rebuild_changed(zonebake, args, full, workdir, cache, deltas)
            built.append((change, *figures, rebuilt.rename(workdir / f"server-{n}")))
        cold = drop_caches()
        print(f"targets: rebuild at most {REBUILD_TARGET:.0%} of the full build (medians of "
              f"{TIMED} each), delta at "
              f"most {DELTA_TARGET:,} bytes, exec to first answer at most "
              f"{EXEC_TARGET * 1000:.0f} ms; * misses one. Exec: median of 5, cold after "
              f"dropping the page cache"
              + ("" if cold else " (skipped: /proc/sys/vm/drop_caches is not writable)"))
        print(f"{'change':<18} {'rebuild s':>9} {'/ full':>7} {'delta bytes':>12} "
              f"{'identical':>10} {'cold ms':>8} {'warm ms':>8} {'knot s':>7}", flush=True)
        for change, seconds, delta, differing, rebuilt in built:
            live.write_text(change_zone(text, change, names))  # for Knot
            print(change_row(change, seconds / full_seconds, seconds, delta, differing,
                             rebuilt, cold, knot), flush=True)
    finally:
        live.write_text(text)
        os.environ.pop("SOURCE_DATE_EPOCH", None)


def change_row(change: str, ratio: float, seconds: float, delta: int | None,
               differing: list[str], rebuilt: Path, cold: bool, knot) -> str:
    """A line of the change loop's table; the starts of the REBUILT server and Knot's load
    measured as it is made."""
    shipped = f"{'skipped':>11} " if delta is None else \
        f"{delta:>11,}{missed(delta, DELTA_TARGET)}"
    return (f"{change:<18} {seconds:>9.3f} {ratio:>6.2f}{missed(ratio, REBUILD_TARGET)}"
            f" {shipped} "
            f"{'yes' if not differing else 'no: ' + ','.join(differing):>10} "
            f"{exec_median(rebuilt, cold=True) if cold else 'skipped':>8} "
            f"{exec_median(rebuilt, cold=False)} {knot()[0]:>7.2f}")


def measure_keep_going(config: Path, count: int, workdir: Path, zonebake: str) -> None:
    """The set of COUNT zones with one broken: `--keep-going` builds against the plain one,
    and the broken zone served from its last good copy."""
    print(f"== {count}-zones --keep-going", flush=True)
    cache, out = workdir / "cache", workdir / "out"
    subprocess.run(["rm", "-rf", str(workdir)], check=True)
    build(zonebake, ["-q", "-c", str(config)], workdir / "first", cache)  # a warm cache
    _, plain, _ = build(zonebake, ["-q", "-c", str(config)], workdir / "plain", cache)
    _, keeping, _ = build(zonebake, ["-q", "-c", str(config), "--keep-going"], out, cache)
    broken = config.parent / f"customer{count // 2}.zone"
    good = broken.read_text()
    try:
        broken.write_text(good.replace("@ A 10.1.", "@ A 300.1."))  # not an address
        _, falling_back, rss = build(zonebake, ["-q", "-c", str(config), "--keep-going"], out,
                                     cache, status=3)
    finally:
        broken.write_text(good)
    port = free_port()
    _, server = first_answer([str(out / "zonebake-server"), "--listen", f"127.0.0.1:{port}",
                              "--threads", "1", *AS_ROOT], port, f"customer{count - 1}.test.")
    try:
        answer = dns.query.udp(dns.message.make_query(f"customer{count // 2}.test.", "A",
                                                      use_edns=False), "127.0.0.1", port=port,
                               timeout=2)
    finally:
        stop(server)
    served = [rd.to_text() for rrset in answer.answer for rd in rrset]
    print(f"build {plain:.1f} s; --keep-going, every zone good (keeping {count} last good "
          f"copies) {keeping:.1f} s ({keeping / plain:.2f}); with one broken zone compiled "
          f"from its copy {falling_back:.1f} s ({falling_back / plain:.2f}), peak RSS {rss} "
          f"MiB; the broken zone serves {served} from its copy", flush=True)


SECTIONS = ("plain", "hand-kept", "zone-set", "keep-going", "signed", "signing",
            "change-loop")
ON_REQUEST = ("change-loop-signed",)  # not in a plain run: the signed loop takes long


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--names", type=int, default=1_000_000)
    parser.add_argument("--zones", type=int, default=10_000)
    parser.add_argument("--signed-names", type=int, default=200_000,
                        help="the zone's names in change-loop-signed")
    parser.add_argument("--no-deltas", action="store_true",
                        help="leave the change loops' binary deltas out (zstd -19 is slow)")
    parser.add_argument("--only", choices=SECTIONS + ON_REQUEST, action="append",
                        help=f"measure this section (repeatable; default: all but "
                             f"{', '.join(ON_REQUEST)})")
    args = parser.parse_args()
    only = set(args.only or SECTIONS)
    zonebake = str(Path(sys.executable).parent / "zonebake")
    args.workdir.mkdir(parents=True, exist_ok=True)

    zone = args.workdir / f"scale-{args.names}.zone"
    if not zone.exists():
        write_zone(zone, args.names)
    if only & {"plain", "hand-kept"}:
        plain, _ = measure(f"{args.names}-names", [(ORIGIN, zone)],
                           ["--zone", f"{ORIGIN}={zone}"], ORIGIN, args.workdir, zonebake,
                           sample_questions(args.names))
    if "hand-kept" in only:
        handkept = write_handkept(args.workdir / f"handkept-{args.names}", args.names)
        kept, _ = measure(f"{args.names}-names-hand-kept", handkept,
                          [arg for origin, path in handkept
                           for arg in ("--zone", f"{origin}={path}")],
                          ORIGIN, args.workdir, zonebake, sample_questions(args.names))
        print(f"hand-kept / plain build: {kept / plain:.2f}", flush=True)
    if "signed" in only:
        measure_signed(zone, args.workdir / f"signed-{args.names}", zonebake)
    if "signing" in only:
        measure_signing(zone, args.workdir / f"signing-{args.names}", zonebake)
    if "change-loop" in only:
        measure_change_loop(zone, args.names, args.workdir / f"change-loop-{args.names}",
                            zonebake, signed=False, deltas=not args.no_deltas)
    if "change-loop-signed" in only:
        signed_zone = args.workdir / f"scale-{args.signed_names}.zone"
        if not signed_zone.exists():
            write_zone(signed_zone, args.signed_names)
        measure_change_loop(signed_zone, args.signed_names,
                            args.workdir / f"change-loop-signed-{args.signed_names}",
                            zonebake, signed=True, deltas=not args.no_deltas)
    if not only & {"zone-set", "keep-going"}:
        return

    config = write_zoneset(args.workdir / f"set-{args.zones}", args.zones)
    if "keep-going" in only:
        measure_keep_going(config, args.zones, args.workdir / f"keep-going-{args.zones}",
                           zonebake)
    if "zone-set" not in only:
        return
    zones = [(f"customer{i}.test.", config.parent / f"customer{i}.zone")
             for i in range(args.zones)]
    rng = random.Random(3)
    questions = [(f"{rng.choice(['', 'www.', 'mail.', 'nx.'])}customer{rng.randrange(args.zones)}"
                  f".test.", rng.choice(["A", "AAAA", "MX", "TXT", "NS", "SOA"]))
                 for _ in range(2000)]
    measure(f"{args.zones}-zones", zones, ["-c", str(config)],
            f"customer{args.zones - 1}.test.", args.workdir, zonebake, questions,
            edited=zones[args.zones // 2][1])


if __name__ == "__main__":
    main()
