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

/* The message schedule's word t (FIPS 180-4 §6.1.2 step 1), in a ring of 16: the block's own
 * words first, then each made from four before it. `t` is a constant: the choice folds. */
#define ZB_SHA1_W(w, t) \
	((t) < 16 ? (w)[(t) & 15] \
		  : ((w)[(t) & 15] = zb_rol32((w)[((t) + 13) & 15] ^ (w)[((t) + 8) & 15] ^ \
					      (w)[((t) + 2) & 15] ^ (w)[(t) & 15], 1)))
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
#define ZB_SHA1_STEP(g, a, b, c, d, e, t) ZB_SHA1_R##g(a, b, c, d, e, ZB_SHA1_W(w, t))

/* The 80 rounds written out, `STEP(g, a, b, c, d, e, t)` for round t of the 20 that use
 * function g: the names come back to their places every five rounds. Written out for one
 * block and for the lanes (zb_sha1_x4, zb_sha1_x8): the loop took twice the instructions. */
#define ZB_SHA1_FIVE(STEP, g, t) \
	STEP(g, a, b, c, d, e, (t)); STEP(g, e, a, b, c, d, (t) + 1); \
	STEP(g, d, e, a, b, c, (t) + 2); STEP(g, c, d, e, a, b, (t) + 3); \
	STEP(g, b, c, d, e, a, (t) + 4)
#define ZB_SHA1_TWENTY(STEP, g) \
	ZB_SHA1_FIVE(STEP, g, 20 * g); ZB_SHA1_FIVE(STEP, g, 20 * g + 5); \
	ZB_SHA1_FIVE(STEP, g, 20 * g + 10); ZB_SHA1_FIVE(STEP, g, 20 * g + 15)
#define ZB_SHA1_EIGHTY(STEP) \
	ZB_SHA1_TWENTY(STEP, 0); ZB_SHA1_TWENTY(STEP, 1); ZB_SHA1_TWENTY(STEP, 2); \
	ZB_SHA1_TWENTY(STEP, 3)

/* The initial hash value (§5.3.1). */
#define ZB_SHA1_H0 0x67452301
#define ZB_SHA1_H1 0xEFCDAB89
#define ZB_SHA1_H2 0x98BADCFE
#define ZB_SHA1_H3 0x10325476
#define ZB_SHA1_H4 0xC3D2E1F0

/* One 64-octet block into the state (FIPS 180-4 §6.1.2). */
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
	ZB_SHA1_EIGHTY(ZB_SHA1_STEP);
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
 * (compiler/core/base/sha256.c) asks the same. */
static inline int zb_cpu_has_sha_extensions(void)
{
	unsigned a, b, c, d, sha;
	return __get_cpuid_count(7, 0, &a, &sha, &c, &d) && __get_cpuid(1, &a, &b, &c, &d) &&
	       (sha >> 29 & 1) && (c >> 9 & 1) && (c >> 19 & 1);
}

/* Found once before main: most x86-64 servers sold since 2017 have them, and they take the
 * block from about 1,400 instructions to about 150. Weak, so that every translation unit
 * including this header shares one flag, which a test may clear to run the other blocks. */
__attribute__((weak)) int zb_sha1_ni;

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

/* The one block of a message of `alen` then `blen` octets, 55 at most: the message, then
 * the padding: a 1 bit, zeros, the length in bits (FIPS 180-4 §5.1.1). */
static inline void zb_sha1_pad_one(uint8_t block[64], const uint8_t *a, size_t alen,
				   const uint8_t *b, size_t blen)
{
	memset(block, 0, 64);
	memcpy(block, a, alen);
	memcpy(block + alen, b, blen);
	block[alen + blen] = 0x80;
	uint64_t bits = __builtin_bswap64((uint64_t)(alen + blen) * 8);
	memcpy(block + 56, &bits, 8);
}

/* The state as the digest: its words big-endian. */
static inline void zb_sha1_digest(const uint32_t h[5], uint8_t out[ZB_SHA1_LEN])
{
	for (int i = 0; i < 5; i++) {
		uint32_t word = __builtin_bswap32(h[i]);
		memcpy(out + 4 * i, &word, 4);
	}
}

