/*
 * takeover.c - take the listening sockets over from the process serving the control socket
 * (see takeover.h; the protocol is in ctlio.h).
 */
#define _GNU_SOURCE /* struct ucred */
#include "ops/takeover.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ops/ctlio.h"

/* More than any server has: 1024 workers, each with a UDP and a TCP socket per address. */
#define ZB_TAKEOVER_MAX_SOCKETS 8192

/* Check a received socket against the line describing it, and adopt it. */
static int adopt_described(const char *line, int fd, const struct zb_socket_options *options,
			   struct zb_socket *out, char *err, size_t err_len)
{
	char kind[8], addr[80], described[80];

	if (fd < 0 || sscanf(line, "socket %7s %79s", kind, addr) != 2) {
		snprintf(err, err_len, "unexpected '%.80s'%s", line, fd < 0 ? " without a socket" : "");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (zb_adopt(fd, options, out, err, err_len) != 0) {
		close(fd);
		return -1;
	}
	zb_format_addr(out, described, sizeof(described));
	if (strcmp(kind, zb_kind_name(out->kind)) != 0 || strcmp(addr, described) != 0) {
		snprintf(err, err_len, "'%.60s' came with a %s socket on %s", line,
			 zb_kind_name(out->kind), described);
		close(fd);
		return -1;
	}
	return 0;
}

/* The entry for interface `name`, made where there is none (with `port`). */
static struct zb_xdp_handed *handed_interface(struct zb_takeover *takeover, const char *name,
					      unsigned port)
{
	for (unsigned i = 0; i < takeover->nxdp; i++)
		if (strcmp(takeover->xdp[i].name, name) == 0)
			return &takeover->xdp[i];
	if (takeover->nxdp == ZB_TAKEOVER_MAX_XDP)
		return NULL;
	struct zb_xdp_handed *h = &takeover->xdp[takeover->nxdp++];
	*h = (struct zb_xdp_handed){ .port = (uint16_t)port, .link_fd = -1 };
	snprintf(h->name, sizeof(h->name), "%s", name);
	return h;
}

/* One line of an interface's AF_XDP state (control.c's hand_xdp) and its descriptor:
 *   xdp link IFACE PORT native|generic     the program's link
 *   xdp socket IFACE QUEUE FRAME_SIZE RING_SIZE   a queue's socket
 *   xdp umem IFACE QUEUE                   its UMEM's memfd, right after it
 * Returns 0, or -1 with a message in `err` (the descriptor closed). */
static int take_xdp_line(const char *line, int fd, struct zb_takeover *takeover, char *err,
			 size_t err_len)
{
	char name[IF_NAMESIZE], mode[8];
	unsigned a, b = 0, c = 0;
	struct zb_xdp_handed *h = NULL;
	if (fd < 0)
		goto bad;
	if (sscanf(line, "xdp link %15s %u %7s", name, &a, mode) == 3 && a && a <= 65535) {
		h = handed_interface(takeover, name, a);
		if (!h || h->link_fd >= 0)
			goto bad;
		h->link_fd = fd;
		h->native = strcmp(mode, "native") == 0;
		return 0;
	}
	if (sscanf(line, "xdp socket %15s %u %u %u", name, &a, &b, &c) == 4) {
		h = handed_interface(takeover, name, 0);
		struct zb_xdp_handed_queue *grown =
			h ? realloc(h->queues, (h->nqueues + 1) * sizeof(*grown)) : NULL;
		if (!grown)
			goto bad;
		h->queues = grown;
		h->queues[h->nqueues++] = (struct zb_xdp_handed_queue){
			.queue = a, .frame_size = b, .ring_size = c, .fd = fd, .umem_fd = -1 };
		return 0;
	}
	if (sscanf(line, "xdp umem %15s %u", name, &a) == 2) {
		h = handed_interface(takeover, name, 0);
		struct zb_xdp_handed_queue *last = h && h->nqueues ? &h->queues[h->nqueues - 1] : NULL;
		if (!last || last->queue != a || last->umem_fd >= 0)
			goto bad;
		last->umem_fd = fd;
		return 0;
	}
bad:
	snprintf(err, err_len, "unexpected '%.80s'%s", line, fd < 0 ? " without a descriptor" : "");
	if (fd >= 0)
		close(fd);
	return -1;
}

int zb_takeover_receive(const char *path, const struct zb_socket_options *options,
			struct zb_takeover *takeover, struct zb_socket **sockets,
			unsigned *nsockets, char *err, size_t err_len)
{
	char line[ZB_CONTROL_LINE_MAX], why[200];
	struct ucred peer;
	socklen_t len = sizeof(peer);
	unsigned n = 0, announced = 0;
	struct zb_socket *got = calloc(ZB_TAKEOVER_MAX_SOCKETS, sizeof(*got));

	takeover->conn = zb_ctl_connect(path, why, sizeof(why));
	if (takeover->conn < 0 || !got) {
		snprintf(err, err_len, "%s", got ? why : "out of memory");
		goto fail;
	}
	/* The pid of the process that listens there, for the log and to tell later whether
	 * it is still alive. */
	getsockopt(takeover->conn, SOL_SOCKET, SO_PEERCRED, &peer, &len);
	takeover->old_pid = peer.pid;
	/* The cookie secret first, so that the clients' cookies hold across the swap; a server
	 * from before cookies says "error unknown command", and the swap goes on without. */
	if (zb_ctl_sendf(takeover->conn, "cookie-secret") != 0 ||
	    zb_ctl_read_line(takeover->conn, line, sizeof(line), NULL) != 0) {
		snprintf(err, err_len, "%s: %s", path, zb_ctl_why());
		goto fail;
	}
	takeover->has_cookie_secret =
		strncmp(line, "ok ", 3) == 0 &&
		zb_ctl_parse_hex(line + 3, takeover->cookie_secret,
				 sizeof(takeover->cookie_secret)) == 0;
	if (zb_ctl_sendf(takeover->conn, "takeover") != 0) {
		snprintf(err, err_len, "%s: %s", path, zb_ctl_why());
		goto fail;
	}
	for (;;) {
		int fd;
		if (zb_ctl_read_line(takeover->conn, line, sizeof(line), &fd) != 0) {
			snprintf(err, err_len, "pid %d: after %u sockets: %s", (int)peer.pid, n,
				 zb_ctl_why());
			goto fail;
		}
		if (sscanf(line, "ok sockets=%u", &announced) == 1 && fd < 0)
			break;
		if (strncmp(line, "socket metrics ", 15) == 0 && fd >= 0) {
			if (takeover->metrics_fd >= 0)
				close(takeover->metrics_fd);
			takeover->metrics_fd = fd;
			continue;
		}
		if (strncmp(line, "xdp ", 4) == 0) {
			if (take_xdp_line(line, fd, takeover, why, sizeof(why)) != 0) {
				snprintf(err, err_len, "pid %d: %s", (int)peer.pid, why);
				goto fail;
			}
			continue;
		}
		if (n == ZB_TAKEOVER_MAX_SOCKETS) {
			snprintf(err, err_len, "pid %d: more than %d sockets", (int)peer.pid,
				 ZB_TAKEOVER_MAX_SOCKETS);
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		if (adopt_described(line, fd, options, &got[n], why, sizeof(why)) != 0) {
			snprintf(err, err_len, "pid %d: %s", (int)peer.pid, why);
			goto fail;
		}
		n++;
	}
	if (announced != n || n == 0) {
		snprintf(err, err_len, "pid %d announced %u sockets and sent %u", (int)peer.pid,
			 announced, n);
		goto fail;
	}
	for (unsigned i = 0; i < takeover->nxdp; i++) {
		const struct zb_xdp_handed *h = &takeover->xdp[i];
		int whole = h->link_fd >= 0 && h->nqueues > 0;
		for (unsigned q = 0; q < h->nqueues; q++)
			whole &= h->queues[q].umem_fd >= 0;
		if (!whole) {
			snprintf(err, err_len, "pid %d sent %s's AF_XDP state in part", (int)peer.pid,
				 h->name);
			goto fail;
		}
	}
	*sockets = got;
	*nsockets = n;
	return 0;
fail:
	for (unsigned i = 0; i < n; i++)
		close(got[i].fd);
	free(got);
	zb_takeover_abandon(takeover);
	return -1;
}

/* Whether a process has ended: no such process, or a zombie not yet reaped. */
static int process_gone(pid_t pid)
{
	char path[64], stat[256];

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0; /* no /proc (a chroot): it exists, as far as can be told */
	size_t len = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[len] = 0;
	const char *state = strrchr(stat, ')');
	return state && (state[2] == 'Z' || state[2] == 'X');
}

enum zb_takeover_result zb_takeover_complete(struct zb_takeover *takeover, char *err,
					     size_t err_len)
{
	char line[ZB_CONTROL_LINE_MAX];
	enum zb_takeover_result result = ZB_TAKEOVER_DONE;

	const char *refused = NULL;

	*err = 0;
	if (zb_ctl_sendf(takeover->conn, "stop-reading") != 0 ||
	    zb_ctl_read_line(takeover->conn, line, sizeof(line), NULL) != 0)
		refused = zb_ctl_why();
	else if (strcmp(line, "ok stopping") != 0)
		refused = line;
	if (refused) {
		/* It never said it stops: if it is alive it still serves, and two servers must
		 * not both think they are the one. */
		snprintf(err, err_len, "stop-reading: %s", refused);
		result = ZB_TAKEOVER_BROKEN;
		/* A process that closed the connection on its way out may take a moment to go. */
		for (int tries = 0; tries < 20 && result == ZB_TAKEOVER_BROKEN; tries++) {
			if (process_gone(takeover->old_pid))
				result = ZB_TAKEOVER_ORPHAN;
			else if (tries < 19)
				usleep(100000);
		}
	} else {
		/* It stops. Finishing what it has in hand takes it milliseconds; the limit is for
		 * a process that hangs, which must not keep the control socket from moving. */
		zb_ctl_timeouts(takeover->conn, 30);
		if (zb_ctl_read_line(takeover->conn, line, sizeof(line), NULL) != 0 ||
		    strcmp(line, "done") != 0)
			snprintf(err, err_len, "no 'done' after stop-reading: %s",
				 zb_ctl_why());
		else if (zb_ctl_sendf(takeover->conn, "totals") != 0 ||
			 zb_ctl_read_line(takeover->conn, takeover->totals,
					  sizeof(takeover->totals), NULL) != 0)
			takeover->totals[0] = 0; /* its counters end with it */
	}
	close(takeover->conn);
	takeover->conn = -1;
	return result;
}

void zb_takeover_abandon(struct zb_takeover *takeover)
{
	zb_xdp_handed_close(takeover->xdp, takeover->nxdp);
	takeover->nxdp = 0;
	if (takeover->conn >= 0)
		close(takeover->conn);
	if (takeover->metrics_fd >= 0)
		close(takeover->metrics_fd);
	takeover->conn = takeover->metrics_fd = -1;
}
