/*
 * spill.c - the answers' octets in a file beside the output rather than in anonymous memory.
 * They are most of what the core holds (hundreds of megabytes for a million names), but once
 * written they are read again only where a new body matches one (bodies.c) and once more,
 * in order, when the layout copies them out. In a shared mapping of a file, pages already
 * written can be let go (MADV_DONTNEED keeps a shared file mapping's contents: the next read
 * finds them in the file), so the core's resident set holds the recent octets only, and the
 * kernel keeps the rest in its page cache, or writes it to disk, as memory allows.
 *
 * The file is unlinked from the start: it goes when the core exits, however it exits.
 */
#define _GNU_SOURCE  /* O_TMPFILE */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bake.h"

static char *spill_dir;
/* The arenas in files: only these may be let go (an anonymous one's octets would be lost).
 * Made on the main thread before any other starts. */
#define MAX_SPILLED 32
static uint8_t *spilled[MAX_SPILLED];
static size_t nspilled;

/* A page the kernel cannot back (the disk is full) faults with SIGBUS: say so, as a
 * failure of the core's, and stop. */
static void out_of_space(int sig)
{
	(void)sig;
	static const char message[] = "the file holding the answers cannot grow (no space left "
				      "beside the output?)\n";
	if (write(2, message, sizeof message - 1) < 0)
		_exit(EXIT_FAILED);
	_exit(EXIT_FAILED);
}

void spill_beside(const char *out_path)
{
	const char *slash = strrchr(out_path, '/');
	spill_dir = slash ? strndup(out_path, slash - out_path + (slash == out_path)) : strdup(".");
	if (!spill_dir)
		fail("out of memory");
	struct sigaction sa = {.sa_handler = out_of_space};
	sigaction(SIGBUS, &sa, NULL);
	/* Past a file size limit, the sparse file below is refused (EFBIG, and the answers stay
	 * in memory) and writing the output fails with a message, rather than a signal. */
	signal(SIGXFSZ, SIG_IGN);
}

static int spill_file(void)
{
	int fd = open(spill_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* Filesystems without O_TMPFILE: a named file, unlinked at once. */
	char *path;
	if (asprintf(&path, "%s/.zonebake-answers-XXXXXX", spill_dir) < 0)
		fail("out of memory");
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	free(path);
	return fd;
}

int reserve_spilled(bytes_t *b)
{
	int fd = spill_dir && nspilled < MAX_SPILLED ? spill_file() : -1;
	if (fd < 0 || ftruncate(fd, HUGE_RESERVE) != 0) {  /* sparse: no octet is stored yet */
		if (fd >= 0)
			close(fd);
		reserve_huge((void **)&b->v, &b->cap);
		return 0;
	}
	void *p = mmap(NULL, HUGE_RESERVE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);  /* the mapping keeps the file */
	if (p == MAP_FAILED) {
		reserve_huge((void **)&b->v, &b->cap);
		return 0;
	}
	b->v = p;
	b->cap = HUGE_RESERVE;
	spilled[nspilled++] = p;
	return 1;
}

void spill_let_go(const bytes_t *b, size_t from, size_t to)
{
	int found = 0;
	for (size_t i = 0; i < nspilled; i++)
		found |= spilled[i] == b->v;
	if (!found)
		return;
	static size_t page;
	if (!page)
		page = sysconf(_SC_PAGESIZE);
	from &= ~(page - 1);
	to &= ~(page - 1);
	if (to > from)
		madvise(b->v + from, to - from, MADV_DONTNEED);
}
