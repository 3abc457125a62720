"""Ethernet frames built octet by octet with `struct`, as the RFCs lay them out, for the AF_XDP
frame layer's tests (tests/unit/test_xdp_frame.py), its fuzz seeds (tests/fuzz/frame_seeds.py)
and the server's on the wire (tests/transport/test_xdp_server.py): the builders, a reference
Internet checksum (RFC 1071), the answer a frame must get, and the frames a server answers and
those it passes to the kernel or drops, each with its outcome."""

from __future__ import annotations

import struct

import dns.message

SERVER_MAC = bytes.fromhex("02000000aa01")
CLIENT_MAC = bytes.fromhex("02000000bb02")
SERVER_V4, CLIENT_V4 = bytes([192, 0, 2, 53]), bytes([198, 51, 100, 7])
SERVER_V6 = bytes.fromhex("20010db8000000000000000000000053")
CLIENT_V6 = bytes.fromhex("20010db8000000010000000000000007")
PORT, CLIENT_PORT = 53, 40123
ROOM, MTU = 2048, 1500  # a UMEM frame of 2048 octets less no headroom; Ethernet's MTU


def ones_sum(data: bytes) -> int:
    """RFC 1071's one's-complement sum of 16-bit big-endian words, an odd octet padded."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def checksum(data: bytes) -> int:
    return ~ones_sum(data) & 0xFFFF


def pseudo_header(src: bytes, dst: bytes, length: int) -> bytes:
    """RFC 768's for IPv4; RFC 8200 §8.1's for IPv6."""
    if len(src) == 4:
        return src + dst + struct.pack("!BBH", 0, 17, length)
    return src + dst + struct.pack("!I3xB", length, 17)


def udp(payload: bytes, src: bytes, dst: bytes, sport=CLIENT_PORT, dport=PORT, length=None,
        check=None) -> bytes:
    length = 8 + len(payload) if length is None else length
    header = struct.pack("!HHHH", sport, dport, length, 0)
    if check is None:
        check = checksum(pseudo_header(src, dst, 8 + len(payload)) + header + payload) or 0xFFFF
    return struct.pack("!HHHH", sport, dport, length, check) + payload


def ipv4(datagram: bytes, src=CLIENT_V4, dst=SERVER_V4, options=b"", proto=17, flags=0,
         ttl=57, total=None, ihl=None, version=4, bad_checksum=False) -> bytes:
    ihl = 5 + len(options) // 4 if ihl is None else ihl
    total = 20 + len(options) + len(datagram) if total is None else total
    header = struct.pack("!BBHHHBBH4s4s", version << 4 | ihl, 0x2E, total, 0x1234, flags, ttl,
                         proto, 0, src, dst) + options
    check = checksum(header) ^ (0x0100 if bad_checksum else 0)
    return header[:10] + struct.pack("!H", check) + header[12:] + datagram


def ipv6(payload: bytes, src=CLIENT_V6, dst=SERVER_V6, next_header=17, hop_limit=57,
         length=None, version=6) -> bytes:
    length = len(payload) if length is None else length
    first = version << 28 | 0xB8 << 20 | 0x12345  # traffic class, flow label: not echoed
    return struct.pack("!IHBB16s16s", first, length, next_header, hop_limit, src, dst) + payload


def ethernet(packet: bytes, ethertype: int, vlan: list[tuple[int, int]] = (),
             dst=SERVER_MAC, src=CLIENT_MAC) -> bytes:
    """Ethernet II; each VLAN tag (TPID, TCI) goes where the EtherType was (IEEE 802.1Q
    §9.3), the EtherType after the last."""
    tags = b"".join(struct.pack("!HH", tpid, tci) for tpid, tci in vlan)
    return dst + src + tags + struct.pack("!H", ethertype) + packet


def query(name="www.example.", rdtype="A", **kwargs) -> bytes:
    """A DNS query with a fixed ID, so that the same frames are built every time."""
    message = dns.message.make_query(name, rdtype, **kwargs)
    message.id = 0x2B67
    return message.to_wire()


def frame4(dns_message: bytes, vlan=(), options=b"", sport=CLIENT_PORT, dport=PORT,
           **ip) -> bytes:
    src, dst = ip.get("src", CLIENT_V4), ip.get("dst", SERVER_V4)
    return ethernet(ipv4(udp(dns_message, src, dst, sport, dport), options=options, **ip),
                    0x0800, list(vlan))


def frame6(dns_message: bytes, vlan=(), sport=CLIENT_PORT, dport=PORT, **ip) -> bytes:
    src, dst = ip.get("src", CLIENT_V6), ip.get("dst", SERVER_V6)
    return ethernet(ipv6(udp(dns_message, src, dst, sport, dport), **ip), 0x86DD, list(vlan))


def addresses_and_udp(frame: bytes, ip_at: int) -> tuple[bytes, bytes, int]:
    """The source and destination addresses of the IP packet at `ip_at`, and where its UDP
    header starts: behind IPv4's options, or IPv6's fixed header."""
    if frame[ip_at] >> 4 == 4:
        return (frame[ip_at + 12:ip_at + 16], frame[ip_at + 16:ip_at + 20],
                ip_at + (frame[ip_at] & 0xF) * 4)
    return frame[ip_at + 8:ip_at + 24], frame[ip_at + 24:ip_at + 40], ip_at + 40


def dns_of(frame: bytes, ip_at: int) -> bytes:
    """The DNS message in a frame's UDP datagram, as long as the UDP length says."""
    _, _, udp_at = addresses_and_udp(frame, ip_at)
    length, = struct.unpack("!H", frame[udp_at + 4:udp_at + 6])
    return frame[udp_at + 8:udp_at + length]


