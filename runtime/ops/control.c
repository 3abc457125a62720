/*
 * control.c - the control thread: complete a takeover, then answer commands on the control
 * socket one connection at a time (see control.h; the protocol is in ctlio.h). Each command
 * is an entry of one table; adding one is adding a function and a line.
 */
#define _GNU_SOURCE /* accept4, struct ucred */
#include "ops/control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ops/ctlio.h"
#include "ops/log.h"
#include "ops/notify.h"
#include "ops/reload.h"
#include "ops/stats.h"
#include "server/threads.h"
#include "transport/descriptors.h"

/* A silent control client is dropped after this long, so that a stuck one cannot keep a
 * swap (or a stop) waiting for ever. */
#define ZB_CONTROL_TIMEOUT 10
/* A whole conversation: one that trickles a byte now and then is still cut off. A swap takes
 * a greeting, `takeover`, the new process's start (ZB_CONTROL_TIMEOUT at most) and
 * `stop-reading`. */
#define ZB_CONVERSATION_SECONDS 20

void zb_control_init(struct zb_control *c)
{
	*c = (struct zb_control){ .listen_fd = -1, .dir_fd = -1, .finished_fd = -1,
				  .metrics_fd = -1, .takeover = { .conn = -1, .metrics_fd = -1 } };
}

/* Put the control socket at PATH: rename it over whatever is there (the socket of the
 * process taken over from, which no longer listens, or a stale one). */
static int publish(struct zb_control *c)
{
	if (renameat(c->dir_fd, c->temp_name, c->dir_fd, c->name) != 0) {
		zb_log_warning("cannot put the control socket at %s: %s (it stays at %s)", c->name,
		       strerror(errno), c->temp_name);
		return -1;
	}
	c->published = 1;
	return 0;
}

/* Give the socket just bound at `name` to the user the server will run as. That user may
 * write the directory and swap another file in between the bind and this: so the node is
 * opened without following a symbolic link, checked to be a socket this process made (a
 * hard link to a file of root's is not one), and changed through that descriptor, never by
 * its path again. */
static int give_socket(int dir_fd, const char *name, uid_t owner, gid_t group, char *err,
		       size_t err_len)
{
	struct stat st;
	int fd = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int ours = fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
		   st.st_uid == geteuid();
	if (ours && fchownat(fd, "", owner, group, AT_EMPTY_PATH) == 0) {
		close(fd);
		return 0;
	}
	if (ours || fd < 0)
		snprintf(err, err_len, "--control: cannot give %s to the server's user: %s", name,
			 strerror(errno));
	else
		snprintf(err, err_len, "--control: %s was replaced by something else while the "
			 "server made it; not touching it", name);
	if (fd >= 0)
		close(fd);
	return -1;
}

int zb_control_bind(struct zb_control *c, const char *path, uid_t owner, gid_t group,
		    char *err, size_t err_len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[sizeof(addr.sun_path)];
	const char *slash = strrchr(path, '/');

	if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s.%d", path, (int)getpid()) >=
	    (int)sizeof(addr.sun_path)) {
		snprintf(err, err_len, "--control %s: path too long for a Unix socket", path);
		return -1;
	}
	struct stat there;
	if (lstat(path, &there) == 0 && !S_ISSOCK(there.st_mode)) {
		/* It is renamed over later: never over something that is not a socket. */
		snprintf(err, err_len, "--control %s: exists and is not a socket", path);
		return -1;
	}
	if (c->takeover.conn < 0) {
		int other = zb_ctl_connect(path, err, err_len);
		if (other >= 0) {
			close(other);
			snprintf(err, err_len, "a server answers at %s: give --takeover %s to take "
				 "over from it", path, path);
			return -1;
		}
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
	snprintf(c->name, sizeof(c->name), "%s", slash ? slash + 1 : path);
	snprintf(c->temp_name, sizeof(c->temp_name), "%s",
		 slash ? addr.sun_path + (slash - path) + 1 : addr.sun_path);
	c->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->dir_fd < 0 || c->listen_fd < 0) {
		snprintf(err, err_len, "--control %s: %s", path, strerror(errno));
		return -1;
	}
	unlink(addr.sun_path); /* left by an earlier process that had this pid */
	/* 0600 from the start (umask), so that there is never a moment another user could
	 * connect; the owner becomes the user the server runs as, who may rename it later. */
	mode_t umask_was = umask(0177);
	int failed = bind(c->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
		     listen(c->listen_fd, 8) != 0;
	umask(umask_was);
	if (failed) {
		snprintf(err, err_len, "--control %s: %s", addr.sun_path, strerror(errno));
		return -1;
	}
	if ((owner != (uid_t)-1 || group != (gid_t)-1) &&
	    give_socket(c->dir_fd, c->temp_name, owner, group, err, err_len) != 0)
		return -1;
	/* Not taking over: nothing to wait for, and root (before the drop) may write PATH's
	 * directory where the user may not. */
	if (c->takeover.conn < 0 && publish(c) != 0) {
		snprintf(err, err_len, "--control %s: cannot rename %s over it", path, c->temp_name);
		return -1;
	}
	return 0;
}

