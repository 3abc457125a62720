/*
 * rrl.c - response rate limiting: a per-worker table of buckets, four to a cache line,
 * found by a seeded hash of the client prefix and the response.
 */
#include "rrl.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "wire.h"

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
	rrl->table = calloc(ZB_RRL_SETS * 4, sizeof(*rrl->table));
	return rrl->table ? 0 : -1;
}

void zb_rrl_free(struct zb_rrl *rrl)
{
	free(rrl->table);
	rrl->table = NULL;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	__uint128_t p = (__uint128_t)a * (b | 1);
	return (uint64_t)p ^ (uint64_t)(p >> 64);
}

/* The bucket's key: the client's prefix (IPv4 also when mapped into IPv6) and the response. */
static uint64_t bucket_key(const struct zb_rrl *rrl, const struct sockaddr_storage *peer,
			   uint32_t key)
{
	uint64_t hi = 0, lo;
	if (peer->ss_family == AF_INET6) {
		const uint8_t *a = ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr;
		hi = zb_get64(a);
		lo = zb_get64(a + 8);
		if (hi == 0 && lo >> 32 == 0xffff) {
			lo = (lo & rrl->v4_mask) | 1ull << 32; /* as the IPv4 address it is */
		} else {
			hi = (hi & rrl->v6_mask[0]) | 1; /* tagged: no IPv4 prefix has the bit */
			lo &= rrl->v6_mask[1];
		}
	} else {
		uint32_t a = ntohl(((const struct sockaddr_in *)peer)->sin_addr.s_addr);
		lo = (uint64_t)(a & rrl->v4_mask) | 1ull << 32;
	}
	return mix(mix(hi ^ rrl->seed[0], lo ^ rrl->seed[1]), key ^ rrl->seed[2]);
}

enum zb_rrl_verdict zb_rrl_account(struct zb_rrl *rrl, const struct sockaddr_storage *peer,
				   uint32_t key)
{
	uint64_t k = bucket_key(rrl, peer, key);
	struct zb_rrl_entry *set = &rrl->table[(k & (ZB_RRL_SETS - 1)) * 4], *e = NULL;

	for (int i = 0; i < 4; i++)
		if (set[i].key == k)
			e = &set[i];
	if (!e) { /* a new bucket in place of the one left alone longest */
		e = &set[0];
		for (int i = 1; i < 4; i++)
			if ((int32_t)(set[i].stamp - e->stamp) < 0)
				e = &set[i];
		*e = (struct zb_rrl_entry){ .key = k, .stamp = rrl->now,
					    .balance = (int32_t)rrl->rate };
	} else if (e->stamp != rrl->now) {
		int64_t balance = e->balance + (int64_t)(rrl->now - e->stamp) * rrl->rate;
		e->balance = balance > rrl->rate ? (int32_t)rrl->rate : (int32_t)balance;
		e->stamp = rrl->now;
	}
	if (e->balance > rrl->floor)
		e->balance--;
	if (e->balance >= 0)
		return ZB_RRL_SEND;
	if (rrl->slip && ++rrl->slip_count >= rrl->slip) {
		rrl->slip_count = 0;
		return ZB_RRL_SLIP;
	}
	return ZB_RRL_DROP;
}

size_t zb_rrl_slip(uint8_t *response, size_t len, const struct zb_query_facts *facts)
{
	size_t end = facts->question_end, opt = facts->opt_len;

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
