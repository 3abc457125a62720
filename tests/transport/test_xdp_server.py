"""zonebake-server --xdp end to end, over a veth pair between two network namespaces
(vethpair.py), the server in one, its clients in the other: over AF_XDP it answers what its
sockets answer, byte for byte, IPv4 and IPv6; within the interface's MTU; the frames of
tests/frames.py on the wire as their catalogue says, and what is not UDP to its port left to
the kernel's sockets; it leaves the interface as it found it, or says why it cannot take it;
rate limiting holds over AF_XDP too. The statistics (`stats --control`) count what went over
AF_XDP (`xdp_queries`)."""

from __future__ import annotations

import errno
import ipaddress
import json
import re
import socket
import struct
import subprocess
import sys
import time

import dns.edns
import dns.flags
import dns.message
import dns.name
import pytest

import frames
from conftest import LOG_LINE, TESTS, ZONES, Server, build_set
from frames import ANSWERED, NOT_ANSWERED, addresses_and_udp, dns_of, turned_around
from vethpair import SERVER_V4, SERVER_V6, VethPair, require_af_xdp

sys.path.insert(0, str(TESTS / "differential"))
from probes import zone_probes  # noqa: E402

PORT = 5300
LONG = 5.0    # seconds for what must happen (bounds every loop that waits)
QUIET = 0.5   # seconds to wait for an answer that must not come
WINDOW = 16   # queries in flight at once
ZONE_SET = [("example.net.", ZONES / "example.net.zone"),
            ("example.", ZONES / "signed" / "example.nsec3.zone")]
IDENTITY = "xdp-ns1.example"
NSID = dns.edns.GenericOption(dns.edns.OptionType.NSID, b"")
ETH_P_ALL = 0x0003
SOL_PACKET, PACKET_AUXDATA = 263, 8
TP_STATUS_VLAN_VALID, TP_STATUS_VLAN_TPID_VALID = 1 << 4, 1 << 6


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    require_af_xdp()
    work = tmp_path_factory.mktemp("xdp_server")
    config = work / "zonebake.toml"
    config.write_text(f'[server]\nidentity = "{IDENTITY}"\n' + "".join(
        f'[[zone]]\norigin = "{origin}"\nfile = "{path}"\n' for origin, path in ZONE_SET))
    return build_set(work / "out", "-c", str(config))


class PairServer(Server):
    """zonebake-server in the pair's server namespace, one worker: sockets on `listen` and,
    with `xdp` (IFACE@PORT), AF_XDP; `xdp_line` its log's line for that, `warnings` what it
    warned of. Statistics over its control socket. A context manager that stops it."""

    def __init__(self, pair: VethPair, binary, control, *args, listen=(f"127.0.0.1:{PORT}",),
                 xdp: str | None = f"xs0@{PORT}"):
        self.warnings: list[str] = []
        self.binary, self.control = binary, control
        super().__init__(binary, "--threads", "1", "--no-huge-pages", "--control",
                         str(control), *(["--xdp", xdp] if xdp else []), *args, listen=listen,
                         preexec=pair.enter("server"))
        try:
            self.xdp_line = self.said() if xdp else None
        except BaseException:
            self.stop()
            raise

    def __enter__(self) -> PairServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _read_line(self, timeout: float) -> str:
        """The log's next line but warnings, which go to self.warnings (one comes before
        the lines Server waits for, with --xdp-optional)."""
        for _ in range(100):
            line = super()._read_line(timeout)
            logged = LOG_LINE.match(line)
            if not (logged and logged.group(2).startswith("warning: ")):
                return line
            self.warnings.append(logged.group(2))
        raise AssertionError(f"warnings without end: {self.warnings[-3:]}")

    def said(self) -> str:
        """The message of the log's next line, which must be this server's."""
        line = self._read_line(timeout=LONG)
        logged = LOG_LINE.match(line)
        assert logged and int(logged.group(1)) == self.process.pid, line
        return logged.group(2)

    def said_to_the_end(self) -> list[str]:
        """The messages of the rest of its log, once it has ended."""
        rest, self._stderr = self._stderr + self.process.stderr.read(), b""
        return messages(rest.decode(errors="replace"))

    def stats(self) -> dict:
        return json.loads(subprocess.run(
            [str(self.binary), "stats", "--control", str(self.control)], capture_output=True,
            text=True, timeout=10, check=True).stdout)


