"""Re-signing a set signed at build time (issue 41): `zonebake follow` builds and deploys it
again before the first signature served ages out of the signature cache, though its primary
sends nothing, and loses no query in the swap; `zonebake re-sign`, which the systemd timer
runs for a set built without follow, does the same once, and only when due. The clock is
moved days ahead with ZONEBAKE_CLOCK_FILE (compiler/clock.py)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import dns.dnssec
import dns.exception
import dns.message
import dns.query
import dns.rdatatype

from buildsigned import keygen
from conftest import AS_ROOT, ROOT, require
from following import Follow
from knotd import Knot
from swapping import ControlledServer, wait_gone
from zonebake import cli
from zonebake.clock import SKEW_FILE
from zonebake.commands.deploy import Served, control_status
from zonebake.dnssec.resigning import date
from zonebake.dnssec.signing import resign_at

ORIGIN = "resign.test."
ZONE = f"""$ORIGIN {ORIGIN}
$TTL 300
@   SOA ns1 hostmaster 1 3600 600 86400 300
@   NS  ns1
ns1 A   192.0.2.1
www A   192.0.2.80
"""
VALIDITY = 14 * 86400  # the default signature-validity
# knotd lets 127.0.0.1 transfer the zone, and notifies no one.
TRANSFERS = "acl:\n  - id: transfer\n    address: 127.0.0.1\n    action: transfer\n"
SYSTEMD = ROOT / "contrib" / "systemd"


def signed_set(directory: Path, primary: int | None = None) -> Path:
    """zonebake.toml: ORIGIN signed at build time (NSEC, a KSK and a ZSK), from a primary on
    127.0.0.1 port `primary`, else from its file; the control socket in `directory`."""
    keygen(directory / "keys", ORIGIN, ksk=True)
    keygen(directory / "keys", ORIGIN)
    (directory / "zones").mkdir()
    if primary is None:
        (directory / "zones" / f"{ORIGIN}zone").write_text(ZONE)
    toml = directory / "zonebake.toml"
    toml.write_text(f'[server]\ncontrol = "{directory / "control"}"\n'
                    f'[[zone]]\norigin = "{ORIGIN}"\nfile = "zones/{ORIGIN}zone"\n'
                    f'dnssec = {{ keys = "{directory / "keys"}", denial = "nsec" }}\n' +
                    (f'primary = "127.0.0.1:{primary}"\n' if primary else ""))
    return toml


def clocked(clock: Path) -> dict[str, str]:
    """The environment of a zonebake on the test's clock (the build's time is the clock's)."""
    clock.write_text("0")
    env = {key: value for key, value in os.environ.items() if key != "SOURCE_DATE_EPOCH"}
    env[SKEW_FILE] = str(clock)
    return env


def move_clock(clock: Path, to: int) -> None:
    """From now on the clock says `to` (seconds since 1970), and goes on from there."""
    clock.write_text(str(to - int(time.time())))