/* One control connection's state. */
struct conversation {
	int conn;
	pid_t peer;
	int handed_sockets; /* `takeover` sent them: `stop-reading` may follow */
	int stopped_reading; /* after `stop-reading`, the peer closing is the swap's end */
};

enum { ZB_GO_ON, ZB_HANG_UP };

/* The process, then a line per zone served: `zone ORIGIN serial N`, and `expires T` after it
 * for a signed zone (when its first signature expires): the swap of a re-signed build, whose
 * serials are the same, shows there. */
static int command_status(struct zb_control *c, struct conversation *v)
{
	zb_ctl_sendf(v->conn, "ok pid=%d workers=%u sockets=%u zones=%u", (int)getpid(),
		     c->server->nworkers, c->server->nsockets, (unsigned)zb_zoneset.nzones);
	for (uint32_t z = 0; z < zb_zoneset.nzones; z++) {
		const struct zb_zone_info *zone = &zb_zoneset.zones[z];
		if (zone->expires)
			zb_ctl_sendf(v->conn, "zone %s serial %u expires %lld", zone->origin,
				     (unsigned)zone->serial, (long long)zone->expires);
		else
			zb_ctl_sendf(v->conn, "zone %s serial %u", zone->origin,
				     (unsigned)zone->serial);
	}
	return ZB_GO_ON;
}

/* The statistics (stats.c) as one line of JSON after "ok ". */
static int command_stats(struct zb_control *c, struct conversation *v)
{
	/* Counters grow between the measuring and the writing: leave room for more digits. */
	size_t cap = zb_stats_json(c->server, NULL, 0) + 256;
	char *reply = malloc(cap + 3);

	if (reply && zb_stats_json(c->server, reply + 3, cap) < cap) {
		memcpy(reply, "ok ", 3);
		zb_ctl_send(v->conn, reply, -1);
	} else {
		zb_ctl_sendf(v->conn, "error statistics: out of memory");
	}
	free(reply);
	return ZB_GO_ON;
}

/* Bump the swaps counter the statistics show (read with a relaxed load there). */
static void count_swap(struct zb_server *server)
{
	__atomic_fetch_add(&server->swaps, 1, __ATOMIC_RELAXED);
}

/* Each AF_XDP interface: its program's link (which keeps it attached), and each queue's
 * socket with the memfd of its UMEM, which the successor maps to go on where this process
 * stops (not counted among the sockets). A successor from before AF_XDP ignores the lines;
 * the program then goes with this process. */