def messages(log: str) -> list[str]:
    """The messages of a server's log lines."""
    return [m.group(2) for m in map(LOG_LINE.match, log.splitlines()) if m]


def family_of(address: str) -> int:
    return socket.AF_INET6 if ":" in address else socket.AF_INET


def exchange_all(pair: VethPair, address: tuple, queries: list[bytes]) -> list[bytes | None]:
    """Each query (their IDs all different) from one UDP socket in the client namespace to
    `address`, WINDOW at a time; the answers in the queries' order, None where none came."""
    assert len({query[:2] for query in queries}) == len(queries), "IDs not all different"
    answers: dict[bytes, bytes] = {}
    with pair.socket("client", family_of(address[0])) as client:
        for start in range(0, len(queries), WINDOW):
            window = {query[:2] for query in queries[start:start + WINDOW]}
            for query in queries[start:start + WINDOW]:
                client.sendto(query, address)
            deadline = time.monotonic() + LONG
            while window - answers.keys() and (left := deadline - time.monotonic()) > 0:
                client.settimeout(min(left, QUIET))
                try:
                    answer, source = client.recvfrom(65535)
                except socket.timeout:
                    break
                assert source[:2] == address, f"an answer from {source}"
                answers[answer[:2]] = answer
    return [answers.get(query[:2]) for query in queries]


def exchange(pair: VethPair, address: tuple, query: bytes, side: str = "client") -> bytes:
    with pair.socket(side, family_of(address[0])) as client:
        client.settimeout(LONG)
        client.sendto(query, address)
        return client.recv(65535)


def make(qname: str, qtype: str = "A", qid: int = 0x5A5A, use_edns=False, **how) -> bytes:
    message = dns.message.make_query(qname, qtype, use_edns=use_edns, **how)
    message.id = qid
    return message.to_wire()


# ---- the same answers as the sockets give ----

def probe_queries() -> tuple[list[bytes], list[str]]:
    """Every probe of the differential tests (probes.py) for both zones, and a name in none:
    without EDNS, with it, with DO (and CD), every eighth with NSID too; RD set on every
    other probe; then edge_queries. Each with its own ID; and what each asks, for the
    messages."""
    probes = {}
    for origin, path in ZONE_SET:
        for probe in zone_probes(origin, path):
            probes.setdefault((probe.qname.to_text(), probe.qtype, probe.qclass), probe)
    outside = dns.name.from_text("outside-every-zone.invalid.")
    questions = [(p.qname, p.qtype, p.qclass, str(p)) for p in probes.values()]
    questions.append((outside, 1, 1, f"{outside} A (in no zone)"))
    queries, asked = [], []
    for i, (qname, qtype, qclass, what) in enumerate(questions):
        variants = [("", dict(use_edns=False)), ("EDNS", dict(use_edns=0)),
                    ("EDNS DO CD", dict(use_edns=0, payload=4096, want_dnssec=True))]
        if i % 8 == 0:
            variants.append(("EDNS DO NSID", dict(use_edns=0, want_dnssec=True,
                                                   options=[NSID])))
        for how, kwargs in variants:
            message = dns.message.make_query(qname, qtype, qclass, **kwargs)
            message.id = len(queries)
            message.flags = dns.flags.RD if i % 2 else 0
            if "CD" in how:
                message.flags |= dns.flags.CD
            queries.append(message.to_wire())
            asked.append(f"{what} {how}")
    for what, query in edge_queries():
        queries.append(struct.pack("!H", len(queries)) + query[2:])
        asked.append(what)
    assert len(queries) < 65536
    return queries, asked


