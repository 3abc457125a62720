/*
 * sha256_digests.c - compiler/core/base/sha256.c over inputs given one a line in hex ("-" when
 * empty), each digest printed in hex. With --portable, the portable block even where the
 * processor has the SHA extensions; with --which, which block it would use ("sha-ni" or
 * "portable"). tests/unit/test_sha256.py compares them with hashlib.
 */
#include <stdio.h>
#include <string.h>

#include "bake.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--which") == 0) {
		printf("%s\n", sha256_uses_extensions() ? "sha-ni" : "portable");
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--portable") == 0)
		sha256_portable_only();
	static char hex[2 * 1024 + 2];
	static uint8_t data[1024];
	while (scanf("%2049s", hex) == 1) {
		size_t n = 0;
		if (strcmp(hex, "-") != 0)
			for (; hex[2 * n] && hex[2 * n + 1] && n < sizeof data; n++)
				sscanf(hex + 2 * n, "%2hhx", &data[n]);
		uint8_t digest[SHA256_LEN];
		sha256(data, n, digest);
		for (int i = 0; i < SHA256_LEN; i++)
			printf("%02x", digest[i]);
		printf("\n");
	}
	return 0;
}
