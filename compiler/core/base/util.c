/* util.c - memory that never comes back empty, growable arrays, files mapped whole or
 * written at an offset, and the two ways out. */
#define _GNU_SOURCE  /* MAP_POPULATE */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bake.h"
#include "hash.h"

int core_quiet;
void (*core_leave)(int code);

static _Noreturn void leave(int code, const char *what, const char *fmt, va_list ap)
{
	if (!core_quiet || code == EXIT_FAILED) {
		fprintf(stderr, "%s", what);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	if (core_leave)
		core_leave(code);
	exit(code);
}

int core_held;

/* A core the command began on the manifest the last build recorded, before the driver had
 * made its own (compiler/core/early.py), works out all it can and waits here before it asks
 * the driver anything (where the data goes, the signatures): the driver says `go` once its
 * own manifest proved the same, or kills it. What it wrote by then is its state and image
 * under their temporary names, which the driver removes, and the earlier image updated in
 * place, whose head no longer matches its parts or any state: the next read of it reads the
 * zone file whole (image.c). */
void hold_for_driver(void)
{
	if (!core_held)
		return;
	core_held = 0;
	char line[8];
	if (!fgets(line, sizeof line, stdin) || strcmp(line, "go\n") != 0)
		fail("the driver did not take this core over");
}

_Thread_local void (*before_decline)(void *arg);
_Thread_local void *before_decline_arg;

uint32_t reading_zone = NONE;

/* The fast reader cannot read the zone being read: say which and why, and stop; the driver
 * has dnspython read it and hands its records over (records.c). */
void decline(const char *fmt, ...)
{
	void (*first)(void *) = before_decline;
	before_decline = NULL;
	if (first)
		first(before_decline_arg);
	char what[64] = "declined: ";
	if (reading_zone != NONE)
		snprintf(what, sizeof what, "declined: zone %u: ", reading_zone);
	va_list ap;
	va_start(ap, fmt);
	leave(EXIT_DECLINED, what, fmt, ap);
}

/* The set is beyond the core (a limit, an origin it cannot take): the driver says so. */
void unsupported(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	leave(EXIT_DECLINED, "declined: ", fmt, ap);
}

void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	leave(EXIT_FAILED, "zonebake-bake: ", fmt, ap);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		fail("out of memory (%zu bytes)", size);
	return p;
}

/* A large array is zeroed by writing it, not by calloc's fresh pages: a fresh page that is
 * read first maps the shared zero page, and the write after it copies that page and flushes
 * the translations of every thread's processor (an interrupt each); the memoized digests
 * (changes.c) read each slot before they write it. The barrier keeps the compiler from
 * turning malloc and memset back into calloc. */
#define ZEROED_BY_WRITING (1u << 20)

