/*
 * nsec3hash.h - NSEC3's hash of a name (RFC 5155 §5): SHA-1 (RFC 3174, FIPS 180-4) iterated
 * over the name's canonical wire form and the salt. The responder hashes the next closer
 * name of a query that has no node, to find the NSEC3 that covers it; the compiler's core
 * hashes every owner to check the chain it is given. Written once for both, with libc alone;
 * tests/unit/test_nsec3hash.py holds it to Python's hashlib and to RFC 5155 Appendix A.
 */
#ifndef ZB_NSEC3HASH_H
#define ZB_NSEC3HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "zonedata.h"  /* a little-endian host */

#define ZB_SHA1_LEN 20
/* The longest input: a name (255) and a salt (255). */
#define ZB_NSEC3_INPUT_MAX 510

static inline uint32_t zb_rol32(uint32_t x, unsigned n)
{
	return x << n | x >> (32 - n);
}

/* The message schedule's word t (t >= 16), in a ring of 16 (FIPS 180-4 §6.1.2 step 1). */
#define ZB_SHA1_W(w, t) \
	((w)[(t) & 15] = zb_rol32((w)[((t) + 13) & 15] ^ (w)[((t) + 8) & 15] ^ \
				   (w)[((t) + 2) & 15] ^ (w)[(t) & 15], 1))
/* A round (§6.1.2 step 3), the working variables named in turn rather than moved: e takes
 * the new value, b its rotation. */
#define ZB_SHA1_ROUND(a, b, c, d, e, f, k, wt) do { \
	(e) += zb_rol32((a), 5) + (f) + (k) + (wt); \
	(b) = zb_rol32((b), 30); \
} while (0)
#define ZB_SHA1_R0(a, b, c, d, e, wt) \
	ZB_SHA1_ROUND(a, b, c, d, e, ((b) & (c)) | (~(b) & (d)), 0x5A827999, wt)
#define ZB_SHA1_R1(a, b, c, d, e, wt) ZB_SHA1_ROUND(a, b, c, d, e, (b) ^ (c) ^ (d), 0x6ED9EBA1, wt)
#define ZB_SHA1_R2(a, b, c, d, e, wt) \
	ZB_SHA1_ROUND(a, b, c, d, e, ((b) & (c)) | ((b) & (d)) | ((c) & (d)), 0x8F1BBCDC, wt)
#define ZB_SHA1_R3(a, b, c, d, e, wt) ZB_SHA1_ROUND(a, b, c, d, e, (b) ^ (c) ^ (d), 0xCA62C1D6, wt)

/* One 64-octet block into the state (FIPS 180-4 §6.1.2), its 80 rounds written out: an NSEC3
 * denial hashes a name at run time, and the loop took twice the instructions. */
