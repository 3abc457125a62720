/*
 * fuzz_respond.c - libFuzzer target around the request handler (runtime/respond.c), linked
 * against a compiled zone set (tests/fuzz/fuzz.toml). Built by `make fuzz` with
 * -fsanitize=fuzzer,address,undefined: any out-of-bounds access, undefined behaviour or
 * broken invariant below is a finding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "respond.h"
#include "wire.h"

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
	/* The handler may read ZB_QUERY_SLACK bytes past the query, no further: ASan sees to it. */
	uint8_t *query = malloc(size + ZB_QUERY_SLACK);
	memcpy(query, data, size);
	memset(query + size, 0x5A, ZB_QUERY_SLACK);
	/* Poison the output so a response that leaves bytes unwritten differs run to run. */
	memset(out, 0xA5, sizeof(out));
	struct zb_query_facts facts, in_place_facts;
	size_t n = zb_respond(&zb_zoneset, query, size, out, ZB_UDP, &facts);
	check(query, size, out, n, ZB_UDP, &facts);
	/* Answered in place, as the UDP path does, the response is the same bytes. */
	memcpy(in_place, query, size + ZB_QUERY_SLACK);
	if (zb_respond(&zb_zoneset, in_place, size, in_place, ZB_UDP, &in_place_facts) != n ||
	    memcmp(in_place, out, n) != 0 ||
	    (n && memcmp(&in_place_facts, &facts, sizeof(facts)) != 0))
		abort();
	n = zb_respond(&zb_zoneset, query, size, out, ZB_TCP, &facts);
	check(query, size, out, n, ZB_TCP, &facts);
	free(query);
	return 0;
}