static int hand_xdp(const struct zb_server *server, struct conversation *v)
{
	const struct zb_xdp_set *set = &server->xdp;
	char line[128];
	for (unsigned i = 0; i < set->ninterfaces; i++) {
		const struct zb_xdp_interface *ifc = &set->interfaces[i];
		snprintf(line, sizeof(line), "xdp link %s %u %s\n", ifc->name,
			 (unsigned)ifc->program.port, ifc->program.native ? "native" : "generic");
		if (zb_ctl_send(v->conn, line, ifc->program.link_fd) != 0)
			return -1;
	}
	for (unsigned q = 0; q < set->nqueues; q++) {
		const struct zb_xdp_queue *queue = &set->queues[q];
		const struct zb_xsk *xsk = &queue->xsk;
		snprintf(line, sizeof(line), "xdp socket %s %u %u %u\n", queue->ifname, xsk->queue,
			 xsk->frame_size, xsk->rx.size);
		if (zb_ctl_send(v->conn, line, xsk->fd) != 0)
			return -1;
		snprintf(line, sizeof(line), "xdp umem %s %u\n", queue->ifname, xsk->queue);
		if (zb_ctl_send(v->conn, line, xsk->umem_fd) != 0)
			return -1;
	}
	return 0;
}

static int command_takeover(struct zb_control *c, struct conversation *v)
{
	const struct zb_server *server = c->server;

	/* The statistics listener goes too, so that scrapes do not fail for the swap; it is not
	 * one of the DNS sockets counted in the reply. */
	if (c->metrics_fd >= 0) {
		char addr[80], line[128];
		struct zb_socket metrics = { .addr_len = sizeof(metrics.addr) };
		getsockname(c->metrics_fd, (struct sockaddr *)&metrics.addr, &metrics.addr_len);
		zb_format_addr(&metrics, addr, sizeof(addr));
		snprintf(line, sizeof(line), "socket metrics %s\n", addr);
		if (zb_ctl_send(v->conn, line, c->metrics_fd) != 0)
			return ZB_HANG_UP;
	}
	for (unsigned i = 0; i < server->nsockets; i++) {
		char addr[80], line[128];
		zb_format_addr(&server->sockets[i], addr, sizeof(addr));
		snprintf(line, sizeof(line), "socket %s %s\n", zb_kind_name(server->sockets[i].kind),
			 addr);
		if (zb_ctl_send(v->conn, line, server->sockets[i].fd) != 0) {
			zb_log_warning("handing sockets to pid %d failed: %s; still serving", (int)v->peer,
			       zb_ctl_why());
			return ZB_HANG_UP;
		}
	}
	if (hand_xdp(server, v) != 0)
		return ZB_HANG_UP;
	zb_ctl_sendf(v->conn, "ok sockets=%u", server->nsockets);
	v->handed_sockets = 1;
	zb_reload_logged();
	zb_log("handed %u sockets to pid %d; serving until it has started", server->nsockets,
	       (int)v->peer);
	if (server->xdp.nqueues)
		zb_log("handed %u AF_XDP queue%s to pid %d; answering on them until it has started",
		       server->xdp.nqueues, server->xdp.nqueues == 1 ? "" : "s", (int)v->peer);
	return ZB_GO_ON;
}

static int command_stop_reading(struct zb_control *c, struct conversation *v)
{
	uint64_t finished;

	if (!v->handed_sockets) {
		zb_ctl_sendf(v->conn, "error stop-reading comes after takeover");
		return ZB_GO_ON;
	}
	/* No more control clients here: the next one is the new process's. PATH stays until
	 * it renames its own socket over it. */
	close(c->listen_fd);
	c->listen_fd = -1;
	c->successor = v->peer;
	zb_notify("MAINPID=%d", (int)v->peer); /* systemd follows the successor */
	zb_log("pid %d reads every socket; stopping reading", (int)v->peer);
	count_swap(c->server);
	zb_server_stop(c->server);
	v->stopped_reading = 1;
	zb_ctl_sendf(v->conn, "ok stopping");
	if (read(c->finished_fd, &finished, sizeof(finished)) != sizeof(finished))
		return ZB_HANG_UP;
	zb_ctl_sendf(v->conn, "done");
	return ZB_GO_ON; /* the successor asks for the totals it carries on from */
}

/* Every counter summed and the swaps (stats.h): final once `done` is said, and what a
 * successor's counters continue from. */
