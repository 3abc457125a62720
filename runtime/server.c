/*
 * server.c - start-up of the workers. The first worker's sockets fix the ports (port 0 picks
 * one); every other worker binds the same addresses with SO_REUSEPORT, so the kernel spreads
 * UDP queries and TCP connections over the workers.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np */
#include "server.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int stop_fd = -1;

/* SIGTERM, SIGINT: wake every worker to stop (write is async-signal-safe). */
static void on_stop_signal(int signal)
{
	uint64_t one = 1;
	(void)signal;
	if (write(stop_fd, &one, sizeof(one)) < 0)
		return;
}

int zb_server_bind(struct zb_server *server, const struct zb_zoneset *zs,
		   const char *const *specs, int nspecs, char *err, size_t err_len)
{
	server->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (server->stop_fd < 0) {
		snprintf(err, err_len, "eventfd: %s", strerror(errno));
		return -1;
	}
	server->nworkers = server->options.threads;
	/* Aligned as struct zb_worker asks (its counters have cache lines of their own), which
	 * calloc does not promise. */
	size_t size = server->nworkers * sizeof(*server->workers);
	if (posix_memalign((void **)&server->workers, _Alignof(struct zb_worker), size) != 0) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	memset(server->workers, 0, size);
	for (unsigned w = 0; w < server->nworkers; w++) {
		struct zb_worker *worker = &server->workers[w];
		worker->index = w;
		worker->zs = zs;
		worker->options = &server->options;
		worker->stop_fd = server->stop_fd;
		worker->nlisteners = nspecs;
		for (int i = 0; i < nspecs; i++) {
			int failed = w == 0
				? zb_listen(specs[i], &server->options.sockets, &worker->listeners[i],
					    err, err_len)
				: zb_listen_again(&server->workers[0].listeners[i],
						  &server->options.sockets, &worker->listeners[i],
						  err, err_len);
			if (failed)
				return -1;
		}
	}
	return 0;
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
	server->workers[0].thread = pthread_self();
	for (unsigned w = 1; w < server->nworkers; w++) {
		int failed = pthread_create(&server->workers[w].thread, NULL, run_or_exit,
					    &server->workers[w]);
		if (failed) {
			fprintf(stderr, "zonebake-server: cannot start worker %u: %s\n", w,
				strerror(failed));
			return -1;
		}
	}
	for (unsigned w = 0; server->options.cpu_affinity && w < server->nworkers; w++) {
		int failed = pin(server->workers[w].thread, w % (unsigned)(ncpus > 0 ? ncpus : 1));
		if (failed) {
			fprintf(stderr, "zonebake-server: cannot pin worker %u: %s\n", w,
				strerror(failed));
			return -1;
		}
	}
	return 0;
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
	server->workers = NULL;
}
