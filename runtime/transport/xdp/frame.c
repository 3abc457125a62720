/*
 * frame.c - the layers of an AF_XDP frame, read and turned around in place (frame.h).
 *
 * Reading goes down the layers, each checked whole before the next is read, and never reads
 * past the frame's `len` octets. Three outcomes: a query to answer; the kernel's, for what
 * is not ours or what only the kernel can handle (fragments, extension headers, source
 * routes, group addresses); dropped, for what the kernel would discard as malformed anyway
 * and for sources no answer may go to. Fields that need no checking (DSCP, the IPv4 ID and
 * TTL, the flow label) are not read.
 *
 * The response gets a fresh IP header, as Knot's AF_XDP path writes one: IPv4 in 20 octets,
 * without the query's options (RFC 1122 §4.1.3.2 leaves them to the application, and a DNS
 * server has none to send; the response moves up behind the shorter header), or IPv6; TTL
 * or hop limit 64 rather than the query's. The UDP checksum is computed over IPv4 too, as
 * NSD's AF_XDP path does, where RFC 768 leaves it optional and Knot sends none: a response
 * damaged on the way is then discarded rather than believed.
 */
#include "transport/xdp/frame.h"

#include <string.h>

#include "query/wire.h"
#include "transport/udp.h"

#define ZB_ETH_LEN 14          /* destination, source, EtherType (IEEE 802.3 §3.1.1) */
#define ZB_VLAN_TAG_LEN 4      /* TPID and TCI (IEEE 802.1Q §9.3) */
#define ZB_ETHERTYPE_IPV4 0x0800
#define ZB_ETHERTYPE_IPV6 0x86DD
#define ZB_ETHERTYPE_VLAN 0x8100   /* a C-tag (IEEE 802.1Q) */
#define ZB_ETHERTYPE_QINQ 0x88A8   /* an S-tag (IEEE 802.1ad) */
#define ZB_IPV4_LEN 20         /* the header without options (RFC 791 §3.1) */
#define ZB_IPV6_LEN 40         /* the fixed header (RFC 8200 §3) */
#define ZB_UDP_LEN 8           /* RFC 768 */
#define ZB_PROTO_UDP 17
#define ZB_IPV4_MF 0x2000      /* more fragments (RFC 791 §3.1) */
#define ZB_IPV4_DF 0x4000      /* don't fragment */
#define ZB_IPV4_OFFSET 0x1fff  /* the fragment offset */
#define ZB_HOP_LIMIT 64        /* TTL and hop limit of a response: IANA's default, Linux's */

/* ---- the Internet checksum (RFC 1071) ---- */

/* Eight octets at a time into a 64-bit one's-complement sum: the carry out of each add goes
 * back in at the bottom (RFC 1071 §2(A)'s end-around carry, at 64 bits), one add and one
 * add-with-carry an 8-octet word. A sum modulo 2^64 - 1 is the same sum modulo 2^16 - 1,
 * since 2^16 - 1 divides 2^64 - 1: folding it later gives the 16-bit sum (RFC 1071 §2(C)).
 * The words are in the host's byte order, which the one's-complement sum does not mind
 * (RFC 1071 §2(B)) so long as each 16-bit word of the data stays whole: every piece summed
 * starts at an even offset. */
static inline uint64_t add_carry(uint64_t sum, uint64_t word)
{
	sum += word;
	return sum + (sum < word);
}

static inline uint64_t word_at(const uint8_t *data)
{
	uint64_t word;
	memcpy(&word, data, 8);
	return word;
}

/* Inlined where it is used here, so that the sums of a known length (an IPv4 header, the
 * addresses, the pseudo-header) come out as a few adds with no loop. */
