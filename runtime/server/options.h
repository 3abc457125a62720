/*
 * options.h - zonebake-server's command line.
 */
#ifndef ZB_OPTIONS_H
#define ZB_OPTIONS_H

#include "ops/privileges.h"
#include "server/worker.h"

struct zb_options {
	const char *specs[ZB_MAX_LISTEN]; /* --listen, or the compiled-in defaults */
	int nspecs;
	int listen_given;        /* --listen was on the command line */
	const char *xdp[ZB_MAX_LISTEN]; /* --xdp IFACE[@PORT], or zonebake.toml's xdp */
	int nxdp;
	int xdp_optional;        /* --xdp-optional: serve on the sockets alone if XDP fails */
	int huge_pages;          /* 1 unless --no-huge-pages */
	const char *control;     /* --control PATH */
	const char *takeover;    /* --takeover PATH */
	const char *metrics;     /* --metrics ADDRESS:PORT */
	const char *release;     /* --release PATH: started in this server's place on SIGHUP */
	struct zb_privileges privileges;
	struct zb_server_options server;
};

/* Parse argv. Returns -1 to go on, or the exit status (0 after --help; 2 after a usage
 * error, said on stderr). */
int zb_options_parse(struct zb_options *o, int argc, char **argv);

#endif
