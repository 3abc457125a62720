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
/* Ch and Maj in forms with fewer operations: d ^ (b & (c ^ d)) picks c where b is set, d
 * elsewhere; (b & c) and d & (b ^ c) share no bit, so their sum is the majority. */
#define ZB_SHA1_R0(a, b, c, d, e, wt) \
	ZB_SHA1_ROUND(a, b, c, d, e, (d) ^ ((b) & ((c) ^ (d))), 0x5A827999, wt)
#define ZB_SHA1_R1(a, b, c, d, e, wt) ZB_SHA1_ROUND(a, b, c, d, e, (b) ^ (c) ^ (d), 0x6ED9EBA1, wt)
#define ZB_SHA1_R2(a, b, c, d, e, wt) \
	ZB_SHA1_ROUND(a, b, c, d, e, ((b) & (c)) + ((d) & ((b) ^ (c))), 0x8F1BBCDC, wt)
#define ZB_SHA1_R3(a, b, c, d, e, wt) ZB_SHA1_ROUND(a, b, c, d, e, (b) ^ (c) ^ (d), 0xCA62C1D6, wt)

/* One 64-octet block into the state (FIPS 180-4 §6.1.2), its 80 rounds written out: an NSEC3
 * denial hashes a name at run time, and the loop took twice the instructions. */
static inline void zb_sha1_block_portable(uint32_t h[5], const uint8_t *p)
{
	uint32_t w[16];
#pragma GCC unroll 16
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

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

/* Whether the processor has the SHA extensions and SSSE3 and SSE4.1, which the blocks using
 * them need too (CPUID leaf 7 EBX bit 29; leaf 1 ECX bits 9 and 19). The core's SHA-256
 * (compiler/core/sha256.c) asks the same. */
static inline int zb_cpu_has_sha_extensions(void)
{
	unsigned a, b, c, d, sha;
	return __get_cpuid_count(7, 0, &a, &sha, &c, &d) && __get_cpuid(1, &a, &b, &c, &d) &&
	       (sha >> 29 & 1) && (c >> 9 & 1) && (c >> 19 & 1);
}

/* Found once before main: most x86-64 servers sold since 2017 have them, and they take the
 * block from about 1,400 instructions to about 150. Per translation unit, as this header is. */
static int zb_sha1_ni;

__attribute__((constructor)) static void zb_sha1_detect(void)
{
	zb_sha1_ni = zb_cpu_has_sha_extensions();
}

/* Four rounds (SHA1RNDS4: function and constant `f` of FIPS 180-4 §4.1.1, §4.2.1), `e` the
 * fifth working variable already added to the group's words. */
#define ZB_SHA1_NI_ROUNDS(abcd, e, f) _mm_sha1rnds4_epu32((abcd), (e), (f))
/* The next group of four schedule words from the four before it (§6.1.2 step 1): the
 * instructions take W[t-16] ^ W[t-14], then W[t-8], then W[t-3] and the rotation. */
#define ZB_SHA1_NI_NEXT(w0, w1, w2, w3) \
	((w0) = _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32((w0), (w1)), (w2)), (w3)))
/* Rounds 4i..4i+3 for i > 0: E is the A of four rounds back, rotated, which SHA1NEXTE
 * adds to the words. */
#define ZB_SHA1_NI_GROUP(abcd, last, w, f) do { \
	__m128i e_ = _mm_sha1nexte_epu32((last), (w)); \
	(last) = (abcd); \
	(abcd) = ZB_SHA1_NI_ROUNDS((abcd), e_, (f)); \
} while (0)

/* Four groups, their schedule words made in turn in w0..w3. */
#define ZB_SHA1_NI_FOUR(abcd, last, w0, w1, w2, w3, f0, f1, f2, f3) do { \
	ZB_SHA1_NI_GROUP(abcd, last, ZB_SHA1_NI_NEXT(w0, w1, w2, w3), f0); \
	ZB_SHA1_NI_GROUP(abcd, last, ZB_SHA1_NI_NEXT(w1, w2, w3, w0), f1); \
	ZB_SHA1_NI_GROUP(abcd, last, ZB_SHA1_NI_NEXT(w2, w3, w0, w1), f2); \
	ZB_SHA1_NI_GROUP(abcd, last, ZB_SHA1_NI_NEXT(w3, w0, w1, w2), f3); \
} while (0)

/* The block with the SHA extensions. The state and the words are held most significant lane
 * first (A, or W[t], in lane 3), as the instructions expect. */
__attribute__((target("sha,ssse3,sse4.1"))) static inline void
zb_sha1_block_ni(uint32_t h[5], const uint8_t *p)
{
	/* Reversing the 16 octets makes the big-endian words and puts W[t] in lane 3. */
	const __m128i reverse = _mm_set_epi64x(0x0001020304050607, 0x08090a0b0c0d0e0f);
	__m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0x1B);
	__m128i e0 = _mm_set_epi32((int)h[4], 0, 0, 0);
	__m128i abcd0 = abcd, last = abcd;
	__m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), reverse);
	__m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), reverse);
	__m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), reverse);
	__m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), reverse);
	abcd = ZB_SHA1_NI_ROUNDS(abcd, _mm_add_epi32(e0, w0), 0);
	ZB_SHA1_NI_GROUP(abcd, last, w1, 0);
	ZB_SHA1_NI_GROUP(abcd, last, w2, 0);
	ZB_SHA1_NI_GROUP(abcd, last, w3, 0);
	/* Rounds 16-79, four groups at a time, each group's function by its rounds (20 each). */
	ZB_SHA1_NI_FOUR(abcd, last, w0, w1, w2, w3, 0, 1, 1, 1);
	ZB_SHA1_NI_FOUR(abcd, last, w0, w1, w2, w3, 1, 1, 2, 2);
	ZB_SHA1_NI_FOUR(abcd, last, w0, w1, w2, w3, 2, 2, 2, 3);
	ZB_SHA1_NI_FOUR(abcd, last, w0, w1, w2, w3, 3, 3, 3, 3);
	/* The final E, the A of four rounds back rotated, added to the old E. */
	e0 = _mm_sha1nexte_epu32(last, e0);
	abcd = _mm_shuffle_epi32(_mm_add_epi32(abcd, abcd0), 0x1B);
	_mm_storeu_si128((__m128i *)h, abcd);
	h[4] = (uint32_t)_mm_extract_epi32(e0, 3);
}

static inline void zb_sha1_block(uint32_t h[5], const uint8_t *p)
{
	if (zb_sha1_ni)
		zb_sha1_block_ni(h, p);
	else
		zb_sha1_block_portable(h, p);
}
#else
#define zb_sha1_block zb_sha1_block_portable
#endif

/* SHA-1 of `a` then `b` (either may be empty). */
static inline void zb_sha1_two(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
			       uint8_t out[ZB_SHA1_LEN])
{
	uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
	uint8_t block[64];
	size_t total = alen + blen, fill = 0;
	if (total <= 55) {
		/* One block, the usual case (a name without salt): the message, then the padding:
		 * a 1 bit, zeros, the length in bits (FIPS 180-4 §5.1.1). */
		memset(block, 0, sizeof block);
		memcpy(block, a, alen);
		memcpy(block + alen, b, blen);
		block[total] = 0x80;
	} else {
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
	}
	uint64_t bits = __builtin_bswap64((uint64_t)total * 8);
	memcpy(block + 56, &bits, 8);
	zb_sha1_block(h, block);
	for (int i = 0; i < 5; i++) {
		uint32_t word = __builtin_bswap32(h[i]);
		memcpy(out + 4 * i, &word, 4);
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