static inline __attribute__((always_inline)) uint64_t sum_of(const uint8_t *data, size_t len,
							    uint64_t sum)
{
	for (; len >= 32; data += 32, len -= 32)
		sum = add_carry(add_carry(add_carry(add_carry(sum, word_at(data)), word_at(data + 8)),
					  word_at(data + 16)), word_at(data + 24));
	for (; len >= 8; data += 8, len -= 8)
		sum = add_carry(sum, word_at(data));
	/* The last octets as whole 16-bit words in the host's order, an odd last one as the
	 * first octet of a word padded with a zero (RFC 768, RFC 1071). */
	if (len & 4) {
		uint32_t x;
		memcpy(&x, data, 4);
		sum = add_carry(sum, x);
		data += 4;
	}
	if (len & 2) {
		uint16_t x;
		memcpy(&x, data, 2);
		sum = add_carry(sum, x);
		data += 2;
	}
	if (len & 1) {
		uint16_t x = 0;
		memcpy(&x, data, 1);
		sum = add_carry(sum, x);
	}
	return sum;
}

uint64_t zb_sum(const uint8_t *data, size_t len, uint64_t sum)
{
	return sum_of(data, len, sum);
}

static inline uint16_t fold(uint64_t sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32); /* at most 2^33 - 2 */
	sum = (sum & 0xffffffffu) + (sum >> 32); /* at most 2^32: the 16-bit folds take it */
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t zb_sum_fold(uint64_t sum)
{
	return fold(sum);
}

/* ---- reading ---- */

/* IEEE 802 §8.2: the first octet's low bit marks a group (multicast, broadcast) address. */
static int group_mac(const uint8_t *mac)
{
	return mac[0] & 1;
}

/* IPv4 sources no datagram may come from (RFC 1122 §3.2.1.3): "this network" 0/8, loopback
 * 127/8, a multicast group 224/4, the limited broadcast. The kernel discards them as
 * martians; an answer to one would go nowhere or to the wrong place. */
static int bad_ipv4_source(const uint8_t *a)
{
	return a[0] == 0 || a[0] == 127 || (a[0] & 0xf0) == 0xe0 ||
	       (a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255);
}

/* IPv4 destinations that are not one host's: a multicast group or the limited broadcast
 * (RFC 1112, RFC 919): we answer from the address asked, and a group address may not be
 * a source. The kernel's, whose sockets know what to do. */
static int group_ipv4(const uint8_t *a)
{
	return (a[0] & 0xf0) == 0xe0 || (a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255);
}

/* IPv6 sources no datagram may come from: the unspecified address (RFC 4291 §2.5.2), the
 * loopback address (§2.5.3), a multicast group (§2.7). */
static int bad_ipv6_source(const uint8_t *a)
{
	static const uint8_t zero[15];
	return a[0] == 0xff || (memcmp(a, zero, 15) == 0 && a[15] <= 1);
}

/* RFC 791 §3.1's options, between the fixed header and the header's end: each one octet
 * (End of Option List, No Operation) or type, length (at least 2, within the header) and
 * data. Returns ZB_FRAME_ANSWER when they are well formed and ask nothing of us; PASS for a
 * source route (LSRR 131, SSRR 137), which the kernel takes or refuses
 * (accept_source_route; RFC 1122 §3.2.1.8 has a reply go back along it, RFC 7126 §4.3-4.4
 * advises refusing it); DROP for options that run past the header. The rest (Record Route,
 * Timestamp, Router Alert, ...) is read past: the response carries none. */
static enum zb_frame_verdict read_ipv4_options(const uint8_t *option, const uint8_t *end)
{
	while (option < end) {
		uint8_t type = option[0];
		if (type == 0) /* End of Option List: padding to the header's end follows */
			return ZB_FRAME_ANSWER;
		if (type == 1) { /* No Operation */
			option++;
			continue;
		}
		if (end - option < 2 || option[1] < 2 || option[1] > end - option)
			return ZB_FRAME_DROP;
		if (type == 131 || type == 137)
			return ZB_FRAME_PASS;
		option += option[1];
	}
	return ZB_FRAME_ANSWER;
}

/* The IPv4 header at `ip`, `len` octets from it to the frame's end (RFC 791 §3.1). Sets
 * the UDP datagram's offset and length as the header says, and the peer's address. */
