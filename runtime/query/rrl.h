/*
 * rrl.h - response rate limiting, as BIND, NSD and Knot do it: a spoofed query costs the
 * victim whose address it bears at most `rate` responses a second per kind of response, and
 * so buys an attacker no amplification.
 *
 * A bucket is a client prefix (rrl-ipv4-prefix, rrl-ipv6-prefix) and one response: the
 * compiled answer it copied (so one name and type, or a closest encloser's NXDOMAIN for every
 * name that does not exist below it; an answer is stored once per group of the perfect hash,
 * so the same octets under names of two groups count apart, which buys no more than asking
 * for the names that exist does), or any error. Each holds a balance that gains `rate` a second, up
 * to `rate`, and loses one per response; below zero the response is limited: dropped, or
 * every `slip`-th one sent truncated (TC, nothing else: a real client asks again over TCP),
 * or as BADCOOKIE with a cookie when the query had a client cookie (RFC 7873 §5.2.3: the
 * client asks again with it). The balance may fall to -rate × ZB_RRL_WINDOW, so a flood is
 * limited for up to that many seconds after it slows. Queries with a valid server cookie
 * and TCP are never limited: their source is proven.
 *
 * Each worker has its own table (no lock, no shared line); its clock is the worker's tick.
 */
#ifndef ZB_RRL_H
#define ZB_RRL_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "query/respond.h"

#define ZB_RRL_WINDOW 15 /* seconds, BIND's default */
#define ZB_RRL_SET_BITS 14 /* 16,384 sets of 4 entries: 1 MiB a worker */

struct zb_rrl_options {
	uint32_t rate;        /* responses a second per bucket; 0: off */
	uint32_t slip;        /* every slip-th limited response goes out truncated; 0: none */
	uint32_t ipv4_prefix; /* bits */
	uint32_t ipv6_prefix;
};

/* A bucket: for IPv4 its key is the prefix and the response itself, for IPv6 a seeded hash
 * of them (an attacker who could aim buckets at one another gains nothing anyway: each name
 * it asks for has a bucket of its own). */
struct zb_rrl_entry {
	uint64_t key;
	uint32_t stamp; /* the tick it was last brought up to */
	int32_t balance;
};

struct zb_rrl {
	uint32_t rate;
	uint32_t slip;
	uint32_t slip_count;
	uint32_t now;      /* seconds: the worker's ticks */
	int32_t floor;     /* the lowest balance: -rate × ZB_RRL_WINDOW */
	uint32_t v4_mask;  /* host order */
	uint64_t v6_mask[2];
	uint64_t seed[4];  /* random: where a bucket goes (0, 1), the IPv6 hash (1, 2, 3) */
	struct zb_rrl_entry *table; /* 4 << ZB_RRL_SET_BITS; NULL when off */
};

enum zb_rrl_verdict { ZB_RRL_SEND, ZB_RRL_DROP, ZB_RRL_SLIP };

/* Set a worker's limiter up (the table only when the rate is not 0). Returns 0, or -1 when
 * memory cannot be had. */
int zb_rrl_init(struct zb_rrl *rrl, const struct zb_rrl_options *options);
void zb_rrl_free(struct zb_rrl *rrl);

/* The rare parts of zb_rrl_account, out of line: an IPv6 client's key; a response over the
 * limit. */
uint64_t zb_rrl_key6(const struct zb_rrl *rrl, const struct sockaddr_storage *peer,
		     uint32_t response);
enum zb_rrl_verdict zb_rrl_over(struct zb_rrl *rrl);

static inline struct zb_rrl_entry *zb_rrl_older(struct zb_rrl_entry *a, struct zb_rrl_entry *b)
{
	return (int32_t)(b->stamp - a->stamp) < 0 ? b : a;
}

/* Count one response of kind `response` (respond.h's rrl_key) to `peer`: send it, drop it,
 * or send it slipped. Inline: it runs for every response while rate limiting is on. */
static inline enum zb_rrl_verdict zb_rrl_account(struct zb_rrl *rrl,
						 const struct sockaddr_storage *peer,
						 uint32_t response)
{
	uint64_t key;
	if (__builtin_expect(peer->ss_family == AF_INET, 1)) {
		uint32_t a = ntohl(((const struct sockaddr_in *)peer)->sin_addr.s_addr);
		key = (uint64_t)(a & rrl->v4_mask) << 32 | response;
	} else {
		key = zb_rrl_key6(rrl, peer, response);
	}
	struct zb_rrl_entry *set =
		&rrl->table[(((key ^ rrl->seed[0]) * rrl->seed[1]) >> (64 - ZB_RRL_SET_BITS)) * 4];
	struct zb_rrl_entry *e = set[0].key == key   ? &set[0]
				 : set[1].key == key ? &set[1]
				 : set[2].key == key ? &set[2]
				 : set[3].key == key ? &set[3]
						     : NULL;
	if (!e) { /* a new bucket, in place of the set's least recently charged, its first sent */
		e = zb_rrl_older(zb_rrl_older(&set[0], &set[1]), zb_rrl_older(&set[2], &set[3]));
		*e = (struct zb_rrl_entry){ .key = key, .stamp = rrl->now,
					    .balance = (int32_t)rrl->rate - 1 };
		return ZB_RRL_SEND;
	}
	if (e->stamp != rrl->now) { /* a second or more since its last: its credit grows */
		int64_t balance = e->balance + (int64_t)(rrl->now - e->stamp) * rrl->rate;
		e->balance = balance > rrl->rate ? (int32_t)rrl->rate : (int32_t)balance;
		e->stamp = rrl->now;
	}
	if (__builtin_expect(e->balance > 0, 1)) {
		e->balance--;
		return ZB_RRL_SEND;
	}
	if (e->balance > rrl->floor)
		e->balance--;
	return zb_rrl_over(rrl);
}

/* Turn a response of `len` octets into its slipped form in place: the header and question
 * with TC set, or BADCOOKIE when the query had a client cookie; the OPT kept. Returns the
 * new length. */
size_t zb_rrl_slip(uint8_t *response, size_t len, const struct zb_query_facts *facts);

#endif
