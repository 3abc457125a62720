/*
 * udp.h - UDP in batches: recvmmsg a batch of queries, answer each, sendmmsg the answers.
 */
#ifndef ZB_UDP_H
#define ZB_UDP_H

#include <stddef.h>
#include <stdint.h>

#include "ops/stats.h"
#include "query/cookies.h"
#include "query/respond.h"
#include "query/rrl.h"
#include "zonedata.h"

/* A longer query is dropped: a question with EDNS options (cookies, padding) is far shorter,
 * and small buffers keep a batch's slots close together in the caches. */
#define ZB_UDP_QUERY_MAX 2048

/* Source ports no resolver sends from: 0 cannot be answered, and the small services of
 * RFC 862 (echo), 867 (daytime), 865 (quote of the day), 864 (chargen) and 868 (time) answer
 * whatever reaches them, so a query spoofed from one of them would start a loop between the
 * two servers. Dropped unanswered, as BIND and Knot drop them, on every UDP path. */
#define ZB_UNANSWERABLE_PORTS (1ull << 0 | 1ull << 7 | 1ull << 13 | 1ull << 17 | 1ull << 19 | \
			       1ull << 37)

static inline int zb_unanswerable_port(unsigned port)
{
	return port < 64 && (ZB_UNANSWERABLE_PORTS >> port) & 1;
}

/* A response over its rate (zb_rrl_account's verdict, not ZB_RRL_SEND), on any UDP path:
 * whether it is dropped (1), or else slipped (*len shortened) and sent. Out of line: rate
 * limiting is rare. */
int zb_udp_limited(struct zb_stats *stats, uint8_t *response, size_t *len,
		   const struct zb_query_facts *facts, enum zb_rrl_verdict verdict);

/* Batches a worker takes from one socket before it looks at its other events again. */
#define ZB_UDP_BATCHES_PER_WAKEUP 4

struct zb_udp_slot;

/* One worker's buffers: `batch` slots of query, answer, address and control data. */
struct zb_udp {
	const struct zb_zoneset *zs;
	struct zb_stats *stats; /* the worker's */
	struct zb_rrl rrl;      /* rate limiting, when its rate is not 0 */
	unsigned batch;
	size_t buffer_size; /* bytes of each slot's buffer */
	unsigned dirty;     /* slots whose header lengths the last recvmmsg changed */
	struct zb_udp_slot *slots;
	struct mmsghdr *in;
	struct mmsghdr *out;
	struct zb_batch_query *queries; /* one a slot: zb_respond_batch's */
	struct zb_query **lookups;      /* zb_respond_batch's scratch */
	uint8_t *buffers;   /* every slot's buffer, in one allocation */
};

/* Allocate a worker's buffers once. Returns 0, or -1 when memory cannot be had. */
int zb_udp_init(struct zb_udp *udp, const struct zb_zoneset *zs, struct zb_stats *stats,
		struct zb_cookies *cookies, const struct zb_rrl_options *rrl, unsigned batch);

/* Free a worker's buffers (when the server stops). */
void zb_udp_free(struct zb_udp *udp);

/* Answer the queries waiting on a UDP socket, up to ZB_UDP_BATCHES_PER_WAKEUP batches. With
 * `pktinfo` (a socket bound to a wildcard address), each answer leaves from the address its
 * query came to. Returns 1 when it stopped with every batch full, the socket most likely
 * holding more; 0 when it found the socket empty (or failed to read it). */
int zb_udp_drain(struct zb_udp *udp, int fd, int pktinfo);

#endif
