/*
 * nsec3_hashes.c - runtime/nsec3hash.h over inputs given one a line:
 *   in:  HEXNAME HEXSALT ITERATIONS   (HEXNAME or HEXSALT "-" when empty)
 *   out: the hash in hex
 * With --portable, the block is the portable C even where the processor has the SHA
 * extensions; with --which, it prints which block it would use ("sha-ni" or "portable").
 * tests/unit/test_nsec3hash.py compares them with hashlib and RFC 5155 Appendix A.
 */
#include <stdio.h>
#include <string.h>

#include "nsec3hash.h"
#include "unhex.h"

static int uses_sha_ni(void)
{
#if defined(__x86_64__)
	return zb_sha1_ni;
#else
	return 0;
#endif
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--which") == 0) {
		printf("%s\n", uses_sha_ni() ? "sha-ni" : "portable");
		return 0;
	}
#if defined(__x86_64__)
	if (argc > 1 && strcmp(argv[1], "--portable") == 0)
		zb_sha1_ni = 0;
#endif
	static char name_hex[2 * ZB_NSEC3_INPUT_MAX + 2], salt_hex[600];
	unsigned iterations;
	while (scanf("%1021s %599s %u", name_hex, salt_hex, &iterations) == 3) {
		uint8_t name[ZB_NSEC3_INPUT_MAX], salt[255], digest[ZB_SHA1_LEN];
		size_t name_len = unhex(name_hex, name, sizeof name);
		size_t salt_len = unhex(salt_hex, salt, sizeof salt);
		zb_nsec3_hash(name, name_len, salt, salt_len, iterations, digest);
		for (int i = 0; i < ZB_SHA1_LEN; i++)
			printf("%02x", digest[i]);
		printf("\n");
	}
	return 0;
}
