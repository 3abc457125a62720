/*
 * sha256.c - SHA-256 (FIPS 180-4 §6.2): the key of a verified signature in the cache that
 * spares a rebuild verifying it again (signatures.c). The core depends on libc alone; where
 * the processor has the SHA extensions it uses them (a million-name signed zone hashes
 * about ten million blocks on every build).
 */
#include <string.h>

#include "bake.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "query/nsec3hash.h"  /* zb_cpu_has_sha_extensions */
#endif

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
	return x >> n | x << (32 - n);
}

static void block_portable(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], v[8];
	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | p[4 * t + 1] << 16 | p[4 * t + 2] << 8 | p[4 * t + 3];
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ w[t - 15] >> 3;
		uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ w[t - 2] >> 10;
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	memcpy(v, h, sizeof v);
	for (int t = 0; t < 64; t++) {
		uint32_t t1 = v[7] + (ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25)) +
			      ((v[4] & v[5]) ^ (~v[4] & v[6])) + K[t] + w[t];
		uint32_t t2 = (ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22)) +
			      ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		memmove(v + 1, v, 7 * sizeof *v);
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		h[i] += v[i];
}

#if defined(__x86_64__)
/* Whether the processor has the SHA extensions, SSSE3 and SSE4.1, found before main. */
static int have_sha_ni;

__attribute__((constructor)) static void detect(void)
{
	have_sha_ni = zb_cpu_has_sha_extensions();
}

/* Four rounds (two SHA256RNDS2, each taking two words of `msg`, the schedule words with
 * their constants added). The state is held as the instructions want it: A B E F in one
 * register, C D G H in the other. */
#define ROUNDS4(abef, cdgh, w, k) do { \
	__m128i msg_ = _mm_add_epi32((w), _mm_loadu_si128((const __m128i *)(k))); \
	(cdgh) = _mm_sha256rnds2_epu32((cdgh), (abef), msg_); \
	(abef) = _mm_sha256rnds2_epu32((abef), (cdgh), _mm_shuffle_epi32(msg_, 0x0E)); \
} while (0)
/* Schedule words 4i..4i+3 into w0 from the four groups before (§6.2.2 step 1): SHA256MSG1
 * adds sigma0 of W[t-15] to W[t-16], then W[t-7], then SHA256MSG2 sigma1 of W[t-2]. */
#define NEXT(w0, w1, w2, w3) \
	((w0) = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32((w0), (w1)), \
						   _mm_alignr_epi8((w3), (w2), 4)), (w3)))

__attribute__((target("sha,ssse3,sse4.1"))) static void block_ni(uint32_t h[8],
								  const uint8_t *p)
{
	const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0b, 0x0405060700010203);
	__m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xB1);
	__m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1B);
	__m128i abef = _mm_alignr_epi8(dcba, hgfe, 8);
	__m128i cdgh = _mm_blend_epi16(hgfe, dcba, 0xF0);
	__m128i abef0 = abef, cdgh0 = cdgh;
	__m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), swap);
	__m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), swap);
	__m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), swap);
	__m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), swap);
	ROUNDS4(abef, cdgh, w0, K);
	ROUNDS4(abef, cdgh, w1, K + 4);
	ROUNDS4(abef, cdgh, w2, K + 8);
	ROUNDS4(abef, cdgh, w3, K + 12);
	for (int i = 16; i < 64; i += 16) {
		ROUNDS4(abef, cdgh, NEXT(w0, w1, w2, w3), K + i);
		ROUNDS4(abef, cdgh, NEXT(w1, w2, w3, w0), K + i + 4);
		ROUNDS4(abef, cdgh, NEXT(w2, w3, w0, w1), K + i + 8);
		ROUNDS4(abef, cdgh, NEXT(w3, w0, w1, w2), K + i + 12);
	}
	abef = _mm_add_epi32(abef, abef0);
	cdgh = _mm_add_epi32(cdgh, cdgh0);
	__m128i feba = _mm_shuffle_epi32(abef, 0x1B);
	__m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
	_mm_storeu_si128((__m128i *)h, _mm_blend_epi16(feba, dchg, 0xF0));
	_mm_storeu_si128((__m128i *)(h + 4), _mm_alignr_epi8(dchg, feba, 8));
}

static void block(uint32_t h[8], const uint8_t *p)
{
	if (have_sha_ni)
		block_ni(h, p);
	else
		block_portable(h, p);
}

/* For tests/unit: the portable block even where the extensions are. */
void sha256_portable_only(void)
{
	have_sha_ni = 0;
}

int sha256_uses_extensions(void)
{
	return have_sha_ni;
}
#else
#define block block_portable
void sha256_portable_only(void)
{
}

int sha256_uses_extensions(void)
{
	return 0;
}
#endif

void sha256(const uint8_t *data, size_t len, uint8_t out[SHA256_LEN])
{
	uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
			 0x1f83d9ab, 0x5be0cd19};
	size_t whole = len & ~(size_t)63;
	for (size_t at = 0; at < whole; at += 64)
		block(h, data + at);
	uint8_t tail[128] = {0};
	size_t rest = len - whole;
	memcpy(tail, data + whole, rest);
	tail[rest] = 0x80;
	size_t end = rest + 9 <= 64 ? 64 : 128;
	uint64_t bits = (uint64_t)len * 8;
	for (int i = 0; i < 8; i++)
		tail[end - 1 - i] = bits >> (8 * i);
	block(h, tail);
	if (end == 128)
		block(h, tail + 64);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = h[i] >> 24;
		out[4 * i + 1] = h[i] >> 16;
		out[4 * i + 2] = h[i] >> 8;
		out[4 * i + 3] = h[i];
	}
}