def turned_around(frame: bytes, ip_at: int, response: bytes) -> bytes:
    """What the answer to `frame` must be, computed here: MACs swapped, a fresh IP header
    (IPv4 without options: DSCP 0, ID 0, DF, TTL 64; IPv6: class and label 0, hop limit 64)
    with the addresses swapped, the UDP ports swapped, lengths and checksums."""
    eth = frame[6:12] + frame[0:6] + frame[12:ip_at]
    src, dst, udp_at = addresses_and_udp(frame, ip_at)
    sport, dport = struct.unpack("!HH", frame[udp_at:udp_at + 4])
    datagram = udp(response, dst, src, sport=dport, dport=sport)
    if len(src) == 4:
        header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(datagram), 0, 0x4000, 64, 17,
                             0, dst, src)
        header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    else:
        header = struct.pack("!IHBB16s16s", 6 << 28, len(datagram), 17, 64, dst, src)
    return eth + header + datagram


C_TAG, S_TAG = 0x8100, 0x88A8
OPTIONS = {  # RFC 791 §3.1 options a query may carry: read past, none in the response
    "nop-eol": b"\x01\x01\x01\x00",
    "record-route": b"\x07\x07\x04" + bytes(4) + b"\x00",
    "timestamp": b"\x44\x0c\x05\x00" + bytes(8),
    "router-alert": b"\x94\x04\x00\x00",
    "forty-octets": b"\x07\x27\x04" + bytes(36) + b"\x00",
}
# Queries a server answers, each with the offset of its IP header.
ANSWERED = {
    "ipv4": (frame4(query()), 14),
    "ipv4-vlan": (frame4(query(), vlan=[(C_TAG, 0x2064)]), 18),
    "ipv4-s-tag": (frame4(query(), vlan=[(S_TAG, 0x0005)]), 18),
    "ipv6": (frame6(query()), 14),
    "ipv6-vlan": (frame6(query(), vlan=[(C_TAG, 0xE00A)]), 18),
    "ipv4-edns": (frame4(query(use_edns=0, payload=4096, want_dnssec=True)), 14),
    **{f"ipv4-options-{name}": (frame4(query(), options=o), 14) for name, o in OPTIONS.items()},
    "ipv4-vlan-options": (frame4(query(), vlan=[(C_TAG, 7)], options=OPTIONS["nop-eol"]), 18),
    "ipv4-df": (frame4(query(), flags=0x4000), 14),
    "ipv4-udp-checksum-none": (ethernet(ipv4(udp(query(), CLIENT_V4, SERVER_V4, check=0)),
                                        0x0800), 14),
}

