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

#include <stdint.h>
#include <sys/socket.h>

#define ZB_COOKIE_CLIENT_LEN 8
#define ZB_COOKIE_SERVER_LEN 16 /* RFC 9018: version, reserved, timestamp, hash */
#define ZB_COOKIE_LEN (ZB_COOKIE_CLIENT_LEN + ZB_COOKIE_SERVER_LEN)
#define ZB_COOKIE_SECRET_LEN 16 /* SipHash-2-4's key */
#define ZB_COOKIE_MEMO 1024     /* entries, a power of two */

/* What a query's COOKIE option proved. */
enum zb_cookie_verdict {
	ZB_COOKIE_NONE,   /* no COOKIE option (or the server makes none) */
	ZB_COOKIE_CLIENT, /* a client cookie alone, or with a server cookie not valid here */
	ZB_COOKIE_VALID,  /* a server cookie of ours for this address, not expired */
};

struct zb_cookie_memo {
	uint8_t cookie[ZB_COOKIE_LEN];
	uint8_t addr[16]; /* IPv4 as an IPv4-mapped IPv6 address */
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
