/*
 * takeover.h - the new process's side of a swap: receive the listening sockets of the process
 * serving the control socket, and once every one of them is being read, tell it to stop
 * reading. Nothing is closed on the old side until the new one reads every socket, so no
 * query waiting in a socket is lost.
 */
#ifndef ZB_TAKEOVER_H
#define ZB_TAKEOVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "transport/sockets.h"
#include "transport/xdp/interfaces.h"

/* AF_XDP programs a takeover may bring: one an interface. */
#define ZB_TAKEOVER_MAX_XDP 64

struct zb_takeover {
	int conn;     /* the control connection to the old process, kept until it is done */
	pid_t old_pid;
	int metrics_fd; /* the old process's --metrics listener, if it had one; else -1 */
	int has_cookie_secret; /* the old process told its cookie secret (an older one may not) */
	uint8_t cookie_secret[16];
	/* Its AF_XDP programs (zb_xdp_open takes those it serves too; the rest are closed). */
	struct zb_xdp_handed xdp[ZB_TAKEOVER_MAX_XDP];
	unsigned nxdp;
	/* Its `totals` once it is done (stats.h), or "": an older server, counters from 0. */
	char totals[1024];
};

/* Connect to the control socket at `path`, learn the cookie secret, and take the listening
 * sockets. Returns 0 with
 * *sockets (from malloc) and *nsockets, or -1 with a message in `err`: then nothing was
 * taken and the old process goes on serving. */
int zb_takeover_receive(const char *path, const struct zb_socket_options *options,
			struct zb_takeover *takeover, struct zb_socket **sockets,
			unsigned *nsockets, char *err, size_t err_len);

enum zb_takeover_result {
	ZB_TAKEOVER_DONE,   /* the old process stopped reading and finished */
	ZB_TAKEOVER_ORPHAN, /* the old process is gone: its sockets are ours alone */
	ZB_TAKEOVER_BROKEN, /* the old process still serves: the new one must stop */
};

/* Every socket is being read: tell the old process to stop reading, and wait until it has
 * finished what it had in hand. A message in `err` says what went wrong, if anything. */
enum zb_takeover_result zb_takeover_complete(struct zb_takeover *takeover, char *err,
					     size_t err_len);

/* Give up before stop-reading: the old process sees the connection close and goes on. */
void zb_takeover_abandon(struct zb_takeover *takeover);

#endif
