"""zonebake-server --xdp end to end, over a veth pair between two network namespaces
(vethpair.py), the server in one, its clients in the other: over AF_XDP it answers what its
sockets answer, byte for byte, IPv4 and IPv6; within the interface's MTU. The statistics
(`stats --control`) count what went over AF_XDP (`xdp_queries`)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import dns.edns
import dns.flags
import dns.message
import dns.name
import pytest

from conftest import LOG_LINE, TESTS, ZONES, Server, build_set
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

    def stats(self) -> dict:
        return json.loads(subprocess.run(
            [str(self.binary), "stats", "--control", str(self.control)], capture_output=True,
            text=True, timeout=10, check=True).stdout)


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
    other probe. Each with its own ID; and what each asks, for the messages."""
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
    assert len(queries) < 65536
    return queries, asked


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

