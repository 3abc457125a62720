/*
 * fuzz_frame.c - libFuzzer target around the AF_XDP path's frame layer
 * (runtime/transport/xdp/frame.c): a frame in, read; where it is a query, its DNS message
 * answered by the request handler (linked against tests/fuzz/fuzz.toml's set) with the
 * frame's max_udp, the response turned into a frame, and that frame checked here by code of
 * its own: lengths, both checksums, addresses and ports swapped, the handler's response
 * where the frame says. Built by `make fuzz` with -fsanitize=fuzzer,address,undefined.
 *
 * The input's first octet chooses the interface and how the frame is taken: its bits 0-1
 * the MTU (1500, 576, 1280, 9000), bit 2 the UMEM frame's size (2048 or 4096 octets); bit 3
 * set leaves an IPv4 header's checksum as it comes, clear has the harness write the right
 * one first, and bit 4 set has it make the IP and UDP lengths the frame's, so that the
 * fuzzer reaches the layers behind them. The rest is the frame, put at the start of a
 * malloc'd buffer of exactly the frame's size, as the kernel puts it in the UMEM: a read or
 * write past it is a finding.
 */
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include "query/respond.h"
#include "query/wire.h"
#include "query/zoneset.h"
#include "transport/xdp/frame.h"

/* The worker's cookies, their clock fixed: queries with cookies get them checked and made. */
static struct zb_cookies cookies;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint8_t secret[ZB_COOKIE_SECRET_LEN] = { 0x39, 0x58, 0x44, 0x50 };
	char err[200];
	(void)argc;
	(void)argv;
	if (zb_zoneset_open(&zb_zoneset, err, sizeof(err)) != 0)  /* as the server starts */
		abort();
	zb_cookies_init(&cookies, secret);
	cookies.now = 1559731985;
	return 0;
}

