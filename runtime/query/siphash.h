/*
 * siphash.h - SipHash-2-4 (Aumasson and Bernstein, 2012), the pseudorandom function of DNS
 * server cookies (RFC 9018 §4.4): a 64-bit keyed hash of a short message.
 */
#ifndef ZB_SIPHASH_H
#define ZB_SIPHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t zb_sip_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#define ZB_SIP_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define ZB_SIP_ROUND(v0, v1, v2, v3)                                                        \
	do {                                                                                \
		v0 += v1; v1 = ZB_SIP_ROTL(v1, 13); v1 ^= v0; v0 = ZB_SIP_ROTL(v0, 32);     \
		v2 += v3; v3 = ZB_SIP_ROTL(v3, 16); v3 ^= v2;                               \
		v0 += v3; v3 = ZB_SIP_ROTL(v3, 21); v3 ^= v0;                               \
		v2 += v1; v1 = ZB_SIP_ROTL(v1, 17); v1 ^= v2; v2 = ZB_SIP_ROTL(v2, 32);     \
	} while (0)

/* SipHash-2-4 of `len` octets under the 16-octet key k0 (octets 0-7, little-endian), k1. */
static inline uint64_t zb_siphash24(uint64_t k0, uint64_t k1, const uint8_t *in, size_t len)
{
	uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
	size_t whole = len & ~(size_t)7;

	for (size_t i = 0; i < whole; i += 8) {
		uint64_t m = zb_sip_le64(in + i);
		v3 ^= m;
		ZB_SIP_ROUND(v0, v1, v2, v3);
		ZB_SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	uint8_t tail[8] = { 0 };
	memcpy(tail, in + whole, len - whole);
	uint64_t b = (uint64_t)len << 56 | zb_sip_le64(tail);
	v3 ^= b;
	ZB_SIP_ROUND(v0, v1, v2, v3);
	ZB_SIP_ROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		ZB_SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

#endif
