/*
 * hugepages.h - the compiled data moved to huge pages at start-up.
 */
#ifndef ZB_HUGEPAGES_H
#define ZB_HUGEPAGES_H

#include <pthread.h>

#include "zonedata.h"

/*
 * A lookup reads a few cache lines spread over all of the data (hundreds of MiB for a million
 * names): with 4 KiB pages each one also misses the TLB. Where the data is at least one huge
 * page and the kernel gives transparent huge pages on request (madvise mode or always),
 * copy it into an anonymous mapping that asks for them, and return `copy`, the zone set
 * pointing there; else return `zs` as it is. Either way, nothing changes but where the data is.
 * The default (--no-huge-pages leaves the data in place): at a million names the TLB's misses
 * are what the batch's prefetching stages (lookup.h) leave of the server's own time
 * (docs/benchmarks.rst). The copy takes well under a second per GiB from the page cache:
 * made by zb_huge_pages_start, it delays no answer.
 */
const struct zb_zoneset *zb_on_huge_pages(const struct zb_zoneset *zs, struct zb_zoneset *copy);

/*
 * The same behind the workers' backs, so that the server answers from the binary's mapping
 * at once, whatever the data's size: a thread of its own waits for the workers' first answer
 * (a cold start reads the pages a lookup needs from the disk, one at a time, and would have
 * them wait behind the copy's), makes the copy, then stores it in the server's zs_now
 * (release), where each worker finds it between two rounds of its event loop (acquire) and
 * answers from it from then on. The binary's mapping stays: a worker still in a batch over
 * it reads what it always did.
 */
struct zb_server;
struct zb_huge_pages_move {
	pthread_t thread;
	int started;
	int stopping; /* set by zb_huge_pages_wait: a move not begun is not begun */
	int copy_wanted; /* 0 with --no-huge-pages */
	const struct zb_server *server;
	const struct zb_zoneset *from;
	const struct zb_zoneset **publish;
	struct zb_zoneset copy;
};

/* Start the move of the data of the zone set the server's workers answer from, where
 * COPY_WANTED (--huge-pages, the default); once done it is logged. Where the data stays in
 * the binary's mapping (not wanted, or zb_on_huge_pages leaves it there), the thread gives
 * its page faults their read-around back after the first answer instead
 * (zb_zoneset_read_around). Returns 0, or an error number from pthread_create. */
int zb_huge_pages_start(struct zb_huge_pages_move *move, struct zb_server *server,
			int copy_wanted);

/* Wait for the move to end (before the process does); one still waiting for an answer
 * ends without the copy. */
void zb_huge_pages_wait(struct zb_huge_pages_move *move);

#endif
