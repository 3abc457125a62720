/*
 * server.h - the event loop: UDP and TCP on every listen address, and a one-second timer.
 */
#ifndef ZB_SERVER_H
#define ZB_SERVER_H

#include <stdint.h>

#include "sockets.h"
#include "zonedata.h"

struct zb_server_options {
	uint32_t tcp_idle_timeout;    /* seconds */
	uint32_t tcp_max_connections;
};

/* Serve until a fatal error; returns only then. */
int zb_serve(const struct zb_zoneset *zs, const struct zb_listener *listeners, int n,
	     const struct zb_server_options *options);

#endif