static enum zb_frame_verdict read_ipv4(const uint8_t *ip, size_t len, size_t *payload,
				       size_t *payload_len, struct zb_frame *f)
{
	if (len < ZB_IPV4_LEN || ip[0] >> 4 != 4)
		return ZB_FRAME_DROP;
	size_t header = (size_t)(ip[0] & 0xf) * 4, total = zb_get16(ip + 2);
	/* IHL counts the header's 32-bit words, at least 5; the total length covers header
	 * and data and may not run past the frame (what follows it is the link's padding). */
	if (header < ZB_IPV4_LEN || total < header || total > len)
		return ZB_FRAME_DROP;
	/* RFC 1122 §3.2.1.2: a host verifies the header checksum. A sender's kernel always
	 * computes it in full (no offload leaves it partial), so this drops only what was
	 * damaged on the way, for a few additions. */
	if (fold(sum_of(ip, header, 0)) != 0xffff)
		return ZB_FRAME_DROP;
	if (bad_ipv4_source(ip + 12))
		return ZB_FRAME_DROP;
	if (group_ipv4(ip + 16))
		return ZB_FRAME_PASS;
	/* A fragment (more to come, or not the first) is the kernel's to reassemble (RFC 791
	 * §3.2): the UDP header, the port included, is in the first one only. */
	if (zb_get16(ip + 6) & (ZB_IPV4_MF | ZB_IPV4_OFFSET))
		return ZB_FRAME_PASS;
	if (ip[9] != ZB_PROTO_UDP)
		return ZB_FRAME_PASS;
	enum zb_frame_verdict options = read_ipv4_options(ip + ZB_IPV4_LEN, ip + header);
	if (options != ZB_FRAME_ANSWER)
		return options;
	struct sockaddr_in *peer = (struct sockaddr_in *)&f->peer;
	*peer = (struct sockaddr_in){ .sin_family = AF_INET };
	memcpy(&peer->sin_addr, ip + 12, 4);
	f->ipv6 = 0;
	*payload = header;
	*payload_len = total - header;
	return ZB_FRAME_ANSWER;
}

/* The IPv6 header at `ip`, `len` octets from it to the frame's end (RFC 8200 §3). */
static enum zb_frame_verdict read_ipv6(const uint8_t *ip, size_t len, size_t *payload,
				       size_t *payload_len, struct zb_frame *f)
{
	if (len < ZB_IPV6_LEN || ip[0] >> 4 != 6)
		return ZB_FRAME_DROP;
	size_t data = zb_get16(ip + 4); /* the payload length: what follows the fixed header */
	if (data > len - ZB_IPV6_LEN)
		return ZB_FRAME_DROP;
	if (bad_ipv6_source(ip + 8))
		return ZB_FRAME_DROP;
	if (ip[24] == 0xff) /* a multicast destination (RFC 4291 §2.7) */
		return ZB_FRAME_PASS;
	/* UDP must be the next header. Any extension header, the Fragment header included,
	 * is the kernel's to process (RFC 8200 §4: in order, some of them by every node);
	 * answering past one would mean reading them all here. */
	if (ip[6] != ZB_PROTO_UDP)
		return ZB_FRAME_PASS;
	struct sockaddr_in6 *peer = (struct sockaddr_in6 *)&f->peer;
	*peer = (struct sockaddr_in6){ .sin6_family = AF_INET6 };
	memcpy(&peer->sin6_addr, ip + 8, 16);
	f->ipv6 = 1;
	*payload = ZB_IPV6_LEN;
	*payload_len = data;
	return ZB_FRAME_ANSWER;
}

/* The UDP header at `udp`, `len` octets of datagram behind it as the IP header says
 * (RFC 768). */
static enum zb_frame_verdict read_udp(const uint8_t *udp, size_t len,
				      const struct zb_frame_rules *rules, struct zb_frame *f)
{
	if (len < ZB_UDP_LEN)
		return ZB_FRAME_DROP;
	size_t length = zb_get16(udp + 4); /* header and data; what the IP layer has beyond it
					    * is ignored, as Linux does */
	if (length < ZB_UDP_LEN || length > len)
		return ZB_FRAME_DROP;
	if (zb_get16(udp + 2) != rules->port)
		return ZB_FRAME_PASS;
	unsigned source = zb_get16(udp);
	if (zb_unanswerable_port(source)) /* as the socket path (transport/udp.h) */
		return ZB_FRAME_DROP;
	/* Over IPv6 the checksum is mandatory: a datagram without one is discarded (RFC 8200
	 * §8.1). Checksums are not verified otherwise: a sender on this host (a container
	 * over a veth pair) hands the kernel datagrams whose checksum is left for a NIC to
	 * finish, which the kernel accepts on its own word and AF_XDP cannot tell apart from
	 * damaged ones; the frame has passed the link's CRC-32. Knot and NSD do the same. */
	if (f->ipv6 && udp[6] == 0 && udp[7] == 0)
		return ZB_FRAME_DROP;
	/* sin_port and sin6_port share their place (transport/udp.c asserts it). */
	((struct sockaddr_in *)&f->peer)->sin_port = htons((uint16_t)source);
	f->dns_len = (uint16_t)(length - ZB_UDP_LEN);
	return ZB_FRAME_ANSWER;
}