static int command_totals(struct zb_control *c, struct conversation *v)
{
	char line[sizeof(c->takeover.totals)];
	if (zb_stats_totals(c->server, line, sizeof(line)) >= sizeof(line))
		zb_ctl_sendf(v->conn, "error totals: too long");
	else
		zb_ctl_send(v->conn, line, -1);
	return ZB_GO_ON;
}

/* The cookie secret, for a successor about to take over: the cookies clients hold stay good
 * (the socket is root's and the server user's only: may_control). */
static int command_cookie_secret(struct zb_control *c, struct conversation *v)
{
	const uint8_t *secret = c->server->options.cookie_secret;
	char hex[2 * ZB_COOKIE_SECRET_LEN + 1];
	for (size_t i = 0; i < ZB_COOKIE_SECRET_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", secret[i]);
	zb_ctl_sendf(v->conn, "ok %s", hex);
	return ZB_GO_ON;
}

static const struct command {
	const char *name;
	int (*run)(struct zb_control *c, struct conversation *v);
} commands[] = {
	{ "status", command_status },
	{ "stats", command_stats },
	{ "cookie-secret", command_cookie_secret },
	{ "takeover", command_takeover },
	{ "stop-reading", command_stop_reading },
	{ "totals", command_totals },
};

/* Only root and the user the server runs as may control it: the socket's mode says as
 * much, and this holds even where the file's permissions are not what they should be. */
static int may_control(int conn, pid_t *pid)
{
	struct ucred peer;
	socklen_t len = sizeof(peer);
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0)
		return 0;
	*pid = peer.pid;
	if (peer.uid == 0 || peer.uid == geteuid())
		return 1;
	zb_log_warning("control socket: refused pid %d of uid %u (only root and uid %u)", (int)peer.pid,
	       (unsigned)peer.uid, (unsigned)geteuid());
	return 0;
}

/* Read the client's next line before the conversation's deadline. */
static int read_before(int conn, char *line, size_t size, time_t deadline)
{
	return zb_ctl_read_line_by(conn, line, size, NULL, deadline, ZB_CONTROL_TIMEOUT);
}

static void converse(struct zb_control *c, int conn)
{
	struct conversation v = { .conn = conn };
	char line[ZB_CONTROL_LINE_MAX];
	int version = 0;
	struct timespec start;

	zb_ctl_timeouts(conn, ZB_CONTROL_TIMEOUT); /* for what it sends */
	clock_gettime(CLOCK_MONOTONIC, &start);
	time_t deadline = start.tv_sec + ZB_CONVERSATION_SECONDS;
	if (read_before(conn, line, sizeof(line), deadline) != 0)
		return;
	/* After the greeting is read: closed with it unread, the client would see a reset, not
	 * the refusal. */
	if (!may_control(conn, &v.peer)) {
		zb_ctl_sendf(conn, "error permission denied");
		return;
	}
	if (sscanf(line, "zonebake-control %d", &version) != 1 || version != ZB_CONTROL_VERSION) {
		zb_ctl_sendf(conn, "error this server speaks zonebake-control %d",
			     ZB_CONTROL_VERSION);
		return;
	}
	zb_ctl_sendf(conn, "ok zonebake-control %d", ZB_CONTROL_VERSION);
	for (;;) {
		if (read_before(conn, line, sizeof(line), deadline) != 0) {
			if (v.handed_sockets && !v.stopped_reading)
				zb_log_warning("pid %d took the sockets but did not ask to stop reading (%s); "
				       "still serving", (int)v.peer, zb_ctl_why());
			return;
		}
		const struct command *command = NULL;
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (strcmp(line, commands[i].name) == 0)
				command = &commands[i];
		if (!command)
			zb_ctl_sendf(conn, "error unknown command '%.64s'", line);
		else if (command->run(c, &v) == ZB_HANG_UP)
			return;
	}
}