def edge_queries() -> list[tuple[str, bytes]]:
    """Beside the probes: the largest answers (denial proofs, DNSKEY, NS) with DO at payload
    sizes about each cut (under 512 counts as 512, RFC 6891 §6.2.5); headers answered with
    an error or read past; CHAOS."""
    large = [("nx.example.", "A"), ("a.zz.wild.example.", "MX"), ("example.", "DNSKEY"),
             ("example.", "NS")]
    edges = [(f"{qname} {qtype} DO, payload {payload}",
              make(qname, qtype, use_edns=0, payload=payload, want_dnssec=True))
             for qname, qtype in large for payload in (0, 511, 512, 513, 700, 1232, 1452, 65535)]
    plain = make("www.example.")
    edges += [("opcode NOTIFY", plain[:2] + b"\x20\x00" + plain[4:]),
              ("opcode UPDATE", plain[:2] + b"\x28\x00" + plain[4:]),
              ("TC set", plain[:2] + b"\x02\x00" + plain[4:]),
              ("no question", plain[:4] + b"\0\0" + plain[6:12]),
              ("two questions", plain[:4] + b"\0\x02" + plain[6:] + plain[12:]),
              ("octets after the question", plain + bytes(5)),
              ("EDNS version 1", make("example.", "SOA", use_edns=1)),
              ("an unknown EDNS option", make("example.", "SOA", use_edns=0, options=[
                  dns.edns.GenericOption(65001, b"abc")]))]
    edges += [(f"{name} CH TXT", dns.message.make_query(name, "TXT", "CH").to_wire())
              for name in ("id.server.", "hostname.bind.", "version.bind.")]
    return edges


def test_answers_over_af_xdp_are_the_sockets_answers_byte_for_byte(binary, tmp_path):
    """The same binary, first on sockets at the veth's addresses, then over AF_XDP: the same
    queries get the same answers, IPv4 and IPv6, every one of them over AF_XDP."""
    queries, asked = probe_queries()
    targets = [(SERVER_V4, PORT), (SERVER_V6, PORT)]
    with VethPair() as pair:
        with PairServer(pair, binary, tmp_path / "sockets.control", xdp=None,
                        listen=(f"{SERVER_V4}:{PORT}", f"[{SERVER_V6}]:{PORT}")):
            by_sockets = [exchange_all(pair, target, queries) for target in targets]
        # Its sockets on the loopback interface alone: the veth's addresses get their
        # answers over AF_XDP or none.
        with PairServer(pair, binary, tmp_path / "xdp.control") as server:
            by_xdp = [exchange_all(pair, target, queries) for target in targets]
            stats = server.stats()
    for target, theirs, ours in zip(targets, by_sockets, by_xdp):
        unanswered = [what for what, answer in zip(asked, theirs) if answer is None]
        assert unanswered == [], f"{len(unanswered)} not answered over sockets"
        differing = [what for what, a, b in zip(asked, theirs, ours) if a != b]
        assert differing == [], f"{len(differing)} of {len(queries)} differ at {target}: " \
                                f"{differing[:5]}"
    assert stats["xdp_queries"] == stats["queries"]["udp"] == 2 * len(queries)
    assert stats["dropped"] == 0


# ---- within the MTU ----

def test_a_response_larger_than_the_mtu_allows_goes_truncated_within_it(binary, tmp_path):
    """MTU 700: responses up to 652 octets (700 less IPv6's and UDP's headers, whichever
    family asks), advertised in the OPT; a larger one is the one the sockets give a client
    that says 652, TC set, but for the OPT's payload size; a smaller one goes whole. IPv4
    alone: IPv6 needs an MTU of 1280 (RFC 8200 §5), and the kernel takes its addresses off
    a link with less."""
    cap = 700 - 48
    large = dict(use_edns=0, payload=4096, want_dnssec=True)  # NXDOMAIN, NSEC3s: 772 octets
    with VethPair() as pair:
        pair.set_mtu(700)
        with PairServer(pair, binary, tmp_path / "control") as server:
            assert server.xdp_line == (
                f"serving example.net., example. on xs0 port {PORT} over AF_XDP: 1 queue, "
                f"native XDP, copy mode, responses up to {cap} octets (MTU 700)")
            loopback = ("127.0.0.1", PORT)
            for qname, whole in [("nx.example.", False), ("www.example.", True)]:
                over_xdp = exchange(pair, (SERVER_V4, PORT), make(qname, **large))
                asked_for = dict(large, payload=4096 if whole else cap)
                by_socket = exchange(pair, loopback, make(qname, **asked_for), "server")
                response = dns.message.from_wire(over_xdp)
                assert len(over_xdp) <= cap and response.payload == cap
                assert bool(response.flags & dns.flags.TC) == (not whole)
                # The OPT last, without options: its CLASS, the payload size, 8 from the
                # end. The sockets advertise 1232 (their udp-size).
                assert over_xdp[-11:-8] == b"\0\0\x29" and by_socket[-11:-8] == b"\0\0\x29"
                assert over_xdp[:-8] + over_xdp[-6:] == by_socket[:-8] + by_socket[-6:]
            assert server.stats()["xdp_queries"] == 2