/* SHA-1 of `a` then `b` (either may be empty). */
static inline void zb_sha1_two(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
			       uint8_t out[ZB_SHA1_LEN])
{
	uint32_t h[5] = {ZB_SHA1_H0, ZB_SHA1_H1, ZB_SHA1_H2, ZB_SHA1_H3, ZB_SHA1_H4};
	uint8_t block[64];
	size_t total = alen + blen, fill = 0;
	if (total <= 55) { /* one block, the usual case: a name without salt */
		zb_sha1_pad_one(block, a, alen, b, blen);
		zb_sha1_block(h, block);
		zb_sha1_digest(h, out);
		return;
	}
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
	uint64_t bits = __builtin_bswap64((uint64_t)total * 8);
	memcpy(block + 56, &bits, 8);
	zb_sha1_block(h, block);
	zb_sha1_digest(h, out);
}

/* The longest message of one block. */
#define ZB_SHA1_ONE_BLOCK 55
/* The most one-block messages hashed at once: the lanes of AVX2's registers. */
#define ZB_SHA1_LANES_MAX 8

/*
 * One-block messages (zb_sha1_pad_one) hashed four or eight at once, one in each 32-bit lane
 * of the SSE2 registers every x86-64 has, or of AVX2's: a quarter or an eighth of the
 * instructions of the blocks one by one, for the processors without the SHA extensions. A
 * UDP batch's names that need a hash go together (runtime/query/denial.c). The rounds are the
 * one-block ones (ZB_SHA1_EIGHTY), on vectors: V names the operations' width.
 */