/* RFC 1071's sum the plain way, a 16-bit big-endian word at a time: apart from frame.c's. */
static uint32_t add_words(uint32_t sum, const uint8_t *data, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(data[i] << 8 | data[i + 1]);
	if (len & 1)
		sum += (uint32_t)data[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Where the layers would be read (one VLAN tag at most): with `fit`, the IP and UDP lengths
 * made to match the frame's, so that a mutation that adds or takes away octets still reaches
 * the handler; with `sum`, the IPv4 header's checksum made right. */
static void repair(uint8_t *frame, size_t len, int fit, int sum)
{
	size_t ip = 14;
	if (len < ip)
		return;
	unsigned type = zb_get16(frame + 12);
	if (type == 0x8100 || type == 0x88A8) {
		ip += 4;
		if (len < ip)
			return;
		type = zb_get16(frame + 16);
	}
	uint8_t *p = frame + ip;
	size_t rest = len - ip;
	if (type == 0x86DD && rest >= 48 && fit) {
		zb_put16(p + 4, (uint16_t)(rest - 40));
		if (p[6] == 17)
			zb_put16(p + 44, (uint16_t)(rest - 40));
	}
	if (type != 0x0800 || rest < 20)
		return;
	size_t header = (size_t)(p[0] & 0xf) * 4;
	if (fit) {
		zb_put16(p + 2, (uint16_t)rest);
		if (p[9] == 17 && header + 8 <= rest)
			zb_put16(p + header + 4, (uint16_t)(rest - header));
	}
	if (sum && header >= 20 && header <= rest) {
		p[10] = p[11] = 0;
		zb_put16(p + 10, (uint16_t)~fold(add_words(0, p, header)));
	}
}

/* The answered frame `out` of `n` octets, against the query frame `in` it was made of and
 * the response the handler wrote (`dns`, `dns_len` octets). */
static void check_answer(const uint8_t *out, size_t n, const uint8_t *in,
			 const struct zb_frame *f, const uint8_t *dns, size_t dns_len,
			 const struct zb_frame_rules *rules)
{
	size_t ip_len = f->ipv6 ? 40 : 20, addr_len = f->ipv6 ? 16 : 4;
	const uint8_t *ip = out + f->ip, *udp = ip + ip_len, *q_ip = in + f->ip;
	const uint8_t *q_udp = in + f->udp;
	if (n != f->ip + ip_len + 8 + dns_len || n > rules->room || n - f->ip > rules->mtu)
		abort();
	/* Ethernet: back to the sender from the address it asked, the tag kept. */
	if (memcmp(out, in + 6, 6) || memcmp(out + 6, in, 6) || memcmp(out + 12, in + 12,
									f->ip - 12))
		abort();
	/* IP: a fresh header, the addresses swapped. */
	const uint8_t *src = ip + (f->ipv6 ? 8 : 12), *q_src = q_ip + (f->ipv6 ? 8 : 12);
	if (memcmp(src, q_src + addr_len, addr_len) || memcmp(src + addr_len, q_src, addr_len))
		abort();
	if (f->ipv6) {
		if (ip[0] != 0x60 || zb_get16(ip + 4) != 8 + dns_len || ip[6] != 17 || ip[7] != 64)
			abort();
	} else if (ip[0] != 0x45 || zb_get16(ip + 2) != 28 + dns_len || ip[8] != 64 ||
		   ip[9] != 17 || zb_get16(ip + 6) != 0x4000 /* DF, no fragment */ ||
		   fold(add_words(0, ip, 20)) != 0xffff) {
		abort();
	}
	/* UDP: ports swapped, the length, a checksum that verifies and is not "none". */
	if (memcmp(udp, q_udp + 2, 2) || memcmp(udp + 2, q_udp, 2) ||
	    zb_get16(udp + 4) != 8 + dns_len || zb_get16(udp + 6) == 0)
		abort();
	uint32_t pseudo = add_words(0, src, 2 * addr_len) + 17 + (uint32_t)(8 + dns_len);
	if (fold(add_words(pseudo, udp, 8 + dns_len)) != 0xffff)
		abort();
	if (memcmp(udp + 8, dns, dns_len))
		abort();
}

/* What zb_frame_parse said of a query frame, against the frame itself. */
static void check_found(const uint8_t *frame, size_t len, const struct zb_frame *f,
			const struct zb_frame_rules *rules)
{
	size_t ip_len = f->ipv6 ? 40 : 20;
	if (f->dns != f->udp + 8 || (size_t)f->dns + f->dns_len > len ||
	    zb_get16(frame + f->udp + 4) != 8 + f->dns_len || zb_get16(frame + f->udp + 2) != 53 ||
	    f->max_udp < 512 || f->max_udp > rules->mtu - ip_len - 8 ||
	    (size_t)f->dns + f->max_udp > rules->room ||
	    (size_t)f->dns + f->dns_len + ZB_QUERY_SLACK > rules->room)
		abort();
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&f->peer;
	const struct sockaddr_in *in = (const struct sockaddr_in *)&f->peer;
	int family_ok = f->ipv6 ? f->peer.ss_family == AF_INET6 &&
					  !memcmp(&in6->sin6_addr, frame + f->ip + 8, 16)
				: f->peer.ss_family == AF_INET &&
					  !memcmp(&in->sin_addr, frame + f->ip + 12, 4);
	if (!family_ok || ntohs(in->sin_port) != zb_get16(frame + f->udp) ||
	    zb_get16(frame + f->udp) == 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t mtus[4] = { 1500, 576, 1280, 9000 };
	static uint8_t before[4096], response[4096];

	if (size < 1)
		return 0;
	struct zb_frame_rules rules = { .room = data[0] & 4 ? 4096 : 2048,
					.mtu = mtus[data[0] & 3], .port = 53 };
	size_t len = size - 1;
	if (len > rules.room)
		return 0; /* no NIC puts more in a frame */
	uint8_t *frame = malloc(rules.room);
	memcpy(frame, data + 1, len);
	memset(frame + len, 0xA5, rules.room - len); /* an earlier packet's leftovers */
	repair(frame, len, data[0] & 16, !(data[0] & 8));
	memcpy(before, frame, rules.room);

	struct zb_frame f;
	enum zb_frame_verdict verdict = zb_frame_parse(frame, len, &rules, &f);
	if (verdict != ZB_FRAME_ANSWER) {
		free(frame);
		return 0;
	}
	check_found(frame, len, &f, &rules);

	struct zb_client client = { &f.peer, &cookies };
	struct zb_batch_query batch = { .packet = frame + f.dns, .client = &client,
					.len = f.dns_len };
	struct zb_query *scratch[1];
	struct zb_zoneset framed = zb_frame_zoneset(&zb_zoneset, f.max_udp);
	zb_respond_batch(&framed, &batch, 1, scratch);
	size_t dns_len = batch.len;
	/* The handler writes no further than max_udp octets, and the headers are as they were. */
	if (dns_len > f.max_udp || memcmp(frame, before, f.dns) ||
	    memcmp(frame + f.dns + f.max_udp, before + f.dns + f.max_udp,
		   rules.room - f.dns - f.max_udp))
		abort();
	memcpy(response, frame + f.dns, dns_len);

	size_t n = zb_frame_answer(frame, &f, dns_len);
	if (dns_len == 0 ? n != 0 : n == 0)
		abort();
	if (n)
		check_answer(frame, n, before, &f, response, dns_len, &rules);
	free(frame);
	return 0;
}