/* RFC 1122 §3.3.2 aside (we cannot fragment), the largest DNS response this frame carries:
 * within the interface's MTU behind the response's own IP and UDP headers, and within the
 * frame, written where the query is. A query needs ZB_QUERY_SLACK octets after it in the
 * frame (query/wire.h). 0 when the frame cannot hold a 512-octet response or that slack:
 * the kernel's sockets answer it. */
static uint16_t response_room(const struct zb_frame *f, const struct zb_frame_rules *rules)
{
	size_t headers = (f->ipv6 ? ZB_IPV6_LEN : ZB_IPV4_LEN) + ZB_UDP_LEN;
	size_t in_frame = rules->room > f->dns ? rules->room - f->dns : 0;
	size_t room = rules->mtu > headers ? rules->mtu - headers : 0;
	if (room > in_frame)
		room = in_frame;
	if (room > 0xffff - headers) /* the IPv4 total length, the UDP length */
		room = 0xffff - headers;
	if (room < ZB_UDP_PLAIN_MAX || (size_t)f->dns_len + ZB_QUERY_SLACK > in_frame)
		return 0;
	return (uint16_t)room;
}

enum zb_frame_verdict zb_frame_parse(const uint8_t *frame, size_t len,
				     const struct zb_frame_rules *rules, struct zb_frame *f)
{
	if (len > rules->room)
		return ZB_FRAME_DROP; /* no NIC writes past the frame: a caller's mistake */
	/* Ethernet II (IEEE 802.3 §3.2.6): only a frame to this host alone comes to us; a
	 * source is never a group address. */
	if (len < ZB_ETH_LEN)
		return ZB_FRAME_DROP;
	if (group_mac(frame))
		return ZB_FRAME_PASS;
	if (group_mac(frame + 6))
		return ZB_FRAME_DROP;
	size_t ip = ZB_ETH_LEN;
	unsigned type = zb_get16(frame + 12);
	/* One VLAN tag, C or S (IEEE 802.1Q §9.3, 802.1ad), left in place: the response goes
	 * back on the VLAN the query came on. Two tags are the kernel's VLAN devices'. */
	if (type == ZB_ETHERTYPE_VLAN || type == ZB_ETHERTYPE_QINQ) {
		if (len < ZB_ETH_LEN + ZB_VLAN_TAG_LEN)
			return ZB_FRAME_DROP;
		ip += ZB_VLAN_TAG_LEN;
		type = zb_get16(frame + 16);
		if (type == ZB_ETHERTYPE_VLAN || type == ZB_ETHERTYPE_QINQ)
			return ZB_FRAME_PASS;
	}
	size_t payload, payload_len;
	enum zb_frame_verdict verdict;
	if (type == ZB_ETHERTYPE_IPV4)
		verdict = read_ipv4(frame + ip, len - ip, &payload, &payload_len, f);
	else if (type == ZB_ETHERTYPE_IPV6)
		verdict = read_ipv6(frame + ip, len - ip, &payload, &payload_len, f);
	else
		return ZB_FRAME_PASS; /* ARP and everything else */
	if (verdict != ZB_FRAME_ANSWER)
		return verdict;
	size_t udp = ip + payload;
	verdict = read_udp(frame + udp, payload_len, rules, f);
	if (verdict != ZB_FRAME_ANSWER)
		return verdict;
	f->ip = (uint16_t)ip;
	f->udp = (uint16_t)udp;
	f->dns = (uint16_t)(udp + ZB_UDP_LEN);
	f->max_udp = response_room(f, rules);
	return f->max_udp ? ZB_FRAME_ANSWER : ZB_FRAME_PASS;
}

