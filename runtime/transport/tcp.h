/*
 * tcp.h - DNS over TCP (RFC 1035 §4.2.2, RFC 7766): two-octet length framing, several and
 * pipelined queries per connection answered in order, partial reads and writes, an idle
 * timeout, a cap on connections and one on connections from one address (an idle one makes
 * way for a new one: nothing half read and nothing to send, quiet longest).
 */
#ifndef ZB_TCP_H
#define ZB_TCP_H

#include <stdint.h>

#include "ops/stats.h"
#include "query/cookies.h"
#include "zonedata.h"

struct zb_conn;
struct zb_buffers;

struct zb_tcp {
	const struct zb_zoneset *zs;
	struct zb_stats *stats; /* the worker's */
	struct zb_cookies *cookies; /* the worker's; NULL: none made */
	int epfd;
	uint32_t now;          /* seconds, advanced by the server's one-second timer */
	uint32_t idle_timeout; /* seconds */
	uint32_t max_conns;
	uint32_t max_per_source; /* connections from one client address */
	uint32_t nconns;
	struct zb_conn *conns; /* max_conns of them, allocated once at start-up */
	struct zb_buffers *buffers;   /* the pool: max_conns of them, allocated likewise */
	uint32_t *free_buffers;       /* a stack of the pool's free entries */
	uint32_t nfree;
};

/* Allocate the connection pool. Returns 0, or -1 when memory cannot be had. */
int zb_tcp_init(struct zb_tcp *tcp, const struct zb_zoneset *zs, struct zb_stats *stats,
		struct zb_cookies *cookies, int epfd, uint32_t idle_timeout, uint32_t max_conns, uint32_t max_per_source);

/* The epoll data word of connection i: ZB_EVENT_CONN in the upper half. */
#define ZB_EVENT_CONN 3u

/* Accept every pending connection on a listening socket. Returns 0, or -1 when the process
 * is out of descriptors or memory (errno says which) and the rest must wait. */
int zb_tcp_accept(struct zb_tcp *tcp, int listen_fd);

/* A connection is readable, writable or closed (`events` as epoll reports them). */
void zb_tcp_event(struct zb_tcp *tcp, uint32_t index, uint32_t events);

/* One second has passed `ticks` times: close connections idle too long. */
void zb_tcp_tick(struct zb_tcp *tcp, uint32_t ticks);

/* The server is stopping: send what each connection has ready, close them all, and free
 * the pool. */
void zb_tcp_finish(struct zb_tcp *tcp);

#endif
