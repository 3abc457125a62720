/*
 * hash.h - the perfect hash over lowercased wire-format names.
 *
 * Written once, for both sides of the contract: the compiler's core builds the perfect hash
 * with these functions (compiler/core/layout/phash.c includes this file) and the responder
 * looks names up with them. tests/unit/test_phash.py pins a few values: a change here changes
 * every compiled layout.
 */
#ifndef ZB_HASH_H
#define ZB_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "zonedata.h"

/* A 64x64->128 multiply: the high half maps a hash onto [0, n) without a division. */
__extension__ typedef unsigned __int128 zb_u128;

#define ZB_HASH_M 0x9E3779B97F4A7C15ull
#define ZB_HASH_K 0xA0761D6478BD642Full
#define ZB_HASH_END 0xE7037ED1A0B428DBull
#define ZB_PILOT_M 0xC2B2AE3D27D4EB4Full
#define ZB_SLOT_M 0xD6E8FEB86659FD93ull

/* Two words multiplied into 128 bits, the halves folded together: one multiply mixes every
 * bit of both into most bits of the result (wyhash's step). On x86-64 the multiply is
 * written out: inlined into the request handler, GCC passes the 128-bit product through the
 * stack. */
static inline uint64_t zb_mum(uint64_t a, uint64_t b)
{
#if defined(__x86_64__)
	uint64_t lo, hi;
	__asm__("mulq %3" : "=a"(lo), "=d"(hi) : "a"(a), "rm"(b) : "cc");
	return lo ^ hi;
#else
	zb_u128 p = (zb_u128)a * b;
	return (uint64_t)p ^ (uint64_t)(p >> 64);
#endif
}

/*
 * The hash runs over a name sixteen octets at a time, as two little-endian words (zonedata.h
 * insists on the byte order), the last block zero-padded: one multiply a block. A block's
 * product is 0 where one of its factors is; both factors hold the seed's key, so names that
 * meet there, or whose two words trade places, meet for one seed only, and the perfect hash
 * tries another (compiler/core/layout/phash.c). The key is the compiler's to work out: the zone
 * set holds it (zb_zoneset.hash_key), and the responder hashes with it. These steps let a
 * caller feed the hash blocks it already has.
 */
#define ZB_HASH_KEY(seed) (((uint64_t)(seed) + 1) * ZB_HASH_M ^ ZB_HASH_K)

static inline uint64_t zb_hash_start(size_t len, uint64_t key)
{
	return (key << 32 | key >> 32) ^ len;
}

static inline uint64_t zb_hash_block(uint64_t h, uint64_t lo, uint64_t hi, uint64_t key)
{
	return zb_mum(lo ^ h, hi ^ key);
}

static inline uint64_t zb_hash_end(uint64_t h)
{
	return zb_mum(h, ZB_HASH_END);
}

static inline uint64_t zb_hash(const uint8_t *key, size_t len, uint64_t seed)
{
	uint64_t k = ZB_HASH_KEY(seed), h = zb_hash_start(len, k), lo, hi;
	size_t i = 0;

	for (; i + 16 <= len; i += 16) {
		memcpy(&lo, key + i, 8);
		memcpy(&hi, key + i + 8, 8);
		h = zb_hash_block(h, lo, hi, k);
	}
	if (i < len) {
		uint8_t last[16] = { 0 };
		memcpy(last, key + i, len - i);
		memcpy(&lo, last, 8);
		memcpy(&hi, last + 8, 8);
		h = zb_hash_block(h, lo, hi, k);
	}
	return zb_hash_end(h);
}

/* zb_hash of a key followed by at least 15 zeros (a query's name, or a suffix of it), with
 * the seed's ZB_HASH_KEY: its last block read whole. */
static inline uint64_t zb_hash_padded(const uint8_t *key, size_t len, uint64_t hash_key)
{
	uint64_t h = zb_hash_start(len, hash_key), k = hash_key;
	for (size_t i = 0; i < len; i += 16) {
		uint64_t lo, hi;
		memcpy(&lo, key + i, 8);
		memcpy(&hi, key + i + 8, 8);
		h = zb_hash_block(h, lo, hi, k);
	}
	return zb_hash_end(h);
}

/*
 * Groups by linear hashing: with n groups, 2^k <= n < 2^(k+1), a hash's low k+1 bits name
 * its group, or its low k bits when k+1 name one past the last. One group more splits one
 * group in two (the one its low k bits name) and leaves the others as they were, so that a
 * name added to a zone re-places one group's names, not all (compiler/core/layout/phash.c).
 */
static inline uint32_t zb_group_mask(uint32_t ngroups)
{
	uint32_t mask = 1;
	while (mask < ngroups)
		mask = mask << 1 | 1;
	return mask;
}

static inline uint32_t zb_group_of(uint64_t h, uint32_t mask, uint32_t ngroups)
{
	uint32_t g = (uint32_t)h & mask;
	return g < ngroups ? g : g & (mask >> 1);
}

static inline uint32_t zb_bucket_of(uint64_t h, uint32_t nbuckets)
{
	return (uint32_t)(((h >> 32) * (uint64_t)nbuckets) >> 32);
}

static inline uint32_t zb_slot_of(uint64_t h, uint16_t pilot, uint32_t nslots)
{
	uint64_t x = (h ^ ((uint64_t)pilot * ZB_PILOT_M)) * ZB_SLOT_M;
	return (uint32_t)(((zb_u128)x * nslots) >> 64);
}

#endif