#if defined(__x86_64__)
#define ZB_LANES_ROL(V, x, n) ZB_##V##_OR(ZB_##V##_SHL((x), (n)), ZB_##V##_SHR((x), 32 - (n)))
#define ZB_LANES_W(V, w, t) \
	((t) < 16 ? (w)[(t) & 15] \
		  : ((w)[(t) & 15] = ZB_LANES_ROL(V, ZB_##V##_XOR( \
			ZB_##V##_XOR((w)[((t) + 13) & 15], (w)[((t) + 8) & 15]), \
			ZB_##V##_XOR((w)[((t) + 2) & 15], (w)[(t) & 15])), 1)))
#define ZB_LANES_F0(V, b, c, d) ZB_##V##_XOR((d), ZB_##V##_AND((b), ZB_##V##_XOR((c), (d))))
#define ZB_LANES_F1(V, b, c, d) ZB_##V##_XOR(ZB_##V##_XOR((b), (c)), (d))
#define ZB_LANES_F2(V, b, c, d) \
	ZB_##V##_ADD(ZB_##V##_AND((b), (c)), ZB_##V##_AND((d), ZB_##V##_XOR((b), (c))))
#define ZB_LANES_F3 ZB_LANES_F1
#define ZB_LANES_STEP(V, g, a, b, c, d, e, t) do { \
	(e) = ZB_##V##_ADD(ZB_##V##_ADD((e), ZB_LANES_ROL(V, (a), 5)), \
			   ZB_##V##_ADD(ZB_LANES_F##g(V, (b), (c), (d)), \
					ZB_##V##_ADD(ZB_LANES_W(V, w, t), k[g]))); \
	(b) = ZB_LANES_ROL(V, (b), 30); \
} while (0)
/* The state after the rounds, added to the initial value, as each lane's digest. */
#define ZB_LANES_DIGESTS(V, lanes, out) do { \
	uint32_t h_[5][lanes]; \
	ZB_##V##_STORE(h_[0], ZB_##V##_ADD(a, ZB_##V##_SET(ZB_SHA1_H0))); \
	ZB_##V##_STORE(h_[1], ZB_##V##_ADD(b, ZB_##V##_SET(ZB_SHA1_H1))); \
	ZB_##V##_STORE(h_[2], ZB_##V##_ADD(c, ZB_##V##_SET(ZB_SHA1_H2))); \
	ZB_##V##_STORE(h_[3], ZB_##V##_ADD(d, ZB_##V##_SET(ZB_SHA1_H3))); \
	ZB_##V##_STORE(h_[4], ZB_##V##_ADD(e, ZB_##V##_SET(ZB_SHA1_H4))); \
	for (int j_ = 0; j_ < (lanes); j_++) \
		zb_sha1_digest((const uint32_t[5]){h_[0][j_], h_[1][j_], h_[2][j_], h_[3][j_], \
						   h_[4][j_]}, (out)[j_]); \
} while (0)
#define ZB_LANES_ROUNDS(V) \
	const __typeof__(w[0]) k[4] = { ZB_##V##_SET(0x5A827999), ZB_##V##_SET(0x6ED9EBA1), \
					ZB_##V##_SET(0x8F1BBCDC), ZB_##V##_SET(0xCA62C1D6) }; \
	__typeof__(w[0]) a = ZB_##V##_SET(ZB_SHA1_H0), b = ZB_##V##_SET(ZB_SHA1_H1), \
			 c = ZB_##V##_SET(ZB_SHA1_H2), d = ZB_##V##_SET(ZB_SHA1_H3), \
			 e = ZB_##V##_SET(ZB_SHA1_H4); \
	ZB_SHA1_EIGHTY(ZB_##V##_STEP)

#define ZB_X4_ADD _mm_add_epi32
#define ZB_X4_XOR _mm_xor_si128
#define ZB_X4_AND _mm_and_si128
#define ZB_X4_OR _mm_or_si128
#define ZB_X4_SHL _mm_slli_epi32
#define ZB_X4_SHR _mm_srli_epi32
#define ZB_X4_SET(x) _mm_set1_epi32((int)(x))
#define ZB_X4_STORE(to, x) _mm_storeu_si128((__m128i *)(to), (x))
#define ZB_X4_STEP(g, a, b, c, d, e, t) ZB_LANES_STEP(X4, g, a, b, c, d, e, t)

/* The 32-bit words of x from big-endian: the halves of each swapped, then their octets. */
static inline __m128i zb_x4_from_big_endian(__m128i x)
{
	x = _mm_shufflehi_epi16(_mm_shufflelo_epi16(x, 0xB1), 0xB1);
	return _mm_or_si128(_mm_slli_epi16(x, 8), _mm_srli_epi16(x, 8));
}

static inline void zb_sha1_x4(const uint8_t block[][64], uint8_t out[][ZB_SHA1_LEN])
{
	__m128i w[16];
	/* Word t of every block into w[t], lane j block j: each group of four words of the
	 * four blocks transposed. */
	for (int i = 0; i < 16; i += 4) {
		__m128i r0 = _mm_loadu_si128((const __m128i *)(block[0] + 4 * i));
		__m128i r1 = _mm_loadu_si128((const __m128i *)(block[1] + 4 * i));
		__m128i r2 = _mm_loadu_si128((const __m128i *)(block[2] + 4 * i));
		__m128i r3 = _mm_loadu_si128((const __m128i *)(block[3] + 4 * i));
		__m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, r3);
		__m128i t2 = _mm_unpackhi_epi32(r0, r1), t3 = _mm_unpackhi_epi32(r2, r3);
		w[i] = zb_x4_from_big_endian(_mm_unpacklo_epi64(t0, t1));
		w[i + 1] = zb_x4_from_big_endian(_mm_unpackhi_epi64(t0, t1));
		w[i + 2] = zb_x4_from_big_endian(_mm_unpacklo_epi64(t2, t3));
		w[i + 3] = zb_x4_from_big_endian(_mm_unpackhi_epi64(t2, t3));
	}
	ZB_LANES_ROUNDS(X4);
	ZB_LANES_DIGESTS(X4, 4, out);
}

#define ZB_X8_ADD _mm256_add_epi32
#define ZB_X8_XOR _mm256_xor_si256
#define ZB_X8_AND _mm256_and_si256
#define ZB_X8_OR _mm256_or_si256
#define ZB_X8_SHL _mm256_slli_epi32
#define ZB_X8_SHR _mm256_srli_epi32
#define ZB_X8_SET(x) _mm256_set1_epi32((int)(x))
#define ZB_X8_STORE(to, x) _mm256_storeu_si256((__m256i *)(to), (x))
#define ZB_X8_STEP(g, a, b, c, d, e, t) ZB_LANES_STEP(X8, g, a, b, c, d, e, t)

/* Eight blocks, 64 octets apart; each word of them gathered into its lanes. */
__attribute__((target("avx2"))) static inline void
zb_sha1_x8(const uint8_t block[][64], uint8_t out[][ZB_SHA1_LEN])
{
	const __m256i reverse = _mm256_set_epi64x(0x0c0d0e0f08090a0b, 0x0405060700010203,
						  0x0c0d0e0f08090a0b, 0x0405060700010203);
	const __m256i apart = _mm256_set_epi32(7 * 64, 6 * 64, 5 * 64, 4 * 64, 3 * 64, 2 * 64,
					       64, 0);
	__m256i w[16];
	for (int i = 0; i < 16; i++)
		w[i] = _mm256_shuffle_epi8(
			_mm256_i32gather_epi32((const int *)(block[0] + 4 * i), apart, 1), reverse);
	ZB_LANES_ROUNDS(X8);
	ZB_LANES_DIGESTS(X8, 8, out);
}

/* Whether the processor and the system run AVX2 (CPUID and XGETBV, which GCC and clang ask
 * for us); found once before main as the SHA extensions are. */
__attribute__((weak)) int zb_sha1_avx2;

__attribute__((constructor)) static void zb_sha1_detect_avx2(void)
{
	__builtin_cpu_init();
	zb_sha1_avx2 = __builtin_cpu_supports("avx2");
}
#endif

/* How many one-block messages are best hashed together: 1 with the SHA extensions (a block
 * costs them less than a lane does), else the lanes of the widest registers. */
static inline unsigned zb_sha1_lanes(void)
{
#if defined(__x86_64__)
	return zb_sha1_ni ? 1 : zb_sha1_avx2 ? 8 : 4;
#else
	return 1;
#endif
}

/* The digests of `n` one-block messages (n up to zb_sha1_lanes()). `block` and `out` have
 * ZB_SHA1_LANES_MAX rows (4 will do when n is 4 or less): the lanes left over hash the first
 * block again. */
static inline void zb_sha1_blocks(uint8_t block[][64], unsigned n, uint8_t out[][ZB_SHA1_LEN])
{
#if defined(__x86_64__)
	if (n > 1) {
		unsigned lanes = n > 4 ? 8 : 4;
		for (unsigned j = n; j < lanes; j++)
			memcpy(block[j], block[0], 64);
		if (lanes == 8)
			zb_sha1_x8((const uint8_t(*)[64])block, out);
		else
			zb_sha1_x4((const uint8_t(*)[64])block, out);
		return;
	}
#endif
	for (unsigned j = 0; j < n; j++) {
		uint32_t h[5] = {ZB_SHA1_H0, ZB_SHA1_H1, ZB_SHA1_H2, ZB_SHA1_H3, ZB_SHA1_H4};
		zb_sha1_block(h, block[j]);
		zb_sha1_digest(h, out[j]);
	}
}

/* The iterations of RFC 5155 §5's hash after the first, on `out`: IH(salt, x, k) =
 * H(IH(salt, x, k-1) || salt). */
static inline void zb_nsec3_iterate(uint8_t out[ZB_SHA1_LEN], const uint8_t *salt,
				    size_t salt_len, unsigned iterations)
{
	for (unsigned i = 0; i < iterations; i++) {
		uint8_t digest[ZB_SHA1_LEN];
		memcpy(digest, out, ZB_SHA1_LEN);
		zb_sha1_two(digest, ZB_SHA1_LEN, salt, salt_len, out);
	}
}

/* RFC 5155 §5: IH(salt, x, 0) = H(x || salt), then the iterations; x the name in canonical
 * (lowercased, uncompressed) wire form; hash algorithm 1, SHA-1. */
static inline void zb_nsec3_hash(const uint8_t *name, size_t name_len, const uint8_t *salt,
				 size_t salt_len, unsigned iterations, uint8_t out[ZB_SHA1_LEN])
{
	zb_sha1_two(name, name_len, salt, salt_len, out);
	zb_nsec3_iterate(out, salt, salt_len, iterations);
}

#endif
