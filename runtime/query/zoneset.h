/*
 * zoneset.h - the zone set ready to serve: the numbers of the data's head (struct zb_head)
 * put into zb_zoneset beside the configuration zonedata.c gives.
 */
#ifndef ZB_ZONESET_H
#define ZB_ZONESET_H

#include <stddef.h>

#include "zonedata.h"

/* Fill in ZS's layout, and its zones' serials and expiries and its CH names' answers, from
 * its data's head. 0, or -1 with why in ERR when the head does not describe data made for
 * this zonedata.c (a data file and a zonedata.c of different builds, linked by hand). */
int zb_zoneset_open(struct zb_zoneset *zs, char *err, size_t err_len);

#endif
