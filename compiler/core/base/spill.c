/*
 * spill.c - the answers' octets in a file beside the output rather than in anonymous memory.
 * They are most of what the core holds (hundreds of megabytes for a million names), but once
 * written they are read again only where a new body matches one (bodies.c) and once more,
 * in order, when the layout copies them out. In a shared mapping of a file, pages already
 * written can be let go (MADV_DONTNEED keeps a shared file mapping's contents: the next read
 * finds them in the file), so the core's resident set holds the recent octets only, and the
 * kernel keeps the rest in its page cache, or writes it to disk, as memory allows.
 *
 * The bodies' arenas are appended to with pwrite, through a buffer, and read through the
 * mapping (spill_open): a page first written through a shared mapping costs a fault and the
 * zeroing of the file's hole there, where pwrite copies a whole buffer into the page cache.
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

/* A page the kernel cannot back (the disk is full) faults with SIGBUS, in this file or in
 * the data's mapping (layout.c): say so, as a failure of the core's, and stop. */
static void out_of_space(int sig)
{
	(void)sig;
	static const char message[] = "the server's data, or the file holding the answers, "
				      "cannot grow (no space left beside the output?)\n";
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

/* The file's descriptor, or -1 with the arena in memory. */
static int map_spilled(bytes_t *b)
{
	int fd = spill_dir && nspilled < MAX_SPILLED ? spill_file() : -1;
	if (fd < 0 || ftruncate(fd, HUGE_RESERVE) != 0) {  /* sparse: no octet is stored yet */
		if (fd >= 0)
			close(fd);
		reserve_huge((void **)&b->v, &b->cap);
		return -1;
	}
	void *p = mmap(NULL, HUGE_RESERVE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		reserve_huge((void **)&b->v, &b->cap);
		return -1;
	}
	b->v = p;
	b->cap = HUGE_RESERVE;
	spilled[nspilled++] = p;
	return fd;
}

int reserve_spilled(bytes_t *b)
{
	int fd = map_spilled(b);
	if (fd >= 0)
		close(fd);  /* the mapping keeps the file */
	return fd >= 0;
}

/* The buffer's size: ZONEBAKE_SPILL_BUFFER octets when set (the tests make it tiny, so that
 * small zones flush it often and write bodies past it). */
#define APPEND_BUFFER (4u << 20)

struct spill_out {
	int fd;
	size_t written;  /* the arena's octets in the file; those after are in `buffer` */
	size_t cap;
	int direct;      /* the body being put is larger than the buffer: it goes straight out */
	uint8_t *buffer;
};

struct spill_out *spill_open(bytes_t *b)
{
	int fd = map_spilled(b);
	if (fd < 0)
		return NULL;
	struct spill_out *s = xmalloc(sizeof *s);
	const char *forced = getenv("ZONEBAKE_SPILL_BUFFER");
	s->fd = fd;
	s->written = 0;
	s->cap = forced && atol(forced) > 0 ? (size_t)atol(forced) : APPEND_BUFFER;
	s->direct = 0;
	s->buffer = xmalloc(s->cap);
	return s;
}

static void write_at(struct spill_out *s, const void *p, size_t n, size_t at)
{
	for (size_t done = 0; done < n;) {
		ssize_t k = pwrite(s->fd, (const uint8_t *)p + done, n - done, at + done);
		if (k <= 0)
			out_of_space(0);
		done += k;
	}
}

static void flush(struct spill_out *s, const bytes_t *b)
{
	write_at(s, s->buffer, b->n - s->written, s->written);
	s->written = b->n;
}

void spill_room(struct spill_out *s, const bytes_t *b, size_t n)
{
	if (n > s->cap - (b->n - s->written))
		flush(s, b);
	s->direct = n > s->cap;
}

void spill_put(struct spill_out *s, bytes_t *b, const void *p, size_t n)
{
	if (s->direct) {
		write_at(s, p, n, b->n);
		b->n += n;
		s->written = b->n;
		return;
	}
	memcpy(s->buffer + (b->n - s->written), p, n);
	b->n += n;
}

const uint8_t *spill_at(const struct spill_out *s, const bytes_t *b, size_t at)
{
	return at >= s->written ? s->buffer + (at - s->written) : b->v + at;
}

void spill_close(struct spill_out *s, const bytes_t *b)
{
	if (!s)
		return;
	flush(s, b);
	close(s->fd);  /* the mapping keeps the file */
	free(s->buffer);
	free(s);
}

void spill_let_go(const bytes_t *b, size_t from, size_t to)
{
	int found = 0;
	for (size_t i = 0; i < nspilled; i++)
		found |= spilled[i] == b->v;
	if (found)
		let_go_pages(b->v + from, b->v + to);
}

void spill_reset(void)
{
	free(spill_dir);
	spill_dir = NULL;
	nspilled = 0;  /* the mappings are their arrays', released with them */
}