def test_an_mtu_below_540_is_refused_or_left_to_the_sockets(binary, tmp_path):
    """MTU 500: a 512-octet response (RFC 1035 §4.2.1) does not fit behind IPv4's and UDP's
    28 octets, so no query steered to AF_XDP could be answered there, nor given back to the
    kernel: the start is refused, and nothing is left on the interface. With --xdp-optional
    the sockets serve alone: the one at the veth's address answers."""
    with VethPair() as pair:
        pair.set_mtu(500)
        refused = subprocess.run([*pair.exec("server"), str(binary), "--listen",
                                  f"127.0.0.1:{PORT}", "--xdp", f"xs0@{PORT}", "--allow-root"],
                                 capture_output=True, text=True, timeout=10)
        assert refused.returncode == 1
        assert messages(refused.stderr) == [
            "error: xs0: MTU 500: a 512-octet DNS response does not fit behind the IPv4 and "
            "UDP headers; answering over AF_XDP needs an MTU of 540 or more"]
        assert pair.xdp_on_server() == ""
        with PairServer(pair, binary, tmp_path / "control", "--xdp-optional",
                        listen=(f"{SERVER_V4}:{PORT}", f"127.0.0.1:{PORT}")) as server:
            assert server.warnings == [
                "warning: not answering over AF_XDP: xs0: MTU 500: a 512-octet DNS response "
                "does not fit behind the IPv4 and UDP headers; answering over AF_XDP needs an "
                "MTU of 540 or more; the sockets serve alone (--xdp-optional)"]
            assert pair.xdp_on_server() == ""
            query = make("www.example.")
            by_socket = exchange(pair, ("127.0.0.1", PORT), query, "server")
            assert exchange_all(pair, (SERVER_V4, PORT), [query]) == [by_socket]
            stats = server.stats()
            assert stats["queries"]["udp"] == 2 and stats["xdp_queries"] == 0


# ---- frames on the wire ----

def text(address: bytes) -> str:
    return str(ipaddress.ip_address(address))


def mac(octets: bytes) -> str:
    return octets.hex(":")


class Wire:
    """An AF_PACKET socket on the client's interface, in the client's namespace: frames
    sent as they are, frames received as they came (the VLAN tag that receive offload took
    out of one, PACKET_AUXDATA, put back)."""

    def __init__(self, pair: VethPair):
        self.ifname = pair.client_if
        self.raw = pair.socket("client", socket.AF_PACKET, socket.SOCK_RAW,
                               socket.htons(ETH_P_ALL))
        self.raw.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        self.raw.bind((self.ifname, ETH_P_ALL))

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc) -> None:
        self.raw.close()

    def send(self, frame: bytes) -> None:
        assert self.raw.send(frame) == len(frame)

    def read(self, until: float, outgoing: bool = False):
        """The frames received (or with `outgoing`, sent) until `until` (monotonic)."""
        while (left := until - time.monotonic()) > 0:
            self.raw.settimeout(left)
            try:
                frame, ancillary, _, address = self.raw.recvmsg(65535, 64)
            except socket.timeout:
                return
            if address[0] != self.ifname or \
                    (address[2] == socket.PACKET_OUTGOING) != outgoing:
                continue
            for level, kind, data in ancillary:
                if (level, kind) == (SOL_PACKET, PACKET_AUXDATA):
                    status, _, _, _, _, tci, tpid = struct.unpack("IIIHHHH", data[:20])
                    if status & TP_STATUS_VLAN_VALID:
                        tpid = tpid if status & TP_STATUS_VLAN_TPID_VALID else 0x8100
                        frame = frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]
            yield frame

    def answers(self, port: int, until: float, last: bytes | None = None) -> list[bytes]:
        """The UDP frames from `port` received until `until`, or up to `last`."""
        found = []
        for frame in self.read(until):
            if udp_source_port(frame) == port:
                found.append(frame)
                if frame == last:
                    break
        return found


