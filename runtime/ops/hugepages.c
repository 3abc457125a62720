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
#include <unistd.h>

#define ZB_HUGE_PAGE (2ul << 20) /* x86_64's and aarch64's (with 4 KiB base pages) */
#define ZB_COPY_PIECE (64ul << 20)

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
	for (size_t at = 0; at < zs->data_len; at += ZB_COPY_PIECE) {
		size_t n = zs->data_len - at < ZB_COPY_PIECE ? zs->data_len - at : ZB_COPY_PIECE;
		memcpy(data + at, zs->data + at, n);
		uintptr_t from = ((uintptr_t)zs->data + at + page - 1) & ~(page - 1);
		uintptr_t to = ((uintptr_t)zs->data + at + n) & ~(page - 1);
		if (to > from)
			madvise((void *)from, to - from, MADV_DONTNEED);
	}
	mprotect(data, len, PROT_READ);
	*copy = *zs;
	copy->data = data;
	copy->nodes = moved(zs, data, zs->nodes);
	copy->types = moved(zs, data, zs->types);
	copy->pilots = moved(zs, data, zs->pilots);
	return copy;
}
