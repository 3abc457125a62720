/*
 * digest_ranks.c - compiler/core/base/digestindex.c over digests given in hex: the first line
 * is the width in octets, then the ascending digests one a line, then "-", then the digests to
 * look up, for each of which it prints how many are at or before it and whether the last
 * of those is it ("3 1"). With --sort, the digests need not be in order: it sorts them
 * (digests_sort) and prints them in hex, one a line. tests/unit/test_digest_index.py
 * compares them with bisect and sorted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"

/* The pieces of util.c the index uses: its tables past 2 MiB go to huge pages there. */
void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		abort();
	return p;
}

void *huge_alloc(size_t bytes)
{
	return xmalloc(bytes);
}

void huge_free(void *p, size_t bytes)
{
	(void)bytes;
	free(p);
}

void unsupported(const char *fmt, ...)
{
	fprintf(stderr, "unsupported: %s\n", fmt);
	exit(2);
}

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;
	for (; hex[2 * n] && hex[2 * n + 1] && n < cap; n++)
		sscanf(hex + 2 * n, "%2hhx", &out[n]);
	return n;
}

int main(int argc, char **argv)
{
	int sort = argc > 1 && strcmp(argv[1], "--sort") == 0;
	size_t width;
	if (scanf("%zu", &width) != 1 || width < 4 || width > 64)
		return 2;
	static char hex[130];
	size_t n = 0, cap = 16;
	uint8_t *digests = malloc(cap * width);
	while (scanf("%129s", hex) == 1 && strcmp(hex, "-") != 0) {
		if (n == cap)
			digests = realloc(digests, (cap *= 2) * width);
		if (unhex(hex, digests + n++ * width, width) != width)
			return 2;
	}
	if (sort) {
		digests_sort(digests, n, width);
		for (size_t i = 0; i < n; i++) {
			for (size_t k = 0; k < width; k++)
				printf("%02x", digests[i * width + k]);
			printf("\n");
		}
		free(digests);
		return 0;
	}
	struct digest_index x;
	digest_index_build(&x, digests, n, width);
	uint8_t digest[64];
	while (scanf("%129s", hex) == 1) {
		if (unhex(hex, digest, width) != width)
			return 2;
		int equal;
		size_t rank = digest_rank(&x, digest, &equal);
		printf("%zu %d\n", rank, equal);
	}
	digest_index_free(&x);
	free(digests);
	return 0;
}
