/*
 * udp.h - the UDP serving loop.
 */
#ifndef ZB_UDP_H
#define ZB_UDP_H

#include "sockets.h"
#include "zonedata.h"

/* Serve queries on the listeners until a fatal error; returns only then. */
int zb_serve_udp(const struct zb_zoneset *zs, const struct zb_listener *listeners, int n);

#endif
