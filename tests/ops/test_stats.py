"""Statistics: a known mix of queries, then the exact counts from GET /metrics (Prometheus text)
and GET /stats.json, with one worker and with two; and the HTTP server under hostile clients,
which must neither crash nor stop the DNS service."""

from __future__ import annotations

import json
import re
import signal
import socket
import struct
import subprocess
import time

import dns.message
import dns.rcode
import pytest

from conftest import AS_ROOT, ZONES, Server, build_set
from zonebake import __version__

LONG = 5.0  # seconds to wait for something that must happen (bounds every loop here)
# What the test set's server says it serves: the version that built it, each zone's serial.
SERVED = {f'zonebake_build_info{{version="{__version__}"}}': 1,
          'zonebake_zone_serial{zone="example."}': 42,
          'zonebake_zone_serial{zone="example.net."}': 7}
METRICS = re.compile(r"statistics on http://([\d.]+):(\d+)/metrics")


class StatsServer(Server):
    """A zonebake-server with --metrics on an ephemeral port."""

    def __init__(self, binary, *args):
        super().__init__(binary, "--metrics", "127.0.0.1:0", *args)
        banner = self._read_line(timeout=5)
        match = METRICS.search(banner)
        assert match, f"no metrics address in {banner!r}"
        self.metrics = (match.group(1), int(match.group(2)))


def http(address, request: bytes) -> tuple[int, dict, bytes]:
    """Send a raw request; return the status, headers and body of the response."""
    with socket.create_connection(address, timeout=LONG) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    assert lines[0].startswith("HTTP/1.0 ")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return status, headers, body


def get(server, path: str) -> tuple[int, dict, bytes]:
    return http(server.metrics, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())


