/*
 * cookies.c - DNS cookies: server cookies made and checked as RFC 9018 §4 says, and a
 * per-worker memo of the ones already known good.
 */
#include "query/cookies.h"

#include <netinet/in.h>
#include <string.h>
#include <time.h>

#include "query/siphash.h"


void zb_cookies_init(struct zb_cookies *c, const uint8_t secret[ZB_COOKIE_SECRET_LEN])
{
	memset(c, 0, sizeof(*c));
	c->k0 = zb_sip_le64(secret);
	c->k1 = zb_sip_le64(secret + 8);
	zb_cookies_tick(c);
}

void zb_cookies_tick(struct zb_cookies *c)
{
	c->now = (uint32_t)time(NULL);
}

/* SipHash-2-4 over Client Cookie | Version | Reserved | Timestamp | Client-IP: `head` is the
 * first 16 of them, as received or as made. */
static uint64_t cookie_hash(uint64_t k0, uint64_t k1, const uint8_t head[16], const uint8_t *ip,
			    unsigned ip_len)
{
	uint8_t in[32];
	memcpy(in, head, 16);
	memcpy(in + 16, ip, ip_len);
	return zb_siphash24(k0, k1, in, 16 + ip_len);
}

void zb_cookie_make(uint64_t k0, uint64_t k1, const uint8_t *client_cookie, const uint8_t *ip,
		    unsigned ip_len, uint32_t timestamp, uint8_t out[ZB_COOKIE_SERVER_LEN])
{
	uint8_t head[16] = { [8] = ZB_COOKIE_VERSION };
	memcpy(head, client_cookie, ZB_COOKIE_CLIENT_LEN);
	for (int i = 0; i < 4; i++)
		head[12 + i] = (uint8_t)(timestamp >> (24 - 8 * i));
	uint64_t hash = cookie_hash(k0, k1, head, ip, ip_len);
	memcpy(out, head + 8, 8);
	for (int i = 0; i < 8; i++)
		out[8 + i] = (uint8_t)(hash >> (8 * i)); /* as SipHash's reference writes it */
}

/* The address a cookie is bound to: `ip` (4 or 16 octets, returned in *ip_len) and the
 * memo's form of it, IPv4 mapped into IPv6. An IPv4-mapped IPv6 peer is the IPv4 one. */
static const uint8_t *client_ip(const struct sockaddr_storage *addr, uint8_t mapped[16],
				unsigned *ip_len)
{
	static const uint8_t v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	memcpy(mapped, v4_prefix, 12);
	if (addr->ss_family == AF_INET) {
		memcpy(mapped + 12, &((const struct sockaddr_in *)addr)->sin_addr, 4);
		*ip_len = 4;
		return mapped + 12;
	}
	memcpy(mapped, ((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr, 16);
	int v4 = memcmp(mapped, v4_prefix, 12) == 0;
	*ip_len = v4 ? 4 : 16;
	return v4 ? mapped + 12 : mapped;
}

static uint32_t timestamp_of(const uint8_t *server_cookie)
{
	return (uint32_t)server_cookie[4] << 24 | (uint32_t)server_cookie[5] << 16 |
	       (uint32_t)server_cookie[6] << 8 | server_cookie[7];
}

/* Seconds since `timestamp`, in serial number arithmetic (RFC 1982): negative when the
 * cookie's maker ran ahead. */
static int32_t age_of(uint32_t now, uint32_t timestamp)
{
	return (int32_t)(now - timestamp);
}

static void memo_put(struct zb_cookie_memo *m, const uint8_t *cookie, const uint8_t mapped[16])
{
	memcpy(m->cookie, cookie, sizeof(m->cookie));
	memcpy(m->addr, mapped, sizeof(m->addr));
}

enum zb_cookie_verdict zb_cookie_answer(const struct zb_client *client, const uint8_t *cookie,
					unsigned len, uint8_t reply[ZB_COOKIE_LEN])
{
	struct zb_cookies *c = client->cookies;
	uint8_t mapped[16];
	unsigned ip_len;
	const uint8_t *ip = client_ip(client->addr, mapped, &ip_len);

	if (len == ZB_COOKIE_LEN) {
		int32_t age = age_of(c->now, timestamp_of(cookie + ZB_COOKIE_CLIENT_LEN));
		int usable = age <= ZB_COOKIE_MAX_AGE && age >= -ZB_COOKIE_MAX_AHEAD;
		struct zb_cookie_memo *m = zb_cookie_memo_slot(c, cookie);
		int known = zb_cookie_memo_holds(m, cookie, mapped);
		if (usable && !known && cookie[ZB_COOKIE_CLIENT_LEN] == ZB_COOKIE_VERSION) {
			uint64_t hash = cookie_hash(c->k0, c->k1, cookie, ip, ip_len);
			known = zb_sip_le64(cookie + 16) == hash;
			if (known)
				memo_put(m, cookie, mapped);
		}
		if (usable && known && age <= ZB_COOKIE_RENEW_AGE) {
			memcpy(reply, cookie, ZB_COOKIE_LEN);
			return ZB_COOKIE_VALID;
		}
		if (usable && known) {
			memcpy(reply, cookie, ZB_COOKIE_CLIENT_LEN);
			zb_cookie_make(c->k0, c->k1, cookie, ip, ip_len, c->now,
				       reply + ZB_COOKIE_CLIENT_LEN);
			return ZB_COOKIE_VALID;
		}
	}
	/* A client cookie alone, or a server cookie not good here (another server's, another
	 * address's, expired): a new one (RFC 7873 §5.2.3, §5.2.4). Remembered, so that the
	 * client's next query costs no hash. */
	memcpy(reply, cookie, ZB_COOKIE_CLIENT_LEN);
	zb_cookie_make(c->k0, c->k1, cookie, ip, ip_len, c->now, reply + ZB_COOKIE_CLIENT_LEN);
	memo_put(zb_cookie_memo_slot(c, reply), reply, mapped);
	return ZB_COOKIE_CLIENT;
}
