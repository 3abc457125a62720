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

/* A lookup reads a few places spread over the whole data, so where the binary is not in the
 * page cache (a cold start), the kernel's read-around of each page fault (read_ahead_kb
 * around it, 8 MiB on some disks) reads mostly what no query asks for, and the first answer
 * waits for several such reads. zb_zoneset_open leaves data of this size or more
 * (zb_zoneset_reads_pages_alone; smaller data costs a first lookup a few reads either way)
 * reading the pages the lookups fault on alone, until the server has answered: then
 * zb_zoneset_read_around gives the faults the disk's read-around back, for a server that
 * goes on to read its data throughout (hugepages.c calls it where the data stays in the
 * binary's mapping; its copy to huge pages reads ahead of itself). */
#define ZB_ZONESET_PAGES_ALONE (2ul << 20)
static inline int zb_zoneset_reads_pages_alone(const struct zb_zoneset *zs)
{
	return zs->data_len >= ZB_ZONESET_PAGES_ALONE;
}
void zb_zoneset_read_around(const struct zb_zoneset *zs);

#endif
