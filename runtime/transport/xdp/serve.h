/*
 * serve.h - the AF_XDP path of a worker: the frames of its AF_XDP sockets (one a queue)
 * taken in batches, the DNS queries in them answered by the same request handler as the
 * socket path's (every answer, rate limiting, cookies, NSID, statistics), the responses
 * written into the frames they came in and sent back. What is not a query to answer goes
 * back to the fill ring unanswered.
 *
 * Per frame: no system call, allocation, lock, clock call, logging or formatting; a batch
 * makes at most one system call (zb_xsk_kick, when the kernel asks for it).
 */
#ifndef ZB_XDP_SERVE_H
#define ZB_XDP_SERVE_H

#include <stdint.h>

#include "ops/stats.h"
#include "query/cookies.h"
#include "query/respond.h"
#include "query/rrl.h"
#include "transport/xdp/frame.h"
#include "transport/xdp/xsk.h"
#include "zonedata.h"

/* One AF_XDP socket on one receive queue, and how its frames are answered. */
struct zb_xdp_queue {
	struct zb_xsk xsk;
	struct zb_frame_rules rules;
	struct zb_zoneset zs;    /* the zone set as this queue's frames carry it (zb_frame_zoneset) */
	const char *ifname;      /* for messages */
};

/* The largest DNS response any frame of a queue with these rules carries: behind the longest
 * headers a query may come with (an 802.1Q tag, IPv4 with 40 octets of options) within the
 * frame, and behind the response's own longest headers (IPv6) within the MTU. */
uint16_t zb_xdp_max_udp(const struct zb_frame_rules *rules);

/* Set a queue up for the socket `xsk` (taken: the queue owns it now) of interface `ifname`
 * with `mtu`, serving UDP `port`. */
void zb_xdp_queue_init(struct zb_xdp_queue *q, const struct zb_xsk *xsk, const char *ifname,
		       uint32_t mtu, uint16_t port, const struct zb_zoneset *zs);

/* Answer from `zs` from now on (the same zone set, its data moved), capped as before. */
void zb_xdp_queue_rezone(struct zb_xdp_queue *q, const struct zb_zoneset *zs);

/* A worker's buffers for the frames of one batch, whatever queue it came from. */
struct zb_xdp_batch {
	struct zb_stats *stats;    /* the worker's */
	struct zb_rrl *rrl;        /* the worker's UDP limiter: one budget a client on either path */
	unsigned batch;
	struct zb_xsk_frame *frames;   /* received */
	struct zb_xsk_frame *held;     /* those with a query, in the order of queries */
	struct zb_xsk_frame *answered; /* to send */
	struct zb_xsk_frame *unanswered; /* back to the fill ring */
	struct zb_frame *parsed;       /* each query's frame, as zb_frame_parse found it */
	struct zb_client *clients;
	struct zb_batch_query *queries;
	struct zb_query **lookups;
};

/* Allocate a worker's buffers once. Returns 0, or -1 when memory cannot be had. */
int zb_xdp_batch_init(struct zb_xdp_batch *b, struct zb_stats *stats, struct zb_rrl *rrl,
		      struct zb_cookies *cookies, unsigned batch);
void zb_xdp_batch_free(struct zb_xdp_batch *b);

/* Answer what queue `q` received, up to ZB_UDP_BATCHES_PER_WAKEUP batches. Returns 1 when it
 * stopped with every batch full (more most likely waiting), 0 when it found the RX ring
 * empty. */
int zb_xdp_drain(struct zb_xdp_batch *b, struct zb_xdp_queue *q);

/* What a worker does on its one-second tick and before it stops: frames the kernel has sent
 * back to the fill ring, and the wake-up the kernel may be waiting for. */
void zb_xdp_tend(struct zb_xdp_queue *q);

#endif
