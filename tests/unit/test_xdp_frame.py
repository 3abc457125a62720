"""The AF_XDP path's frame layer (runtime/transport/xdp/frame.h): frames built octet by octet
with `struct` (tests/frames.py) are read by the C layer (tests/c/xdp_frame.c), each getting the
exact outcome its rule says (answer, the kernel's, dropped), and the frames it answers are
turned around as this file computes them independently: addresses and ports swapped, lengths, the
IPv4 header checksum and the UDP checksum (RFC 768, RFC 791, RFC 1071, RFC 8200). With the
request handler linked in, a response is no larger than the MTU lets it be. Under
ZONEBAKE_SANITIZE=1 the harness runs with ASan and UBSan, every frame in a buffer of exactly
its room, so that any read or write past it is a finding."""

from __future__ import annotations

import os
import random
import struct
import subprocess

import dns.flags
import dns.message
import pytest

from conftest import ROOT, TESTS, data_beside, run_zonebake
from frames import (ANSWERED, CLIENT_PORT, CLIENT_V4, CLIENT_V6, MTU, NOT_ANSWERED, PORT,
                    Q, ROOM, SERVER_V4, frame4, frame6, ones_sum, pseudo_header, query,
                    turned_around, udp, v4_udp)

# ---- the harness ----


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> str:
    """tests/c/xdp_frame.c with the frame layer, the request handler and tests/zones'
    zone set (its `big` TXT answer is 644 octets), sanitized in the second pass."""
    work = tmp_path_factory.mktemp("xdp_frame")
    result = run_zonebake("build", "-c", str(TESTS / "zones" / "testset.toml"), "-o",
                          str(work))
    assert result.returncode == 0, result.stderr
    data_beside(work)
    flags = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
             "-fno-sanitize-recover=all"] if os.environ.get("ZONEBAKE_SANITIZE") else ["-O2"]
    runtime = ROOT / "runtime"
    binary = work / "xdp_frame"
    subprocess.run(["cc", "-std=gnu11", "-pthread", "-Wall", "-Wextra", "-Werror", *flags,
                    f"-I{runtime}", f"-Wa,-I{work}", str(TESTS / "c" / "xdp_frame.c"),
                    str(runtime / "transport" / "xdp" / "frame.c"),
                    *map(str, sorted((runtime / "query").glob("*.c"))),
                    str(work / "zonedata.c"), "-o", str(binary)], check=True)
    return str(binary)


