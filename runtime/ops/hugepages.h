/*
 * hugepages.h - the compiled data moved to huge pages at start-up.
 */
#ifndef ZB_HUGEPAGES_H
#define ZB_HUGEPAGES_H

#include "zonedata.h"

/*
 * A lookup reads a few cache lines spread over all of the data (hundreds of MiB for a million
 * names): with 4 KiB pages each one also misses the TLB. Where the data is at least one huge
 * page and the kernel gives transparent huge pages on request (madvise mode or always),
 * copy it into an anonymous mapping that asks for them, and return `copy`, the zone set
 * pointing there; else return `zs` as it is. Either way, nothing changes but where the data is.
 * The default (--no-huge-pages leaves the data in place): at a million names the TLB's misses
 * are what the batch's prefetching stages (lookup.h) leave of the server's own time
 * (docs/benchmarks.rst); the copy delays the start by well under a second per GiB from the
 * page cache.
 */
const struct zb_zoneset *zb_on_huge_pages(const struct zb_zoneset *zs, struct zb_zoneset *copy);

#endif
