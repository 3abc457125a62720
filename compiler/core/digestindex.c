/*
 * digestindex.c - where a digest falls in an ascending array of them: an NSEC3 zone's owner
 * hashes (denial.c) and the verification cache's keys (signatures.c). Digests are spread
 * evenly, so their first bits nearly say where: a table of where each value of those bits
 * begins leaves about one digest to compare, where a binary search over a million of them
 * takes twenty steps, each a cache miss. Within a value's range the search is binary, so
 * digests made to share their first bits (a zone's author chooses its NSEC3 owners) cost a
 * binary search, never a scan.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"

#define MAX_BITS 24  /* a table of at most 64 MiB */

static uint32_t top_bits(const uint8_t *digest, unsigned bits)
{
	uint32_t word = (uint32_t)digest[0] << 24 | digest[1] << 16 | digest[2] << 8 | digest[3];
	return bits ? word >> (32 - bits) : 0;
}

void digest_index_build(struct digest_index *x, const uint8_t *digests, size_t n, size_t width)
{
	if (n > UINT32_MAX)
		unsupported("more than 2^32 digests");
	x->digests = digests;
	x->n = n;
	x->width = width;
	x->bits = 0;
	while (x->bits < MAX_BITS && ((size_t)1 << x->bits) < n)
		x->bits++;
	size_t slots = (size_t)1 << x->bits;
	x->start = xmalloc((slots + 1) * sizeof *x->start);
	size_t i = 0;
	for (size_t b = 0; b < slots; b++) {
		while (i < n && top_bits(digests + i * width, x->bits) < b)
			i++;
		x->start[b] = i;
	}
	x->start[slots] = n;
}

void digest_index_free(struct digest_index *x)
{
	free(x->start);
	x->start = NULL;
}

void digest_index_prefetch(const struct digest_index *x, const uint8_t *digest, int stage)
{
	uint32_t b = top_bits(digest, x->bits);
	if (stage == 0)
		__builtin_prefetch(&x->start[b]);
	else if (x->start[b] < x->n)
		__builtin_prefetch(x->digests + (size_t)x->start[b] * x->width);
}

size_t digest_rank(const struct digest_index *x, const uint8_t *digest, int *equal)
{
	uint32_t b = top_bits(digest, x->bits);
	size_t lo = x->start[b], hi = x->start[b + 1];  /* those before lo are smaller */
	*equal = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(x->digests + mid * x->width, digest, x->width);
		if (c <= 0) {
			lo = mid + 1;
			*equal = c == 0;
		} else {
			hi = mid;
		}
	}
	return lo;
}
