"""Zones from a primary (issue 18): knotd is the primary, with a TSIG key; `zonebake build`
transfers from it, and `zonebake follow` answers its NOTIFY messages, transfers, builds and
deploys. Forged NOTIFY messages (a wrong key, no key, another address) change nothing."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from pathlib import Path

import dns.flags
import dns.message
import dns.opcode
import dns.query
import dns.rcode
import dns.rdatatype
import dns.tsig
import pytest

from conftest import Server, run_zonebake
from following import Follow
from knotd import Knot, free_port
from swapping import ControlledServer, wait_gone

KEY = "xfr.key."
SECRET = "c2VjcmV0IHNoYXJlZCBieSBwcmltYXJ5IGFuZCBzZWNvbmRhcnk="
WRONG = "YW5vdGhlciBzZWNyZXQgYWx0b2dldGhlciwgbm90IHRoZSBzYW1l"
TSIG = f"hmac-sha256:{KEY}:{SECRET}"
BUILT, NOTIFIED, QUIET, BROKEN = "built.test.", "notified.test.", "quiet.test.", "broken.test."
# Names and types asked of both the primary and the build (the zone's contents below).
PROBES = [("", "SOA"), ("", "NS"), ("ns1", "A"), ("www", "A"), ("", "MX"), ("txt", "TXT"),
          ("alias", "CNAME"), ("www", "AAAA"), ("nowhere", "A")]


def zone_text(origin: str, serial: int, extra: str = "") -> str:
    return f"""$ORIGIN {origin}
$TTL 300
@       IN SOA ns1 hostmaster ( {serial} 3600 600 86400 300 )
@       IN NS  ns1
@       IN MX  10 www
ns1     IN A   192.0.2.1
www     IN A   192.0.2.{serial % 250}
txt     IN TXT "h\\195\\169llo" "two words"
alias   IN CNAME www
{extra}"""


class Primary(Knot):
    """knotd serving the test zones from files, transfers allowed with the key only; NOTIFY
    for NOTIFIED to where `zonebake follow` listens (notify_to), none for the others."""

    NOWHERE = 9  # the discard port: NOTIFY before notify_to gets no answer

    def __init__(self, workdir: Path):
        workdir.mkdir(parents=True)
        self.files = {}
        for origin in (BUILT, NOTIFIED, QUIET, BROKEN):
            self.files[origin] = workdir / f"{origin}zone"
            self.files[origin].write_text(zone_text(origin, 1))
        keys = f"""key:
  - id: {KEY}
    algorithm: hmac-sha256
    secret: {SECRET}
remote:
  - id: follower
    address: 127.0.0.1@{self.NOWHERE}
    key: {KEY}
acl:
  - id: transfer
    key: {KEY}
    action: transfer
