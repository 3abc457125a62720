/*
 * stats.h - per-worker counters, counted on the query path, summed and formatted (JSON,
 * Prometheus text) by whoever asks, from another thread.
 *
 * Each worker owns its struct zb_stats, on cache lines of its own: only that worker writes it,
 * with plain adds (no lock, no atomic read-modify-write), so the hot path pays a few
 * instructions per counter and no cache line bounces between cores. Readers load each counter
 * with a relaxed atomic load: every value is one the writer stored, though counters of one
 * snapshot may be from slightly different moments.
 */
#ifndef ZB_STATS_H
#define ZB_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "query/respond.h"
#include "query/statkeys.h"

/* Why a TCP connection was closed. */
enum zb_stat_close {
	ZB_CLOSE_OTHER,  /* the client closed it, an error, a protocol violation, the server stops */
	ZB_CLOSE_IDLE,   /* silent for tcp-idle-timeout */
	ZB_CLOSE_CAPPED, /* closed for a new one at tcp-max-connections(-per-source) */
	ZB_CLOSE_NREASONS
};

struct zb_stats {
	uint64_t queries[2];                  /* by enum zb_transport: every message taken */
	uint64_t responses[ZB_STAT_NRCODES];  /* by RCODE of the response sent */
	uint64_t qtypes[ZB_STAT_NQTYPES];     /* queries whose question could be read */
	uint64_t truncated;                   /* responses with TC set */
	uint64_t dropped;                     /* queries given no response at all */
	uint64_t edns;                        /* queries with a good OPT record */
	uint64_t tcp_accepted;
	uint64_t tcp_closed[ZB_CLOSE_NREASONS];
	uint64_t rrl_dropped;                 /* responses rate limiting kept back */
	uint64_t rrl_slipped;                 /* and sent truncated (or BADCOOKIE) instead */
	uint64_t xdp_queries;                 /* of queries[ZB_UDP], those taken over AF_XDP */
	/* A worker's responses by key (statkeys.h), which a sum folds into `responses` and
	 * `qtypes` (a worker's own of those two stay 0): counting a response is one add. Not
	 * carried over a swap: the sums are. */
	uint64_t keyed[ZB_STAT_KEYS];
} __attribute__((aligned(64)));

/* Add to a counter of the calling worker's own stats: a plain add, one instruction on
 * x86-64 (`add` to memory; no lock prefix). Readers load it with __atomic_load_n: an aligned
 * 64-bit store is single-copy atomic on every target zonebake builds for (x86-64, aarch64),
 * so they never see a torn value. (The strictly C11 race-free alternative, a relaxed load
 * and __atomic_store_n, cannot fold into one `add`: callgrind counted 15 more instructions per
 * query with it.) */
static inline void zb_stat_add(uint64_t *counter, uint64_t n)
{
	*counter += n;
}

/* Count one response (TC read from its header) with what zb_respond found out. */
static inline void zb_stats_count_response(struct zb_stats *s, const uint8_t *response,
					   const struct zb_query_facts *facts)
{
	zb_stat_add(&s->keyed[facts->stat_key], 1);
	zb_stat_add(&s->truncated, (response[2] >> 1) & 1); /* TC: adds 0 or 1, no branch */
	zb_stat_add(&s->edns, facts->edns);
}

struct zb_server;

/* The sum of every worker's counters, into `total`. Safe from any thread while the workers
 * run (the server's workers array must stay allocated). */
void zb_stats_sum(const struct zb_server *server, struct zb_stats *total);

/* The queries this process's workers have answered or dropped (those carried over a swap
 * left out). Safe from any thread while the workers run. */
uint64_t zb_stats_handled(const struct zb_server *server);

/*
 * Format the counters, summed, and for JSON each worker's too, into `buf` (NUL-terminated
 * when cap is not 0). Like snprintf, return the length the whole text has: when it is `cap`
 * or more, the text was cut; call again with a larger buffer. Safe from any thread while the
 * workers run. JSON keys and Prometheus metric names are stable (docs/server.rst, "Statistics
 * and metrics").
 */
size_t zb_stats_json(const struct zb_server *server, char *buf, size_t cap);
size_t zb_stats_prometheus(const struct zb_server *server, char *buf, size_t cap);

/* The counters a swap carries over: struct zb_stats's, up to the keyed responses (which the
 * sums fold into `responses` and `qtypes`). */
#define ZB_STAT_COUNTERS (offsetof(struct zb_stats, keyed) / sizeof(uint64_t))

struct zb_server;

/* The totals (every counter summed, then the swaps) as the control socket's `totals` answer:
 * "ok N C1 ... CN SWAPS", N = ZB_STAT_COUNTERS. Returns the length, as snprintf. */
size_t zb_stats_totals(const struct zb_server *server, char *buf, size_t cap);

/* A predecessor's `totals` answer: carried over into this server's sums, its swaps
 * replacing this server's count. Returns 0, or -1 (the line is not one this version reads:
 * the counters start from 0). */
int zb_stats_carry(struct zb_server *server, const char *line);

#endif
