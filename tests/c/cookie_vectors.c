/*
 * cookie_vectors.c - runtime/query/cookies.c's results, one per input line:
 *   make SECRET CLIENT IP TIMESTAMP   ->  the server cookie (hex)
 *   answer SECRET NOW IP COOKIE       ->  VERDICT REPLY (hex), VERDICT as enum zb_cookie_verdict
 *   siphash KEY MESSAGE               ->  SipHash-2-4, as a 64-bit hexadecimal number
 * Hex strings may be "-" for none. tests/unit/test_cookies.py holds them to RFC 9018 and to
 * the SipHash paper.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/cookies.h"
#include "query/siphash.h"
#include "unhex.h"

static void print_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static void address(const char *text, struct sockaddr_storage *ss, uint8_t ip[16],
		    unsigned *ip_len)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		memcpy(ip, &v4->sin_addr, 4);
		*ip_len = 4;
	} else {
		inet_pton(AF_INET6, text, &v6->sin6_addr);
		v6->sin6_family = AF_INET6;
		memcpy(ip, &v6->sin6_addr, 16);
		*ip_len = 16;
	}
}

int main(void)
{
	static struct zb_cookies state; /* one memo across the lines of an `answer` run */
	char command[16], a[128], b[128], c[128], d[128];
	uint8_t secret[16], client[64], ip[16], out[ZB_COOKIE_LEN];
	struct sockaddr_storage ss;
	unsigned ip_len;
	uint8_t last_secret[16] = { 0 };
	int initialised = 0;

	while (scanf("%15s", command) == 1) {
		if (strcmp(command, "siphash") == 0 && scanf("%127s %127s", a, b) == 2) {
			uint8_t key[16], msg[64];
			unhex(a, key, 16);
			size_t n = unhex(b, msg, sizeof(msg));
			printf("%016" PRIx64 "\n",
			       zb_siphash24(zb_sip_le64(key), zb_sip_le64(key + 8), msg, n));
		} else if (strcmp(command, "make") == 0 && scanf("%127s %127s %127s %127s", a, b,
								 c, d) == 4) {
			unhex(a, secret, 16);
			unhex(b, client, 8);
			address(c, &ss, ip, &ip_len);
			uint32_t ts = (uint32_t)strtoul(d, NULL, 10);
			zb_cookie_make(zb_sip_le64(secret), zb_sip_le64(secret + 8), client, ip,
				       ip_len, ts, out);
			print_hex(out, ZB_COOKIE_SERVER_LEN);
			printf("\n");
		} else if (strcmp(command, "answer") == 0 && scanf("%127s %127s %127s %127s", a, b,
								   c, d) == 4) {
			unhex(a, secret, 16);
			if (!initialised || memcmp(secret, last_secret, 16) != 0) {
				zb_cookies_init(&state, secret);
				memcpy(last_secret, secret, 16);
				initialised = 1;
			}
			state.now = (uint32_t)strtoul(b, NULL, 10);
			address(c, &ss, ip, &ip_len);
			size_t n = unhex(d, client, sizeof(client));
			struct zb_client who = { &ss, &state };
			enum zb_cookie_verdict v = zb_cookie_answer(&who, client, (unsigned)n, out);
			printf("%d ", (int)v);
			print_hex(out, ZB_COOKIE_LEN);
			printf("\n");
		} else {
			return 2;
		}
		fflush(stdout);
	}
	return 0;
}
