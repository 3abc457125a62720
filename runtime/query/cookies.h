/*
 * cookies.h - DNS cookies (RFC 7873) with interoperable server cookies (RFC 9018): a client
 * that sent a cookie gets its own back with a server cookie bound to its address, and a query
 * that returns a server cookie of ours proves its source address is not spoofed (rate
 * limiting lets it through, rrl.h).
 *
 * Each worker keeps its own state: the secret (the same in every worker, and handed to the
 * successor at a swap, so a cookie holds across both), a coarse clock set by the worker's
 * one-second tick (the query path never asks the time), and a memo of the cookies it has
 * made or verified, so that a client returning one pays a comparison, not a SipHash.
 */
#ifndef ZB_COOKIES_H
#define ZB_COOKIES_H

#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "query/wire.h" /* the cookies' lengths */

#define ZB_COOKIE_SECRET_LEN 16 /* SipHash-2-4's key */
#define ZB_COOKIE_MEMO 1024     /* entries, a power of two */

/* What a query's COOKIE option proved. */
enum zb_cookie_verdict {
	ZB_COOKIE_NONE,   /* no COOKIE option (or the server makes none) */
	ZB_COOKIE_CLIENT, /* a client cookie alone, or with a server cookie not valid here */
	ZB_COOKIE_VALID,  /* a server cookie of ours for this address, not expired */
};

struct zb_cookie_memo { /* in words, compared as such */
	uint64_t cookie[ZB_COOKIE_LEN / 8];
	uint64_t addr[2]; /* IPv4 as an IPv4-mapped IPv6 address */
};

struct zb_cookies {
	uint64_t k0, k1; /* the secret, as SipHash takes it */
	uint32_t now;    /* seconds since the epoch, modulo 2^32 (RFC 9018 §4.3) */
	struct zb_cookie_memo memo[ZB_COOKIE_MEMO];
};

/* The client a query came from, as the responder needs it: its address, and the worker's
 * cookie state (NULL: no cookies are made; a COOKIE option is then ignored, RFC 7873 §5.2). */
struct zb_client {
	const struct sockaddr_storage *addr;
	struct zb_cookies *cookies;
};

/* A worker's state for `secret`; the clock starts at the current time. */
void zb_cookies_init(struct zb_cookies *c, const uint8_t secret[ZB_COOKIE_SECRET_LEN]);

/* The worker's tick: read the wall clock (once a second, off the query path). */
void zb_cookies_tick(struct zb_cookies *c);

#define ZB_COOKIE_VERSION 1
#define ZB_COOKIE_MAX_AGE 3600    /* older: not valid (RFC 9018 §4.3) */
#define ZB_COOKIE_RENEW_AGE 1800  /* older: valid, but a new one goes back */
#define ZB_COOKIE_MAX_AHEAD 300   /* a clock this far behind the cookie's maker still takes it */

/* The memo slot of a whole cookie: its last octets are SipHash's output (or, in a forged
 * one, whatever the sender chose: it can only miss, or push out another entry). */
static inline struct zb_cookie_memo *zb_cookie_memo_slot(struct zb_cookies *c,
							 const uint8_t *cookie)
{
	uint32_t h;
	memcpy(&h, cookie + ZB_COOKIE_LEN - 4, 4);
	return &c->memo[h & (ZB_COOKIE_MEMO - 1)];
}

/* Whether the memo holds this cookie from this address (IPv4 mapped into IPv6). */
static inline int zb_cookie_memo_holds(const struct zb_cookie_memo *m, const uint8_t *cookie,
				       const uint8_t mapped[16])
{
	uint64_t w[ZB_COOKIE_LEN / 8], a[2];
	memcpy(w, cookie, sizeof(w));
	memcpy(a, mapped, sizeof(a));
	return ((m->cookie[0] ^ w[0]) | (m->cookie[1] ^ w[1]) | (m->cookie[2] ^ w[2]) |
		(m->addr[0] ^ a[0]) | (m->addr[1] ^ a[1])) == 0;
}

/* What most queries with a cookie bring, checked inline: a whole cookie from an IPv4 client
 * that this worker made or checked for that address, young enough to go back unchanged
 * (RFC 9018 §4.3: -MAX_AHEAD <= age <= RENEW_AGE, one unsigned comparison). When it is not,
 * zb_cookie_answer decides. */
static inline int zb_cookie_fresh(const struct zb_client *client, const uint8_t *cookie,
				  unsigned len)
{
	if (len != ZB_COOKIE_LEN || client->addr->ss_family != AF_INET)
		return 0;
	uint32_t stamp;
	memcpy(&stamp, cookie + ZB_COOKIE_CLIENT_LEN + 4, 4);
	if ((uint32_t)(client->cookies->now - ntohl(stamp) + ZB_COOKIE_MAX_AHEAD) >
	    ZB_COOKIE_RENEW_AGE + ZB_COOKIE_MAX_AHEAD)
		return 0;
	uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff };
	memcpy(mapped + 12, &((const struct sockaddr_in *)client->addr)->sin_addr, 4);
	return zb_cookie_memo_holds(zb_cookie_memo_slot(client->cookies, cookie), cookie, mapped);
}

/* The COOKIE option `cookie` of `len` octets (8, or 16 to 40: RFC 7873 §5.2.2, checked by the
 * caller) from `client`: write the cookie to return, ZB_COOKIE_LEN octets, into `reply` (the
 * server cookie returned unchanged while under half an hour old, else a new one: RFC 9018
 * §4.3) and say what it proved. */
enum zb_cookie_verdict zb_cookie_answer(const struct zb_client *client, const uint8_t *cookie,
					unsigned len, uint8_t reply[ZB_COOKIE_LEN]);

/* The server cookie RFC 9018 §4.4 makes for `client_cookie` from the address `ip` (4 or 16
 * octets) at `timestamp`, into `out` (16 octets). */
void zb_cookie_make(uint64_t k0, uint64_t k1, const uint8_t *client_cookie, const uint8_t *ip,
		    unsigned ip_len, uint32_t timestamp, uint8_t out[ZB_COOKIE_SERVER_LEN]);

#endif