def udp_source_port(frame: bytes) -> int | None:
    """A frame's UDP source port, behind one VLAN tag or none; None if it carries no UDP."""
    ip_at = 18 if frame[12:14] in (b"\x81\x00", b"\x88\xa8") else 14
    version = frame[ip_at] >> 4 if len(frame) > ip_at else None
    if version not in (4, 6) or len(frame) < ip_at + (20 if version == 4 else 40):
        return None
    if frame[ip_at + (9 if version == 4 else 6)] != 17:  # the protocol, the next header
        return None
    _, _, udp_at = addresses_and_udp(frame, ip_at)
    return struct.unpack("!H", frame[udp_at:udp_at + 2])[0] if len(frame) >= udp_at + 8 \
        else None


def test_frames_on_the_wire_are_answered_or_left_alone_as_catalogued(binary, tmp_path):
    """The veth takes the catalogue's MACs and addresses; MTU 2200, so that the frame longer
    than an AF_XDP frame's room goes on the wire too."""
    server_addresses = [text(frames.SERVER_V4), text(frames.SERVER_V6)]
    with VethPair() as pair:
        pair.readdress(mac(frames.SERVER_MAC), mac(frames.CLIENT_MAC), server_addresses,
                       [text(frames.CLIENT_V4), text(frames.CLIENT_V6)])
        pair.set_mtu(2200)
        # --xdp xs0: the default port, the catalogue's.
        assert frames.PORT == 53
        with PairServer(pair, binary, tmp_path / "control", xdp="xs0",
                        listen=(f"127.0.0.1:{frames.PORT}",)) as server:
            # Each DNS message the frames carry, asked from a socket: its answer.
            asked = {dns_of(frame, ip_at) for frame, ip_at in ANSWERED.values()}
            expected = {query: exchange(pair, (server_addresses[0], frames.PORT), query)
                        for query in asked}
            with Wire(pair) as wire:
                answered_as_catalogued(wire, expected)
                not_answered_as_catalogued(wire, expected)
            assert server.alive()
            assert server.stats()["xdp_queries"] == len(asked) + len(ANSWERED) + 1


def answered_as_catalogued(wire: Wire, expected: dict[bytes, bytes]) -> None:
    """Each of ANSWERED sent, one at a time: its answer is the one `expected` has for its
    DNS message, turned around as frames.py computes it, VLAN tag and all."""
    wrong = {}
    for name, (frame, ip_at) in ANSWERED.items():
        wire.send(frame)
        want = turned_around(frame, ip_at, expected[dns_of(frame, ip_at)])
        got = wire.answers(frames.PORT, time.monotonic() + LONG, last=want)
        if got != [want]:
            wrong[name] = [g.hex() for g in got]
    assert wrong == {}


def not_answered_as_catalogued(wire: Wire, expected: dict[bytes, bytes]) -> None:
    """All of NOT_ANSWERED sent, then a good query: its answer comes, none before it. A link
    carries nothing shorter than an Ethernet header: the kernel refuses those."""
    short = {name for name, (frame, _) in NOT_ANSWERED.items() if len(frame) < 14}
    assert short == {"empty", "short-ethernet"}
    for name, (frame, _) in NOT_ANSWERED.items():
        if name in short:
            with pytest.raises(OSError) as refused:
                wire.send(frame)
            assert refused.value.errno == errno.EINVAL
        else:
            wire.send(frame)
    # Then a good query: its answer, and none before it.
    frame, ip_at = ANSWERED["ipv6-vlan"]
    wire.send(frame)
    want = turned_around(frame, ip_at, expected[dns_of(frame, ip_at)])
    assert wire.answers(frames.PORT, time.monotonic() + LONG, last=want) == [want]


def fragments_sent(wire: Wire, until: float) -> int:
    """The UDP fragments the client sent: IPv4 ones (MF or an offset), IPv6 Fragment
    headers."""
    count = 0
    for frame in wire.read(until, outgoing=True):
        if frame[12:14] == b"\x08\x00" and frame[23] == 17 and \
                struct.unpack("!H", frame[20:22])[0] & 0x3FFF:
            count += 1
        elif frame[12:14] == b"\x86\xdd" and frame[20] == 44:
            count += 1
    return count


