/*
 * server.h - the workers: bind every listen address once per worker, or adopt sockets handed
 * over (a takeover, systemd) and share them out; then run the workers, one thread each.
 */
#ifndef ZB_SERVER_H
#define ZB_SERVER_H

#include <stdint.h>

#include "ops/stats.h"
#include "server/worker.h"
#include "transport/xdp/interfaces.h"

struct zb_server {
	struct zb_server_options options;
	int stop_fd;  /* eventfd every worker watches; SIGTERM, SIGINT and stop-reading write it */
	int ready_fd; /* eventfd each worker adds 1 to once it reads all its sockets */
	unsigned nworkers;
	struct zb_worker *workers; /* 64-byte aligned: each has its struct zb_stats */
	unsigned nsockets;
	struct zb_socket *sockets; /* every listening socket, once (a takeover hands these) */
	struct zb_socket *slices;  /* the workers' shares of them, one slice each */
	struct zb_xdp_set xdp;     /* the AF_XDP interfaces and queues (--xdp), if any */
	int xdp_go_fd;             /* -1, or an eventfd the workers wait on before they serve
				    * queues a swap handed over (zb_server_xdp_go) */
	/* The zone set the workers answer from: the one they started with until its data has
	 * moved to huge pages (hugepages.h), then the moved one. */
	const struct zb_zoneset *zs_now;
	/* Binary swaps this server took part in: bumped with an atomic add by the swap, outside
	 * the query path; read with a relaxed load (stats.c). */
	uint64_t swaps;
	/* The totals of the servers this one took over from (a swap or a reload): the sums of
	 * the statistics start from them (stats.c). Written once, by the takeover. */
	struct zb_stats carried;
};

/* Bind the listen addresses for each of options.threads workers. Returns 0, or -1 with a
 * message in `err`. */
int zb_server_bind(struct zb_server *server, const struct zb_zoneset *zs,
		   const char *const *specs, int nspecs, char *err, size_t err_len);

/* Serve sockets bound elsewhere (the server takes the array, from malloc), with
 * options.threads workers, binding none anew. Every one is read: the k-th socket of each kind
 * and address (its group) goes to worker k mod N; when there are fewer groups than workers,
 * worker w reads group w mod G, sharing its sockets with other workers. Returns 0, or -1 with
 * a message in `err`. */
int zb_server_adopt(struct zb_server *server, const struct zb_zoneset *zs,
		    struct zb_socket *sockets, unsigned nsockets, char *err, size_t err_len);

/* Serve the AF_XDP queues of `xdp` too (the server takes it, and closes it when this fails):
 * queue q goes to worker q mod N. Call before zb_server_start. Returns 0, or -1 when memory
 * cannot be had. */
int zb_server_add_xdp(struct zb_server *server, const struct zb_xdp_set *xdp);

/* Log one start-up line per address served. */
void zb_server_log_serving(const struct zb_server *server, const char *description);

/* Start every worker but the first, each in a thread of its own. Returns 0, or -1. */
int zb_server_start(struct zb_server *server);

/* Wait up to `timeout_ms` until every worker reads all its sockets. Returns 0, or -1. */
int zb_server_wait_ready(const struct zb_server *server, int timeout_ms);

/* Ask every worker to stop reading (as SIGTERM does). */
void zb_server_stop(const struct zb_server *server);

/* Whether the workers have been asked to stop. */
int zb_server_stopping(const struct zb_server *server);

/* Run the first worker in the calling thread until it is told to stop, then wait for the
 * others. Returns 0 after a stop as asked, -1 when a worker failed. */
int zb_server_run_first(struct zb_server *server);

/* Let the workers serve AF_XDP queues handed over by a swap: the old process has stopped
 * and let go of their rings. */
void zb_server_xdp_go(const struct zb_server *server);

/* Detach the XDP programs from the interfaces (as SIGTERM leaves them) and close the AF_XDP
 * sockets, once the workers have stopped. */
void zb_server_close_xdp(struct zb_server *server);

/* Free the workers and the socket list, once nothing uses them any more (the control
 * thread may hand the sockets over, and the statistics threads read the workers' counters,
 * until they have finished). The sockets stay open until the process exits. */
void zb_server_free(struct zb_server *server);

#endif
