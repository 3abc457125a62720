/*
 * metrics.h - `--metrics ADDRESS:PORT`: a minimal HTTP/1.0 server in a thread of its own that
 * serves the statistics (GET /metrics: Prometheus text; GET /stats.json: JSON). One request
 * at a time, every read and write bounded in size and time; it never touches the query path.
 */
#ifndef ZB_METRICS_H
#define ZB_METRICS_H

#include <pthread.h>
#include <stddef.h>
#include <sys/socket.h>

#include "server/server.h"

struct zb_metrics {
	const struct zb_server *server;
	int listen_fd;
	int stop_fd; /* the server's: readable once it is to stop */
	struct sockaddr_storage addr; /* as bound: the real port when 0 was asked for */
	pthread_t thread;
	int started;
	char *body; /* the formatted statistics, grown as needed (this thread's alone) */
	size_t body_cap;
};

/* Bind and listen on ADDRESS:PORT. Returns 0, or -1 with a message in `err`. */
int zb_metrics_bind(struct zb_metrics *m, const char *spec, char *err, size_t err_len);

/* Serve on `fd`, the listener handed over by a swap, if it is bound to ADDRESS:PORT (port 0:
 * any); otherwise close it and bind as zb_metrics_bind does. Returns 0, or -1 with a message
 * in `err`. */
int zb_metrics_adopt(struct zb_metrics *m, int fd, const char *spec, char *err,
		     size_t err_len);

/* Serve the server's statistics in a new thread until its stop_fd is readable. Returns 0, or
 * -1 when the thread cannot be started. */
int zb_metrics_start(struct zb_metrics *m, const struct zb_server *server);

/* Once the server is stopping: wait for the thread (it ends within a request's time limit)
 * and release what it had. */
void zb_metrics_stop(struct zb_metrics *m);

#endif
