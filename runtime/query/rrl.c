/*
 * rrl.c - response rate limiting: a per-worker table of buckets, four to a cache line,
 * found by a seeded hash of the client prefix and the response.
 */
#include "query/rrl.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "query/wire.h"

#define ZB_RCODE_BADCOOKIE 23 /* RFC 7873 §8: 7 in the header, 1 in the OPT's upper bits */

static uint64_t prefix_mask64(uint32_t bits)
{
	return bits == 0 ? 0 : bits >= 64 ? ~0ull : ~0ull << (64 - bits);
}

int zb_rrl_init(struct zb_rrl *rrl, const struct zb_rrl_options *options)
{
	uint32_t v4 = options->ipv4_prefix > 32 ? 32 : options->ipv4_prefix;
	uint32_t v6 = options->ipv6_prefix > 128 ? 128 : options->ipv6_prefix;

	*rrl = (struct zb_rrl){
		.rate = options->rate, .slip = options->slip,
		.floor = -(int32_t)(options->rate * ZB_RRL_WINDOW),
		.v4_mask = v4 ? ~0u << (32 - v4) : 0,
		.v6_mask = { prefix_mask64(v6), prefix_mask64(v6 > 64 ? v6 - 64 : 0) },
	};
	if (!rrl->rate)
		return 0;
	if (getrandom(rrl->seed, sizeof(rrl->seed), 0) != sizeof(rrl->seed)) {
		struct timespec t; /* no entropy yet (early boot): still unknown to a remote sender */
		clock_gettime(CLOCK_MONOTONIC, &t);
		rrl->seed[0] ^= (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)t.tv_sec;
		rrl->seed[1] ^= (uint64_t)(uintptr_t)rrl;
	}
	rrl->seed[1] |= 1; /* multipliers that lose no bit */
	rrl->seed[3] |= 1;
	rrl->table = calloc((size_t)4 << ZB_RRL_SET_BITS, sizeof(*rrl->table));
	return rrl->table ? 0 : -1;
}

void zb_rrl_free(struct zb_rrl *rrl)
{
	free(rrl->table);
	rrl->table = NULL;
}

/* `a` spread over all 64 bits by an odd multiplier, the product's halves folded. */
static uint64_t mix(uint64_t a, uint64_t odd)
{
	__uint128_t p = (__uint128_t)a * odd;
	return (uint64_t)p ^ (uint64_t)(p >> 64);
}

uint64_t zb_rrl_key6(const struct zb_rrl *rrl, const struct sockaddr_storage *peer,
		     uint32_t response)
{
	const uint8_t *a = ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr;
	uint64_t hi = zb_get64(a), lo = zb_get64(a + 8);
	if (hi == 0 && lo >> 32 == 0xffff) /* IPv4-mapped: as the IPv4 address it is */
		return (uint64_t)((uint32_t)lo & rrl->v4_mask) << 32 | response;
	uint64_t h = mix((hi & rrl->v6_mask[0]) ^ rrl->seed[2], rrl->seed[1]);
	h = mix(h ^ (lo & rrl->v6_mask[1]), rrl->seed[3]);
	return mix(h ^ response, rrl->seed[1]);
}

enum zb_rrl_verdict zb_rrl_over(struct zb_rrl *rrl)
{
	if (rrl->slip && ++rrl->slip_count >= rrl->slip) {
		rrl->slip_count = 0;
		return ZB_RRL_SLIP;
	}
	return ZB_RRL_DROP;
}

/* Where a response's records start: past its question, when it has one. */
static size_t records_start(const uint8_t *response, size_t len)
{
	size_t off = ZB_HEADER_LEN;
	if (zb_hdr_qdcount(response) && zb_skip_name(response, len, &off) == 0)
		off += 4;
	return off <= len ? off : len;
}

/* Where a response's last record (its OPT, when it has one: RFC 6891 §6.1.1 lets it be
 * anywhere in the section, and zonebake always puts it last) starts; `len` when it has no
 * record. */
static size_t last_record(const uint8_t *response, size_t len, size_t off)
{
	unsigned n = zb_hdr_ancount(response) + zb_hdr_nscount(response) +
		     zb_hdr_arcount(response);
	size_t last = len;
	for (unsigned i = 0; i < n; i++) {
		last = off;
		if (zb_skip_name(response, len, &off) != 0 || off + 10 > len)
			return len;
		off += 10 + (size_t)zb_get16(response + off + 8);
	}
	return off == len ? last : len;
}

size_t zb_rrl_slip(uint8_t *response, size_t len, const struct zb_query_facts *facts)
{
	size_t end = records_start(response, len);
	size_t opt = facts->edns ? len - last_record(response, len, end) : 0;

	memmove(response + end, response + len - opt, opt);
	memset(response + 6, 0, 4);            /* ANCOUNT, NSCOUNT */
	zb_put16(response + 10, opt ? 1 : 0);  /* ARCOUNT: the OPT */
	if (facts->cookie == ZB_COOKIE_CLIENT && opt) {
		/* RFC 7873 §5.2.3: BADCOOKIE, with the cookie to come back with. */
		response[2] &= (uint8_t)~((ZB_FLAG_AA | ZB_FLAG_TC) >> 8);
		response[3] = (uint8_t)((response[3] & 0xf0) | (ZB_RCODE_BADCOOKIE & 0xf));
		response[end + 5] = ZB_RCODE_BADCOOKIE >> 4;
	} else {
		response[2] |= ZB_FLAG_TC >> 8;
	}
	return end + opt;
}