/* ---- writing ---- */

static void swap(uint8_t *a, uint8_t *b, size_t len)
{
	uint8_t t[16];
	memcpy(t, a, len);
	memcpy(a, b, len);
	memcpy(b, t, len);
}

/* The IPv4 header of a response of `datagram` octets of UDP, the query's addresses swapped:
 * 20 octets, no options; DSCP 0 and not ECN-capable (we do not answer congestion marks);
 * ID 0 with DF set, an atomic datagram (RFC 6864 §4); TTL 64; the checksum
 * (RFC 791 §3.1, RFC 1071). */
static void write_ipv4(uint8_t *ip, size_t datagram)
{
	swap(ip + 12, ip + 16, 4);
	ip[0] = 0x45;
	ip[1] = 0;
	zb_put16(ip + 2, (uint16_t)(ZB_IPV4_LEN + datagram));
	zb_put16(ip + 4, 0);
	zb_put16(ip + 6, ZB_IPV4_DF);
	ip[8] = ZB_HOP_LIMIT;
	ip[9] = ZB_PROTO_UDP;
	ip[10] = ip[11] = 0;
	uint16_t check = (uint16_t)~fold(sum_of(ip, ZB_IPV4_LEN, 0));
	memcpy(ip + 10, &check, 2);
}

/* The IPv6 header likewise (RFC 8200 §3): traffic class 0, flow label 0 (unlabelled,
 * RFC 6437 §2), hop limit 64. */
static void write_ipv6(uint8_t *ip, size_t datagram)
{
	swap(ip + 8, ip + 24, 16);
	ip[0] = 0x60;
	ip[1] = ip[2] = ip[3] = 0;
	zb_put16(ip + 4, (uint16_t)datagram);
	ip[6] = ZB_PROTO_UDP;
	ip[7] = ZB_HOP_LIMIT;
}

/* The UDP checksum (RFC 768; RFC 8200 §8.1 for IPv6): the pseudo-header (both addresses,
 * the protocol, the UDP length), the header with the checksum 0, the data. The addresses
 * sit side by side in both IP headers, at `addresses`. A sum of 0 goes as 0xffff, for 0
 * says "no checksum". */
static void write_udp_checksum(uint8_t *udp, size_t datagram, const uint8_t *addresses,
			       size_t address_len)
{
	uint8_t pseudo[4] = { 0, ZB_PROTO_UDP, (uint8_t)(datagram >> 8), (uint8_t)datagram };
	uint64_t sum = sum_of(addresses, 2 * address_len, 0);
	sum = sum_of(pseudo, 4, sum);
	udp[6] = udp[7] = 0;
	uint16_t check = (uint16_t)~fold(sum_of(udp, datagram, sum));
	if (check == 0)
		check = 0xffff;
	memcpy(udp + 6, &check, 2);
}

size_t zb_frame_answer(uint8_t *frame, const struct zb_frame *f, size_t dns_len)
{
	if (dns_len == 0 || dns_len > f->max_udp)
		return 0;
	swap(frame, frame + 6, 6); /* Ethernet: back to the sender, from the address asked */
	uint8_t *ip = frame + f->ip;
	size_t ip_len = f->ipv6 ? ZB_IPV6_LEN : ZB_IPV4_LEN;
	uint8_t *udp = ip + ip_len;
	uint8_t ports[4];
	memcpy(ports, frame + f->udp, 4);
	/* A query's IPv4 options go: the response moves up behind the 20-octet header. */
	if (frame + f->udp != udp)
		memmove(udp + ZB_UDP_LEN, frame + f->dns, dns_len);
	size_t datagram = ZB_UDP_LEN + dns_len;
	memcpy(udp, ports + 2, 2);
	memcpy(udp + 2, ports, 2);
	zb_put16(udp + 4, (uint16_t)datagram);
	if (f->ipv6) {
		write_ipv6(ip, datagram);
		write_udp_checksum(udp, datagram, ip + 8, 16);
	} else {
		write_ipv4(ip, datagram);
		write_udp_checksum(udp, datagram, ip + 12, 4);
	}
	return f->ip + ip_len + datagram;
}
