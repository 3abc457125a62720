/*
 * hash_vectors.c - print runtime/hash.h's results for test vectors, one per input line:
 *   in:  SEED NBUCKETS NSLOTS PILOT HEXKEY   (HEXKEY may be "-" for the empty key)
 *   out: HASH BUCKET SLOT
 * tests/test_phash.py compares them with values pinned there.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hash.h"

int main(void)
{
	char hex[1024];
	uint64_t seed;
	uint32_t nbuckets, nslots;
	unsigned pilot;

	while (scanf("%" SCNu64 " %" SCNu32 " %" SCNu32 " %u %1023s", &seed, &nbuckets, &nslots,
		     &pilot, hex) == 5) {
		uint8_t key[512];
		size_t len = 0;
		if (strcmp(hex, "-") != 0)
			for (; hex[2 * len] && hex[2 * len + 1]; len++)
				sscanf(hex + 2 * len, "%2hhx", &key[len]);
		uint64_t h = zb_hash(key, len, seed);
		printf("%" PRIu64 " %" PRIu32 " %" PRIu32 "\n", h, zb_bucket_of(h, nbuckets),
		       zb_slot_of(h, (uint16_t)pilot, nslots));
	}
	return 0;
}
