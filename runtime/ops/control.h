/*
 * control.h - the control socket (--control PATH): a Unix stream socket served by a thread of
 * its own, never by the workers, so that nothing a control client does (or fails to do) can
 * hold up a query. Commands are lines (protocol in ctlio.h); the one that matters most,
 * `takeover`, hands every listening socket to a new process for a swap without losing a
 * query.
 */
#ifndef ZB_CONTROL_H
#define ZB_CONTROL_H

#include <pthread.h>
#include <sys/types.h>
#include <sys/un.h>

#include "ops/takeover.h"
#include "server/server.h"

struct zb_control {
	struct zb_server *server;
	int listen_fd;     /* -1: no control socket (none asked for, or handed over) */
	int dir_fd;        /* PATH's directory, opened before a chroot could hide it */
	char name[sizeof(((struct sockaddr_un *)0)->sun_path)];      /* PATH's last part */
	char temp_name[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* bound here first */
	int published;     /* renamed over PATH: served there */
	int finished_fd;   /* eventfd: every worker has stopped */
	int metrics_fd;    /* the --metrics listener, handed over with the rest; -1: none */
	struct zb_takeover takeover; /* conn >= 0: a takeover to complete before serving */
	pid_t successor;   /* the process that took the sockets over, once it did */
	int failed;        /* the takeover broke: this process stopped, the old one serves */
	int running;
	pthread_t thread;
};

/* Nothing yet: no control socket, no takeover. */
void zb_control_init(struct zb_control *c);

/* Bind the control socket beside PATH under a temporary name, mode 0600, owned by
 * owner:group (the user the server is to run as; -1 keeps the current one), before
 * privileges are dropped, and renamed over PATH: at once, or by the control thread once a
 * takeover has completed (as the user, then: PATH's directory must let it). Refuses a PATH
 * where a server answers (that one must be taken over). Returns 0, or -1 with a message in
 * `err`. */
int zb_control_bind(struct zb_control *c, const char *path, uid_t owner, gid_t group,
		    char *err, size_t err_len);

/* Start the control thread: it completes the takeover, if there is one, then serves the
 * control socket, if there is one. Returns 0, or -1. */
int zb_control_start(struct zb_control *c, struct zb_server *server);

/* Every worker has stopped: let the control thread finish (a handover in progress completes,
 * bounded by its timeouts) and remove PATH unless another process serves it now. */
void zb_control_finish(struct zb_control *c);

#endif
