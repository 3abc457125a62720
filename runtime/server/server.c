/*
 * server.c - start-up of the workers. The first worker's sockets fix the ports (port 0 picks
 * one); every other worker binds the same addresses with SO_REUSEPORT, so the kernel spreads
 * UDP queries and TCP connections over the workers. Sockets handed over (a takeover,
 * systemd) are shared out over the workers instead, none left unread, and none bound anew.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np */
#include "server/server.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/log.h"

static int stop_fd = -1;

/* SIGTERM, SIGINT: wake every worker to stop (write is async-signal-safe). */
static void on_stop_signal(int signal)
{
	uint64_t one = 1;
	(void)signal;
	if (write(stop_fd, &one, sizeof(one)) < 0)
		return;
}

/* Whether worker w of n reads the sockets of group g of `groups`: with fewer workers than
 * groups, each worker reads several groups; with more, several workers read each group. Every
 * socket is read by some worker, and every worker reads some socket. */
static int reads(unsigned w, unsigned n, unsigned g, unsigned groups)
{
	return n <= groups ? g % n == w : w % groups == g;
}

/* Give each of options.threads workers its sockets, in a slice of server->slices. */
static int share_out(struct zb_server *server, const struct zb_zoneset *zs, unsigned groups,
		     char *err, size_t err_len)
{
	unsigned nworkers = server->options.threads;
	size_t total = 0;

	for (unsigned w = 0; w < nworkers; w++)
		for (unsigned i = 0; i < server->nsockets; i++)
			total += (size_t)reads(w, nworkers, server->sockets[i].group, groups);
	server->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	server->ready_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	server->xdp_go_fd = -1;
	server->nworkers = nworkers;
	server->zs_now = zs;
	server->slices = calloc(total, sizeof(*server->slices));
	/* Aligned as struct zb_worker asks (its counters have cache lines of their own), which
	 * calloc does not promise. */
	if (server->stop_fd < 0 || server->ready_fd < 0 || !server->slices ||
	    posix_memalign((void **)&server->workers, _Alignof(struct zb_worker),
			   nworkers * sizeof(*server->workers)) != 0) {
		snprintf(err, err_len, "start-up: %s", strerror(errno));
		return -1;
	}
	struct zb_socket *next = server->slices;
	for (unsigned w = 0; w < nworkers; w++) {
		struct zb_worker *worker = &server->workers[w];
		*worker = (struct zb_worker){ .index = w, .zs = zs, .zs_now = &server->zs_now,
					      .options = &server->options,
					      .stop_fd = server->stop_fd,
					      .ready_fd = server->ready_fd, .xdp_go_fd = -1,
					      .sockets = next };
		for (unsigned i = 0; i < server->nsockets; i++) {
			if (!reads(w, nworkers, server->sockets[i].group, groups))
				continue;
			*next = server->sockets[i];
			next->shared = nworkers > groups;
			next++;
		}
		worker->nsockets = (unsigned)(next - worker->sockets);
	}
	return 0;
}

int zb_server_bind(struct zb_server *server, const struct zb_zoneset *zs,
		   const char *const *specs, int nspecs, char *err, size_t err_len)
{
	unsigned nworkers = server->options.threads;
	struct zb_socket *sockets = calloc((size_t)nworkers * (size_t)nspecs * 2, sizeof(*sockets));

	if (!sockets || nspecs == 0) {
		snprintf(err, err_len, nspecs ? "out of memory" : "no address to listen on");
		free(sockets);
		return -1;
	}
	server->sockets = sockets;
	for (unsigned w = 0; w < nworkers; w++) {
		for (int i = 0; i < nspecs; i++) {
			struct zb_socket *pair = &sockets[((size_t)w * (size_t)nspecs + (size_t)i) * 2];
			int failed = w == 0
				? zb_listen(specs[i], &server->options.sockets, pair, err, err_len)
				: zb_listen_again(&sockets[(size_t)i * 2], &server->options.sockets,
						  pair, err, err_len);
			if (failed)
				return -1;
			pair[0].group = pair[1].group = w;
			server->nsockets += 2;
		}
	}
	return share_out(server, zs, nworkers, err, err_len); /* one group per worker */
}

int zb_server_adopt(struct zb_server *server, const struct zb_zoneset *zs,
		    struct zb_socket *sockets, unsigned nsockets, char *err, size_t err_len)
{
	unsigned groups = 0;

	if (nsockets == 0) {
		snprintf(err, err_len, "no socket to serve");
		free(sockets);
		return -1;
	}
	for (unsigned i = 0; i < nsockets; i++) {
		sockets[i].group = 0;
		for (unsigned j = 0; j < i; j++)
			if (sockets[j].kind == sockets[i].kind && zb_same_address(&sockets[j], &sockets[i]))
				sockets[i].group++;
		if (sockets[i].group + 1 > groups)
			groups = sockets[i].group + 1;
	}
	server->sockets = sockets;
	server->nsockets = nsockets;
	return share_out(server, zs, groups, err, err_len);
}