static inline void zb_sha1_block(uint32_t h[5], const uint8_t *p)
{
	uint32_t w[16];
	for (int i = 0; i < 16; i++) {
		uint32_t v;
		memcpy(&v, p + 4 * i, 4);
		w[i] = __builtin_bswap32(v);  /* big-endian words; zonedata.h: a little-endian host */
	}
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
	ZB_SHA1_R0(a, b, c, d, e, w[0]);
	ZB_SHA1_R0(e, a, b, c, d, w[1]);
	ZB_SHA1_R0(d, e, a, b, c, w[2]);
	ZB_SHA1_R0(c, d, e, a, b, w[3]);
	ZB_SHA1_R0(b, c, d, e, a, w[4]);
	ZB_SHA1_R0(a, b, c, d, e, w[5]);
	ZB_SHA1_R0(e, a, b, c, d, w[6]);
	ZB_SHA1_R0(d, e, a, b, c, w[7]);
	ZB_SHA1_R0(c, d, e, a, b, w[8]);
	ZB_SHA1_R0(b, c, d, e, a, w[9]);
	ZB_SHA1_R0(a, b, c, d, e, w[10]);
	ZB_SHA1_R0(e, a, b, c, d, w[11]);
	ZB_SHA1_R0(d, e, a, b, c, w[12]);
	ZB_SHA1_R0(c, d, e, a, b, w[13]);
	ZB_SHA1_R0(b, c, d, e, a, w[14]);
	ZB_SHA1_R0(a, b, c, d, e, w[15]);
	ZB_SHA1_R0(e, a, b, c, d, ZB_SHA1_W(w, 16));
	ZB_SHA1_R0(d, e, a, b, c, ZB_SHA1_W(w, 17));
	ZB_SHA1_R0(c, d, e, a, b, ZB_SHA1_W(w, 18));
	ZB_SHA1_R0(b, c, d, e, a, ZB_SHA1_W(w, 19));
	ZB_SHA1_R1(a, b, c, d, e, ZB_SHA1_W(w, 20));
	ZB_SHA1_R1(e, a, b, c, d, ZB_SHA1_W(w, 21));
	ZB_SHA1_R1(d, e, a, b, c, ZB_SHA1_W(w, 22));
	ZB_SHA1_R1(c, d, e, a, b, ZB_SHA1_W(w, 23));
	ZB_SHA1_R1(b, c, d, e, a, ZB_SHA1_W(w, 24));
	ZB_SHA1_R1(a, b, c, d, e, ZB_SHA1_W(w, 25));
	ZB_SHA1_R1(e, a, b, c, d, ZB_SHA1_W(w, 26));
	ZB_SHA1_R1(d, e, a, b, c, ZB_SHA1_W(w, 27));
	ZB_SHA1_R1(c, d, e, a, b, ZB_SHA1_W(w, 28));
	ZB_SHA1_R1(b, c, d, e, a, ZB_SHA1_W(w, 29));
	ZB_SHA1_R1(a, b, c, d, e, ZB_SHA1_W(w, 30));
	ZB_SHA1_R1(e, a, b, c, d, ZB_SHA1_W(w, 31));
	ZB_SHA1_R1(d, e, a, b, c, ZB_SHA1_W(w, 32));
	ZB_SHA1_R1(c, d, e, a, b, ZB_SHA1_W(w, 33));
	ZB_SHA1_R1(b, c, d, e, a, ZB_SHA1_W(w, 34));
	ZB_SHA1_R1(a, b, c, d, e, ZB_SHA1_W(w, 35));
	ZB_SHA1_R1(e, a, b, c, d, ZB_SHA1_W(w, 36));
	ZB_SHA1_R1(d, e, a, b, c, ZB_SHA1_W(w, 37));
	ZB_SHA1_R1(c, d, e, a, b, ZB_SHA1_W(w, 38));
	ZB_SHA1_R1(b, c, d, e, a, ZB_SHA1_W(w, 39));
	ZB_SHA1_R2(a, b, c, d, e, ZB_SHA1_W(w, 40));
	ZB_SHA1_R2(e, a, b, c, d, ZB_SHA1_W(w, 41));
	ZB_SHA1_R2(d, e, a, b, c, ZB_SHA1_W(w, 42));
	ZB_SHA1_R2(c, d, e, a, b, ZB_SHA1_W(w, 43));
	ZB_SHA1_R2(b, c, d, e, a, ZB_SHA1_W(w, 44));
	ZB_SHA1_R2(a, b, c, d, e, ZB_SHA1_W(w, 45));
	ZB_SHA1_R2(e, a, b, c, d, ZB_SHA1_W(w, 46));
	ZB_SHA1_R2(d, e, a, b, c, ZB_SHA1_W(w, 47));
	ZB_SHA1_R2(c, d, e, a, b, ZB_SHA1_W(w, 48));
	ZB_SHA1_R2(b, c, d, e, a, ZB_SHA1_W(w, 49));
	ZB_SHA1_R2(a, b, c, d, e, ZB_SHA1_W(w, 50));
	ZB_SHA1_R2(e, a, b, c, d, ZB_SHA1_W(w, 51));
	ZB_SHA1_R2(d, e, a, b, c, ZB_SHA1_W(w, 52));
	ZB_SHA1_R2(c, d, e, a, b, ZB_SHA1_W(w, 53));
	ZB_SHA1_R2(b, c, d, e, a, ZB_SHA1_W(w, 54));
	ZB_SHA1_R2(a, b, c, d, e, ZB_SHA1_W(w, 55));
	ZB_SHA1_R2(e, a, b, c, d, ZB_SHA1_W(w, 56));
	ZB_SHA1_R2(d, e, a, b, c, ZB_SHA1_W(w, 57));
	ZB_SHA1_R2(c, d, e, a, b, ZB_SHA1_W(w, 58));
	ZB_SHA1_R2(b, c, d, e, a, ZB_SHA1_W(w, 59));
	ZB_SHA1_R3(a, b, c, d, e, ZB_SHA1_W(w, 60));
	ZB_SHA1_R3(e, a, b, c, d, ZB_SHA1_W(w, 61));
	ZB_SHA1_R3(d, e, a, b, c, ZB_SHA1_W(w, 62));
	ZB_SHA1_R3(c, d, e, a, b, ZB_SHA1_W(w, 63));
	ZB_SHA1_R3(b, c, d, e, a, ZB_SHA1_W(w, 64));
	ZB_SHA1_R3(a, b, c, d, e, ZB_SHA1_W(w, 65));
	ZB_SHA1_R3(e, a, b, c, d, ZB_SHA1_W(w, 66));
	ZB_SHA1_R3(d, e, a, b, c, ZB_SHA1_W(w, 67));
	ZB_SHA1_R3(c, d, e, a, b, ZB_SHA1_W(w, 68));
	ZB_SHA1_R3(b, c, d, e, a, ZB_SHA1_W(w, 69));
	ZB_SHA1_R3(a, b, c, d, e, ZB_SHA1_W(w, 70));
	ZB_SHA1_R3(e, a, b, c, d, ZB_SHA1_W(w, 71));
	ZB_SHA1_R3(d, e, a, b, c, ZB_SHA1_W(w, 72));
	ZB_SHA1_R3(c, d, e, a, b, ZB_SHA1_W(w, 73));
	ZB_SHA1_R3(b, c, d, e, a, ZB_SHA1_W(w, 74));
	ZB_SHA1_R3(a, b, c, d, e, ZB_SHA1_W(w, 75));
	ZB_SHA1_R3(e, a, b, c, d, ZB_SHA1_W(w, 76));
	ZB_SHA1_R3(d, e, a, b, c, ZB_SHA1_W(w, 77));
	ZB_SHA1_R3(c, d, e, a, b, ZB_SHA1_W(w, 78));
	ZB_SHA1_R3(b, c, d, e, a, ZB_SHA1_W(w, 79));
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

/* SHA-1 of `a` then `b` (either may be empty). */
static inline void zb_sha1_two(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
			       uint8_t out[ZB_SHA1_LEN])
{
	uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
	uint8_t block[64];
	size_t total = alen + blen, fill = 0;
	/* Whole blocks, then the last with the padding: a 1 bit, zeros, the length in bits. */
	for (size_t done = 0; done < total;) {
		size_t take = done < alen ? alen - done : total - done;
		const uint8_t *from = done < alen ? a + done : b + (done - alen);
		if (take > 64 - fill)
			take = 64 - fill;
		memcpy(block + fill, from, take);
		fill += take;
		done += take;
		if (fill == 64) {
			zb_sha1_block(h, block);
			fill = 0;
		}
	}
	block[fill++] = 0x80;
	if (fill > 56) {
		memset(block + fill, 0, 64 - fill);
		zb_sha1_block(h, block);
		fill = 0;
	}
	memset(block + fill, 0, 56 - fill);
	uint64_t bits = (uint64_t)total * 8;
	for (int i = 0; i < 8; i++)
		block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	zb_sha1_block(h, block);
	for (int i = 0; i < 5; i++) {
		out[4 * i] = (uint8_t)(h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(h[i] >> 8);
		out[4 * i + 3] = (uint8_t)h[i];
	}
}

/* RFC 5155 §5: IH(salt, x, 0) = H(x || salt), IH(salt, x, k) = H(IH(salt, x, k-1) || salt),
 * x the name in canonical (lowercased, uncompressed) wire form; hash algorithm 1, SHA-1. */
static inline void zb_nsec3_hash(const uint8_t *name, size_t name_len, const uint8_t *salt,
				 size_t salt_len, unsigned iterations, uint8_t out[ZB_SHA1_LEN])
{
	zb_sha1_two(name, name_len, salt, salt_len, out);
	for (unsigned i = 0; i < iterations; i++) {
		uint8_t digest[ZB_SHA1_LEN];
		memcpy(digest, out, ZB_SHA1_LEN);
		zb_sha1_two(digest, ZB_SHA1_LEN, salt, salt_len, out);
	}
}

#endif
