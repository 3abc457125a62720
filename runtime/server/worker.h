/*
 * worker.h - one worker: an independent server with its own sockets (SO_REUSEPORT; after a
 * takeover, possibly several per address), its own epoll loop, TCP connections, UDP buffers
 * and one-second timer. Workers share nothing mutable; the compiled zone set is read-only.
 */
#ifndef ZB_WORKER_H
#define ZB_WORKER_H

#include <pthread.h>
#include <stdint.h>

#include "ops/stats.h"
#include "query/cookies.h"
#include "query/rrl.h"
#include "transport/sockets.h"
#include "transport/xdp/serve.h"
#include "zonedata.h"

#define ZB_MAX_LISTEN 64

struct zb_server_options {
	uint32_t tcp_idle_timeout;    /* seconds */
	uint32_t tcp_max_connections; /* per worker */
	uint32_t tcp_max_connections_per_source; /* per worker, from one client address */
	unsigned threads;             /* workers */
	unsigned batch;               /* UDP queries per recvmmsg */
	int cpu_affinity;             /* pin worker i to CPU i */
	struct zb_rrl_options rrl;
	uint8_t cookie_secret[ZB_COOKIE_SECRET_LEN]; /* the same in every worker */
	struct zb_socket_options sockets;
	/* Called by every worker's one-second tick, never per query; NULL calls nothing. main.c
	 * gives zb_reload_tick (reload.h): the worker needs no knowledge of what it does. */
	void (*tick)(void);
};

struct zb_worker {
	unsigned index;
	const struct zb_zoneset *zs;
	/* Where the zone set to answer from is published when it changes (the data moved to
	 * huge pages): read between two rounds of the event loop, never per query. */
	const struct zb_zoneset *const *zs_now;
	const struct zb_server_options *options;
	int stop_fd;  /* an eventfd: readable once the server is to stop */
	int ready_fd; /* an eventfd the worker adds 1 to once it watches all its sockets */
	struct zb_socket *sockets; /* the sockets this worker reads, a slice of the server's */
	unsigned nsockets;
	struct zb_xdp_queue *xdp;  /* the AF_XDP queues this worker serves (--xdp), the server's */
	unsigned nxdp;
	int xdp_go_fd; /* -1, or an eventfd readable once queues handed over may be served */
	pthread_t thread;
	struct zb_stats stats; /* written by this worker only; read by anyone (stats.h) */
};

/* Run one worker's event loop. Returns NULL when told to stop (stop_fd readable: it has
 * answered every UDP query it took and sent what its TCP connections had ready), or
 * (void *)1 on a fatal error. */
void *zb_worker_run(void *worker);

#endif
