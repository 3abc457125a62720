/*
 * main.c - zonebake-server: take the listening sockets (bind them, or take them over from
 * the running server, or from systemd), leave root, serve the compiled zone set until told
 * to stop. Options: options.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "ops/ask.h"
#include "ops/control.h"
#include "ops/hugepages.h"
#include "ops/log.h"
#include "ops/metrics.h"
#include "ops/notify.h"
#include "ops/reload.h"
#include "ops/takeover.h"
#include "query/zoneset.h"
#include "server/options.h"
#include "server/server.h"
#include "transport/activation.h"
#include "transport/descriptors.h"
#include "zonedata.h"

/* The signed zone whose signatures expire first, and when: a zone not re-signed in time fails
 * validation everywhere, and the operator should hear of it from the server too. */
static void log_signature_expiry(void)
{
	const struct zb_zone_info *first = NULL;
	for (uint32_t i = 0; i < zb_zoneset.nzones; i++)
		if (zb_zoneset.zones[i].expires &&
		    (!first || zb_zoneset.zones[i].expires < first->expires))
			first = &zb_zoneset.zones[i];
	if (!first)
		return;
	time_t when = first->expires;
	struct tm tm;
	char date[32];
	gmtime_r(&when, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	long long left = (long long)first->expires - (long long)time(NULL);
	if (left <= 0)
		zb_log_warning("signatures of %s expired at %s: validating resolvers reject its "
		       "answers", first->origin, date);
	else
		zb_log("first signature to expire: %s, at %s (in %lld days)", first->origin, date,
		       left / 86400);
}

/* The sockets to serve `zs`: taken over, passed by systemd, or bound here. */
static int take_sockets(const struct zb_options *o, const struct zb_zoneset *zs,
			struct zb_server *server, struct zb_takeover *takeover, char *err,
			size_t err_len)
{
	const struct zb_socket_options *options = &o->server.sockets;
	struct zb_socket *sockets = NULL;
	unsigned n = 0;

	if (o->takeover) {
		if (zb_takeover_receive(o->takeover, options, takeover, &sockets, &n, err,
					err_len) != 0)
			return -1;
		zb_log("took %u sockets from pid %d", n, (int)takeover->old_pid);
		return zb_server_adopt(server, zs, sockets, n, err, err_len);
	}
	int passed = zb_activation_sockets(options, &sockets, err, err_len);
	if (passed < 0)
		return -1;
	if (passed > 0 && o->listen_given) {
		snprintf(err, err_len, "--listen and socket activation exclude each other");
		return -1;
	}
	if (passed > 0)
		return zb_server_adopt(server, zs, sockets, (unsigned)passed, err, err_len);
	return zb_server_bind(server, zs, o->specs, o->nspecs, err, err_len);
}

/* --xdp: attach to the interfaces (or take the programs a takeover brought) and give their
 * queues to the workers; with --xdp-optional, a failure is said and the sockets serve
 * alone. */
static int take_xdp(const struct zb_options *o, const struct zb_zoneset *zs,
		    struct zb_server *server, struct zb_takeover *takeover, char *err,
		    size_t err_len)
{
	struct zb_xdp_set set;
	if (zb_xdp_open(&set, o->xdp, (unsigned)o->nxdp, takeover->xdp, takeover->nxdp, zs, err,
			err_len) != 0) {
		if (!o->xdp_optional)
			return -1;
		zb_log_warning("not answering over AF_XDP: %s; the sockets serve alone "
			       "(--xdp-optional)", err);
		return 0;
	}
	if (zb_server_add_xdp(server, &set) != 0) {
		zb_server_close_xdp(server);
		snprintf(err, err_len, "AF_XDP: out of memory");
		return -1;
	}
	return 0;
}

/* The cookie secret: zonebake.toml's, else the predecessor's (the clients' cookies hold
 * across the swap), else a random one. */
static void choose_cookie_secret(uint8_t secret[ZB_COOKIE_SECRET_LEN],
				 const struct zb_takeover *takeover)
{
	if (zb_zoneset.cookie_secret_len == ZB_COOKIE_SECRET_LEN)
		memcpy(secret, zb_zoneset.cookie_secret, ZB_COOKIE_SECRET_LEN);
	else if (takeover->has_cookie_secret)
		memcpy(secret, takeover->cookie_secret, ZB_COOKIE_SECRET_LEN);
	else if (getrandom(secret, ZB_COOKIE_SECRET_LEN, 0) != ZB_COOKIE_SECRET_LEN)
		zb_log_warning("no random cookie secret (getrandom: %s); cookies are guessable "
		       "until cookie-secret is set", strerror(errno));
}

/* --metrics: the listener a takeover brought, if it fits, else a new one. The control thread
 * hands it on at the next swap. */
static int bind_metrics(struct zb_metrics *metrics, const char *spec,
			struct zb_control *control, char *err, size_t err_len)
{
	int handed = control->takeover.metrics_fd;

	control->takeover.metrics_fd = -1;
	if ((handed >= 0 ? zb_metrics_adopt(metrics, handed, spec, err, err_len)
			 : zb_metrics_bind(metrics, spec, err, err_len)) != 0)
		return -1;
	control->metrics_fd = metrics->listen_fd;
	return 0;
}

int main(int argc, char **argv)
{
	struct zb_options o;
	struct zb_server server = { 0 };
	struct zb_control control;
	struct zb_metrics metrics = { .listen_fd = -1 };
	struct zb_reload reload = { .argv = argv, .argc = argc };
	char err[300];

	if (argc > 1 && argv[1][0] != '-')
		return zb_ask(argc, argv); /* zonebake-server stats --control PATH */
	zb_log_init();
	if (zb_zoneset_open(&zb_zoneset, err, sizeof(err)) != 0) {
		zb_log_error("%s", err);
		return 2;
	}
	int status = zb_options_parse(&o, argc, argv);
	if (status >= 0)
		return status;
	reload.release = o.release;
	reload.control = o.control;
	zb_reload_prepare(&reload); /* before any thread: SIGHUP is the reload thread's */
	zb_notify_open();           /* before a chroot could hide systemd's socket */
	if (zb_privileges_resolve(&o.privileges, err, sizeof(err)) != 0) {
		zb_log_error("%s", err);
		return 2;
	}
	server.options = o.server;
	server.options.tick = zb_reload_tick; /* logs a SIGHUP that came without --release */
	zb_control_init(&control);
	/* The workers answer from the binary's mapping at once; the data moves to huge pages
	 * behind them once they serve (hugepages.h). */
	const struct zb_zoneset *zs = &zb_zoneset;
	static struct zb_huge_pages_move moving;
	if (take_sockets(&o, zs, &server, &control.takeover, err, sizeof(err)) != 0) {
		zb_log_error("%s%s", o.takeover ? "cannot take over: " : "", err);
		return 1;
	}
	if (o.nxdp && take_xdp(&o, zs, &server, &control.takeover, err, sizeof(err)) != 0) {
		zb_log_error("%s", err);
		zb_takeover_abandon(&control.takeover); /* the old server goes on */
		zb_server_free(&server);
		return 1;
	}
	/* The programs of interfaces this server does not serve over AF_XDP go with the old
	 * process. */
	zb_xdp_handed_close(control.takeover.xdp, control.takeover.nxdp);
	choose_cookie_secret(server.options.cookie_secret, &control.takeover);
	unsigned long needed = zb_descriptors_needed(server.options.threads,
						     server.options.tcp_max_connections,
						     server.nsockets);
	unsigned long allowed = zb_raise_descriptor_limit(needed);
	/* The control socket is created before the privileges go: its directory may be
	 * root's. On any failure from here on, the takeover's sockets are merely closed here:
	 * the old process, seeing the connection close, goes on serving. */
	if ((o.control && zb_control_bind(&control, o.control, o.privileges.uid,
					  o.privileges.gid, err, sizeof(err)) != 0) ||
	    (o.metrics && bind_metrics(&metrics, o.metrics, &control, err, sizeof(err)) != 0) ||
	    zb_privileges_drop(&o.privileges, err, sizeof(err)) != 0) {
		zb_log_error("%s", err);
		zb_control_finish(&control); /* removes its temporary socket, if it had one */
		return 1;
	}
	if (control.takeover.metrics_fd >= 0) { /* no --metrics here: statistics end with the swap */
		close(control.takeover.metrics_fd);
		control.takeover.metrics_fd = -1;
	}
	if (zb_server_start(&server) != 0 ||
	    (o.metrics && zb_metrics_start(&metrics, &server) != 0))
		return 1;
	zb_server_log_serving(&server, zb_zoneset.description);
	for (unsigned i = 0; i < server.xdp.ninterfaces; i++) {
		char line[200];
		zb_xdp_describe(&server.xdp, i, line, sizeof(line));
		zb_log("serving %s on %s", zb_zoneset.description, line);
	}
	if (allowed < needed)
		zb_log_warning("%lu file descriptors allowed (RLIMIT_NOFILE), %lu needed for %u "
		       "workers of %u TCP connections; beyond that new connections wait (raise the "
		       "hard limit: ulimit -Hn, or LimitNOFILE= in the unit)", allowed, needed,
		       server.options.threads, server.options.tcp_max_connections);
	if (o.metrics) {
		char addr[80];
		zb_format_sockaddr(&metrics.addr, addr, sizeof(addr));
		zb_log("statistics on http://%s/metrics", addr);
	}
	log_signature_expiry();
	if (!o.takeover)
		zb_notify("READY=1"); /* a successor says it once it has taken over (control.c) */
	if (zb_control_start(&control, &server) != 0 || zb_reload_start(&reload, &server) != 0)
		return 1;
	if (zb_huge_pages_start(&moving, &server, o.huge_pages) != 0)
		zb_log_warning("no thread for the zone data after the first answer: it stays off "
			       "huge pages and is read a page at a time");
	if (zb_server_run_first(&server) != 0)
		return 1;
	zb_huge_pages_wait(&moving);
	zb_server_close_xdp(&server); /* the interfaces as they were */
	zb_control_finish(&control);
	zb_metrics_stop(&metrics); /* before the workers' counters go */
	zb_server_free(&server);
	if (control.successor)
		zb_log("stopped; pid %d serves in its place", (int)control.successor);
	else
		zb_log("stopped");
	return control.failed ? 1 : 0;
}
