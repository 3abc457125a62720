/*
 * fuzz_respond.c - libFuzzer target around the request handler (runtime/respond.c), linked
 * against a compiled zone set (tests/fuzz/fuzz.toml). Built by `make fuzz` with
 * -fsanitize=fuzzer,address,undefined: any out-of-bounds access, undefined behaviour or
 * broken invariant below is a finding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include "respond.h"
#include "rrl.h"
#include "wire.h"

/* A client with cookies, its clock fixed: the same query gets the same response in and out
 * of place (the first call's cookie is in the memo for the second, which echoes the same
 * cookie or makes the same new one). */
static struct zb_cookies cookies;
static struct sockaddr_storage peer;
static struct zb_rrl rrl;

static void setup(void)
{
	static int done;
	static const uint8_t secret[ZB_COOKIE_SECRET_LEN] = { 0xe5, 0xe9, 0x73, 0xe5 };
	if (done)
		return;
	done = 1;
	zb_cookies_init(&cookies, secret);
	cookies.now = 1559731985;
	struct sockaddr_in *in = (struct sockaddr_in *)&peer;
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(0xc6336464); /* 198.51.100.100 */
	struct zb_rrl_options options = { .rate = 5, .slip = 2, .ipv4_prefix = 24,
					   .ipv6_prefix = 56 };
	if (zb_rrl_init(&rrl, &options) != 0)
		abort();
}

/* Rate limiting on every response: a slipped one is still a whole message with the same ID,
 * question and OPT record (11 octets and its options), no longer than
 * before, and nothing else. */
static void check_slip(const uint8_t *query, size_t len, const uint8_t *response, size_t n,
		       const struct zb_query_facts *facts)
{
	static uint8_t slipped[ZB_RESPONSE_MAX];
	struct zb_question q;
	if (n == 0 || zb_rrl_account(&rrl, &peer, facts->rrl_key) != ZB_RRL_SLIP)
		return;
	size_t end = facts->question && zb_parse_question(query, len, 0, &q) == 0 ? q.end
										: ZB_HEADER_LEN;
	memcpy(slipped, response, n);
	size_t m = zb_rrl_slip(slipped, n, facts);
	if (m > n || m < end || memcmp(slipped, response, 2) != 0 ||
	    memcmp(slipped + 4, response + 4, 2) != 0 ||
	    memcmp(slipped + ZB_HEADER_LEN, response + ZB_HEADER_LEN, end - ZB_HEADER_LEN) != 0 ||
	    zb_get16(slipped + 6) != 0 || zb_get16(slipped + 8) != 0 ||
	    zb_get16(slipped + 10) != facts->edns)
		abort();
	if (facts->edns && (m < end + 11 || slipped[end] != 0 ||
			    zb_get16(slipped + end + 1) != ZB_TYPE_OPT ||
			    m != end + 11 + zb_get16(slipped + end + 9) ||
			    memcmp(slipped + end, response + n - (m - end), 5) != 0 ||
			    memcmp(slipped + end + 6, response + n - (m - end) + 6, m - end - 6) != 0))
		abort(); /* the OPT's octet 5, the RCODE's upper bits, may say BADCOOKIE */
	if (!facts->edns && m != end)
		abort();
}

static void check(const uint8_t *query, size_t len, const uint8_t *out, size_t n,
		  enum zb_transport transport, const struct zb_query_facts *facts)
{
	if (n == 0)
		return;
	/* The facts the statistics count agree with the response: its RCODE's low bits, the
	 * query's QTYPE when the question was echoed. */
	struct zb_question q;
	if ((facts->rcode & 0xf) != (out[3] & 0xf) || facts->question != (zb_get16(out + 4) == 1) ||
	    (facts->question &&
	     (zb_parse_question(query, len, 0, &q) != 0 || q.qtype != facts->qtype)))
		abort();
	/* Every response: a whole header, QR set, the query's ID. */
	if (n < ZB_HEADER_LEN || !(out[2] & 0x80) || memcmp(out, query, 2) != 0 || len < 2)
		abort();
	/* Over UDP never more than the largest size any query may ask for. */
	size_t udp_max = zb_zoneset.udp_size > ZB_UDP_PLAIN_MAX ? zb_zoneset.udp_size
								 : ZB_UDP_PLAIN_MAX;
	if (transport == ZB_UDP && n > udp_max)
		abort();
	if (n > ZB_RESPONSE_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[ZB_RESPONSE_MAX];
	static uint8_t in_place[ZB_RESPONSE_MAX + ZB_QUERY_SLACK];

	if (size > ZB_RESPONSE_MAX)
		return 0;
	setup();
	struct zb_client client = { &peer, &cookies };
	/* The handler may read ZB_QUERY_SLACK bytes past the query, no further: ASan sees to it. */
	uint8_t *query = malloc(size + ZB_QUERY_SLACK);
	memcpy(query, data, size);
	memset(query + size, 0x5A, ZB_QUERY_SLACK);
	/* Poison the output so a response that leaves bytes unwritten differs run to run. */
	memset(out, 0xA5, sizeof(out));
	struct zb_query_facts facts, in_place_facts;
	size_t n = zb_respond(&zb_zoneset, query, size, out, ZB_UDP, &client, &facts);
	check(query, size, out, n, ZB_UDP, &facts);
	check_slip(query, size, out, n, &facts);
	/* Answered in place, as the UDP path does, the response is the same bytes. */
	memcpy(in_place, query, size + ZB_QUERY_SLACK);
	if (zb_respond(&zb_zoneset, in_place, size, in_place, ZB_UDP, &client, &in_place_facts) !=
		    n ||
	    memcmp(in_place, out, n) != 0 ||
	    (n && memcmp(&in_place_facts, &facts, sizeof(facts)) != 0))
		abort();
	/* The UDP path answers through zb_respond_batch, whose stages find a hit's answer
	 * themselves: the same bytes and facts again, with the query batched beside another. */
	static uint8_t batched[2][ZB_RESPONSE_MAX + ZB_QUERY_SLACK];
	static const uint8_t other[] = { 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
					 3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e',
					 0, 0, 1, 0, 1 };
	memcpy(batched[0], other, sizeof(other));
	memcpy(batched[1], query, size + ZB_QUERY_SLACK);
	struct zb_batch_query batch[2] = {
		{ .packet = batched[0], .client = &client, .len = sizeof(other) },
		{ .packet = batched[1], .client = &client, .len = (uint16_t)size },
	};
	struct zb_query *scratch[2];
	zb_respond_batch(&zb_zoneset, batch, 2, scratch);
	if (batch[1].len != n || memcmp(batched[1], out, n) != 0 ||
	    (n && memcmp(&batch[1].facts, &facts, sizeof(facts)) != 0))
		abort();
	n = zb_respond(&zb_zoneset, query, size, out, ZB_TCP, NULL, &facts);
	check(query, size, out, n, ZB_TCP, &facts);
	free(query);
	return 0;
}
