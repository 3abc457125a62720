/*
 * hash.h - the perfect hash over lowercased wire-format names.
 *
 * Written once, for both sides of the contract: the compiler's core builds the perfect hash
 * with these functions (compiler/core/phash.c includes this file) and the responder looks
 * names up with them. tests/unit/test_phash.py pins a few values: a change here changes
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
#define ZB_PILOT_M 0xC2B2AE3D27D4EB4Full
#define ZB_SLOT_M 0xD6E8FEB86659FD93ull

static inline uint64_t zb_fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDull;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53ull;
	h ^= h >> 33;
	return h;
}

/* The hash runs eight bytes at a time over a name, little-endian (zonedata.h insists on it),
 * the last word zero-padded; these three steps let a caller feed it words it already has. */
static inline uint64_t zb_hash_start(size_t len, uint64_t seed)
{
	return seed ^ ((uint64_t)len * ZB_HASH_M);
}

static inline uint64_t zb_hash_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * ZB_HASH_M;
	return h ^ (h >> 32);
}

static inline uint64_t zb_hash(const uint8_t *key, size_t len, uint64_t seed)
{
	uint64_t h = zb_hash_start(len, seed);
	size_t i = 0;
	uint64_t w;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, key + i, 8);
		h = zb_hash_word(h, w);
	}
	if (i < len) {
		w = 0;
		memcpy(&w, key + i, len - i);
		h = zb_hash_word(h, w);
	}
	return zb_fmix64(h);
}

/* zb_hash of a key followed by at least 7 zeros (a query's name, or a suffix of it): its last
 * word read whole. */
static inline uint64_t zb_hash_padded(const uint8_t *key, size_t len, uint64_t seed)
{
	uint64_t h = zb_hash_start(len, seed);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w;
		memcpy(&w, key + i, 8);
		h = zb_hash_word(h, w);
	}
	return zb_fmix64(h);
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
