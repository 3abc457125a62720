/*
 * rrl.h - response rate limiting, as BIND, NSD and Knot do it: a spoofed query costs the
 * victim whose address it bears at most `rate` responses a second per kind of response, and
 * so buys an attacker no amplification.
 *
 * A bucket is a client prefix (rrl-ipv4-prefix, rrl-ipv6-prefix) and one response: the
 * compiled answer it copied (so one name and type, or one zone's NXDOMAIN for every name that
 * does not exist there), or any error. Each holds a balance that gains `rate` a second, up
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
#include <sys/socket.h>

#include "respond.h"

#define ZB_RRL_WINDOW 15 /* seconds, BIND's default */
#define ZB_RRL_SETS 16384 /* of 4 entries: 1 MiB a worker */

struct zb_rrl_options {
	uint32_t rate;        /* responses a second per bucket; 0: off */
	uint32_t slip;        /* every slip-th limited response goes out truncated; 0: none */
	uint32_t ipv4_prefix; /* bits */
	uint32_t ipv6_prefix;
};

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
	uint64_t seed[3];  /* random: nobody can aim two prefixes at one bucket */
	struct zb_rrl_entry *table; /* ZB_RRL_SETS × 4; NULL when off */
};

enum zb_rrl_verdict { ZB_RRL_SEND, ZB_RRL_DROP, ZB_RRL_SLIP };

/* Set a worker's limiter up (the table only when the rate is not 0). Returns 0, or -1 when
 * memory cannot be had. */
int zb_rrl_init(struct zb_rrl *rrl, const struct zb_rrl_options *options);
void zb_rrl_free(struct zb_rrl *rrl);

/* Count one response of kind `key` to `peer`: send it, drop it, or send it slipped. */
enum zb_rrl_verdict zb_rrl_account(struct zb_rrl *rrl, const struct sockaddr_storage *peer,
				   uint32_t key);

/* Turn a response of `len` octets into its slipped form in place: the header and question
 * with TC set, or BADCOOKIE when the query had a client cookie; the OPT kept. Returns the
 * new length. */
size_t zb_rrl_slip(uint8_t *response, size_t len, const struct zb_query_facts *facts);

#endif
