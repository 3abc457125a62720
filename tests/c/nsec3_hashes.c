/*
 * nsec3_hashes.c - runtime/query/nsec3hash.h over inputs given one a line:
 *   in:  HEXNAME HEXSALT ITERATIONS   (HEXNAME or HEXSALT "-" when empty)
 *   out: the hash in hex
 * With --portable, the block is the portable C even where the processor has the SHA
 * extensions; with --lanes N (4, or 8 where the processor has AVX2), the inputs of one block
 * are hashed N at a time (zb_sha1_blocks), in the order given, the rest one by one; with
 * --which, it prints which block it would use ("sha-ni" or "portable"), and "avx2" on a
 * second line where the processor has it.
 * tests/unit/test_nsec3hash.py compares them with hashlib and RFC 5155 Appendix A.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/nsec3hash.h"
#include "unhex.h"

static int uses_sha_ni(void)
{
#if defined(__x86_64__)
	return zb_sha1_ni;
#else
	return 0;
#endif
}

/* An input line. */
struct input {
	uint8_t name[ZB_NSEC3_INPUT_MAX], salt[255];
	size_t name_len, salt_len;
	unsigned iterations;
	uint8_t digest[ZB_SHA1_LEN];
};

static void print_digest(const uint8_t digest[ZB_SHA1_LEN])
{
	for (int i = 0; i < ZB_SHA1_LEN; i++)
		printf("%02x", digest[i]);
	printf("\n");
}

/* Hash the `n` one-block inputs at once. */
static void hash_together(struct input *const *group, unsigned n)
{
	uint8_t blocks[ZB_SHA1_LANES_MAX][64], digests[ZB_SHA1_LANES_MAX][ZB_SHA1_LEN];
	for (unsigned j = 0; j < n; j++)
		zb_sha1_pad_one(blocks[j], group[j]->name, group[j]->name_len, group[j]->salt,
				group[j]->salt_len);
	zb_sha1_blocks(blocks, n, digests);
	for (unsigned j = 0; j < n; j++) {
		memcpy(group[j]->digest, digests[j], ZB_SHA1_LEN);
		zb_nsec3_iterate(group[j]->digest, group[j]->salt, group[j]->salt_len,
				 group[j]->iterations);
	}
}

int main(int argc, char **argv)
{
	unsigned lanes = 1;
	if (argc > 1 && strcmp(argv[1], "--which") == 0) {
		printf("%s\n", uses_sha_ni() ? "sha-ni" : "portable");
#if defined(__x86_64__)
		if (zb_sha1_avx2)
			printf("avx2\n");
#endif
		return 0;
	}
#if defined(__x86_64__)
	if (argc > 1 && strcmp(argv[1], "--portable") == 0)
		zb_sha1_ni = 0;
#endif
	if (argc > 2 && strcmp(argv[1], "--lanes") == 0)
		lanes = (unsigned)atoi(argv[2]);
	if (lanes > ZB_SHA1_LANES_MAX)
		return 2;
	static char name_hex[2 * ZB_NSEC3_INPUT_MAX + 2], salt_hex[600];
	static struct input inputs[4096];
	struct input *group[ZB_SHA1_LANES_MAX];
	unsigned n = 0, grouped = 0;
	while (scanf("%1021s %599s %u", name_hex, salt_hex, &inputs[n].iterations) == 3) {
		if (n == sizeof inputs / sizeof inputs[0] - 1) {
			fprintf(stderr, "nsec3_hashes: more than %u inputs\n", n);
			return 2;
		}
		struct input *in = &inputs[n++];
		in->name_len = unhex(name_hex, in->name, sizeof in->name);
		in->salt_len = unhex(salt_hex, in->salt, sizeof in->salt);
		if (lanes > 1 && in->name_len + in->salt_len <= ZB_SHA1_ONE_BLOCK) {
			group[grouped++] = in;
			if (grouped == lanes) {
				hash_together(group, grouped);
				grouped = 0;
			}
		} else {
			zb_nsec3_hash(in->name, in->name_len, in->salt, in->salt_len, in->iterations,
				      in->digest);
		}
	}
	if (grouped)
		hash_together(group, grouped);
	for (unsigned i = 0; i < n; i++)
		print_digest(inputs[i].digest);
	return 0;
}
