/*
 * fuzz_respond.c - libFuzzer target around the request handler (runtime/query/respond.c),
 * linked against a compiled zone set (tests/fuzz/fuzz.toml). Built by `make fuzz` with
 * -fsanitize=fuzzer,address,undefined: any out-of-bounds access, undefined behaviour or
 * broken invariant below is a finding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include "query/nsec3hash.h"
#include "query/respond.h"
#include "query/rrl.h"
#include "query/statkeys.h"
#include "query/wire.h"
#include "query/zoneset.h"

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
	size_t end = zb_stat_key_question(facts->stat_key) &&
				     zb_parse_question(query, len, 0, &q) == 0
			     ? q.end : ZB_HEADER_LEN;
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
	int question = zb_stat_key_question(facts->stat_key);
	if ((facts->stat_key & 0xf) != (out[3] & 0xf) || question != (zb_get16(out + 4) == 1) ||
	    (question && (zb_parse_question(query, len, 0, &q) != 0 ||
			  zb_stat_key(1, q.qtype, facts->stat_key) != facts->stat_key)))
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

/* Queries with DO set for names that do not exist, in the NSEC3 zone (one below a name that
 * does) and the NSEC zone: batched beside the input, their NSEC3 hashes are taken with its
 * own, in lanes (denial.h): five and the input's fill AVX2's eight lanes but two, or SSE2's
 * four and two more. Their responses, from zb_respond alone, are kept to compare. */
#define FIXED 6
static const char *const fixed_names[FIXED] = {
	"\3nx1\5nsec3\4test", "\4nxdo\5nsec3\4test", "\1q\3nx3\5nsec3\4test",
	"\3nx4\4nsec\4test", "\3nx5\5nsec3\4test", "\6nx6nx6\5nsec3\4test" };
static uint8_t fixed[FIXED][64 + ZB_QUERY_SLACK], fixed_out[FIXED][ZB_RESPONSE_MAX];
static size_t fixed_len[FIXED], fixed_n[FIXED];
static struct zb_query_facts fixed_facts[FIXED];

static void setup_fixed(struct zb_client *client)
{
	static int done;
	if (done)
		return;
	done = 1;
	for (unsigned k = 0; k < FIXED; k++) {
		static const uint8_t header[] = { 0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1 };
		static const uint8_t tail[] = { 0, 0, 1, 0, 1, /* the root, A IN */
						0, 0, 41, 4, 0xd0, 0, 0, 0x80, 0, 0, 0 };
		uint8_t *q = fixed[k];
		size_t name = strlen(fixed_names[k]);
		memcpy(q, header, sizeof header);
		memcpy(q + sizeof header, fixed_names[k], name);
		memcpy(q + sizeof header + name, tail, sizeof tail);
		fixed_len[k] = sizeof header + name + sizeof tail;
		fixed_n[k] = zb_respond(&zb_zoneset, q, fixed_len[k], fixed_out[k], ZB_UDP, client,
					&fixed_facts[k]);
		if (fixed_n[k] <= fixed_len[k] || (fixed_out[k][3] & 0xf) != ZB_RCODE_NXDOMAIN)
			abort(); /* the names were meant not to exist */
	}
}

/* The layout's numbers from the data's head, as the server's start-up reads them. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[200];
	(void)argc;
	(void)argv;
	if (zb_zoneset_open(&zb_zoneset, err, sizeof(err)) != 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[ZB_RESPONSE_MAX];
	static uint8_t in_place[ZB_RESPONSE_MAX + ZB_QUERY_SLACK];

	if (size > ZB_RESPONSE_MAX)
		return 0;
	setup();
	struct zb_client client = { &peer, &cookies };
	setup_fixed(&client);
	/* Each way of hashing the processor has, chosen by the input's last octet. */
	static int ni = -1, avx2;
	if (ni < 0) {
		ni = zb_sha1_ni;
		avx2 = zb_sha1_avx2;
	}
	zb_sha1_ni = ni && size && (data[size - 1] & 1);
	zb_sha1_avx2 = avx2 && size && (data[size - 1] & 2);
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
	 * themselves and take the NSEC3 hashes of a batch's names together: the same bytes and
	 * facts again, with the query batched beside a hit and names that do not exist. */
	static uint8_t batched[2 + FIXED][ZB_RESPONSE_MAX + ZB_QUERY_SLACK];
	static const uint8_t other[] = { 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
					 3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e',
					 0, 0, 1, 0, 1 };
	memcpy(batched[0], other, sizeof(other));
	memcpy(batched[2], query, size + ZB_QUERY_SLACK);
	struct zb_batch_query batch[2 + FIXED] = {
		{ .packet = batched[0], .client = &client, .len = sizeof(other) },
		{ .packet = batched[1], .client = &client, .len = (uint16_t)fixed_len[0] },
		{ .packet = batched[2], .client = &client, .len = (uint16_t)size },
	};
	memcpy(batched[1], fixed[0], sizeof fixed[0]);
	for (unsigned k = 1; k < FIXED; k++) {
		memcpy(batched[2 + k], fixed[k], sizeof fixed[k]);
		batch[2 + k] = (struct zb_batch_query){ .packet = batched[2 + k], .client = &client,
							.len = (uint16_t)fixed_len[k] };
	}
	struct zb_query *scratch[2 + FIXED];
	zb_respond_batch(&zb_zoneset, batch, 2 + FIXED, scratch);
	if (batch[2].len != n || memcmp(batched[2], out, n) != 0 ||
	    (n && memcmp(&batch[2].facts, &facts, sizeof(facts)) != 0))
		abort();
	for (unsigned k = 0; k < FIXED; k++) {
		unsigned at = k ? 2 + k : 1;
		if (batch[at].len != fixed_n[k] || memcmp(batched[at], fixed_out[k], fixed_n[k]) ||
		    memcmp(&batch[at].facts, &fixed_facts[k], sizeof(fixed_facts[k])) != 0)
			abort();
	}
	n = zb_respond(&zb_zoneset, query, size, out, ZB_TCP, NULL, &facts);
	check(query, size, out, n, ZB_TCP, &facts);
	free(query);
	return 0;
}