def test_what_is_not_udp_to_its_port_goes_to_the_kernels_sockets(binary, tmp_path):
    """Its sockets on the veth's addresses, on the port AF_XDP takes: a query in two
    fragments reaches them (the kernel reassembles it), TCP too; another port is the
    kernel's, which says port unreachable."""
    listen = (f"{SERVER_V4}:{PORT}", f"[{SERVER_V6}]:{PORT}", f"127.0.0.1:{PORT}")
    loopback = ("127.0.0.1", PORT)
    # An EDNS Padding option (RFC 7830) makes a query of 1590 octets: over MTU 1500.
    padding = dns.edns.GenericOption(dns.edns.OptionType.PADDING, bytes(1550))
    padded = make("example.", "SOA", use_edns=0, payload=4096, options=[padding])
    plain = make("www.example.", "A")
    with VethPair() as pair, PairServer(pair, binary, tmp_path / "control",
                                        listen=listen) as server, Wire(pair) as wire:
        for address in (SERVER_V4, SERVER_V6):
            target = (address, PORT)
            # Over AF_XDP, as ever.
            over_xdp = exchange(pair, target, plain)
            assert over_xdp == exchange(pair, loopback, plain, "server")
            # Two fragments: the kernel's, reassembled and answered by the socket.
            answer = exchange(pair, target, padded)
            # They went before the answer came: on the wire's socket already.
            assert fragments_sent(wire, time.monotonic() + 0.1) == 2
            assert answer == exchange(pair, loopback, padded, "server")
            # TCP to the port: the kernel's, and the socket's answer.
            with pair.socket("client", family_of(address), socket.SOCK_STREAM) as tcp:
                tcp.settimeout(LONG)
                tcp.connect(target)
                tcp.sendall(struct.pack("!H", len(plain)) + plain)
                data = b""
                while len(data) < 2 or len(data) < 2 + struct.unpack("!H", data[:2])[0]:
                    chunk = tcp.recv(65535)
                    assert chunk, f"the connection closed after {data!r}"
                    data += chunk
                assert data[2:] == over_xdp
            # UDP to another port: the kernel's, no socket there: port unreachable.
            with pair.socket("client", family_of(address)) as client:
                client.settimeout(LONG)
                client.connect((address, PORT + 1))
                client.send(plain)
                with pytest.raises(ConnectionRefusedError):
                    client.recv(65535)
        stats = server.stats()
    # Per family: plain over AF_XDP, plain and padded on the loopback, padded reassembled.
    assert stats["queries"] == {"udp": 8, "tcp": 2}
    assert stats["xdp_queries"] == 2


# ---- start-up and stop ----

def run_server(pair: VethPair, binary, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "--allow-root", "--threads", "1", "--no-huge-pages",
                           "--listen", f"127.0.0.1:{PORT + 1}", *args], capture_output=True,
                          text=True, timeout=10, preexec_fn=pair.enter("server"))


def errors(stderr: str) -> list[str]:
    return [message for message in messages(stderr) if message.startswith("error: ")]


def test_sigterm_takes_the_program_off_the_interface(binary, tmp_path):
    """Its program on the interface while it serves, as the start-up log says; after
    SIGTERM, status 0, "stopped" and none: the port is the kernel's again."""
    with VethPair() as pair:
        with PairServer(pair, binary, tmp_path / "control") as server:
            assert server.xdp_line == (
                f"serving example.net., example. on xs0 port {PORT} over AF_XDP: 1 queue, "
                f"native XDP, copy mode, responses up to 1232 octets (MTU 1500)")
            shown = pair.xdp_on_server()
            assert re.fullmatch(r"xdp prog/xdp id \d+ name zonebake_xdp tag \w+ jited", shown)
            assert exchange(pair, (SERVER_V4, PORT), make("example.", "SOA"))
            server.process.terminate()
            assert server.process.wait(timeout=LONG) == 0
            said = server.said_to_the_end()
            assert said[-1] == "stopped" and server.warnings == []
            assert [m for m in said if m.startswith(("warning: ", "error: "))] == []
        assert pair.xdp_on_server() == ""
        # The kernel's again: no socket there, port unreachable.
        with pair.socket("client", socket.AF_INET) as client:
            client.settimeout(LONG)
            client.connect((SERVER_V4, PORT))
            client.send(make("example.", "SOA"))
            with pytest.raises(ConnectionRefusedError):
                client.recv(65535)


