/*
 * reload.h - SIGHUP, the usual reload: start `--release PATH` (typically a symlink a deploy
 * repoints) as this server's successor. It takes every socket over through the control
 * socket, as after `zonebake deploy`, and serves in this one's place: no query lost. SIGHUP
 * without --release is logged and ignored.
 */
#ifndef ZB_RELOAD_H
#define ZB_RELOAD_H

#include <pthread.h>

#include "server/server.h"

struct zb_reload {
	const char *release;   /* --release PATH, or NULL */
	const char *control;   /* --control PATH: where the successor takes the sockets from */
	char **argv;           /* this server's own, for the successor's options */
	int argc;
	const struct zb_server *server;
	pthread_t thread;
};

/* With --release: block SIGHUP in this thread and every thread started after it, for the
 * reload thread to take with sigwaitinfo. Without: SIGHUP only notes that it came, and
 * the next one-second tick logs it (zb_reload_tick). Call before any thread starts. */
void zb_reload_prepare(const struct zb_reload *r);

/* With --release, start the thread that waits for SIGHUP. Returns 0, or -1 (logged). */
int zb_reload_start(struct zb_reload *r, const struct zb_server *server);

/* Return once a successor being started, if any, has been logged: the control thread calls
 * it before it hands the sockets over, so that "started pid N" comes before "handed ... to
 * pid N" and this process, which ends with the swap, never ends before saying it. */
void zb_reload_logged(void);

/* A worker's one-second tick (struct zb_server_options' tick): log a SIGHUP that came
 * without --release, once. */
void zb_reload_tick(void);

#endif
