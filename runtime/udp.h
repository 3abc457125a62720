/*
 * udp.h - the UDP serving loop.
 */
#ifndef ZB_UDP_H
#define ZB_UDP_H

#include "zonedata.h"

/* Answer every query waiting on a UDP socket. */
void zb_udp_drain(const struct zb_zoneset *zs, int fd);

#endif