Q = query()
V4_OK = ipv4(udp(Q, CLIENT_V4, SERVER_V4))
V6_OK = ipv6(udp(Q, CLIENT_V6, SERVER_V6))


def v4_udp(datagram: bytes, **ip) -> bytes:
    return ethernet(ipv4(datagram, **ip), 0x0800)


def v6_udp(datagram: bytes, **ip) -> bytes:
    return ethernet(ipv6(datagram, **ip), 0x86DD)


# Each with its outcome: "pass" (the kernel's) or "drop".
NOT_ANSWERED = {
    # Ethernet and VLAN (IEEE 802.3, 802.1Q)
    "empty": (b"", "drop"),
    "short-ethernet": (frame4(Q)[:13], "drop"),
    "ethernet-alone": (frame4(Q)[:14], "drop"),
    "broadcast-mac": (ethernet(V4_OK, 0x0800, dst=b"\xff" * 6), "pass"),
    "multicast-mac": (ethernet(V6_OK, 0x86DD, dst=bytes.fromhex("333300000001")), "pass"),
    "group-source-mac": (ethernet(V4_OK, 0x0800, src=bytes.fromhex("010203040506")), "drop"),
    "arp": (ethernet(bytes(28), 0x0806), "pass"),
    "ieee-802.3-length": (ethernet(V4_OK, len(V4_OK)), "pass"),
    "vlan-cut-short": (frame4(Q, vlan=[(C_TAG, 1)])[:16], "drop"),
    "vlan-then-nothing": (frame4(Q, vlan=[(C_TAG, 1)])[:18], "drop"),
    "vlan-arp": (ethernet(bytes(28), 0x0806, [(C_TAG, 1)]), "pass"),
    "two-vlan-tags": (ethernet(V4_OK, 0x0800, [(S_TAG, 1), (C_TAG, 2)]), "pass"),
    # IPv4 (RFC 791, RFC 1122)
    "ipv4-short": (frame4(Q)[:14 + 19], "drop"),
    "ipv4-version-6": (v4_udp(udp(Q, CLIENT_V4, SERVER_V4), version=6), "drop"),
    "ipv4-ihl-4": (v4_udp(udp(Q, CLIENT_V4, SERVER_V4), ihl=4), "drop"),
    "ipv4-ihl-past-total": (v4_udp(b"", ihl=15), "drop"),
    "ipv4-total-past-frame": (frame4(Q)[:-1], "drop"),
    "ipv4-total-under-header": (v4_udp(udp(Q, CLIENT_V4, SERVER_V4), total=19), "drop"),
    "ipv4-bad-header-checksum": (v4_udp(udp(Q, CLIENT_V4, SERVER_V4), bad_checksum=True),
                                 "drop"),
    "ipv4-more-fragments": (v4_udp(udp(Q, CLIENT_V4, SERVER_V4), flags=0x2000), "pass"),
    "ipv4-fragment-offset": (v4_udp(Q, flags=0x0001), "pass"),
    "ipv4-last-fragment": (v4_udp(Q, flags=0x4000 | 0x00B9), "pass"),
    "ipv4-tcp": (v4_udp(bytes(20), proto=6), "pass"),
    "ipv4-icmp": (v4_udp(bytes(8), proto=1), "pass"),
    "ipv4-loose-source-route": (frame4(Q, options=b"\x83\x07\x04" + bytes(4) + b"\x00"),
                                "pass"),
    "ipv4-strict-source-route": (frame4(Q, options=b"\x01\x89\x07\x04" + bytes(4)), "pass"),
    "ipv4-option-length-0": (frame4(Q, options=b"\x07\x00\x00\x00"), "drop"),
    "ipv4-option-length-1": (frame4(Q, options=b"\x07\x01\x00\x00"), "drop"),
    "ipv4-option-past-header": (frame4(Q, options=b"\x01\x07\x08\x00"), "drop"),
    "ipv4-option-type-alone": (frame4(Q, options=b"\x01\x01\x01\x07"), "drop"),
    "ipv4-source-zero": (frame4(Q, src=bytes(4)), "drop"),
    "ipv4-source-loopback": (frame4(Q, src=bytes([127, 0, 0, 1])), "drop"),
    "ipv4-source-multicast": (frame4(Q, src=bytes([224, 0, 0, 1])), "drop"),
    "ipv4-source-broadcast": (frame4(Q, src=b"\xff" * 4), "drop"),
    "ipv4-to-multicast": (frame4(Q, dst=bytes([224, 0, 0, 251])), "pass"),
    "ipv4-to-broadcast": (frame4(Q, dst=b"\xff" * 4), "pass"),
    # IPv6 (RFC 8200, RFC 4291)
    "ipv6-short": (frame6(Q)[:14 + 39], "drop"),
    "ipv6-version-4": (v6_udp(udp(Q, CLIENT_V6, SERVER_V6), version=4), "drop"),
    "ipv6-payload-past-frame": (frame6(Q)[:-1], "drop"),
    "ipv6-hop-by-hop": (v6_udp(b"\x11\x00" + bytes(6) + udp(Q, CLIENT_V6, SERVER_V6),
                               next_header=0), "pass"),
    "ipv6-routing": (v6_udp(b"\x11\x00" + bytes(6) + udp(Q, CLIENT_V6, SERVER_V6),
                            next_header=43), "pass"),
    "ipv6-fragment": (v6_udp(b"\x11\x00\x00\x01" + bytes(4) + udp(Q, CLIENT_V6, SERVER_V6),
                             next_header=44), "pass"),
    "ipv6-destination-options": (v6_udp(b"\x11\x00" + bytes(6) + udp(Q, CLIENT_V6, SERVER_V6),
                                        next_header=60), "pass"),
    "ipv6-tcp": (v6_udp(bytes(20), next_header=6), "pass"),
    "ipv6-icmp": (v6_udp(bytes(8), next_header=58), "pass"),
    "ipv6-source-unspecified": (frame6(Q, src=bytes(16)), "drop"),
    "ipv6-source-loopback": (frame6(Q, src=bytes(15) + b"\x01"), "drop"),
    "ipv6-source-multicast": (frame6(Q, src=bytes.fromhex("ff02" + "00" * 13 + "01")), "drop"),
    "ipv6-to-multicast": (frame6(Q, dst=bytes.fromhex("ff02" + "00" * 13 + "fb")), "pass"),
    # UDP (RFC 768, RFC 8200 §8.1)
    "udp-short": (v4_udp(udp(Q, CLIENT_V4, SERVER_V4)[:7]), "drop"),
    "udp-length-7": (v4_udp(udp(Q, CLIENT_V4, SERVER_V4, length=7)), "drop"),
    "udp-length-0": (v6_udp(udp(Q, CLIENT_V6, SERVER_V6, length=0)), "drop"),
    "udp-length-past-ip": (v4_udp(udp(Q, CLIENT_V4, SERVER_V4, length=8 + len(Q) + 1)), "drop"),
    "udp-other-port": (frame4(Q, dport=5353), "pass"),
    "udp-other-port-ipv6": (frame6(Q, dport=853), "pass"),
    "udp-source-port-0": (frame4(Q, sport=0), "drop"),
    **{f"udp-source-port-{p}": (frame6(Q, sport=p), "drop") for p in (7, 13, 17, 19, 37)},
    "udp-ipv6-no-checksum": (v6_udp(udp(Q, CLIENT_V6, SERVER_V6, check=0)), "drop"),
    "longer-than-room": (frame4(Q) + bytes(ROOM), "drop"),
}