def prometheus(server) -> dict[str, int]:
    """The samples of GET /metrics, by `name{labels}`; checks every one is declared."""
    status, headers, body = get(server, "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert int(headers["Content-Length"]) == len(body)
    samples, declared = {}, set()
    for line in body.decode().splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert kind in ("counter", "gauge")
            declared.add(name)
        elif not line.startswith("# HELP "):
            key, value = line.rsplit(" ", 1)
            assert key.split("{")[0] in declared
            samples[key] = int(value)
    return samples


def stats_json(server) -> dict:
    status, headers, body = get(server, "/stats.json")
    assert status == 200 and headers["Content-Type"] == "application/json"
    return json.loads(body)


def udp(server, wire: bytes, sock: socket.socket | None = None) -> bytes:
    own = sock is None
    sock = sock or socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.settimeout(2)
        sock.sendto(wire, server.address)
        return sock.recv(65535)
    finally:
        if own:
            sock.close()


def make(qname: str, qtype: str = "A", **kwargs) -> bytes:
    return dns.message.make_query(qname, qtype, use_edns=kwargs.pop("use_edns", False),
                                  **kwargs).to_wire()


def rcode_of(wire: bytes) -> int:
    return dns.message.from_wire(wire).rcode()


def send_the_mix(server) -> None:
    """Every query from its own socket (so SO_REUSEPORT spreads them over the workers), but
    the dropped ones and the query after them share one: it is answered after they are
    counted."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        query = make("www.example.")
        for dropped in (b"\x00" * 5, query[:11], query[:2] + b"\x81\x00" + query[4:],
                        query + b"\x00" * 3000):  # short, short, QR=1, over 2048 octets
            sock.sendto(dropped, server.address)
        assert rcode_of(udp(server, make("www.example."), sock)) == dns.rcode.NOERROR
    for _ in range(6):
        assert rcode_of(udp(server, make("www.example."))) == dns.rcode.NOERROR
    for i in range(5):
        wire = udp(server, make(f"nope{i}.example.", "MX", use_edns=0))
        assert rcode_of(wire) == dns.rcode.NXDOMAIN
    wire = udp(server, make("big.example.", "TXT"))
    assert struct.unpack("!H", wire[2:4])[0] & 0x0200  # TC
    two_questions = query[:5] + b"\x02" + query[6:] + query[12:]
    assert udp(server, two_questions)[2:12] == b"\x81\x01" + bytes(8)  # FORMERR, header only
    with_answer = query[:7] + b"\x01" + query[8:]
    assert rcode_of(udp(server, with_answer)) == dns.rcode.FORMERR
    assert rcode_of(udp(server, make("www.example.", use_edns=1))) == dns.rcode.BADVERS
    assert rcode_of(udp(server, make("www.example.", "AXFR"))) == dns.rcode.NOTIMP
    assert rcode_of(udp(server, make("www.example.org.", "CAA"))) == dns.rcode.REFUSED

    with socket.create_connection(server.address, timeout=LONG) as sock:
        for wire in (make("www.example.", "AAAA"), make("www.example.", "AAAA"),
                     make("id.server.", "TXT", rdclass="CH"), make("big.example.", "TXT")):
            sock.sendall(struct.pack("!H", len(wire)) + wire)
            (length,) = struct.unpack("!H", recv_exactly(sock, 2))
            response = dns.message.from_wire(recv_exactly(sock, length))
            assert response.rcode() == dns.rcode.NOERROR and not response.flags & 0x0200


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "connection closed early"
        data += chunk
    return data


EXPECTED = {
    "queries": {"udp": 22, "tcp": 4},
    "responses": {"NOERROR": 12, "FORMERR": 2, "SERVFAIL": 0, "NXDOMAIN": 5, "NOTIMP": 1,
                  "REFUSED": 1, "YXDOMAIN": 0, "NOTAUTH": 0, "BADVERS": 1, "other": 0},
    # The FORMERR for two questions has no question to count.
    "qtypes": {"A": 9, "NS": 0, "CNAME": 0, "SOA": 0, "PTR": 0, "MX": 5, "TXT": 3, "AAAA": 2,
               "SRV": 0, "DS": 0, "DNSKEY": 0, "HTTPS": 0, "SVCB": 0, "CAA": 1, "ANY": 0,
               "other": 1},
    "truncated": 1,
    "dropped": 4,
    "edns": 6,  # five NXDOMAIN queries and the BADVERS one
    "tcp_accepted": 1,
    "tcp_closed": {"other": 1, "idle": 0, "capped": 0},
    "rrl_dropped": 0,
    "rrl_slipped": 0,
    "xdp_queries": 0,
}
LABELS = {"queries": ("zonebake_queries_total", "transport"),
          "responses": ("zonebake_responses_total", "rcode"),
          "qtypes": ("zonebake_query_types_total", "qtype"),
          "truncated": ("zonebake_truncated_total", None),
          "dropped": ("zonebake_dropped_total", None),
          "edns": ("zonebake_edns_queries_total", None),
          "tcp_accepted": ("zonebake_tcp_accepted_total", None),
          "tcp_closed": ("zonebake_tcp_closed_total", "reason"),
          "rrl_dropped": ("zonebake_rrl_dropped_total", None),
          "rrl_slipped": ("zonebake_rrl_slipped_total", None),
          "xdp_queries": ("zonebake_xdp_queries_total", None)}


def as_samples(counts: dict) -> dict[str, int]:
    samples = {}
    for key, value in counts.items():
        metric, label = LABELS[key]
        if label is None:
            samples[metric] = value
        else:
            samples.update({f'{metric}{{{label}="{k}"}}': v for k, v in value.items()})
    return samples


def wait_until(condition, what: str):
    deadline = time.monotonic() + LONG
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.05)
    raise AssertionError(f"not within {LONG} s: {what}")


def sum_workers(workers: list[dict]) -> dict:
    total = {}
    for worker in workers:
        for key, value in worker.items():
            if isinstance(value, dict):
                group = total.setdefault(key, {})
                for k, v in value.items():
                    group[k] = group.get(k, 0) + v
            else:
                total[key] = total.get(key, 0) + value
    return total


@pytest.mark.parametrize("threads", [1, 2])
def test_exact_counts_of_a_known_mix(testset_binary, threads):
    server = StatsServer(testset_binary, "--threads", str(threads))
    try:
        assert all(v == 0 for k, v in prometheus(server).items()
                   if k != "zonebake_workers" and k not in SERVED)
        send_the_mix(server)
        # The server closes its side of the TCP connection once it has read the client's FIN.
        stats = wait_until(lambda: (s := stats_json(server))["tcp_closed"]["other"] == 1 and s,
                           "the TCP connection counted as closed")
        assert {k: v for k, v in stats.items() if k not in ("workers", "swaps")} == EXPECTED
        assert stats["swaps"] == 0
        assert len(stats["workers"]) == threads
        assert sum_workers(stats["workers"]) == EXPECTED
        samples = prometheus(server)
        assert samples == {**as_samples(EXPECTED), "zonebake_swaps_total": 0,
                           "zonebake_workers": threads, **SERVED}
    finally:
        server.stop()


def test_tcp_idle_and_capped_closes_are_counted(testset_binary):
    server = StatsServer(testset_binary, "--threads", "1", "--tcp-idle-timeout", "1",
                         "--tcp-max-connections", "1")
    try:
        first = socket.create_connection(server.address, timeout=LONG)
        wait_until(lambda: stats_json(server)["tcp_accepted"] == 1, "first accepted")
        second = socket.create_connection(server.address, timeout=LONG)  # the cap: first goes
        stats = wait_until(lambda: (s := stats_json(server))["tcp_closed"]["idle"] == 1 and s,
                           "the second connection closed for idleness")
        assert stats["tcp_accepted"] == 2
        assert stats["tcp_closed"] == {"other": 0, "idle": 1, "capped": 1}
        first.close()
        second.close()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def stats_server(testset_binary):
    server = StatsServer(testset_binary, "--threads", "2")
    yield server
    alive = server.alive()
    server.stop()
    assert alive, "the server died under hostile HTTP clients"


@pytest.mark.parametrize("request_bytes,status", [
    (b"POST /metrics HTTP/1.0\r\n\r\n", 405),
    (b"DELETE /stats.json HTTP/1.1\r\n\r\n", 405),
    (b"GET /nothing HTTP/1.0\r\n\r\n", 404),
    (b"GET /metricsx HTTP/1.0\r\n\r\n", 404),
    (b"GET /metrics\r\n\r\n", 400),  # HTTP/0.9: no version
    (b"GET metrics HTTP/1.0\r\n\r\n", 400),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),  # TLS hello-ish
    (b"GET /metrics HTTP/1.0\x00\r\n\r\n", 400),
    (b"\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.0\r\nX: " + b"a" * 10000 + b"\r\n\r\n", 431),
])
def test_junk_requests_get_an_error_status(stats_server, request_bytes, status):
    got, headers, body = http(stats_server.metrics, request_bytes)
    assert got == status
    assert int(headers["Content-Length"]) == len(body)
    if status == 405:
        assert headers["Allow"] == "GET, HEAD"


def test_head_and_query_strings(stats_server):
    status, headers, body = http(stats_server.metrics, b"HEAD /metrics HTTP/1.0\r\n\r\n")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0
    status, _, body = get(stats_server, "/stats.json?pretty=1")
    assert status == 200 and "queries" in json.loads(body)


def test_request_end_without_carriage_returns(stats_server):
    status, _, body = http(stats_server.metrics, b"GET /stats.json HTTP/1.0\n\n")
    assert status == 200 and json.loads(body)["swaps"] == 0


def test_clients_that_go_away_or_stall(stats_server):
    """A client that connects and leaves, one that half-sends and stalls (slowloris): the
    stalled one is cut off within the time limit, DNS answers meanwhile, scrapes work after."""
    socket.create_connection(stats_server.metrics, timeout=LONG).close()
    with socket.create_connection(stats_server.metrics, timeout=LONG) as stalled:
        stalled.sendall(b"GET /metr")
        response = stats_server.query("www.example.")
        assert response.rcode() == dns.rcode.NOERROR and len(response.answer) == 1
        stalled.settimeout(LONG)
        started = time.monotonic()
        assert stalled.recv(100) == b""  # closed without an answer
        assert time.monotonic() - started < LONG
    assert get(stats_server, "/metrics")[0] == 200


def test_request_cut_short(stats_server):
    """The client ends its side before the headers end: no answer, the connection closed."""
    with socket.create_connection(stats_server.metrics, timeout=LONG) as sock:
        sock.sendall(b"GET /metrics HTTP/1.0\r\nHost")
        sock.shutdown(socket.SHUT_WR)
        assert sock.recv(100) == b""
    assert get(stats_server, "/metrics")[0] == 200


def test_sigterm_with_a_stalled_metrics_client(testset_binary):
    server = StatsServer(testset_binary, "--threads", "2")
    stalled = socket.create_connection(server.metrics, timeout=LONG)
    try:
        stalled.sendall(b"GET /")
        time.sleep(0.1)  # let the metrics thread take it
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=LONG) == 0
        assert "stopped" in server._read_line(timeout=1)
    finally:
        stalled.close()
        server.stop()


def test_bad_metrics_address_is_refused(testset_binary):
    import subprocess
    result = subprocess.run([str(testset_binary), *AS_ROOT, "--listen", "127.0.0.1:0",
                             "--metrics", "localhost:9153"], capture_output=True, text=True,
                            timeout=LONG)
    assert result.returncode == 1 and "bad --metrics address" in result.stderr


def test_a_signed_zones_first_expiry_is_logged_and_exported(tmp_path):
    """The earliest signature expiration of each signed zone, at start-up and in /metrics:
    a zone not re-signed in time fails validation everywhere."""
    signed = ZONES / "signed" / "example.nsec.zone"  # every signature until 2036-12-31
    binary = build_set(tmp_path, "--zone", f"example.={signed}")
    server = StatsServer(binary)
    try:
        logged = server._read_line(timeout=5)
        assert "first signature to expire: example., at 2036-12-31T00:00:00Z (in " in logged
        samples = prometheus(server)
        assert samples['zonebake_zone_signatures_expire_timestamp_seconds{zone="example."}'] \
            == 2114294400
    finally:
        server.stop()
    # --version (and the control socket's status) say it too: a re-signed build keeps its
    # serial, and `zonebake follow` tells it from the one served by the expiry.
    shown = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                           timeout=10)
    assert shown.stdout.splitlines()[1:] == ["example. serial 2026112501 expires 2114294400"]


def test_a_zone_served_with_expired_signatures_reports_them(tmp_path):
    """--lenient serves a zone whose signatures have expired (issue 37): the server warns of
    it at start-up, and /metrics has the expiry, as for any signed zone."""
    expired = ZONES / "broken" / "signed-expired.zone"  # every signature until 2020-02-01
    binary = build_set(tmp_path, "--lenient", "--zone", f"example.={expired}")
    server = StatsServer(binary)
    try:
        logged = server._read_line(timeout=5)
        assert logged.endswith("warning: signatures of example. expired at "
                               "2020-02-01T00:00:00Z: validating resolvers reject its answers")
        samples = prometheus(server)
        assert samples['zonebake_zone_signatures_expire_timestamp_seconds{zone="example."}'] \
            == 1580515200
    finally:
        server.stop()



def test_version_names_the_build_and_each_zones_serial(testset_binary):
    """`--version` and /metrics say what a node serves: a fleet's convergence is checked
    without a query per zone (zonebake_zone_serial also in test_exact_counts_of_a_known_mix)."""
    shown = subprocess.run([str(testset_binary), "--version"], capture_output=True, text=True,
                           timeout=10)
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout == (f"zonebake-server {__version__}\nexample. serial 42\n"
                            f"example.net. serial 7\n")


def test_a_trickling_http_client_holds_the_thread_a_second_at_most(stats_server):
    """One connection at a time: a client sending a byte every 0.2 s is cut off within the
    whole connection's second, and the next scrape is answered."""
    started = time.monotonic()
    with socket.create_connection(stats_server.metrics, timeout=LONG) as slow:
        slow.settimeout(0.2)
        closed = False
        while not closed and time.monotonic() - started < 5:  # bounded
            try:
                slow.sendall(b"G")
                closed = slow.recv(4096) == b""
            except socket.timeout:
                pass
            except (ConnectionResetError, BrokenPipeError):
                closed = True
    took = time.monotonic() - started
    assert closed and took < 1.5, took
    status, _, _ = get(stats_server, "/metrics")
    assert status == 200
