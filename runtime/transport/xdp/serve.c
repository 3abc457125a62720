/*
 * serve.c - a worker's AF_XDP path (serve.h): receive a batch of frames, read each down to
 * its DNS query (frame.c), answer the queries with zb_respond_batch as udp.c does, turn each
 * answered frame around in place and send it; the rest go back to be received into.
 */
#include "transport/xdp/serve.h"

#include <stdlib.h>

#include "query/wire.h"
#include "transport/udp.h"

/* The longest headers in front of a query: Ethernet and one VLAN tag (18), IPv4 with the
 * most options (60), UDP (8). And the longest in front of a response: IPv6's 40, UDP's 8. */
#define ZB_XDP_QUERY_HEADERS_MAX (14 + 4 + 60 + 8)
#define ZB_XDP_RESPONSE_HEADERS_MAX (40 + 8)

uint16_t zb_xdp_max_udp(const struct zb_frame_rules *rules)
{
	uint32_t in_frame = rules->room > ZB_XDP_QUERY_HEADERS_MAX
			    ? rules->room - ZB_XDP_QUERY_HEADERS_MAX : 0;
	uint32_t in_mtu = rules->mtu > ZB_XDP_RESPONSE_HEADERS_MAX
			  ? rules->mtu - ZB_XDP_RESPONSE_HEADERS_MAX : 0;
	uint32_t most = in_frame < in_mtu ? in_frame : in_mtu;
	return (uint16_t)(most > 0xffff ? 0xffff : most);
}

void zb_xdp_queue_init(struct zb_xdp_queue *q, const struct zb_xsk *xsk, const char *ifname,
		       uint32_t mtu, uint16_t port, const struct zb_zoneset *zs)
{
	q->xsk = *xsk;
	q->ifname = ifname;
	/* A received packet starts at the beginning of its frame (no headroom asked for). */
	q->rules = (struct zb_frame_rules){ .room = xsk->frame_size, .mtu = mtu, .port = port };
	zb_xdp_queue_rezone(q, zs);
}

void zb_xdp_queue_rezone(struct zb_xdp_queue *q, const struct zb_zoneset *zs)
{
	uint16_t most = zb_xdp_max_udp(&q->rules);
	/* Below 512 (an MTU of 540 to 559, which only IPv4 runs on: IPv6 needs 1280) the cap
	 * is IPv6's alone: an IPv4 frame still carries 512 octets. interfaces.c refuses an MTU
	 * below 540. */
	q->zs = zb_frame_zoneset(zs, most < ZB_UDP_PLAIN_MAX ? ZB_UDP_PLAIN_MAX : most);
}

int zb_xdp_batch_init(struct zb_xdp_batch *b, struct zb_stats *stats, struct zb_rrl *rrl,
		      struct zb_cookies *cookies, unsigned batch)
{
	*b = (struct zb_xdp_batch){ .stats = stats, .rrl = rrl, .batch = batch };
	b->frames = calloc(batch, sizeof(*b->frames));
	b->held = calloc(batch, sizeof(*b->held));
	b->answered = calloc(batch, sizeof(*b->answered));
	b->unanswered = calloc(batch, sizeof(*b->unanswered));
	b->parsed = calloc(batch, sizeof(*b->parsed));
	b->clients = calloc(batch, sizeof(*b->clients));
	b->queries = calloc(batch, sizeof(*b->queries));
	b->lookups = calloc(batch, sizeof(*b->lookups));
	if (!b->frames || !b->held || !b->answered || !b->unanswered || !b->parsed ||
	    !b->clients || !b->queries || !b->lookups)
		return -1;
	for (unsigned i = 0; i < batch; i++) {
		b->clients[i] = (struct zb_client){ &b->parsed[i].peer, cookies };
		b->queries[i].client = &b->clients[i];
	}
	return 0;
}

void zb_xdp_batch_free(struct zb_xdp_batch *b)
{
	free(b->frames);
	free(b->held);
	free(b->answered);
	free(b->unanswered);
	free(b->parsed);
	free(b->clients);
	free(b->queries);
	free(b->lookups);
	*b = (struct zb_xdp_batch){ 0 };
}

void zb_xdp_tend(struct zb_xdp_queue *q)
{
	zb_xsk_kick(&q->xsk);
	zb_xsk_complete(&q->xsk);
}

/* The frames of a batch with a DNS query in them, in b->held and b->queries; the others in
 * b->unanswered (*kept of them). Returns how many queries. A frame the XDP program should have
 * left to the kernel (ZB_FRAME_PASS) cannot be handed to it from here: it goes unanswered,
 * as a malformed one does. */
static unsigned read_frames(struct zb_xdp_batch *b, const struct zb_xdp_queue *q, unsigned n,
			    unsigned *kept)
{
	unsigned queries = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct zb_xsk_frame *frame = &b->frames[i];
		uint8_t *packet = zb_xsk_packet(&q->xsk, frame->addr);
		struct zb_frame *f = &b->parsed[queries];
		if (zb_frame_parse(packet, frame->len, &q->rules, f) != ZB_FRAME_ANSWER) {
			b->unanswered[(*kept)++] = *frame;
			continue;
		}
		b->queries[queries].packet = packet + f->dns;
		b->queries[queries].len = f->dns_len;
		b->held[queries++] = *frame;
	}
	return queries;
}

int zb_xdp_drain(struct zb_xdp_batch *b, struct zb_xdp_queue *q)
{
	struct zb_xsk *const xsk = &q->xsk;
	struct zb_stats *const stats = b->stats;
	struct zb_batch_query *const queries = b->queries;

	for (unsigned round = 0; round < ZB_UDP_BATCHES_PER_WAKEUP; round++) {
		unsigned n = zb_xsk_receive(xsk, b->frames, b->batch);
		if (n == 0) {
			zb_xdp_tend(q);
			return 0;
		}
		unsigned kept = 0, answers = 0;
		unsigned taken = read_frames(b, q, n, &kept);
		zb_stat_add(&stats->queries[ZB_UDP], taken);
		zb_stat_add(&stats->xdp_queries, taken);
		zb_respond_batch(&q->zs, queries, taken, b->lookups);

		int rrl = b->rrl->rate != 0;
		for (unsigned i = 0; i < taken; i++) {
			const struct zb_query_facts *facts = &queries[i].facts;
			const struct zb_frame *f = &b->parsed[i];
			size_t len = queries[i].len;
			if (len && __builtin_expect(rrl, 0) && facts->cookie != ZB_COOKIE_VALID) {
				enum zb_rrl_verdict verdict =
					zb_rrl_account(b->rrl, &f->peer, facts->rrl_key);
				if (verdict != ZB_RRL_SEND &&
				    zb_udp_limited(stats, queries[i].packet, &len, facts, verdict)) {
					b->unanswered[kept++] = b->held[i];
					continue;
				}
			}
			/* None, or (never, with q->zs's cap) more than the frame carries. */
			if (!len || len > f->max_udp) {
				zb_stat_add(&stats->dropped, 1);
				b->unanswered[kept++] = b->held[i];
				continue;
			}
			zb_stats_count_response(stats, queries[i].packet, facts);
			uint8_t *packet = zb_xsk_packet(xsk, b->held[i].addr);
			b->answered[answers++] = (struct zb_xsk_frame){
				b->held[i].addr, (uint32_t)zb_frame_answer(packet, f, len) };
		}
		zb_xsk_transmit(xsk, b->answered, answers);
		zb_xsk_refill(xsk, b->unanswered, kept);
		zb_xdp_tend(q);
		if (n < b->batch)
			return 0;
	}
	return 1;
}
