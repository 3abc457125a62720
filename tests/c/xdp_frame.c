/*
 * xdp_frame.c - what runtime/transport/xdp/frame.h makes of frames, one per input line, for
 * tests/unit/test_xdp_frame.py. Each frame lies in a buffer of exactly ROOM octets (its
 * first LEN the frame, the rest 0x5A), as in a UMEM frame, so that under AddressSanitizer a
 * read or write past the room is a finding.
 *
 *   xdp_frame parse:   ROOM MTU PORT FRAMEHEX
 *     out: pass | drop | answer IP UDP DNS DNS_LEN MAX_UDP FAMILY PEERHEX PEERPORT
 *   xdp_frame answer:  ROOM MTU PORT FRAMEHEX RESPONSEHEX
 *     the response put where the query was, the frame turned around:
 *     out: LEN FRAMEHEX (its first LEN octets) | not-answered VERDICT | 0
 *   xdp_frame respond: ROOM MTU PORT FRAMEHEX
 *     the same with the response the request handler writes (zb_respond_batch, with the
 *     frame's max_udp), against the zone set linked in
 *   xdp_frame sum:     HEX
 *     out: the folded sum of the octets (RFC 1071), big-endian, in hex; then the same summed
 *     in two pieces split at each even offset, which must agree
 */
#define _GNU_SOURCE /* getline */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/respond.h"
#include "query/zoneset.h"
#include "transport/xdp/frame.h"

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;
	for (; hex[2 * n] && hex[2 * n + 1]; n++)
		sscanf(hex + 2 * n, "%2hhx", &out[n]);
	return n;
}

static void print_hex(const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < len; i++)
		printf("%02x", data[i]);
}

static const char *const verdicts[] = { "pass", "drop", "answer" };

static void print_frame(const struct zb_frame *f)
{
	const uint8_t *addr;
	size_t addr_len;
	unsigned port;
	if (f->peer.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&f->peer;
		addr = (const uint8_t *)&in->sin_addr;
		addr_len = 4;
		port = ntohs(in->sin_port);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&f->peer;
		addr = in6->sin6_addr.s6_addr;
		addr_len = 16;
		port = ntohs(in6->sin6_port);
	}
	printf("answer %u %u %u %u %u %s ", f->ip, f->udp, f->dns, f->dns_len, f->max_udp,
	       f->peer.ss_family == AF_INET ? "inet" : "inet6");
	print_hex(addr, addr_len);
	printf(" %u", port);
}

/* The response the request handler gives the frame's query, written in its place. */
static size_t handler_response(uint8_t *frame, const struct zb_frame *f)
{
	struct zb_client client = { &f->peer, NULL };
	struct zb_batch_query batch = { .packet = frame + f->dns, .client = &client,
					.len = f->dns_len };
	struct zb_query *scratch[1];
	struct zb_zoneset framed = zb_frame_zoneset(&zb_zoneset, f->max_udp);
	zb_respond_batch(&framed, &batch, 1, scratch);
	return batch.len;
}

static void sum(const char *hex)
{
	uint8_t *data = malloc(strlen(hex) / 2 + 1);
	size_t len = unhex(hex, data);
	uint16_t whole = zb_sum_fold(zb_sum(data, len, 0));
	uint8_t be[2];
	memcpy(be, &whole, 2); /* the host's order in memory is the network's (RFC 1071 §2(B)) */
	printf("%02x%02x", be[0], be[1]);
	for (size_t split = 0; split <= len; split += 2)
		if (zb_sum_fold(zb_sum(data + split, len - split, zb_sum(data, split, 0))) != whole)
			printf(" split-at-%zu-differs", split);
	printf("\n");
	free(data);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "parse";
	char *line = NULL;
	size_t cap = 0;
	char err[200];

	if (zb_zoneset_open(&zb_zoneset, err, sizeof(err)) != 0) {  /* as the server starts */
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	while (getline(&line, &cap, stdin) > 0) {
		if (strcmp(mode, "sum") == 0) {
			line[strcspn(line, "\n")] = 0;
			sum(line);
			continue;
		}
		struct zb_frame_rules rules;
		unsigned room, mtu, port;
		char *frame_hex = malloc(strlen(line)), *response_hex = malloc(strlen(line));
		response_hex[0] = 0;
		if (sscanf(line, "%u %u %u %s %s", &room, &mtu, &port, frame_hex, response_hex) < 4)
			return 2;
		rules = (struct zb_frame_rules){ .room = room, .mtu = mtu, .port = (uint16_t)port };
		size_t len = strlen(frame_hex) / 2;
		uint8_t *frame = malloc(room > len ? room : len);
		unhex(frame_hex, frame);
		if (room > len)
			memset(frame + len, 0x5A, room - len);
		struct zb_frame f;
		enum zb_frame_verdict verdict = zb_frame_parse(frame, len, &rules, &f);
		if (strcmp(mode, "parse") == 0) {
			if (verdict == ZB_FRAME_ANSWER)
				print_frame(&f);
			else
				printf("%s", verdicts[verdict]);
			printf("\n");
		} else if (verdict != ZB_FRAME_ANSWER) {
			printf("not-answered %s\n", verdicts[verdict]);
		} else {
			size_t dns_len;
			if (strcmp(mode, "respond") == 0) {
				dns_len = handler_response(frame, &f);
			} else {
				uint8_t *response = malloc(strlen(response_hex) / 2 + 1);
				dns_len = unhex(response_hex, response);
				if (dns_len <= f.max_udp)
					memcpy(frame + f.dns, response, dns_len);
				free(response);
			}
			size_t n = zb_frame_answer(frame, &f, dns_len);
			printf("%zu ", n);
			print_hex(frame, n);
			printf("\n");
		}
		free(frame);
		free(frame_hex);
		free(response_hex);
	}
	free(line);
	return 0;
}
