/*
 * phash.c - the perfect hash over the nodes' names (a CHD-style hash with one pilot per
 * bucket), the same result for the same keys: seeds tried 0, 1, 2...; buckets placed largest first, ties by number; each bucket's first pilot that
 * sends its keys to free, distinct slots. The hash itself is the responder's (hash.h).
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "hash.h"

#define KEYS_PER_BUCKET 4
#define LOAD_FACTOR 0.97
#define MAX_PILOT 0xFFFF
#define ATTEMPTS 32

static int try_seed(struct phash *ph, const uint8_t *keys, const uint32_t *key_off,
		    uint32_t n, uint64_t *hashes, uint32_t *start, uint32_t *members,
		    uint32_t *order)
{
	uint32_t nb = ph->nbuckets;
	for (uint32_t i = 0; i < n; i++)
		hashes[i] = zb_hash(keys + key_off[i], key_off[i + 1] - key_off[i], ph->seed);
	/* Buckets' members by key index (a counting sort). */
	memset(start, 0, (nb + 1) * sizeof *start);
	for (uint32_t i = 0; i < n; i++)
		start[zb_bucket_of(hashes[i], nb) + 1]++;
	uint32_t largest = 0;
	for (uint32_t b = 0; b < nb; b++) {
		if (start[b + 1] > largest)
			largest = start[b + 1];
		start[b + 1] += start[b];
	}
	uint32_t *fill = xmalloc(nb * sizeof *fill);
	memcpy(fill, start, nb * sizeof *fill);
	for (uint32_t i = 0; i < n; i++)
		members[fill[zb_bucket_of(hashes[i], nb)]++] = i;
	free(fill);
	/* Largest first, ties by bucket number. */
	uint32_t k = 0;
	for (uint32_t size = largest; size > 0; size--)
		for (uint32_t b = 0; b < nb; b++)
			if (start[b + 1] - start[b] == size)
				order[k++] = b;
	memset(ph->slots, 0xFF, ph->nslots * sizeof *ph->slots);
	memset(ph->pilots, 0, nb * sizeof *ph->pilots);
	for (uint32_t o = 0; o < k; o++) {
		uint32_t b = order[o], first = start[b], count = start[b + 1] - first;
		uint32_t placed[64];
		if (count > 64)
			unsupported("a perfect hash bucket of %u keys", count);
		int found = 0;
		for (uint32_t pilot = 0; pilot <= MAX_PILOT && !found; pilot++) {
			uint32_t m = 0;
			for (; m < count; m++) {
				uint32_t s = zb_slot_of(hashes[members[first + m]], pilot, ph->nslots);
				if (ph->slots[s] != NONE)
					break;
				uint32_t j = 0;
				while (j < m && placed[j] != s)
					j++;
				if (j < m)
					break;
				placed[m] = s;
			}
			if (m == count) {
				found = 1;
				ph->pilots[b] = pilot;
				for (m = 0; m < count; m++)
					ph->slots[placed[m]] = members[first + m];
			}
		}
		if (!found)
			return 0;
	}
	return 1;
}

/* Over n distinct keys: key i is keys[key_off[i] .. key_off[i + 1]). */
void build_phash(struct phash *ph, const uint8_t *keys, const uint32_t *key_off, uint32_t n)
{
	ph->nslots = n < 1000 ? (n ? n : 1) : (uint32_t)((double)n / LOAD_FACTOR);
	ph->nbuckets = n ? (n + KEYS_PER_BUCKET - 1) / KEYS_PER_BUCKET : 1;
	ph->slots = xmalloc(ph->nslots * sizeof *ph->slots);
	ph->pilots = xmalloc(ph->nbuckets * sizeof *ph->pilots);
	uint64_t *hashes = xmalloc((n ? n : 1) * sizeof *hashes);
	uint32_t *start = xmalloc((ph->nbuckets + 1) * sizeof *start);
	uint32_t *members = xmalloc((n ? n : 1) * sizeof *members);
	uint32_t *order = xmalloc(ph->nbuckets * sizeof *order);
	for (ph->seed = 0; ph->seed < ATTEMPTS; ph->seed++)
		if (try_seed(ph, keys, key_off, n, hashes, start, members, order))
			break;
	if (ph->seed == ATTEMPTS)
		unsupported("no perfect hash in %d seeds", ATTEMPTS);
	free(hashes);
	free(start);
	free(members);
	free(order);
}