def run(harness: str, mode: str, lines: list[str]) -> list[str]:
    out = subprocess.run([harness, mode], input="".join(line + "\n" for line in lines),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(lines)
    return out


def parse(harness, frames: list[bytes], room=ROOM, mtu=MTU, port=PORT) -> list[str]:
    return run(harness, "parse", [f"{len(f) if room is None else room} {mtu} {port} "
                                  f"{f.hex() or '-'}" for f in frames])


def answer(harness, frame: bytes, response: bytes, room=ROOM, mtu=MTU) -> bytes:
    line, = run(harness, "answer", [f"{room} {mtu} {PORT} {frame.hex()} {response.hex()}"])
    length, _, data = line.partition(" ")
    out = bytes.fromhex(data)
    assert int(length) == len(out), line
    return out


# ---- the checksum ----

def test_the_sum_is_rfc_1071s_example_and_pythons(harness):
    """RFC 1071 §3's example sums to ddf2; random octets, odd lengths included, sum as the
    reference does, and summing in two pieces split at any even offset gives the same."""
    rng = random.Random(1071)
    data = [bytes.fromhex("0001f203f4f5f6f7"), b"", b"\xff", b"\xff\xff\xff\xff",
            b"\x00" * 9] + [rng.randbytes(n) for n in list(range(1, 80)) + [1471, 1472, 9000]]
    out = run(harness, "sum", [d.hex() for d in data])
    assert out[0] == "ddf2"
    for d, line in zip(data, out):
        assert line == f"{ones_sum(d):04x}", d.hex()


# ---- frames answered ----

def verify_independently(out: bytes, ip_at: int) -> None:
    """The checksums as a receiver checks them: the IPv4 header sums to 0xffff, the UDP
    datagram with its pseudo-header too, its checksum never 0."""
    if out[ip_at] >> 4 == 4:
        header = out[ip_at:ip_at + 20]
        assert ones_sum(header) == 0xFFFF
        src, dst, datagram = header[12:16], header[16:20], out[ip_at + 20:]
        assert struct.unpack("!H", header[2:4])[0] == 20 + len(datagram)
    else:
        src, dst, datagram = out[ip_at + 8:ip_at + 24], out[ip_at + 24:ip_at + 40], out[ip_at + 40:]
        assert struct.unpack("!H", out[ip_at + 4:ip_at + 6])[0] == len(datagram)
    assert struct.unpack("!H", datagram[4:6])[0] == len(datagram)
    assert datagram[6:8] != b"\0\0"
    assert ones_sum(pseudo_header(src, dst, len(datagram)) + datagram) == 0xFFFF


@pytest.mark.parametrize("name", ANSWERED)
def test_a_query_is_found_and_its_peer_named(harness, name):
    frame, ip_at = ANSWERED[name]
    v6 = frame[ip_at] >> 4 == 6
    udp_at = ip_at + (40 if v6 else (frame[ip_at] & 0xF) * 4)
    dns_len = struct.unpack("!H", frame[udp_at + 4:udp_at + 6])[0] - 8
    peer = (CLIENT_V6 if v6 else CLIENT_V4).hex()
    max_udp = min(MTU - (40 if v6 else 20) - 8, ROOM - (udp_at + 8))
    assert parse(harness, [frame]) == [f"answer {ip_at} {udp_at} {udp_at + 8} {dns_len} "
                                       f"{max_udp} {'inet6' if v6 else 'inet'} {peer} "
                                       f"{CLIENT_PORT}"]


@pytest.mark.parametrize("name", ANSWERED)
@pytest.mark.parametrize("size", [12, 13, 61, 300, 1024, "max"])
def test_the_response_goes_back_octet_by_octet(harness, name, size):
    """Responses of even and odd lengths, up to the largest the frame carries, checked
    against the frame built here and by a receiver's checks."""
    frame, ip_at = ANSWERED[name]
    v6 = frame[ip_at] >> 4 == 6
    if size == "max":
        ip_len = 40 if v6 else (frame[ip_at] & 0xF) * 4
        size = min(MTU - (40 if v6 else 20) - 8, ROOM - (ip_at + ip_len + 8))
    response = random.Random(size).randbytes(size)
    out = answer(harness, frame, response)
    assert out == turned_around(frame, ip_at, response)
    verify_independently(out, ip_at)
    assert len(out) - ip_at <= MTU


def test_a_checksum_that_comes_to_zero_is_sent_as_ffff(harness):
    """RFC 768: a computed checksum of 0 goes as all ones (0 says "none")."""
    for make, ip_at in ((frame4, 14), (frame6, 14)):
        frame = make(query())
        # The sum of the response's pseudo-header and datagram with a last word of 0; that
        # word made its complement brings the sum to 0xffff, the checksum to 0.
        base = bytes(32)
        zero = turned_around(frame, ip_at, base)
        udp_at = len(zero) - len(base) - 8
        src, dst = (zero[ip_at + 12:ip_at + 16], zero[ip_at + 16:ip_at + 20]) \
            if make is frame4 else (zero[ip_at + 8:ip_at + 24], zero[ip_at + 24:ip_at + 40])
        datagram = zero[udp_at:udp_at + 6] + b"\0\0" + base
        folded = ones_sum(pseudo_header(src, dst, len(datagram)) + datagram)
        response = bytes(30) + struct.pack("!H", 0xFFFF - folded)
        out = answer(harness, frame, response)
        assert out[udp_at + 6:udp_at + 8] == b"\xff\xff"
        verify_independently(out, ip_at)


def test_a_response_over_the_room_is_not_sent(harness):
    frame = frame4(query())
    assert answer(harness, frame, bytes(MTU - 28 + 1)) == b""
    assert answer(harness, frame, b"") == b""


# ---- the size rule ----

@pytest.mark.parametrize("make, mtu, room, expected", [
    (frame4, 1500, 2048, 1472),       # the MTU less 20 + 8
    (frame6, 1500, 2048, 1452),       # less 40 + 8
    (frame6, 1280, 2048, 1232),       # IPv6's minimum MTU (RFC 8200 §5)
    (frame4, 576, 2048, 548),         # every IPv4 host's (RFC 791)
    (frame4, 9000, 2048, 2048 - 42),  # a jumbo MTU: the frame is the bound
    (frame4, 9000, 4096, 4096 - 42),
    (frame6, 65536, 65536 + 4096, 65535 - 48),  # loopback's: within the 16-bit lengths
    (frame4, 540, 2048, 512),
    (frame4, 539, 2048, "pass"),      # not 512 octets: the kernel's sockets answer it
    (frame4, 1500, 553, "pass"),      # a frame with no room for 512
    (frame4, 1500, 554, 512),
])
def test_the_largest_response_is_what_mtu_and_frame_carry(harness, make, mtu, room, expected):
    line, = parse(harness, [make(query())], room=room, mtu=mtu)
    assert line.split()[5 if expected != "pass" else 0] == str(expected)


def test_a_query_needs_its_slack_in_the_frame(harness):
    """The handler reads ZB_QUERY_SLACK (16) octets past a query: a query that ends closer
    to the frame's end goes to the kernel."""
    message = query() + bytes(1900 - len(query()))  # trailing junk: the handler's concern
    frame = frame4(message)
    assert parse(harness, [frame], room=len(frame) + 16)[0].startswith("answer")
    assert parse(harness, [frame], room=len(frame) + 15) == ["pass"]


@pytest.mark.parametrize("make, mtu, edns, tc", [
    (frame4, 1500, 4096, False),  # 644 octets and the OPT fit 1472
    (frame4, 576, 4096, True),    # not 548
    (frame6, 1280, 4096, False),  # 1232
    (frame4, 1500, None, True),   # no EDNS: 512 (RFC 1035 §4.2.1), as on the socket path
])
def test_the_handler_keeps_to_the_mtu(harness, make, mtu, edns, tc):
    """`big.example TXT` through the request handler with the frame's max_udp: the whole
    answer where it fits, TC where the MTU does not carry it, whatever the client's size."""
    message = query("big.example.", "TXT", use_edns=0, payload=edns) if edns else \
        query("big.example.", "TXT", use_edns=False)
    frame = make(message)
    line, = run(harness, "respond", [f"{ROOM} {mtu} {PORT} {frame.hex()}"])
    length, _, data = line.partition(" ")
    out = bytes.fromhex(data)
    verify_independently(out, 14)
    ip_len = 40 if make is frame6 else 20
    assert len(out) - 14 <= mtu
    response = dns.message.from_wire(out[14 + ip_len + 8:])
    assert bool(response.flags & dns.flags.TC) == tc
    assert len(response.answer) == (0 if tc else 1)
    assert response.id == dns.message.from_wire(message).id


# ---- frames not answered ----

@pytest.mark.parametrize("name", NOT_ANSWERED)
def test_a_frame_not_ours_or_malformed_gets_its_outcome(harness, name):
    """In a buffer of exactly its length (nothing past it to read) and in a whole frame's
    room: the same outcome."""
    frame, outcome = NOT_ANSWERED[name]
    if name != "longer-than-room":  # a room of its length holds it
        assert parse(harness, [frame], room=None) == [outcome]
    assert parse(harness, [frame]) == [outcome]


def test_every_prefix_of_an_answered_frame_is_dropped_or_passed(harness):
    """Cut anywhere short of its UDP length, a query is never answered."""
    for frame, _ in ANSWERED.values():
        prefixes = [frame[:n] for n in range(len(frame))]
        assert all(o in ("pass", "drop") for o in parse(harness, prefixes, room=None))


@pytest.mark.parametrize("port", [53, 64, 1024, 65535])
def test_other_source_ports_are_answered(harness, port):
    assert parse(harness, [frame4(Q, sport=port)])[0].endswith(f" {port}")


def test_lengths_are_the_udp_headers_and_padding_is_ignored(harness):
    """Ethernet pads a short frame to 60 octets: past the IP total length, ignored. A UDP
    length short of the IP payload is the datagram's (as Linux reads it)."""
    tiny = b"\x12\x34"  # shorter than a DNS header: the handler's to refuse
    padded = frame4(tiny) + bytes(60 - len(frame4(tiny)))
    assert parse(harness, [padded])[0].split()[:5] == ["answer", "14", "34", "42", "2"]
    inner = udp(Q, CLIENT_V4, SERVER_V4, length=8 + 12)
    assert parse(harness, [v4_udp(inner)])[0].split()[4] == "12"


def test_udp_checksums_are_not_verified_on_receipt(harness):
    """A sender on this host leaves the checksum for the NIC to finish: taken as it is."""
    wrong = udp(Q, CLIENT_V4, SERVER_V4, check=0x1234)
    assert parse(harness, [v4_udp(wrong)])[0].startswith("answer")