void *xcalloc(size_t n, size_t size)
{
	if (n && size && n <= SIZE_MAX / size && n * size >= ZEROED_BY_WRITING) {
		void *p = xmalloc(n * size);
		__asm__ volatile("" : : "r"(p) : "memory");
		return memset(p, 0, n * size);
	}
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		fail("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		fail("out of memory (%zu bytes)", size);
	return p;
}

void grow(void **v, size_t *cap, size_t elem, size_t need)
{
	if (need <= *cap)
		return;
	if (*cap >= HUGE_RESERVE)
		fail("more than %zu octets in one array", *cap);  /* reserve_huge's: never moves */
	size_t cap2 = *cap ? *cap : 16;
	while (cap2 < need)
		cap2 *= 2;
	*v = xrealloc(*v, cap2 * elem);
	*cap = cap2;
}

/* Address space for an array that may reach gigabytes: reserved once, so it never moves
 * (no realloc copies), and backed by huge pages where the kernel allows: the layout reads
 * the bodies back in another order, and 4 KiB pages made that a TLB miss per body. */
void reserve_huge(void **v, size_t *cap)
{
	size_t bytes = HUGE_RESERVE;
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;  /* the array grows by realloc instead */
	madvise(p, bytes, MADV_HUGEPAGE);
	*v = p;
	*cap = bytes;
}

/* A hash table's slots, probed at random: tens of megabytes, on huge pages where the kernel
 * allows. On 4 KiB pages each probe was a TLB miss as well as a cache miss, and the fetches
 * made ahead of time stalled on the page walks. */
void *huge_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fail("out of memory (%zu octets)", bytes);
	madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

/* Pages of a mapping that can be read again (a file's) out of the resident set: those
 * wholly before `to` from the one holding `from` (madvise(2), MADV_DONTNEED). */
void let_go_pages(const void *from, const void *to)
{
	uintptr_t page = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)from & ~(page - 1), b = (uintptr_t)to & ~(page - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

void huge_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

void vec_release(void *v, size_t cap_bytes)
{
	if (cap_bytes > HUGE_RESERVE / 2)
		munmap(v, HUGE_RESERVE);
	else
		free(v);
}

void bytes_release(bytes_t *b)
{
	if (b->cap >= HUGE_RESERVE)
		munmap(b->v, b->cap);  /* reserve_huge's, or a spilled arena's mapping */
	else
		free(b->v);
	memset(b, 0, sizeof *b);
}

uint64_t mix64(uint64_t x)  /* SplitMix64's finalizer: every input bit moves every output bit */
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ x >> 31;
}

/* A digest of `len` octets after `seed`: zb_hash's blocks in four independent lanes, so
 * that the multiplications overlap (an image's hundreds of megabytes, a state's tens). */
uint64_t bulk_digest(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *p = data;
	uint64_t k = ZB_HASH_KEY(seed), lane[4];
	for (int i = 0; i < 4; i++)
		lane[i] = zb_hash_start(len, k + i);
	size_t i = 0;
	for (; i + 64 <= len; i += 64)
		for (int j = 0; j < 4; j++) {
			uint64_t lo, hi;
			memcpy(&lo, p + i + 16 * j, 8);
			memcpy(&hi, p + i + 16 * j + 8, 8);
			lane[j] = zb_hash_block(lane[j], lo, hi, k);
		}
	uint64_t h = zb_hash(p + i, len - i, seed);
	for (int j = 0; j < 4; j++)
		h = zb_hash_block(h, lane[j], j, k);
	return zb_hash_end(h);
}

double clock_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Each phase's end, on stderr, for the driver's progress report and stage times:
 * `phase SECONDS COUNT UNIT NAME`. The first call starts the clock. */
void phase_took(const char *name, double seconds, size_t count, const char *unit)
{
	if (core_quiet)
		return;
	fprintf(stderr, "phase %.3f %zu %s %s\n", seconds, count, unit, name);
	fflush(stderr);
}

void phase(const char *name, size_t count, const char *unit)
{
	static double last;
	double now = clock_seconds();
	if (name)
		phase_took(name, now - last, count, unit);
	last = now;
}

/* fn(arg) on a thread of its own while the caller goes on; where no thread can start, it
 * runs at once instead. join_beside waits for it either way. */
void start_beside(struct beside *b, void *(*fn)(void *), void *arg)
{
	b->started = pthread_create(&b->thread, NULL, fn, arg) == 0;
	if (!b->started)
		fn(arg);
}

void join_beside(struct beside *b)
{
	if (b->started)
		pthread_join(b->thread, NULL);
	b->started = 0;  /* joined once: joining again does nothing */
}

/* *LEN octets of a file from AT, a multiple of the page size (the data inside a server: its
 * segment's offset, ELF's p_offset, is one), or with *LEN 0 all from AT on, which it sets:
 * mapped read-only, its pages read in at once with `populate` (a cache read at random); NULL
 * where the file does not hold them, or they are none. With keep_fd, its descriptor stays
 * open there (to copy from it by the kernel). */
const void *map_range(const char *path, uint64_t at, size_t *len, int populate, int *keep_fd)
{
	int fd = path && at % (uint64_t)sysconf(_SC_PAGESIZE) == 0 ? open(path, O_RDONLY) : -1;
	if (fd < 0)
		return NULL;
	struct stat st;
	void *map = MAP_FAILED;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > at) {
		uint64_t want = *len ? *len : (uint64_t)st.st_size - at;
		if (at + want <= (uint64_t)st.st_size) {
			map = mmap(NULL, want, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0),
				   fd, (off_t)at);
			*len = want;
		}
	}
	if (keep_fd && map != MAP_FAILED)
		*keep_fd = fd;
	else
		close(fd);
	return map == MAP_FAILED ? NULL : map;
}

/* A file read whole into memory of its own on huge pages, *len its length: for a file read
 * at random all through, which mapped from the page cache takes a TLB miss nearly each
 * read. NULL where it cannot be read so (none, empty, no memory): map it instead. Given
 * back with huge_free. */
void *read_huge(const char *path, size_t *len)
{
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	struct stat st;
	void *v = NULL;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		size_t want = st.st_size, done = 0;
		v = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (v == MAP_FAILED) {
			v = NULL;
		} else {
			madvise(v, want, MADV_HUGEPAGE);
			ssize_t n = 1;
			while (done < want && (n = read(fd, (uint8_t *)v + done, want - done)) > 0)
				done += n;
			if (done < want) {
				munmap(v, want);
				v = NULL;
			} else {
				*len = want;
			}
		}
	}
	close(fd);
	return v;
}

/* A file mapped whole: map_range from its start. */
const void *map_file(const char *path, size_t *len, int populate, int *keep_fd)
{
	*len = 0;
	return map_range(path, 0, len, populate, keep_fd);
}

int put_at(int fd, const void *data, size_t len, uint64_t at)
{
	const uint8_t *p = data;
	while (len) {
		ssize_t n = pwrite(fd, p, len, at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		at += n;
		len -= n;
	}
	return 0;
}