def zonebake(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zonebake", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)


def signed_answer(port: int) -> dns.message.Message:
    query = dns.message.make_query(f"www.{ORIGIN}", "A", want_dnssec=True)
    return dns.query.udp(query, "127.0.0.1", port=port, timeout=2)


def expiration(response: dns.message.Message) -> int:
    """The expiration of the answer's RRSIG, which must be there."""
    (rrsig,) = [rrset for rrset in response.answer if rrset.rdtype == dns.rdatatype.RRSIG]
    return rrsig[0].expiration


def served_expiry(control: Path) -> int | None:
    zones: dict[str, Served] = {}
    control_status(control, zones=zones)
    return zones[ORIGIN].expires


def valid_at(port: int, at: int) -> bool:
    """Whether the answer's signature verifies against the DNSKEYs served, at time `at`."""
    keys = dns.message.make_query(ORIGIN, "DNSKEY", want_dnssec=True)
    keyset = [r for r in dns.query.udp(keys, "127.0.0.1", port=port, timeout=2).answer
              if r.rdtype == dns.rdatatype.DNSKEY][0]
    response = signed_answer(port)
    (a,) = [r for r in response.answer if r.rdtype == dns.rdatatype.A]
    (rrsig,) = [r for r in response.answer if r.rdtype == dns.rdatatype.RRSIG]
    try:
        dns.dnssec.validate(a, rrsig, {keyset.name: keyset}, now=at)
        return True
    except dns.dnssec.ValidationFailure:
        return False


def ask_until(port: int, done, timeout: float = 180) -> list[int | None]:
    """Ask for www with DO, one query after another, until done() (looked at every tenth of
    a second) and 20 queries more, or `timeout`: the RRSIG expiration of each answer, None
    for a query that got none."""
    seen: list[int | None] = []
    deadline, look, more = time.monotonic() + timeout, 0.0, None
    while time.monotonic() < deadline and more != 0:
        try:
            seen.append(expiration(signed_answer(port)))
        except dns.exception.Timeout:
            seen.append(None)
        if more is None and time.monotonic() >= look:
            look = time.monotonic() + 0.1
            more = 20 if done() else None
        elif more is not None:
            more -= 1
        time.sleep(0.002)
    assert more == 0, f"not done after {timeout} s"
    return seen


def test_follow_re_signs_and_deploys_before_the_signatures_age_and_loses_no_query(tmp_path):
    clock = tmp_path / "clock"
    env = clocked(clock)
    (tmp_path / "primary").mkdir()
    primary_zone = tmp_path / "primary" / f"{ORIGIN}zone"
    primary_zone.write_text(ZONE)
    primary = Knot([(ORIGIN, primary_zone)], tmp_path / "knot", server_extra=TRANSFERS,
                   zone_extra={ORIGIN: "    acl: transfer\n"})
    server = follow = None
    try:
        toml = signed_set(tmp_path / "set", primary.port)
        control, outdir = tmp_path / "set" / "control", tmp_path / "out"
        built = zonebake(env, "build", "-c", str(toml), "-o", str(outdir))
        assert built.returncode == 0, built.stderr
        server = ControlledServer(outdir, control, tmp_path / "servers.log", threads=1)
        first = expiration(signed_answer(server.port))
        assert served_expiry(control) == first

        # follow builds at start: from the cache, the same signatures, so nothing to deploy;
        # it says when the next re-sign is due, and does nothing more until then.
        follow = Follow(toml, outdir, tmp_path / "follow.log", env)
        due = resign_at(first, VALIDITY)
        follow.wait_for("^info: next re-sign at ")
        time.sleep(2)
        assert [line for line in follow.lines() if "re-sign" in line or "deploy" in line] == [
            f"info: next re-sign at {date(due)}: {ORIGIN}'s first signature expires at "
            f"{date(first)}"]

        # A minute after it is due, no primary having said anything: re-signed, deployed,
        # and every query sent meanwhile answered, with the old signatures or the new.
        move_clock(clock, due + 60)
        seen = ask_until(server.port, lambda: sum(
            line.startswith("info: next re-sign") for line in follow.lines()) == 2)
        second = seen[-1]
        assert None not in seen and seen[0] == first and second > first + 3 * 86400
        assert seen == sorted(seen) and set(seen) == {first, second}, set(seen)
        assert served_expiry(control) == second
        assert valid_at(server.port, due + 120) and not valid_at(server.port, second + 1)
        lines = follow.lines()
        resigning = lines.index(f"info: re-signing: {ORIGIN}'s first signature expires at "
                                f"{date(first)}; a build signs it again from {date(due)}")
        deployed = next(i for i, line in enumerate(lines) if re.fullmatch(
            rf"info: deployed: pid \d+ serves in place of pid {server.process.pid} "
            rf"\({re.escape(ORIGIN)} 1 signed until {date(second)}\)", line))
        assert lines[resigning + 1] == f"info: built {outdir / 'zonebake-server'}"
        assert resigning < deployed and lines[deployed + 1:] == [
            f"info: next re-sign at {date(resign_at(second, VALIDITY))}: {ORIGIN}'s first "
            f"signature expires at {date(second)}"]
        assert wait_gone(server.process.pid)
    finally:
        stopped = follow.stop() if follow else None
        if server:
            server.stop_all()
        primary.stop()
    assert stopped == 0


def test_re_sign_builds_and_deploys_only_when_due(tmp_path):
    clock = tmp_path / "clock"
    env = clocked(clock)
    toml = signed_set(tmp_path / "set")
    control, outdir = tmp_path / "set" / "control", tmp_path / "out"
    log = tmp_path / "servers.log"
    resign = ("re-sign", "-c", str(toml), "-o", str(outdir), "--log", str(log), "--",
              "--threads", "1", *AS_ROOT)
    built = zonebake(env, "build", "-c", str(toml), "-o", str(outdir))
    assert built.returncode == 0, built.stderr
    server = ControlledServer(outdir, control, log, threads=1)
    try:
        first = expiration(signed_answer(server.port))
        due = resign_at(first, VALIDITY)
        not_due = zonebake(env, *resign)
        assert (not_due.returncode, not_due.stderr) == (0, (
            f"zonebake: not due: next re-sign at {date(due)}: {ORIGIN}'s first signature "
            f"expires at {date(first)}\n"))
        assert server.serving_pid() == server.process.pid

        move_clock(clock, due)
        done = zonebake(env, *resign)
        assert done.returncode == 0, done.stderr
        second = served_expiry(control)
        new = server.serving_pid()
        assert done.stderr.splitlines() == [
            f"zonebake: re-signing: {ORIGIN}'s first signature expires at {date(first)}; a "
            f"build signs it again from {date(due)}",
            f"zonebake: deployed: pid {new} serves in place of pid {server.process.pid}",
            f"zonebake: next re-sign at {date(resign_at(second, VALIDITY))}: {ORIGIN}'s "
            f"first signature expires at {date(second)}"]
        assert expiration(signed_answer(server.port)) == second >= first + 3 * 86400
    finally:
        server.stop_all()


def test_re_sign_says_why_it_cannot(tmp_path):
    toml = signed_set(tmp_path / "set")
    env = clocked(tmp_path / "clock")
    nobody = zonebake(env, "re-sign", "-c", str(toml), "-o", str(tmp_path / "out"))
    assert nobody.returncode == 1
    assert nobody.stderr.startswith(f"zonebake: re-sign failed: no server answers at "
                                    f"{tmp_path / 'set' / 'control'}: ")
    unsigned = tmp_path / "unsigned.toml"
    unsigned.write_text(f'[[zone]]\norigin = "{ORIGIN}"\nfile = "zone"\n')
    refused = zonebake(env, "re-sign", "-c", str(unsigned), "-o", str(tmp_path / "out"),
                       "--control", str(tmp_path / "control"))
    assert (refused.returncode, refused.stderr) == (2, (
        "zonebake: no zone of the set is signed at build time (a dnssec table): nothing to "
        "re-sign\n"))


def unit(name: str) -> dict[str, str]:
    """A unit file's settings (the last of each key), continued lines joined."""
    text = (SYSTEMD / name).read_text().replace("\\\n", " ")
    return dict(re.findall(r"^(\w+)=(.*)$", text, re.M))


def test_the_timer_runs_re_sign_hourly_as_the_server_user():
    timer, service = unit("zonebake-resign.timer"), unit("zonebake-resign.service")
    follow = unit("zonebake-follow.service")
    assert timer["Unit"] == "zonebake-resign.service" and timer["OnCalendar"] == "hourly"
    assert timer["WantedBy"] == "timers.target"
    assert service["Type"] == "oneshot"
    assert (service["User"], service["ReadWritePaths"], service["Environment"]) == \
        (follow["User"], follow["ReadWritePaths"], follow["Environment"])
    command = shlex.split(service["ExecStart"])
    assert command[0] == "/usr/local/bin/zonebake" and command[1] == "re-sign"
    args = cli._parser().parse_args(command[1:])
    assert (args.config, args.output, args.control) == (
        Path("/etc/zonebake/zonebake.toml"), Path("/var/lib/zonebake/build"),
        Path("/run/zonebake/control"))


def test_systemd_accepts_the_units(tmp_path):
    [analyze] = require("systemd", "systemd-analyze")
    zonebake_script = Path(sys.executable).with_name("zonebake")
    for name in ("zonebake-resign.service", "zonebake-resign.timer"):
        text = (SYSTEMD / name).read_text()
        (tmp_path / name).write_text(text.replace("/usr/local/bin/zonebake",
                                                  str(zonebake_script)))
    checked = subprocess.run([analyze, "verify", str(tmp_path / "zonebake-resign.timer"),
                              str(tmp_path / "zonebake-resign.service")],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
