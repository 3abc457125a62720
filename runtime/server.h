/*
 * server.h - the workers: bind every listen address once per worker, then run them, one
 * thread each.
 */
#ifndef ZB_SERVER_H
#define ZB_SERVER_H

#include <stdint.h>

#include "worker.h"

struct zb_server {
	struct zb_server_options options;
	int stop_fd; /* eventfd every worker watches; SIGTERM and SIGINT write to it */
	unsigned nworkers;
	struct zb_worker *workers; /* 64-byte aligned: each has its struct zb_stats */
	/* Binary swaps this server took part in: bumped with an atomic add by the swap, outside
	 * the query path; read with a relaxed load (stats.c). */
	uint64_t swaps;
};

/* Bind the listen addresses for every worker. Returns 0, or -1 with a message in `err`. */
int zb_server_bind(struct zb_server *server, const struct zb_zoneset *zs,
		   const char *const *specs, int nspecs, char *err, size_t err_len);

/* Start every worker but the first, each in a thread of its own. Returns 0, or -1. */
int zb_server_start(struct zb_server *server);

/* Run the first worker in the calling thread until SIGTERM or SIGINT, then wait for the
 * others. Returns 0 after a stop as asked, -1 when a worker failed. */
int zb_server_run_first(struct zb_server *server);

/* Free the workers, once nothing reads their statistics any more. */
void zb_server_free(struct zb_server *server);

#endif
