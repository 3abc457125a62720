/*
 * reload.c - SIGHUP (see reload.h). The successor is `PATH --takeover CONTROL --control
 * CONTROL` and this server's own options but --listen (the sockets come with the takeover)
 * and --user (this process runs as that user already, and so will its successor). It is
 * started with posix_spawn, which says at once when PATH cannot be run; a successor that
 * exits before it has taken over is reaped and logged, and this server goes on serving.
 */
#include "ops/reload.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ops/log.h"
#include "server/threads.h"

#define ZB_SUCCESSOR_SECONDS 30  /* to take over: longer than a control conversation */

extern char **environ;

/* Held from the spawn until the successor's pid is logged (zb_reload_logged). */
static pthread_mutex_t starting = PTHREAD_MUTEX_INITIALIZER;

static int hup_unheeded; /* a SIGHUP without --release, not logged yet */

static void on_hup_unheeded(int signal)
{
	(void)signal;
	__atomic_store_n(&hup_unheeded, 1, __ATOMIC_RELAXED);
}

void zb_reload_prepare(const struct zb_reload *r)
{
	if (r->release) {
		sigset_t hup;
		sigemptyset(&hup);
		sigaddset(&hup, SIGHUP);
		pthread_sigmask(SIG_BLOCK, &hup, NULL);
		return;
	}
	struct sigaction note = { .sa_handler = on_hup_unheeded, .sa_flags = SA_RESTART };
	sigemptyset(&note.sa_mask);
	sigaction(SIGHUP, &note, NULL);
}

void zb_reload_tick(void)
{
	if (__atomic_exchange_n(&hup_unheeded, 0, __ATOMIC_RELAXED))
		zb_log_warning("SIGHUP: no --release PATH to start in this server's place; ignored");
}

/* The successor's command line, in `argv` (room for argc + 6). */
static void successor_argv(const struct zb_reload *r, char **argv)
{
	int n = 0;
	argv[n++] = (char *)r->release;
	argv[n++] = "--takeover";
	argv[n++] = (char *)r->control;
	argv[n++] = "--control";
	argv[n++] = (char *)r->control;
	for (int i = 1; i < r->argc; i++) {
		const char *arg = r->argv[i];
		if (i + 1 < r->argc && (strcmp(arg, "--listen") == 0 ||
					strcmp(arg, "--takeover") == 0 ||
					strcmp(arg, "--control") == 0 || strcmp(arg, "--user") == 0)) {
			i++;
			continue;
		}
		argv[n++] = r->argv[i];
	}
	argv[n] = NULL;
}

/* Wait for the successor: its exit (reaped and logged), or this server stopping because it
 * took over, or the time it has to take over. */
static void watch(const struct zb_reload *r, pid_t child)
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	for (int waited = 0; waited < ZB_SUCCESSOR_SECONDS * 50; waited++) {
		int status;
		if (waitpid(child, &status, WNOHANG) == child) {
			if (WIFEXITED(status))
				zb_log_warning("reload: pid %d (%s) exited with status %d before it took over; "
				       "still serving", (int)child, r->release, WEXITSTATUS(status));
			else
				zb_log_warning("reload: pid %d (%s) was killed by signal %d before it took over; "
				       "still serving", (int)child, r->release, WTERMSIG(status));
			return;
		}
		if (zb_server_stopping(r->server))
			return;  /* it took over: this process ends */
		nanosleep(&tick, NULL);
	}
	zb_log_warning("reload: pid %d (%s) has not taken over in %d s; still serving", (int)child,
	       r->release, ZB_SUCCESSOR_SECONDS);
}

static void reload(const struct zb_reload *r)
{
	char *argv[r->argc + 6];
	posix_spawnattr_t attr;
	sigset_t none, defaults;
	pid_t child;

	successor_argv(r, argv);
	/* This thread blocks every signal (threads.h): the successor starts with none blocked
	 * and the default actions, as from a shell. */
	sigemptyset(&none);
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGHUP);
	sigaddset(&defaults, SIGPIPE);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	pthread_mutex_lock(&starting);
	int failed = posix_spawn(&child, r->release, NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	if (failed)
		zb_log_warning("reload: cannot run %s: %s; still serving", r->release, strerror(failed));
	else
		zb_log("reload: started pid %d (%s) to serve in this one's place", (int)child,
		       r->release);
	pthread_mutex_unlock(&starting);
	if (!failed)
		watch(r, child);
}

void zb_reload_logged(void)
{
	pthread_mutex_lock(&starting);
	pthread_mutex_unlock(&starting);
}

static void *reload_thread(void *arg)
{
	struct zb_reload *r = arg;
	sigset_t hup;

	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	for (;;) {
		if (sigwaitinfo(&hup, NULL) == SIGHUP && !zb_server_stopping(r->server))
			reload(r);
	}
	return NULL;
}

int zb_reload_start(struct zb_reload *r, const struct zb_server *server)
{
	r->server = server;
	if (!r->release)
		return 0;
	int failed = zb_start_helper_thread(&r->thread, reload_thread, r);
	if (failed) {
		zb_log_error("cannot start the reload thread: %s", strerror(failed));
		return -1;
	}
	pthread_detach(r->thread);
	return 0;
}