void zb_server_log_serving(const struct zb_server *server, const char *description)
{
	for (unsigned i = 0; i < server->nsockets; i++) {
		const struct zb_socket *s = &server->sockets[i];
		int udp = 0, tcp = 0, seen_before = 0;
		for (unsigned j = 0; j < server->nsockets; j++) {
			if (!zb_same_address(s, &server->sockets[j]))
				continue;
			seen_before |= j < i;
			udp |= server->sockets[j].kind == ZB_SOCKET_UDP;
			tcp |= server->sockets[j].kind == ZB_SOCKET_TCP;
		}
		if (seen_before)
			continue;
		char addr[80];
		zb_format_addr(s, addr, sizeof(addr));
		zb_log("serving %s on %s (%s), %u worker%s", description, addr,
		       udp && tcp ? "udp, tcp" : udp ? "udp" : "tcp", server->nworkers,
		       server->nworkers == 1 ? "" : "s");
	}
}

int zb_server_add_xdp(struct zb_server *server, const struct zb_xdp_set *xdp)
{
	server->xdp = *xdp;
	/* Worker w's queues are w, w + N, w + 2N, ...: in a run of the array by interface, one
	 * worker's are not side by side, so each gets a slice of its own, in place. */
	unsigned n = server->nworkers, next = 0;
	struct zb_xdp_queue *sorted = xdp->nqueues ? malloc(xdp->nqueues * sizeof(*sorted)) : NULL;
	if (xdp->nqueues && !sorted)
		return -1;
	if (xdp->adopted) {
		server->xdp_go_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (server->xdp_go_fd < 0) {
			free(sorted);
			return -1;
		}
	}
	for (unsigned w = 0; w < n; w++) {
		struct zb_worker *worker = &server->workers[w];
		worker->xdp = sorted + next;
		worker->nxdp = 0;
		worker->xdp_go_fd = server->xdp_go_fd;
		for (unsigned q = w; q < xdp->nqueues; q += n)
			sorted[next + worker->nxdp++] = xdp->queues[q];
		next += worker->nxdp;
	}
	free(server->xdp.queues);
	server->xdp.queues = sorted;
	return 0;
}

void zb_server_xdp_go(const struct zb_server *server)
{
	uint64_t one = 1;
	if (server->xdp_go_fd >= 0 && write(server->xdp_go_fd, &one, sizeof(one)) < 0)
		return; /* cannot fail: the counter is far from overflowing */
}

void zb_server_close_xdp(struct zb_server *server)
{
	if (server->xdp_go_fd >= 0)
		close(server->xdp_go_fd);
	server->xdp_go_fd = -1;
	zb_xdp_close(&server->xdp);
}

/* A worker that fails takes the server down: half a server is worse than a clear exit. */
static void *run_or_exit(void *worker)
{
	if (zb_worker_run(worker) != NULL)
		exit(1);
	return NULL;
}

/* --cpu-affinity: worker i runs on CPU i (modulo the CPUs there are). */
static int pin(pthread_t thread, unsigned cpu)
{
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	CPU_SET(cpu % CPU_SETSIZE, &cpus);
	return pthread_setaffinity_np(thread, sizeof(cpus), &cpus);
}

int zb_server_start(struct zb_server *server)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct sigaction stop = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };

	stop_fd = server->stop_fd;
	sigemptyset(&stop.sa_mask);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGINT, &stop, NULL);
	/* A log line to a closed pipe (a deploy's stderr, long gone) must not kill the server;
	 * the write fails with EPIPE instead, and the line is lost. */
	signal(SIGPIPE, SIG_IGN);
	server->workers[0].thread = pthread_self();
	for (unsigned w = 1; w < server->nworkers; w++) {
		int failed = pthread_create(&server->workers[w].thread, NULL, run_or_exit,
					    &server->workers[w]);
		if (failed) {
			zb_log_error("cannot start worker %u: %s", w, strerror(failed));
			return -1;
		}
	}
	for (unsigned w = 0; server->options.cpu_affinity && w < server->nworkers; w++) {
		int failed = pin(server->workers[w].thread, w % (unsigned)(ncpus > 0 ? ncpus : 1));
		if (failed) {
			zb_log_error("cannot pin worker %u: %s", w, strerror(failed));
			return -1;
		}
	}
	return 0;
}

int zb_server_wait_ready(const struct zb_server *server, int timeout_ms)
{
	uint64_t ready = 0;
	struct pollfd pfd = { .fd = server->ready_fd, .events = POLLIN };

	while (ready < server->nworkers) {
		uint64_t more;
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -1; /* a coarse bound: the workers start in microseconds */
		if (read(server->ready_fd, &more, sizeof(more)) == sizeof(more))
			ready += more;
	}
	return 0;
}

void zb_server_stop(const struct zb_server *server)
{
	uint64_t one = 1;
	if (write(server->stop_fd, &one, sizeof(one)) < 0)
		return; /* cannot fail: the counter is far from overflowing */
}

int zb_server_stopping(const struct zb_server *server)
{
	struct pollfd pfd = { .fd = server->stop_fd, .events = POLLIN };
	return poll(&pfd, 1, 0) == 1; /* nobody reads stop_fd: once written, it stays readable */
}

int zb_server_run_first(struct zb_server *server)
{
	if (zb_worker_run(&server->workers[0]) != NULL)
		return -1;
	for (unsigned w = 1; w < server->nworkers; w++)
		pthread_join(server->workers[w].thread, NULL);
	return 0;
}

void zb_server_free(struct zb_server *server)
{
	free(server->workers);
	free(server->slices);
	free(server->sockets);
	*server = (struct zb_server){ .stop_fd = -1, .ready_fd = -1, .xdp_go_fd = -1 };
}