"""
        zone_extra = dict.fromkeys(self.files, "    acl: transfer\n")
        zone_extra[NOTIFIED] += "    notify: follower\n"
        super().__init__(list(self.files.items()), workdir / "knot", server_extra=keys,
                         zone_extra=zone_extra)

    def knotc(self, *command: str) -> None:
        subprocess.run(["knotc", "-s", str(self.workdir / "knot.sock"), "-b", *command],
                       check=True, capture_output=True, timeout=30)

    def notify_to(self, port: int) -> None:
        """Send NOTIFY to 127.0.0.1:port from now on (the configuration rewritten and
        reloaded: the port is known only once `zonebake follow` has bound it)."""
        config = self.workdir / "knot.conf"
        config.write_text(re.sub(r"address: 127\.0\.0\.1@\d+", f"address: 127.0.0.1@{port}",
                                 config.read_text()))
        self.knotc("reload")

    def publish(self, origin: str, serial: int, extra: str = "") -> None:
        """Change the zone on the primary and wait until it serves the new serial."""
        self.files[origin].write_text(zone_text(origin, serial, extra))
        self.knotc("zone-reload", origin)
        deadline = time.monotonic() + 10
        while serial_of(self.port, origin) != serial:
            assert time.monotonic() < deadline, f"knotd does not serve {origin} {serial}"
            time.sleep(0.05)


def serial_of(port: int, origin: str) -> int:
    response = dns.query.udp(dns.message.make_query(origin, "SOA", use_edns=False),
                             "127.0.0.1", port=port, timeout=2)
    return response.answer[0][0].serial


def toml(path: Path, zones: list[tuple[str, str]], control: Path | None = None) -> Path:
    """A zone set of (origin, primary) pairs, every zone's file in zones/ beside it."""
    text = f'[server]\ncontrol = "{control}"\n' if control else ""
    for origin, primary in zones:
        text += (f'[[zone]]\norigin = "{origin}"\nfile = "zones/{origin}zone"\n'
                 f'primary = "{primary}"\ntsig = "{TSIG}"\n')
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / "zones").mkdir(exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def primary(tmp_path_factory):
    knot = Primary(tmp_path_factory.mktemp("primary") / "p")
    yield knot
    knot.stop()


def sections(response: dns.message.Message) -> tuple:
    """What must agree: the rcode, AA, and the records of each section, order aside."""
    return (dns.rcode.to_text(response.rcode()), bool(response.flags & dns.flags.AA),
            *(sorted(rrset.to_text() for rrset in section)
              for section in (response.answer, response.authority, response.additional)))


def test_build_transfers_the_zone_and_answers_as_the_primary(primary, tmp_path):
    config = toml(tmp_path / "set" / "zonebake.toml", [(BUILT, f"127.0.0.1:{primary.port}")])
    zone_file = tmp_path / "set" / "zones" / f"{BUILT}zone"
    built = run_zonebake("build", "-c", str(config), "-o", str(tmp_path / "out"))
    assert built.returncode == 0, built.stderr
    assert built.stderr == ""
    assert zone_file.read_text().splitlines()[1] == \
        f"{BUILT} 300 IN SOA ns1.{BUILT} hostmaster.{BUILT} 1 3600 600 86400 300"
    assert not (tmp_path / "set" / "zones" / f"{BUILT}zone.axfr").exists()
    server = Server(tmp_path / "out" / "zonebake-server")
    try:
        for label, rdtype in PROBES:
            name = f"{label}.{BUILT}" if label else BUILT
            query = dns.message.make_query(name, rdtype, use_edns=False)
            assert sections(server.send(query)) == sections(primary.query(query)), name
    finally:
        server.stop()
    # The same serial again: nothing transferred, the file as it was.
    before = zone_file.stat().st_mtime_ns
    again = run_zonebake("build", "-c", str(config), "-o", str(tmp_path / "out"))
    assert again.returncode == 0 and again.stderr == ""
    assert zone_file.stat().st_mtime_ns == before
    # A newer serial on the primary: transferred, and `check` sees it without writing it.
    primary.publish(BUILT, 2)
    checked = run_zonebake("check", "-c", str(config))
    assert checked.returncode == 0 and checked.stderr == ""
    assert zone_file.stat().st_mtime_ns == before
    newer = run_zonebake("build", "-c", str(config), "-o", str(tmp_path / "out"))
    assert newer.returncode == 0, newer.stderr
    assert " 2 3600 600 86400 300" in zone_file.read_text().splitlines()[1]


def test_an_unreachable_primary_leaves_the_last_file_in_use(primary, tmp_path):
    closed = free_port()
    good = toml(tmp_path / "set" / "zonebake.toml", [(BUILT, f"127.0.0.1:{primary.port}")])
    assert run_zonebake("build", "-c", str(good), "-o", str(tmp_path / "out")).returncode == 0
    zone_file = tmp_path / "set" / "zones" / f"{BUILT}zone"
    served = zone_file.read_text()
    gone = toml(tmp_path / "set" / "zonebake.toml", [(BUILT, f"127.0.0.1:{closed}")])
    built = run_zonebake("build", "-c", str(gone), "-o", str(tmp_path / "out"))
    assert built.returncode == 0, built.stderr
    assert built.stderr.splitlines() == [
        f"{zone_file}: warning: {BUILT} from primary 127.0.0.1:{closed}: no answer in 4 s; "
        f"the last file ({zone_file}) is used"]
    assert zone_file.read_text() == served
    # Without a file there is nothing to serve: the core says the file is missing.
    other = toml(tmp_path / "empty" / "zonebake.toml", [(BUILT, f"127.0.0.1:{closed}")])
    missing = run_zonebake("build", "-c", str(other), "-o", str(tmp_path / "out2"))
    assert missing.returncode == 1
    lines = missing.stderr.splitlines()
    assert lines[0].endswith("and there is no earlier file "
                             f"({tmp_path / 'empty' / 'zones' / BUILT}zone)")
    assert "No such file or directory" in lines[1] and lines[-1].endswith("nothing written")
    assert not (tmp_path / "out2").exists()


def test_a_key_the_primary_does_not_accept_is_a_warning(primary, tmp_path):
    config = toml(tmp_path / "set" / "zonebake.toml", [(BUILT, f"127.0.0.1:{primary.port}")])
    config.write_text(config.read_text().replace(SECRET, WRONG))
    built = run_zonebake("build", "-c", str(config), "-o", str(tmp_path / "out"))
    assert built.returncode == 1
    zone_file = tmp_path / "set" / "zones" / f"{BUILT}zone"
    assert built.stderr.splitlines()[0] == (
        f"{zone_file}: warning: {BUILT} from primary 127.0.0.1:{primary.port}: it finds our "
        f"TSIG signature bad (BADSIG): is the secret the same?; and there is no earlier file "
        f"({zone_file})")


def test_a_transfer_that_does_not_build_keeps_the_last_file(primary, tmp_path):
    config = toml(tmp_path / "set" / "zonebake.toml", [(BROKEN, f"127.0.0.1:{primary.port}")])
    assert run_zonebake("build", "-c", str(config), "-o", str(tmp_path / "out")).returncode == 0
    zone_file = tmp_path / "set" / "zones" / f"{BROKEN}zone"
    last = zone_file.read_text()
    # A delegation whose in-zone name server has no address: no glue to send (the primary,
    # with its semantic checks off, serves it).
    primary.publish(BROKEN, 2, "sub     IN NS  ns.sub\n")
    built = run_zonebake("build", "-c", str(config), "-o", str(tmp_path / "out"))
    assert built.returncode == 1
    staged = Path(f"{zone_file}.axfr")
    line = next(i for i, text in enumerate(staged.read_text().splitlines(), 1)
                if text.startswith(f"sub.{BROKEN}"))
    assert re.match(rf"{re.escape(str(staged))}:{line}: error: .*glue", built.stderr), \
        built.stderr
    assert zone_file.read_text() == last
    # Once the primary is mended the next build takes it.
    primary.publish(BROKEN, 3)
    mended = run_zonebake("build", "-c", str(config), "-o", str(tmp_path / "out"))
    assert mended.returncode == 0, mended.stderr
    assert " 3 3600 " in zone_file.read_text()


def notify(origin: str, port: int, secret: str | None = SECRET, source: str = "127.0.0.1"
           ) -> tuple[dns.message.Message, dns.message.Message]:
    """Send a NOTIFY for `origin` (signed with KEY and `secret`, unless None) from `source`;
    the NOTIFY and the answer, its signature checked when it has one."""
    message = dns.message.make_query(origin, "SOA", use_edns=False)
    message.set_opcode(dns.opcode.NOTIFY)
    message.flags = dns.flags.AA | dns.opcode.to_flags(dns.opcode.NOTIFY)
    keyring = {}
    if secret is not None:
        keyring = {dns.name.from_text(KEY): dns.tsig.Key(KEY, secret, "hmac-sha256")}
        message.use_tsig(keyring, KEY)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((source, 0))
        sock.settimeout(5)
        sock.sendto(message.to_wire(), ("127.0.0.1", port))
        wire = sock.recv(65535)
    answer = dns.message.from_wire(wire, keyring=False)
    if answer.tsig is not None and answer.tsig_error == dns.rcode.NOERROR:
        # Signed: it must verify with the key, over the NOTIFY's MAC (RFC 8945 §5.3).
        answer = dns.message.from_wire(wire, keyring=keyring, request_mac=message.mac)
    return message, answer


def test_follow_serves_what_the_primary_notifies_and_nothing_forged(primary, tmp_path):
    config = toml(tmp_path / "set" / "zonebake.toml",
                  [(NOTIFIED, f"127.0.0.1:{primary.port}"), (QUIET, f"127.0.0.1:{primary.port}")],
                  control=tmp_path / "control")
    outdir = tmp_path / "out"
    assert run_zonebake("build", "-c", str(config), "-o", str(outdir)).returncode == 0
    server = ControlledServer(outdir, tmp_path / "control", tmp_path / "servers.log",
                              threads=1)
    follow = None
    try:
        follow = Follow(config, outdir, tmp_path / "follow.log")
        follow_port = follow.port
        primary.notify_to(follow_port)
        follow.wait_for(r"^info: built ")
        assert serial_of(server.port, NOTIFIED) == 1
        # The primary changes and notifies: the new serial is served.
        primary.publish(NOTIFIED, 2)
        follow.wait_for(rf"^info: NOTIFY for {NOTIFIED} from 127\.0\.0\.1#\d+ "
                        rf"\(serial 2\): accepted$")
        follow.wait_for(rf"^info: deployed: pid \d+ serves in place of pid {server.process.pid}"
                        rf" \({NOTIFIED} 2\)$")
        assert serial_of(server.port, NOTIFIED) == 2
        assert wait_gone(server.process.pid)

        # QUIET changes on the primary, which does not notify; forged NOTIFY messages for it
        # are answered and change nothing.
        primary.publish(QUIET, 2)
        sent, answer = notify(QUIET, follow_port, secret=WRONG)
        assert (answer.id, answer.opcode(), answer.rcode()) == \
            (sent.id, dns.opcode.NOTIFY, dns.rcode.NOTAUTH)
        assert answer.tsig_error == dns.rcode.BADSIG and answer.tsig[0].mac == b""
        _, answer = notify(QUIET, follow_port, secret=None)
        assert answer.rcode() == dns.rcode.REFUSED and answer.tsig is None
        _, answer = notify(QUIET, follow_port, source="127.0.0.2")
        assert answer.rcode() == dns.rcode.REFUSED
        _, answer = notify("elsewhere.test.", follow_port)
        assert answer.rcode() == dns.rcode.NOTAUTH
        follow.wait_for(rf"^warning: NOTIFY for elsewhere\.test\. from .*; NOTAUTH$")
        assert [line.split(": ", 2)[-1] for line in follow.lines()
                if QUIET in line and "NOTIFY" in line] == [
            "TSIG BADSIG (key xfr.key.); NOTAUTH",
            "not signed with its key xfr.key.; REFUSED",
            f"not its primary 127.0.0.1:{primary.port}; REFUSED"]
        assert not [line for line in follow.lines() if f"{QUIET} transferred" in line]
        assert serial_of(server.port, QUIET) == 1
        # The primary's own NOTIFY, as knotd would send it: answered, signed, acted on.
        sent, answer = notify(QUIET, follow_port)
        assert answer.rcode() == dns.rcode.NOERROR and answer.flags & dns.flags.AA
        assert answer.opcode() == dns.opcode.NOTIFY and answer.had_tsig
        assert answer.question[0].to_text() == sent.question[0].to_text()
        follow.wait_for(rf"^info: deployed: .* \({QUIET} 2\)$")
        assert serial_of(server.port, QUIET) == 2
    finally:
        stopped = follow.stop() if follow else None
        server.stop_all()
    assert stopped == 0 and follow.lines()[-1] == "info: stopped"
