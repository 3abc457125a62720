/*
 * digestindex.c - where a digest falls in an ascending array of them: an NSEC3 zone's owner
 * hashes (denial.c) and the verification cache's keys (signatures.c). Digests are spread
 * evenly, so their first bits nearly say where: a table of where each value of those bits
 * begins leaves about one digest to compare, where a binary search over a million of them
 * takes twenty steps, each a cache miss. Within a value's range the search is binary, so
 * digests made to share their first bits (a zone's author chooses its NSEC3 owners) cost a
 * binary search, never a scan.
 *
 * digests_sort puts them in that order: each build's cache keys, two million and more
 * for a million signed names. The digests may lead records of their own (the signer's
 * signatures, signer.c): digest_index_of_records steps over the rest.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"

#define MAX_BITS 24  /* a table of at most 64 MiB */
#define HUGE_TABLE ((size_t)2 << 20)

static uint32_t top_bits(const uint8_t *digest, unsigned bits)
{
	uint32_t word = (uint32_t)digest[0] << 24 | digest[1] << 16 | digest[2] << 8 | digest[3];
	return bits ? word >> (32 - bits) : 0;
}

void digest_index_build(struct digest_index *x, const uint8_t *digests, size_t n, size_t width)
{
	digest_index_of_records(x, digests, n, width, width);
}

void digest_index_of_records(struct digest_index *x, const uint8_t *records, size_t n,
			     size_t width, size_t stride)
{
	if (n > UINT32_MAX)
		unsupported("more than 2^32 digests");
	x->digests = records;
	x->n = n;
	x->width = width;
	x->stride = stride;
	x->bits = 0;
	while (x->bits < MAX_BITS && ((size_t)1 << x->bits) < n)
		x->bits++;
	size_t slots = (size_t)1 << x->bits;
	/* Read at random, once per lookup: tens of megabytes on huge pages past two of them. */
	x->start_bytes = (slots + 1) * sizeof *x->start;
	x->start = x->start_bytes >= HUGE_TABLE ? huge_alloc(x->start_bytes)
					       : xmalloc(x->start_bytes);
	size_t i = 0;
	for (size_t b = 0; b < slots; b++) {
		while (i < n && top_bits(records + i * stride, x->bits) < b)
			i++;
		x->start[b] = i;
	}
	x->start[slots] = n;
}

void digest_index_free(struct digest_index *x)
{
	if (x->start_bytes >= HUGE_TABLE)
		huge_free(x->start, x->start_bytes);
	else
		free(x->start);
	x->start = NULL;
	x->start_bytes = 0;
}

void digest_index_prefetch(const struct digest_index *x, const uint8_t *digest, int stage)
{
	uint32_t b = top_bits(digest, x->bits);
	if (stage == 0)
		__builtin_prefetch(&x->start[b]);
	else if (x->start[b] < x->n)
		__builtin_prefetch(x->digests + (size_t)x->start[b] * x->stride);
}

size_t digest_rank(const struct digest_index *x, const uint8_t *digest, int *equal)
{
	uint32_t b = top_bits(digest, x->bits);
	size_t lo = x->start[b], hi = x->start[b + 1];  /* those before lo are smaller */
	*equal = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(x->digests + mid * x->stride, digest, x->width);
		if (c <= 0) {
			lo = mid + 1;
			*equal = c == 0;
		} else {
			hi = mid;
		}
	}
	return lo;
}

static void swap_digests(uint8_t *a, uint8_t *b, size_t width)
{
	uint8_t t[64];
	memcpy(t, a, width);
	memcpy(a, b, width);
	memcpy(b, t, width);
}

/* An American flag sort: the digests that agree before `octet` put in place by their octet
 * there, in one pass of swaps, then each bucket the same way by the next octet; a few, by
 * insertion. Evenly spread digests leave buckets of n/256 after a pass, and no buffer as big
 * as the digests is needed, where qsort took one and twice the time. */
static void sort_from(uint8_t *d, size_t n, size_t width, size_t octet)
{
	if (octet == width)
		return;  /* all equal */
	if (n < 32) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && memcmp(d + (j - 1) * width + octet,
							   d + j * width + octet, width - octet) > 0; j--)
				swap_digests(d + (j - 1) * width, d + j * width, width);
		return;
	}
	size_t count[256] = {0}, next[256], end[256];
	for (size_t i = 0; i < n; i++)
		count[d[i * width + octet]]++;
	for (size_t b = 0, at = 0; b < 256; b++) {
		next[b] = at;
		at += count[b];
		end[b] = at;
	}
	for (size_t b = 0; b < 256; b++)
		while (next[b] < end[b]) {
			uint8_t v = d[next[b] * width + octet];
			if (v == b)
				next[b]++;
			else
				swap_digests(d + next[b] * width, d + next[v]++ * width, width);
		}
	for (size_t b = 0, at = 0; b < 256; at += count[b++])
		sort_from(d + at * width, count[b], width, octet + 1);
}

void digests_sort(uint8_t *digests, size_t n, size_t width)
{
	sort_from(digests, n, width, 0);
}
