/*
 * question_parse.c - print what runtime/wire.h's question parser makes of packets, one per
 * input line of hex (the whole packet, header included):
 *   out: -1                                   (malformed)
 *        NAME_LEN NLABELS QTYPE QCLASS END HASH LOWERHEX   (NLABELS: zb_label_offsets)
 * With the argument `guess`, what zb_guess_question makes of each, as a plain query and as
 * one with an OPT record: for each, `-` (not that form) or HOLDS (zb_guess_holds) and the
 * fields above, the two separated by ` | `.
 * Built twice by tests/unit/test_question_parse.py, with SSE2 and with -DZB_NO_SIMD, whose
 * outputs must agree.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "wire.h"

static void print_question(const struct zb_question *q)
{
	uint8_t label_off[ZB_MAX_LABELS + 1];
	printf("%u %u %u %u %u %" PRIu64 " ", q->name_len, zb_label_offsets(q->lower, label_off),
	       q->qtype, q->qclass, q->end, q->hash);
	for (unsigned i = 0; i < q->name_len; i++)
		printf("%02x", q->lower[i]);
}

int main(int argc, char **argv)
{
	static char hex[2 * 70000];
	static uint8_t packet[65536 + ZB_QUERY_SLACK];
	int guess = argc > 1 && strcmp(argv[1], "guess") == 0;

	while (scanf("%139999s", hex) == 1) {
		size_t len = 0;
		for (; hex[2 * len] && hex[2 * len + 1]; len++)
			sscanf(hex + 2 * len, "%2hhx", &packet[len]);
		memset(packet + len, 0x5A, ZB_QUERY_SLACK); /* what a buffer may hold past it */
		struct zb_question q;
		if (guess) {
			for (int opt = 0; opt <= 1; opt++) {
				if (zb_guess_question(packet, len, opt, ZB_HASH_KEY(7), &q) != 0) {
					printf("%s-", opt ? " | " : "");
					continue;
				}
				printf("%s%d ", opt ? " | " : "", zb_guess_holds(&q));
				print_question(&q);
			}
			printf("\n");
			continue;
		}
		if (zb_parse_question(packet, len, ZB_HASH_KEY(7), &q) != 0) {
			printf("-1\n");
			continue;
		}
		print_question(&q);
		printf("\n");
	}
	return 0;
}