static void serve(struct zb_control *c)
{
	while (c->listen_fd >= 0) {
		struct pollfd fds[2] = { { .fd = c->listen_fd, .events = POLLIN },
					 { .fd = c->finished_fd, .events = POLLIN } };
		if (poll(fds, 2, -1) < 0 && errno != EINTR) {
			zb_log_warning("control socket: %s", strerror(errno));
			return;
		}
		if (fds[1].revents)
			return;
		int conn = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0) {
			if (zb_accept_exhausted(errno))
				zb_accept_backoff(c->finished_fd);
			continue;
		}
		converse(c, conn);
		close(conn);
	}
}

/* The new process of a swap: once every worker reads its share of the sockets, tell the old
 * process to stop reading. Returns 0 when this process is now the one serving. */
static int complete_takeover(struct zb_control *c)
{
	pid_t old = c->takeover.old_pid;
	char err[256];

	if (zb_server_wait_ready(c->server, ZB_CONTROL_TIMEOUT * 1000) != 0) {
		zb_log_error("the workers did not start in %d s; pid %d keeps serving",
		       ZB_CONTROL_TIMEOUT, (int)old);
		goto give_up;
	}
	if (zb_server_stopping(c->server)) {
		zb_log_warning("told to stop before the takeover completed; pid %d keeps serving", (int)old);
		zb_takeover_abandon(&c->takeover);
		return -1;
	}
	switch (zb_takeover_complete(&c->takeover, err, sizeof(err))) {
	case ZB_TAKEOVER_DONE:
		zb_server_xdp_go(c->server); /* the old process has let go of the rings */
		zb_notify("READY=1");
		/* The predecessor's totals hold this swap already. */
		if (zb_stats_carry(c->server, c->takeover.totals) != 0)
			count_swap(c->server);
		if (*err)
			zb_log_warning("pid %d stopped reading, but %s", (int)old, err);
		else
			zb_log("pid %d has stopped; the swap is complete", (int)old);
		return 0;
	case ZB_TAKEOVER_ORPHAN:
		zb_server_xdp_go(c->server);
		zb_notify("READY=1");
		count_swap(c->server);
		zb_log_warning("pid %d is gone (%s); serving its sockets alone", (int)old, err);
		return 0;
	case ZB_TAKEOVER_BROKEN:
		zb_log_error("the takeover broke (%s); stopping, pid %d keeps serving", err, (int)old);
		goto give_up;
	}
give_up:
	zb_takeover_abandon(&c->takeover);
	c->failed = 1;
	zb_server_stop(c->server);
	return -1;
}

static void *control_thread(void *arg)
{
	struct zb_control *c = arg;

	if (c->takeover.conn >= 0 && complete_takeover(c) != 0)
		return NULL;
	if (c->listen_fd >= 0 && (c->published || publish(c) == 0))
		serve(c);
	return NULL;
}

int zb_control_start(struct zb_control *c, struct zb_server *server)
{
	c->server = server;
	if (c->listen_fd < 0 && c->takeover.conn < 0)
		return 0;
	c->finished_fd = eventfd(0, EFD_CLOEXEC);
	if (c->finished_fd < 0) {
		zb_log_error("control thread: %s", strerror(errno));
		return -1;
	}
	int failed = zb_start_helper_thread(&c->thread, control_thread, c);
	if (failed) {
		zb_log_error("cannot start the control thread: %s", strerror(failed));
		return -1;
	}
	c->running = 1;
	return 0;
}

void zb_control_finish(struct zb_control *c)
{
	uint64_t one = 1;

	if (c->running) {
		if (write(c->finished_fd, &one, sizeof(one)) != sizeof(one))
			zb_log_warning("control thread: %s", strerror(errno));
		pthread_join(c->thread, NULL);
		c->running = 0;
	}
	/* Remove what is ours: the socket at PATH unless a successor serves there now, or the
	 * temporary one a failed takeover never put in place. After a chroot or a privilege
	 * drop this may not be allowed; a stale socket is harmless (nothing answers there). */
	if (c->dir_fd >= 0 && !c->successor)
		unlinkat(c->dir_fd, c->published ? c->name : c->temp_name, 0);
}
