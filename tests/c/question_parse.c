/*
 * question_parse.c - print what runtime/query/wire.h's question parser makes of packets, one
 * per input line of hex (the whole packet, header included):
 *   out: -1                                   (malformed)
 *        NAME_LEN NLABELS QTYPE QCLASS END HASH LOWERHEX   (NLABELS: zb_label_offsets)
 * With the argument `guess`, what zb_guess_question makes of each, as a plain query with
 * ARCOUNT 0 and with ARCOUNT 1 (zb_guess_tail, then zb_guess_cookie_tail): for each, `-` (not a form guessed) or HOLDS
 * (zb_guess_holds), the fields above and the tail guessed, the two separated by ` | `.
 * Built twice by tests/unit/test_question_parse.py, with SSE2 and with -DZB_NO_SIMD, whose
 * outputs must agree.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "query/wire.h"

/* NLABELS: given, as the caller knows them. zb_label_offsets reads a well-formed name only,
 * which a guess that does not hold need not be: it walked past the name's copy (on the
 * stack) until a zero or a fault. */
static void print_question(const struct zb_question *q, unsigned nlabels)
{
	printf("%u %u %u %u %u %" PRIu64 " ", q->name_len, nlabels, q->qtype, q->qclass, q->end,
	       q->hash);
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
			for (unsigned arcount = 0; arcount <= 1; arcount++) {
				size_t tail = zb_guess_tail(packet, len, arcount);
				if (!tail && arcount) /* as read_query tries them */
					tail = zb_guess_cookie_tail(packet, len);
				if (!tail ||
				    zb_guess_question(packet, len, tail, ZB_HASH_KEY(7), &q) != 0) {
					printf("%s-", arcount ? " | " : "");
					continue;
				}
				int holds = zb_guess_holds(&q);
				printf("%s%d ", arcount ? " | " : "", holds);
				print_question(&q, holds ? q.nlabels : 0);
				printf(" %zu", tail);
			}
			printf("\n");
			continue;
		}
		if (zb_parse_question(packet, len, ZB_HASH_KEY(7), &q) != 0) {
			printf("-1\n");
			continue;
		}
		uint8_t label_off[ZB_MAX_LABELS + 1];
		print_question(&q, zb_label_offsets(q.lower, label_off));
		printf("\n");
	}
	return 0;
}