def test_sigkill_takes_the_program_off_too(binary, tmp_path):
    """The program hangs on a BPF link that dies with its owner, however it ends."""
    with VethPair() as pair:
        with PairServer(pair, binary, tmp_path / "control") as server:
            assert pair.xdp_on_server()
            server.process.kill()
            server.process.wait(timeout=LONG)
        deadline = time.monotonic() + LONG
        while pair.xdp_on_server() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pair.xdp_on_server() == ""


@pytest.mark.parametrize("specs", [["nosuch0"], ["xs0", "nosuch0"]])
def test_an_interface_that_does_not_exist_stops_the_start(binary, specs):
    """Exit 1, naming it; an interface attached before it is left bare."""
    with VethPair() as pair:
        result = run_server(pair, binary, *(f for s in specs for f in ("--xdp", f"{s}@{PORT}")))
        assert result.returncode == 1
        assert errors(result.stderr) == ["error: nosuch0: no such interface: No such device"]
        assert pair.xdp_on_server() == ""


def test_xdp_optional_serves_on_the_sockets_alone(binary, tmp_path):
    """No such interface, with --xdp-optional: a warning that says why, and the sockets
    answer."""
    with VethPair() as pair, PairServer(pair, binary, tmp_path / "control", "--xdp-optional",
                                        listen=(f"{SERVER_V4}:{PORT}",),
                                        xdp=f"nosuch0@{PORT}") as server:
        assert server.warnings == [
            "warning: not answering over AF_XDP: nosuch0: no such interface: No such "
            "device; the sockets serve alone (--xdp-optional)"]
        query = make("example.", "SOA")
        assert dns.message.from_wire(exchange(pair, (SERVER_V4, PORT), query)).answer
        stats = server.stats()
        assert stats["queries"]["udp"] == 1 and stats["xdp_queries"] == 0


def test_a_second_server_on_the_interface_is_told_it_is_busy(binary, tmp_path):
    """EBUSY, said as such, exit 1; the first server's program stays and answers."""
    with VethPair() as pair, PairServer(pair, binary, tmp_path / "control") as server:
        shown = pair.xdp_on_server()
        result = run_server(pair, binary, "--xdp", f"xs0@{PORT + 1}")
        assert result.returncode == 1
        assert errors(result.stderr) == [
            "error: xs0: attaching the XDP program: Device or resource busy: another XDP "
            "program is attached to the interface"]
        # The first goes on, its program in place.
        assert pair.xdp_on_server() == shown
        query = make("example.", "SOA")
        assert exchange(pair, (SERVER_V4, PORT), query) == exchange(
            pair, ("127.0.0.1", PORT), query, "server")
        assert server.stats()["xdp_queries"] == 1


# ---- rate limiting ----

def test_rate_limiting_holds_over_af_xdp(binary, tmp_path):
    """5 a second, no slip: a burst of 40 from one client gets 5 answers (10 if the
    worker's clock ticks inside it), each whole, the rest counted as dropped."""
    rate, burst = 5, 40
    queries = [make("www.example.", qid=i) for i in range(burst)]
    with VethPair() as pair, PairServer(pair, binary, tmp_path / "control",
                                        "--rrl-responses-per-second", str(rate),
                                        "--rrl-slip", "0") as server:
        # The loopback's prefix, a bucket of its own: the answer, as it comes unlimited.
        whole = exchange(pair, ("127.0.0.1", PORT), queries[0], "server")
        with pair.socket("client", socket.AF_INET) as client:
            for query in queries:
                client.sendto(query, (SERVER_V4, PORT))
            answers = []
            client.settimeout(QUIET)
            for _ in range(burst):
                try:
                    answers.append(client.recv(65535))
                except socket.timeout:
                    break
        stats = server.stats()
    assert rate <= len(answers) <= 2 * rate
    assert len({answer[:2] for answer in answers}) == len(answers)
    assert all(answer[2:] == whole[2:] for answer in answers)
    assert stats["queries"]["udp"] == burst + 1 and stats["xdp_queries"] == burst
    assert stats["rrl_dropped"] == burst - len(answers) and stats["rrl_slipped"] == 0
