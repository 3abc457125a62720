/*
 * hugepages.c - copy the compiled data to transparent huge pages (hugepages.h).
 *
 * The data is part of the executable's file mapping, which the kernel backs with 4 KiB pages
 * (huge pages for read-only file mappings need khugepaged and a kernel built for it, and
 * arrive late if at all). An anonymous mapping with MADV_HUGEPAGE gets 2 MiB pages as it is
 * first written, in the madvise mode most distributions ship.
 */
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#include "ops/hugepages.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ops/log.h"
#include "ops/stats.h"
#include "query/zoneset.h"
#include "server/server.h"
#include "server/threads.h"

#define ZB_HUGE_PAGE (2ul << 20) /* x86_64's and aarch64's (with 4 KiB base pages) */
#define ZB_COPY_PIECE (64ul << 20)
/* What the copy asks the kernel to read ahead of it, a piece at a time: the data's pages
 * are read one at a time where a lookup faults (zoneset.h). */
#define ZB_READ_AHEAD (2ul << 20)
/* The longest wait between two looks at whether the workers have answered. */
#define ZB_LOOK_MAX_MS 64

/* Whether transparent huge pages are on, always or on request: the setting reads
 * "always [madvise] never" with the mode in brackets. */
static int huge_pages_allowed(void)
{
	char mode[128] = "";
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, mode, sizeof(mode) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	mode[n] = 0;
	return strstr(mode, "[never]") == NULL;
}

/* Ask for the data's file pages from `at` on, ZB_READ_AHEAD octets of them, to be read. */
static void read_ahead(const struct zb_zoneset *zs, size_t at)
{
	if (at >= zs->data_len)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)zs->data + at) & ~(page - 1);
	size_t len = zs->data_len - at < ZB_READ_AHEAD ? zs->data_len - at : ZB_READ_AHEAD;
	madvise((void *)from, (uintptr_t)zs->data + at + len - from, MADV_WILLNEED);
}

/* The same place in the copy as `p` in the original data. */
static const void *moved(const struct zb_zoneset *zs, const uint8_t *data, const void *p)
{
	return data + ((const uint8_t *)p - zs->data);
}

const struct zb_zoneset *zb_on_huge_pages(const struct zb_zoneset *zs, struct zb_zoneset *copy)
{
	if (zs->data_len < ZB_HUGE_PAGE || !huge_pages_allowed())
		return zs;
	size_t len = (zs->data_len + ZB_HUGE_PAGE - 1) & ~(ZB_HUGE_PAGE - 1);
	/* One huge page more than needed, to start at a multiple of the huge page size. */
	uint8_t *area = mmap(NULL, len + ZB_HUGE_PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return zs;
	uint8_t *data = (uint8_t *)(((uintptr_t)area + ZB_HUGE_PAGE - 1) & ~(ZB_HUGE_PAGE - 1));
	if (data > area)
		munmap(area, (size_t)(data - area));
	munmap(data + len, (size_t)(area + ZB_HUGE_PAGE - data));
	if (madvise(data, len, MADV_HUGEPAGE) != 0) {
		munmap(data, len);
		return zs;
	}
	/* The file's pages of the data are not read again once copied: out of this process's
	 * memory a piece at a time (the page cache keeps them until it needs the room), so that
	 * the process never holds the data twice (gigabytes for a large signed set). */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	read_ahead(zs, 0);
	for (size_t at = 0; at < zs->data_len; at += ZB_COPY_PIECE) {
		size_t n = zs->data_len - at < ZB_COPY_PIECE ? zs->data_len - at : ZB_COPY_PIECE;
		for (size_t done = 0; done < n; done += ZB_READ_AHEAD) {
			read_ahead(zs, at + done + ZB_READ_AHEAD);
			memcpy(data + at + done, zs->data + at + done,
			       n - done < ZB_READ_AHEAD ? n - done : ZB_READ_AHEAD);
		}
		uintptr_t from = ((uintptr_t)zs->data + at + page - 1) & ~(page - 1);
		uintptr_t to = ((uintptr_t)zs->data + at + n) & ~(page - 1);
		if (to > from)
			madvise((void *)from, to - from, MADV_DONTNEED);
	}
	mprotect(data, len, PROT_READ);
	*copy = *zs;
	copy->data = data;
	copy->groups = moved(zs, data, zs->groups);
	return copy;
}

/* Until the workers have answered or dropped a query. Where the binary was not in the page
 * cache (a cold start), each page a lookup reads is a read from the disk, which would wait
 * behind the copy's reads of the whole data: the first answers come first. */
static int await_first_answer(struct zb_huge_pages_move *move)
{
	long ms = 1;
	while (zb_stats_handled(move->server) == 0) {
		if (__atomic_load_n(&move->stopping, __ATOMIC_ACQUIRE))
			return -1; /* the server stops before it answered anything */
		nanosleep(&(struct timespec){ .tv_nsec = ms * 1000000 }, NULL);
		if (ms < ZB_LOOK_MAX_MS)
			ms *= 2;
	}
	return 0;
}

static void *move_data(void *arg)
{
	struct zb_huge_pages_move *move = arg;
	if (await_first_answer(move) != 0)
		return NULL;
	const struct zb_zoneset *moved_to =
		move->copy_wanted ? zb_on_huge_pages(move->from, &move->copy) : move->from;
	if (moved_to == move->from) { /* --no-huge-pages, or none to be had */
		zb_zoneset_read_around(move->from);
		return NULL;
	}
	__atomic_store_n(move->publish, moved_to, __ATOMIC_RELEASE);
	zb_log("the zone data (%llu MiB) is on huge pages",
	       (unsigned long long)(moved_to->data_len >> 20));
	return NULL;
}

int zb_huge_pages_start(struct zb_huge_pages_move *move, struct zb_server *server,
			int copy_wanted)
{
	*move = (struct zb_huge_pages_move){ .from = server->zs_now, .publish = &server->zs_now,
					     .server = server, .copy_wanted = copy_wanted };
	if (!zb_zoneset_reads_pages_alone(server->zs_now))
		return 0; /* small data: read as the disk reads, and too small for a huge page */
	int failed = zb_start_helper_thread(&move->thread, move_data, move);
	move->started = !failed;
	return failed;
}

void zb_huge_pages_wait(struct zb_huge_pages_move *move)
{
	__atomic_store_n(&move->stopping, 1, __ATOMIC_RELEASE);
	if (move->started)
		pthread_join(move->thread, NULL);
	move->started = 0;
}
