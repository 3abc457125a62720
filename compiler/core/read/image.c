/*
 * image.c - a zone's records as its file was read, kept beside the output (zonedata.image)
 * for the next build over it, and that build's reading: the file compared with the text the
 * image was read from, the records of the lines that changed taken out, the lines that took
 * their place read and their records put in (changedlines.c, readzone.c's
 * read_zone_region), instead of the whole file read again. Reading was the longest step
 * left of a rebuild of a large zone.
 *
 * What it leaves is what reading the whole file leaves, as the rest of the build sees it:
 * each name's RRsets in file order, each RRset's records in file order, the tree's nodes,
 * the names' existence, wildcards and the zone's types made again (zones.c's
 * rederive_zone). Ids may differ: a name new to the zone gets the next id, a record the next
 * place, an RRset too but in a zone the build signs or whose last good copy is kept (there
 * the RRsets are put back in the order their first records come); a name no record names
 * any more is marked gone (NAME_GONE: in no zone, and back as any new name when named
 * again), a record taken out stays where it was, linked from nothing, an RRset gone too,
 * empty. The answers, the states and the layout read none of that (changedlines.c's
 * apply_change).
 *
 * An image is kept only where that holds without doubt, and a build takes one only where its
 * file's changes stay within it; else the file is read whole, as without an image:
 *   - one zone in the set, read by the fast reader, from one file ($INCLUDE none) whose
 *     directives all come before its first record and give a $TTL (a record without a TTL
 *     then has the $TTL, whatever came before it: RFC 2308 §4, as dnspython reads it);
 *   - no DNSSEC records in it (a zone given signed), no DNAME;
 *   - no diagnostic while it was read (a duplicate dropped, a TTL lowered: which record is
 *     dropped, and where it is said, depends on the order of the whole file), and no name
 *     spelled two ways (a name keeps the spelling it first comes with, names.c);
 *   - the changed lines after the first record, none a directive, the first record among
 *     them and the first after them each naming its owner (not continuing the previous
 *     one), their parentheses balanced, and a record over several lines (struct span) wholly
 *     in or out of them;
 *   - nothing in the new lines that reading them into the rest would diagnose: a record
 *     outside the zone, one of an RRset with another TTL, a duplicate, a second record of a
 *     type a name holds one of, a name spelled otherwise than it is.
 * The image holds the text it was read from, the core's records (names, RRsets, records,
 * their octets, per record its line and RRset), the tree's nodes, the zone's types, per name
 * the perfect hash's hash of its key under the first seed (phash.c; worked out by the thread
 * that writes the image, so that a build over it hashes only the names new to it), and a
 * digest of all of it that a damaged file fails; who names each name (changes.c's lists,
 * which a rebuild's reach follows) in a zone the build does not sign, made by that thread
 * too when the image is written whole, and after it the pairs of the records put in since
 * (a record taken out since stays in the lists: an owner reached for nothing, laid out
 * again as a full build lays it out); it is made with this core from this manifest's
 * settings (reuse.c's early digest) or not taken. Once a fourth of its records or
 * names are left over from changes, no image is kept: the next build reads the file whole.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bake.h"
#include "hash.h"
#include "read/image.h"


#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

#define IMAGE_MAGIC "zbimage7"
/* Each part at a multiple of this in the file: a page (of any size Linux has), so that a
 * build over the image maps its arrays from the file rather than copying them. */
#define PART_ALIGN 65536

enum part {
	P_NAMES, P_LABELS, P_TABLE, P_NODES, P_TYPES, P_SPANS, P_PATH,  /* snapshot, then... */
	/* ...written from where they are: */
	P_TEXT, P_RRSETS, P_RRSET_POS, P_RDATAS, P_RAW, P_LINES, P_SETS,
	P_HASHES,
	P_NAMED_SINCE,  /* pairs (a name, an owner naming it) of the records put in since... */
	P_NAMED_BY,     /* ...the lists of who names each name (changes.c), when it was written
			 * whole: their count n, n + 1 starts, the owners. Last: the writer
			 * makes it, and only then knows its length. */
	NPARTS
};
#define FIRST_IN_PLACE P_TEXT
#define ROOM (1 << 20)  /* octets each part has to grow into, besides an eighth of it */

struct image_head {
	char magic[8];
	uint64_t early;    /* reuse_early_digest(): the core and the manifest's settings */
	uint64_t digest;   /* of the parts (image_digest) */
	uint64_t size;     /* the file's */
	struct { uint64_t at, len, slot; } part[NPARTS];  /* octets: where, how many, room */
	uint64_t head_end; /* where the text's first record's line begins */
	uint64_t state;    /* the content digest of the state written beside it (0: none yet):
			    * set once that is written, after the parts (image_beside_state) */
	uint64_t quiet;    /* 1: that build said nothing, no error and no warning (written
			    * with `state`) */
	uint64_t ordered;  /* the records a reading of the file whole filed, in file order (the
			    * lines of those kept ascend); builds over the image added those after,
			    * each build's in file order */
	uint64_t left_over;  /* records taken out since, linked from nothing (RRset NONE) */
	uint32_t origin_len, ttl;  /* the origin and the $TTL from there on */
	uint8_t origin[256];
};

static const char *image_out, *image_in;
static int lines_wanted;
static size_t left_over;  /* records taken out by a build over an image, linked from nothing */
static size_t ordered;    /* the image's `ordered`, or the records of a reading whole */
/* Per record of the zone as read or patched: its line (0: taken out). */
static lines_t lines;
/* After a reading over an image: per name, its key's hash (P_HASHES), the image's and then
 * those of the names new since. */
static VEC(uint64_t) hashes;
/* The image this build writes (its path), and after a reading over one: the names the
 * change names, and the state that image was made beside. */
static char *made;
static VEC(name_t) changed;
static uint64_t changed_state;  /* 0: no reading over an image, or one made beside none */
static uint32_t changed_zone;
/* And for its checks (image_recheck), when the build that made the image said nothing. */
static int rechecking;
static VEC(name_t) lost;
static name_t first_new;
static int cut_made;
/* After a reading over an image: the names' count the image held; NONE otherwise. */
static name_t new_from = NONE;
/* After a reading over an image: the pairs of P_NAMED_SINCE, its own and this change's; and
 * the image's P_NAMED_BY, mapped until image_reset (changes.c reads it until then). */
static VEC(uint32_t) named_since;
static const void *named_by_map;
static size_t named_by_len;

void image_files(const char *out, const char *earlier)
{
	image_out = *out ? out : NULL;
	image_in = *earlier ? earlier : NULL;
}

void image_before_read(uint32_t zone)
{
	VEC_FREE(lines);
	lines_wanted = image_out && zones.n == 1 && !zones.v[zone].records;
}

void image_line(uint32_t record, uint32_t line)
{
	if (!lines_wanted)
		return;
	if (record != lines.n) {  /* not as reading files them: no image */
		lines_wanted = 0;
		return;
	}
	PUSH(lines, line);
}

/* ---- writing ---- */

int image_forbidden_type(uint16_t type)
{
	return type == T_RRSIG || type == T_NSEC || type == T_NSEC3 || type == T_NSEC3PARAM ||
	       type == T_DNAME;
}

static int keepable(uint32_t zone, const struct head *h)
{
	const struct zone *z = &zones.v[zone];
	if (!lines_wanted || lines.n != rdatas.n || zones.n != 1 || z->records || !h->known ||
	    h->late || !h->ttls.fallback_known || h->ttls.fallback_from_soa ||
	    diagnostics_count() != 0 || files.n != 1 || views_count() != 0 ||
	    names_spelled_otherwise != 0 || rdatas.n >= NONE || rdata_raw.n >= NONE)
		return 0;
	for (size_t t = 0; t < z->types.n; t++)
		if (image_forbidden_type(z->types.v[t]))
			return 0;
	return 1;
}

/* No image for the next build: an empty file where a new one would go, which the driver
 * takes for the earlier one's removal once this build is in place (compiler/build.py). */
static void no_image(void)
{
	if (image_out && image_in) {
		int fd = open(image_out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0)
			close(fd);
	}
}

/* The image's digest: per part, per DIGEST_CHUNK octets of it, a digest seeded by which
 * part and chunk it is, all summed. A build that writes a few pages of the image in place
 * digests again only their chunks (finish_in_place), not the hundreds of megabytes. */
#define DIGEST_CHUNK 65536

static size_t chunks_of(size_t len)
{
	return (len + DIGEST_CHUNK - 1) / DIGEST_CHUNK;
}

static uint64_t chunk_digest(const uint8_t *p, size_t len, int part, size_t k)
{
	size_t at = k * DIGEST_CHUNK;
	return bulk_digest(p + at, len - at < DIGEST_CHUNK ? len - at : DIGEST_CHUNK,
			   (uint64_t)part << 48 | k);
}

/* Part `part`'s share of the digest. */
static uint64_t part_digest(const uint8_t *p, size_t len, int part)
{
	uint64_t sum = 0;
	for (size_t k = 0; k < chunks_of(len); k++)
		sum += chunk_digest(p, len, part, k);
	return sum;
}

/* An image whose file was last written in this boot, and by this core, is taken without its
 * digest: tens of megabytes a rebuild read in and digested on both processors (6 ms of a
 * 200,000-name rebuild's 60). The core sets the nanoseconds of the file's modification time
 * to a digest of the boot's id once it has written it; what the digest would find, a file
 * written since (another build's core killed as it wrote it in place, a copy written over
 * it), has a modification time of the kernel's (one in a billion with those nanoseconds),
 * and after a reboot (a crash: the pages written may not all be on disk) another boot's. In
 * the file's times, not in it: two builds of the same zone write the same image. */
static long boot_nanoseconds(void)
{
	static long boot = -2;  /* -2: not read yet; -1: none to be had */
	if (boot == -2) {
		char id[64];
		int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, id, sizeof id) : -1;
		if (fd >= 0)
			close(fd);
		boot = n > 0 ? (long)(bulk_digest(id, n, 0x626f6f74) % 1000000000) : -1;
	}
	return boot;
}

static int made_stamped;  /* the image this build made has its stamp */

/* The file's modification time now, with the boot's nanoseconds: the last thing done to an
 * image written. */
static void stamp(int fd)
{
	struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, {0}};
	clock_gettime(CLOCK_REALTIME, &times[1]);
	times[1].tv_nsec = boot_nanoseconds();
	if (times[1].tv_nsec >= 0 && futimens(fd, times) == 0)
		made_stamped = 1;  /* else the next build digests it */
}

static int stamped(const struct stat *st)
{
	return boot_nanoseconds() >= 0 && st->st_mtim.tv_nsec == boot_nanoseconds();
}

/* An image being written: its first parts copied (the checks and answers change the names
 * and the nodes), the rest written from where they lie, which nothing changes before
 * release_records (for a zone the build does not sign), on a thread of its own. */
static struct writer {
	struct image_head head;
	const void *part[NPARTS];
	void *own[NPARTS];           /* copies, freed once written */
	const char *unmap;           /* the zone file's text, mapped: unmapped once written */
	size_t unmap_len;
	size_t text_from, text_to;   /* in place: the octets of it to write */
	uint32_t *sets;              /* made from the RRsets, when NULL */
	int named_by;                /* P_NAMED_BY made, when NULL: a zone the build does not
				      * sign (its signatures and chain name names too) */
	lines_t lines;               /* taken over */
	int fd;                      /* the image written in place (update_in_place): */
	uint64_t *chunks[NPARTS];    /* each chunk's digest as it was, taken over, */
	uint8_t *dirty[NPARTS];      /* per chunk of the longer of before and now: written */
	size_t was_len[NPARTS];
	char *path;
	struct beside thread;
	int running;
} writer;

static void *copy_bytes(const void *p, size_t len)
{
	void *c = xmalloc(len ? len : 1);
	if (len)
		memcpy(c, p, len);
	return c;
}

static void *write_parts(void *arg)
{
	struct writer *w = arg;
	if (!w->sets) {
		w->sets = xmalloc((rdatas.n ? rdatas.n : 1) * sizeof *w->sets);
		memset(w->sets, 0xFF, (rdatas.n ? rdatas.n : 1) * sizeof *w->sets);
		for (uint32_t s = 0; s < rrsets.n; s++)
			for (uint32_t r = rrsets.v[s].first; r != NONE; r = rdatas.v[r].next)
				w->sets[r] = s;
	}
	w->part[P_SETS] = w->sets;
	/* The memo of cuts the build over this image reads instead of writing it into each
	 * name's page (resolve.c): worked out here in the names copied (a snapshot of them, as
	 * read), on this thread. */
	if (w->own[P_NAMES])
		redirects_fill(w->own[P_NAMES], w->head.part[P_NAMES].len / sizeof(struct name));
	if (!w->part[P_NAMED_BY] && w->named_by) {  /* its length makes the file's */
		size_t n = w->head.part[P_NAMES].len / sizeof(struct name);
		uint32_t *start, *item;
		named_by_lists(n, w->head.part[P_RRSETS].len / sizeof(struct rrset), &start, &item);
		size_t len = (2 + n + start[n]) * sizeof(uint32_t);
		uint32_t *csr = w->own[P_NAMED_BY] = xmalloc(len);
		csr[0] = n;
		memcpy(csr + 1, start, (n + 1) * sizeof *start);
		memcpy(csr + 2 + n, item, start[n] * sizeof *item);
		free(start);
		free(item);
		w->part[P_NAMED_BY] = csr;
		uint64_t slot = len + len / 8 + ROOM;
		w->head.part[P_NAMED_BY].len = len;
		w->head.part[P_NAMED_BY].slot = slot = (slot + PART_ALIGN - 1) / PART_ALIGN * PART_ALIGN;
		w->head.size = w->head.part[P_NAMED_BY].at + slot;
	}
	if (!w->part[P_HASHES]) {  /* from the names and labels as copied */
		size_t n = w->head.part[P_HASHES].len / sizeof(uint64_t);
		uint64_t *h = w->own[P_HASHES] = xmalloc((n ? n : 1) * sizeof *h);
		for (name_t id = 0; id < n; id++)
			h[id] = name_key_hash(w->part[P_NAMES], w->part[P_LABELS], id);
		w->part[P_HASHES] = h;
	}
	uint64_t digest = 0;
	for (int i = 0; i < NPARTS; i++)
		digest += part_digest(w->part[i], w->head.part[i].len, i);
	w->head.digest = digest;
	int fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ok = fd >= 0 && ftruncate(fd, w->head.size) == 0;
	for (int i = 0; ok && i < NPARTS; i++)
		ok = put_at(fd, w->part[i], w->head.part[i].len, w->head.part[i].at) == 0;
	ok = ok && put_at(fd, &w->head, sizeof w->head, 0) == 0;  /* last: whole, or no image */
	if (ok)
		stamp(fd);
	if (fd >= 0 && close(fd) != 0)
		ok = 0;
	if (!ok)
		unlink(w->path);  /* an image, no more: the next build reads the file whole */
	return NULL;
}

void image_written(void)
{
	if (!writer.running)
		return;
	join_beside(&writer.thread);
	for (int i = 0; i < NPARTS; i++)
		free(writer.own[i]);
	if (writer.unmap)
		munmap((void *)writer.unmap, writer.unmap_len);
	free(writer.sets);
	for (int i = 0; i < NPARTS; i++) {
		free(writer.chunks[i]);
		free(writer.dirty[i]);
	}
	VEC_FREE(writer.lines);
	free(writer.path);
	memset(&writer, 0, sizeof writer);
}

/* The parts of an image of the zone as the core holds it now, with `text` the file's and
 * `sets` each record's RRset (NULL: the writer makes them): 0 when no image is to be kept,
 * or so much is left over from changes that the next build should read the file whole and
 * keep a clean one. */
struct part_ref {
	const void *p;
	size_t len;
};

static int parts_now(uint32_t zone, const struct head *h, const char *text, size_t text_len,
		     const uint32_t *sets, struct part_ref parts[NPARTS])
{
	const struct zone *z = &zones.v[zone];
	if (!keepable(zone, h))  /* first: a set of 10,000 zones asks for each */
		return 0;
	size_t gone = 0;
	for (size_t id = 0; id < names.n; id++)
		gone += !!(names.v[id].flags & NAME_GONE);
	if (left_over > rdatas.n / 4 || gone > names.n / 4)
		return 0;
	const uint8_t *labels;
	const void *table;
	size_t nlabels, table_bytes;
	names_image_parts(&labels, &nlabels, &table, &table_bytes);
	const struct part_ref now[NPARTS] = {
		[P_NAMES] = {names.v, names.n * sizeof *names.v},
		[P_LABELS] = {labels, nlabels},
		[P_TABLE] = {table, table_bytes},
		[P_NODES] = {nodes.v, nodes.n * sizeof *nodes.v},
		[P_TYPES] = {z->types.v, z->types.n * sizeof *z->types.v},
		[P_SPANS] = {h->spans.v, h->spans.n * sizeof *h->spans.v},
		[P_PATH] = {z->path, strlen(z->path)},
		[P_TEXT] = {text, text_len},
		[P_RRSETS] = {rrsets.v, rrsets.n * sizeof *rrsets.v},
		[P_RRSET_POS] = {rrset_pos.v, rrset_pos.n * sizeof *rrset_pos.v},
		[P_RDATAS] = {rdatas.v, rdatas.n * sizeof *rdatas.v},
		[P_RAW] = {rdata_raw.v, rdata_raw.n},
		[P_LINES] = {lines.v, lines.n * sizeof *lines.v},
		[P_SETS] = {sets, rdatas.n * sizeof *sets},
		/* NULL where this build has none: the writer works them out. */
		[P_HASHES] = {hashes.n == names.n ? hashes.v : NULL, names.n * sizeof *hashes.v},
		/* Those of the image read over, and the pairs since; else the writer's. */
		[P_NAMED_SINCE] = {named_by_map ? named_since.v : NULL,
				   named_by_map ? named_since.n * sizeof *named_since.v : 0},
		[P_NAMED_BY] = {named_by_map, named_by_map ? named_by_len : 0},
	};
	memcpy(parts, now, sizeof now);
	return 1;
}

/* The image of the zone as read (or patched), written whole: `text` the file's, mapped
 * (`mapped`: unmapped once written, else copied); `sets` each record's RRset, or NULL (made
 * from the RRsets); both taken over. */
/* The writer's file, which is the image this build makes (image_beside_state's): a copy
 * of `path` each. */
static void start_writer(struct writer *w, const char *path)
{
	size_t len = strlen(path) + 1;
	w->path = memcpy(xmalloc(len), path, len);
	made_stamped = 0;
	free(made);
	made = memcpy(xmalloc(len), path, len);
	w->running = 1;
}

static void write_image(uint32_t zone, const char *text, size_t text_len, int mapped,
			const struct head *h, uint32_t *sets)
{
	image_written();
	struct part_ref parts[NPARTS];
	if (!parts_now(zone, h, text, text_len, sets, parts)) {
		no_image();
		if (mapped)
			munmap((void *)text, text_len);
		free(sets);
		return;
	}
	struct writer *w = &writer;
	memcpy(w->head.magic, IMAGE_MAGIC, 8);
	w->head.early = reuse_early_digest();
	w->head.head_end = h->end;
	w->head.ordered = ordered;
	w->head.left_over = left_over;
	w->head.origin_len = h->origin_len;
	w->head.ttl = h->ttls.fallback;
	memcpy(w->head.origin, h->origin, h->origin_len);
	uint64_t at = (sizeof w->head + PART_ALIGN - 1) / PART_ALIGN * PART_ALIGN;
	for (int i = 0; i < NPARTS; i++) {
		/* Room to grow: a build over the image writes what changed in place. */
		uint64_t slot = parts[i].len + parts[i].len / 8 + ROOM;
		w->head.part[i].at = at;
		w->head.part[i].len = parts[i].len;
		w->head.part[i].slot = slot = (slot + PART_ALIGN - 1) / PART_ALIGN * PART_ALIGN;
		at += slot;
		w->part[i] = parts[i].p;
		if (i < FIRST_IN_PLACE)
			w->part[i] = w->own[i] = copy_bytes(parts[i].p, parts[i].len);
	}
	w->head.size = at;
	if (mapped) {
		w->unmap = text;
		w->unmap_len = text_len;
	} else {
		w->part[P_TEXT] = w->own[P_TEXT] = copy_bytes(text, text_len);
	}
	w->sets = sets;
	w->named_by = !zones.v[zone].sign;
	w->lines = lines;
	memset(&lines, 0, sizeof lines);
	start_writer(w, image_out);
	/* A zone the build signs gets its signatures added to these arrays (they may move):
	 * written before. */
	if (zones.v[zone].sign)
		write_parts(w);
	else
		start_beside(&w->thread, write_parts, w);
}

void image_keep(uint32_t zone, struct lexer *lx)
{
	ordered = rdatas.n;
	write_image(zone, lx->text, lx->size, lx->mapped, &lx->head, NULL);
	lx->mapped = 0;  /* the writer's now */
	VEC_FREE(lines);
	lines_wanted = 0;
}

/* ---- reading: the image ---- */

struct loaded {
	int fd;
	const uint8_t *map;   /* the image file, mapped */
	size_t map_len;
	const struct image_head *head;
	const char *text;     /* the zone file's, mapped */
	size_t text_len;
	struct beside digest; /* of the image's parts, worked out meanwhile: */
	uint64_t digested;    /* (atomic) */
	uint64_t *chunks[NPARTS];  /* each chunk's (image_digest) */
	size_t first_chunk[NPARTS + 1];  /* of all parts' in turn, each part's first */
	size_t next_chunk;    /* (atomic) the first no thread has taken */
	int trusted;          /* taken without its digest: `chunks` worked out as needed */
};

static const void *part_of(const struct loaded *l, enum part p, size_t *len)
{
	*len = l->head->part[p].len;
	return l->map + l->head->part[p].at;
}

/* The image's digest, a few chunks at a time taken in turn: by a thread of its own from
 * the start, and by the build's own once it has read the change (it waited for the rest
 * of the hundreds of megabytes otherwise). */
#define CHUNKS_AT_ONCE 16

static void *digest_parts(void *arg)
{
	struct loaded *l = arg;
	uint64_t digest = 0;
	size_t all = l->first_chunk[NPARTS];
	for (;;) {
		size_t c = __atomic_fetch_add(&l->next_chunk, CHUNKS_AT_ONCE, __ATOMIC_RELAXED);
		if (c >= all)
			break;
		int i = 0;
		for (size_t end = c + CHUNKS_AT_ONCE < all ? c + CHUNKS_AT_ONCE : all; c < end; c++) {
			while (c >= l->first_chunk[i + 1])
				i++;
			size_t k = c - l->first_chunk[i];
			uint64_t d = chunk_digest(l->map + l->head->part[i].at, l->head->part[i].len,
						  i, k);
			l->chunks[i][k] = d;
			digest += d;
		}
	}
	__atomic_fetch_add(&l->digested, digest, __ATOMIC_RELAXED);
	return NULL;
}

static int check_image(struct loaded *l, uint32_t zone)
{
	l->fd = open(image_in, O_RDONLY);
	struct stat st;
	if (l->fd < 0 || fstat(l->fd, &st) != 0 || (size_t)st.st_size < sizeof *l->head ||
	    sysconf(_SC_PAGESIZE) > PART_ALIGN)
		return 0;
	void *map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, l->fd, 0);
	if (map == MAP_FAILED)
		return 0;
	l->map = map;
	l->map_len = st.st_size;
	const struct image_head *h = l->head = (const void *)l->map;
	if (memcmp(h->magic, IMAGE_MAGIC, 8) != 0 || h->early != reuse_early_digest() ||
	    h->size != l->map_len || h->origin_len == 0 || h->origin_len > 255)
		return 0;
	for (int i = 0; i < NPARTS; i++)
		if (h->part[i].at % PART_ALIGN || h->part[i].at > l->map_len ||
		    h->part[i].slot > l->map_len - h->part[i].at || h->part[i].len > h->part[i].slot)
			return 0;
	size_t len;
	const char *path = part_of(l, P_PATH, &len);
	const char *want = zones.v[zone].path;
	if (len != strlen(want) || memcmp(path, want, len) != 0 ||
	    h->part[P_NAMES].len % sizeof(struct name) ||
	    h->part[P_RRSETS].len % sizeof(struct rrset) ||
	    h->part[P_RRSET_POS].len !=
		    h->part[P_RRSETS].len / sizeof(struct rrset) * sizeof(struct pos) ||
	    h->part[P_RDATAS].len % sizeof(struct rdata) ||
	    h->part[P_LINES].len != h->part[P_RDATAS].len / sizeof(struct rdata) * 4 ||
	    h->part[P_SETS].len != h->part[P_LINES].len || h->part[P_NODES].len % 4 ||
	    h->part[P_HASHES].len != h->part[P_NAMES].len / sizeof(struct name) * 8 ||
	    h->part[P_TYPES].len % 2 || h->part[P_SPANS].len % sizeof(struct span) ||
	    h->part[P_TABLE].len % sizeof(uint64_t) || h->head_end > h->part[P_TEXT].len ||
	    h->ordered > h->part[P_RDATAS].len / sizeof(struct rdata) ||
	    h->left_over > h->part[P_RDATAS].len / sizeof(struct rdata) ||
	    h->part[P_NAMED_SINCE].len % (2 * sizeof(uint32_t)) ||
	    h->part[P_NAMED_BY].len % sizeof(uint32_t))
		return 0;
	for (int i = 0; i < NPARTS; i++) {
		size_t n = chunks_of(h->part[i].len);
		l->chunks[i] = xmalloc((n + 1) * sizeof *l->chunks[i]);
		l->first_chunk[i + 1] = l->first_chunk[i] + n;
	}
	l->trusted = stamped(&st);
	if (l->trusted)
		l->digested = h->digest;
	else
		start_beside(&l->digest, digest_parts, l);
	return 1;
}

/* The parts a build writes all over, copied in at once (taken_whole): faulted in a page at
 * a time, each copy flushed the TLB of every processor the core's threads ran on. The nodes
 * (those below a cut left out) always; where the change adds or takes lines, the RRsets'
 * positions and records' lines after it move, and where an RRset comes or goes, the RRsets
 * after it, each record's RRset and each name's first RRset: those from the change on
 * (copy_from_change). The names' memos of their cuts come worked out in the image
 * (write_parts), and stay where no cut came or went. */
static uint8_t copied[NPARTS];
/* And those a build reads little of, left to fault in as it does: the RRsets, the records
 * and their octets, in a zone the build does not sign (one it signs has every name's state
 * made from them, and its lists of who names each name: changes.c). */
static uint8_t read_little[NPARTS];

static void taken_whole(int lines_moved, int signs)
{
	memset(copied, 0, sizeof copied);
	memset(read_little, 0, sizeof read_little);
	read_little[P_RRSETS] = read_little[P_RRSET_POS] = read_little[P_RDATAS] =
		read_little[P_RAW] = !signs;
	copied[P_NODES] = 1;
	if (lines_moved)  /* copy_from_change's: not mapped first (each copy of a page mapped
			   * flushes the TLB of the processors the core's threads ran on) */
		read_little[P_NAMES] = read_little[P_RRSET_POS] = read_little[P_LINES] =
			read_little[P_SETS] = 1;
}

/* Of a part mapped, the pages from octet `from` to `to` copied in at once. (Read from the
 * file into huge pages instead, they took a third of the time, and ten times as long where
 * the kernel had to make huge pages free first.) */
static void copy_pages(void *base, size_t from, size_t to)
{
	size_t page = sysconf(_SC_PAGESIZE);
	from = from / page * page;
	if (from < to)
		madvise((uint8_t *)base + from, to - from, MADV_POPULATE_WRITE);
}

/* Where the change adds or takes lines: the RRsets' positions (in about the order their
 * first records come: those builds over the image added come after, changedlines.c) from
 * the first at or after the change, and the records' lines from the first record there (the
 * records as read come in file order; those of changes since, after them), copied in at
 * once, for their lines move; those before, which the change leaves where they are, read
 * from the image. Where RRsets are put back in file order (a zone the build signs, or whose
 * last good copy is kept), the RRsets from there, the names from the first one's owner and
 * the records' RRsets from that record on too (image_copy_renumbered). At a million names,
 * the change in the middle: half of the two arrays' 29 MB, and half of 113 MB more where
 * RRsets are put back in order. */
static struct {
	uint32_t *sets;
	size_t rrset, name, record;  /* from which on; NONE: none */
} renumbered = {NULL, NONE, NONE, NONE};

/* The first record at or after `line` of those the reading whole filed, those taken out
 * passed by (their lines ascend: a change moves all after it alike); `ordered` if none. */
static size_t ordered_from(const uint32_t *sets, uint32_t line)
{
	size_t lo = 0, hi = ordered;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, k = mid;
		while (k < hi && sets[k] == NONE)
			k++;
		if (k < hi && lines.v[k] < line)
			lo = k + 1;
		else
			hi = mid;
	}
	return lo;
}

static void copy_from_change(const struct change *c, uint32_t *sets, size_t r)
{
	size_t lo = 0, hi = rrsets.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rrset_pos.v[mid].line < c->first_line)
			lo = mid + 1;
		else
			hi = mid;
	}
	copy_pages(rrset_pos.v, lo * sizeof *rrset_pos.v, rrset_pos.n * sizeof *rrset_pos.v);
	copy_pages(lines.v, r * sizeof *lines.v, lines.n * sizeof *lines.v);
	/* The names whose first RRset would move with them: in about file order. */
	renumbered.sets = sets;
	renumbered.rrset = lo;
	renumbered.name = lo < rrsets.n ? rrsets.v[lo].owner : NONE;
	renumbered.record = r;
}

void image_copy_renumbered(void)
{
	if (renumbered.rrset != NONE)
		copy_pages(rrsets.v, renumbered.rrset * sizeof *rrsets.v,
			   rrsets.n * sizeof *rrsets.v);
	if (renumbered.name != NONE)
		copy_pages(names.v, renumbered.name * sizeof *names.v, names.n * sizeof *names.v);
	if (renumbered.record != NONE && renumbered.sets)
		copy_pages(renumbered.sets, renumbered.record * sizeof *renumbered.sets,
			   lines.n * sizeof *renumbered.sets);
	renumbered.rrset = renumbered.name = renumbered.record = NONE;
}

/* A part as a growable array: mapped from the file (copied on write, a page at a time) at
 * the start of an address range reserved for it to grow into, as reserve_huge's: reading
 * it in was a tenth of a second for a million names. NULL where it cannot be. */
static void *map_part(const struct loaded *l, enum part p)
{
	void *base = mmap(NULL, HUGE_RESERVE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	size_t len = l->head->part[p].len;
	if (len && mmap(base, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, l->fd,
			l->head->part[p].at) == MAP_FAILED) {
		munmap(base, HUGE_RESERVE);
		return NULL;
	}
	/* Its pages mapped at once, read-only until written: faulting them in one by one took
	 * longer than reading the file (MAP_POPULATE would copy each, the mapping being
	 * writable); or copied at once where the build writes them all; or, where it reads a
	 * few of them, left to fault in (populating the records and their octets took 8 ms
	 * at a million names). Where the kernel has neither (before Linux 5.14), they fault
	 * in. */
	if (len && (copied[p] || !read_little[p]))
		madvise(base, len, copied[p] ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
	return base;
}

/* ---- reading: the whole ---- */

size_t image_left_over(void)
{
	return left_over;
}

static int map_text(struct loaded *l, uint32_t zone)
{
	int fd = open(zones.v[zone].path, O_RDONLY);
	struct stat st;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return 0;
	}
	void *map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 0;
	l->text = map;
	l->text_len = st.st_size;
	return 1;
}

/* Where take_arrays mapped each part: a part still there is written back a page at a time,
 * those pages the build wrote (update_in_place). */
static void *mapped[NPARTS];

/* The core's arrays as the image has them, mapped; 0 (and nothing changed) when the names
 * the manifest gave are not its first. */
static int take_arrays(const struct loaded *l, uint32_t zone, struct names_aside *aside,
		       uint32_t **sets)
{
	const struct image_head *h = l->head;
	void *part[NPARTS] = {0};
	int ok = 1;
	for (int i = 0; i < NPARTS && ok; i++)
		if (i == P_NAMES || i == P_LABELS || i == P_RRSETS || i == P_RRSET_POS ||
		    i == P_RDATAS || i == P_RAW || i == P_LINES || i == P_NODES || i == P_SETS ||
		    i == P_HASHES)
			ok = (part[i] = map_part(l, i)) != NULL;
	size_t table_bytes = h->part[P_TABLE].len;
	void *table = ok && table_bytes ? mmap(NULL, table_bytes, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE, l->fd, h->part[P_TABLE].at) : NULL;
	const struct name *v = part[P_NAMES];
	const uint8_t *labels = part[P_LABELS];
	size_t n = h->part[P_NAMES].len / sizeof *v, nlabels = h->part[P_LABELS].len;
	ok = ok && table && table != MAP_FAILED && aside->n <= n && aside->labels.n <= nlabels &&
	     memcmp(aside->labels.v, labels, aside->labels.n) == 0;
	for (size_t i = 0; ok && i < aside->n; i++)
		ok = v[i].parent == aside->names[i].parent && v[i].label == aside->names[i].label &&
		     v[i].label_len == aside->names[i].label_len;
	ok = ok && names_adopt(part[P_NAMES], n, HUGE_RESERVE / sizeof *v, part[P_LABELS],
			       nlabels, HUGE_RESERVE, table, table_bytes);
	if (!ok) {
		for (int i = 0; i < NPARTS; i++)
			if (part[i])
				munmap(part[i], HUGE_RESERVE);
		if (table && table != MAP_FAILED)
			munmap(table, table_bytes);
		return 0;
	}
	rrsets.v = part[P_RRSETS];
	rrsets.n = h->part[P_RRSETS].len / sizeof *rrsets.v;
	rrsets.cap = HUGE_RESERVE / sizeof *rrsets.v;
	rrset_pos.v = part[P_RRSET_POS];
	rrset_pos.n = rrsets.n;
	rrset_pos.cap = HUGE_RESERVE / sizeof *rrset_pos.v;
	rdatas.v = part[P_RDATAS];
	rdatas.n = h->part[P_RDATAS].len / sizeof *rdatas.v;
	rdatas.cap = HUGE_RESERVE / sizeof *rdatas.v;
	rdata_raw.v = part[P_RAW];
	rdata_raw.n = h->part[P_RAW].len;
	rdata_raw.cap = HUGE_RESERVE;
	lines.v = part[P_LINES];
	lines.n = rdatas.n;
	lines.cap = HUGE_RESERVE / sizeof *lines.v;
	nodes.v = part[P_NODES];
	nodes.n = h->part[P_NODES].len / sizeof *nodes.v;
	nodes.cap = HUGE_RESERVE / sizeof *nodes.v;
	*sets = part[P_SETS];
	hashes.v = part[P_HASHES];
	hashes.n = h->part[P_HASHES].len / sizeof *hashes.v;
	hashes.cap = HUGE_RESERVE / sizeof *hashes.v;
	memcpy(mapped, part, sizeof mapped);
	mapped[P_TABLE] = table;
	size_t len;
	types_t *types = &zones.v[zone].types;
	const void *p = part_of(l, P_TYPES, &len);
	types->v = xmalloc(len + 2);
	memcpy(types->v, p, len);
	types->n = types->cap = len / sizeof *types->v;
	return 1;
}

/* Back to the names the manifest gave and nothing else, as before take_arrays. */
static void drop_arrays(uint32_t zone, struct names_aside *aside)
{
	names_put_back(aside);
	VEC_FREE(rrsets);
	VEC_FREE(rrset_pos);
	VEC_FREE(rdatas);
	bytes_release(&rdata_raw);
	VEC_FREE(nodes);
	VEC_FREE(zones.v[zone].types);
	VEC_FREE(lines);
	VEC_FREE(hashes);
}

/* Whether each page of [p, p + len) was written since it was mapped from the file (an
 * anonymous page now, or one swapped out): /proc/self/pagemap's bits 63 (present), 62
 * (swapped) and 61 (a file page). 0 where it cannot be told. */
static int written_pages(const uint8_t *p, size_t len, size_t page, uint8_t *out)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return 0;
	size_t first = (uintptr_t)p / page, n = (len + page - 1) / page;
	uint64_t entry[512];
	for (size_t i = 0; i < n; i += 512) {
		size_t k = n - i < 512 ? n - i : 512;
		if (pread(fd, entry, k * 8, (first + i) * 8) != (ssize_t)(k * 8)) {
			close(fd);
			return 0;
		}
		for (size_t j = 0; j < k; j++)
			out[i + j] = ((entry[j] >> 63 & 1) && !(entry[j] >> 61 & 1)) ||
				     (entry[j] >> 62 & 1);
	}
	close(fd);
	return 1;
}

/* Of a part copied whole, the pages that differ from the image's (`was`, `was_len`
 * octets), and those past its end. */
static int changed_pages(const uint8_t *p, size_t len, size_t page, const uint8_t *was,
			 size_t was_len, uint8_t *out)
{
	for (size_t k = 0; k * page < len; k++) {
		size_t at = k * page, n = len - at < page ? len - at : page;
		out[k] = at + n > was_len || memcmp(p + at, was + at, n) != 0;
	}
	return 1;
}

/* After an image's records were patched: the image made this build's, in its own file, by
 * writing what changed: each mapped part's pages this build wrote (a value changed: a few
 * pages), a part that moved whole; then, on a thread of its own, the text from the change on
 * (tens of megabytes where the change moved the rest) and its head, its digest worked out
 * from the file. 0 where a part outgrew its room or the pages written cannot be told: the
 * image is then written whole. */
static void *finish_in_place(void *arg)
{
	struct writer *w = arg;
	int fd = w->fd;
	int ok = put_at(fd, w->unmap + w->text_from, w->text_to - w->text_from,
			w->head.part[P_TEXT].at + w->text_from) == 0;
	void *map = ok ? mmap(NULL, w->head.size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	ok = map != MAP_FAILED;
	if (ok) {
		uint64_t digest = w->head.digest;  /* the earlier image's, checked */
		for (int i = 0; i < NPARTS; i++) {
			size_t len = w->head.part[i].len, was = chunks_of(w->was_len[i]);
			size_t n = chunks_of(len) > was ? chunks_of(len) : was;
			for (size_t k = 0; k < n; k++) {
				if (!w->dirty[i][k])
					continue;
				if (k < was)
					digest -= w->chunks[i][k];
				if (k < chunks_of(len))
					digest += chunk_digest((const uint8_t *)map +
							       w->head.part[i].at, len, i, k);
			}
		}
		w->head.digest = digest;
		munmap(map, w->head.size);
		ok = put_at(fd, &w->head, sizeof w->head, 0) == 0;
		if (ok)
			stamp(fd);
	}
	if (close(fd) != 0 || !ok)
		unlink(w->path);
	return NULL;
}

/* The chunks of part I holding octets [from, to) marked in `dirty`, before anything is
 * written there: of an image taken without its digest, each one's digest as it was is
 * worked out first (finish_in_place takes it out of the image's). */
static void mark_chunks(struct loaded *l, int i, uint8_t *dirty, size_t from, size_t to)
{
	size_t was = l->head->part[i].len;
	for (size_t k = from / DIGEST_CHUNK; from < to && k <= (to - 1) / DIGEST_CHUNK; k++) {
		if (!dirty[k] && l->trusted && k < chunks_of(was))
			l->chunks[i][k] = chunk_digest(l->map + l->head->part[i].at, was, i, k);
		dirty[k] = 1;
	}
}

static int update_in_place(struct loaded *l, uint32_t zone, const struct change *c,
			   const struct head *now, const uint32_t *sets)
{
	image_written();
	struct part_ref parts[NPARTS];
	if (!parts_now(zone, now, l->text, l->text_len, sets, parts)) {
		no_image();  /* the next build reads the file whole, and keeps a new one */
		return 1;
	}
	struct image_head h = *l->head;
	h.state = h.quiet = 0;  /* until this build's state is written */
	for (int i = 0; i < NPARTS; i++)
		if (parts[i].len > h.part[i].slot)
			return 0;
	/* In place only where the image stays for the next build: beside this build's (a
	 * build into another directory than the earlier one's writes its own). */
	const char *a = strrchr(image_in, '/'), *b = strrchr(image_out, '/');
	if ((a ? a - image_in : 0) != (b ? b - image_out : 0) ||
	    strncmp(image_in, image_out, a ? a - image_in : 0) != 0)
		return 0;
	int fd = open(image_in, O_RDWR);
	if (fd < 0)
		return 0;
	size_t page = sysconf(_SC_PAGESIZE);
	int ok = 1;
	uint8_t *dirty[NPARTS] = {0};  /* the chunks written, whose digests change */
	size_t text_from = 0, text_to = 0;
	for (int i = 0; i < NPARTS && ok; i++) {
		const uint8_t *p = parts[i].p;
		size_t len = parts[i].len, was = h.part[i].len;
		uint64_t at = h.part[i].at;
		dirty[i] = xcalloc(chunks_of(len > was ? len : was) + 1, 1);
		mark_chunks(l, i, dirty[i], len < was ? len : was, len > was ? len : was);
		if (i == P_TEXT) {  /* from the change on: all after it moved when its size did */
			text_from = c->start;
			text_to = l->text_len == h.part[i].len ? c->new_end : l->text_len;
			mark_chunks(l, i, dirty[i], text_from, text_to);
		} else if (p && p == mapped[i]) {
			uint8_t *written = xmalloc(len / page + 1);
			ok = copied[i] ? changed_pages(p, len, page, l->map + at,
							     l->head->part[i].len, written)
					     : written_pages(p, len, page, written);
			/* Each run of pages written, at once: where lines moved, half a part's
			 * pages are, thousands of them. */
			for (size_t k = 0, end; ok && k * page < len; k = end) {
				for (end = k + 1; end * page < len && written[end] == written[k];)
					end++;
				if (!written[k])
					continue;
				size_t to = end * page < len ? end * page : len;
				mark_chunks(l, i, dirty[i], k * page, to);
				ok = put_at(fd, p + k * page, to - k * page, at + k * page) == 0;
			}
			free(written);
		} else {
			mark_chunks(l, i, dirty[i], 0, len);
			ok = put_at(fd, p, len, at) == 0;
		}
		h.part[i].len = len;
	}
	if (!ok) {  /* the file is neither the old image nor the new */
		close(fd);
		unlink(image_in);
		for (int i = 0; i < NPARTS; i++)
			free(dirty[i]);
		return 1;
	}
	h.head_end = now->end;
	h.left_over = left_over;
	struct writer *w = &writer;
	w->head = h;
	w->fd = fd;
	w->unmap = l->text;  /* taken over */
	w->unmap_len = l->text_len;
	l->text = NULL;
	w->text_from = text_from;
	w->text_to = text_to;
	for (int i = 0; i < NPARTS; i++) {  /* taken over */
		w->dirty[i] = dirty[i];
		w->chunks[i] = l->chunks[i];
		l->chunks[i] = NULL;
		w->was_len[i] = l->head->part[i].len;
	}
	start_writer(w, image_in);
	start_beside(&w->thread, finish_in_place, w);
	return 1;
}

/* Who names each name as the image keeps it, and the pairs since with this change's, for
 * changes.c instead of its lists made from every record again (a tenth of a rebuild's core
 * at a million names); P_NAMED_BY mapped on its own, until image_reset. Nothing where it is
 * not whole: changes.c then makes its lists, and the image is written without them. */
static void take_named_by(const struct loaded *l, uint32_t zone, const struct region *in)
{
	if (zones.v[zone].sign)
		return;  /* its signatures and chain name names too: not in the lists */
	size_t len, since_len;
	const uint32_t *since = part_of(l, P_NAMED_SINCE, &since_len);
	part_of(l, P_NAMED_BY, &len);
	named_since.n = 0;
	for (size_t k = 0; k < since_len / sizeof *since; k++) {
		if (since[k] >= names.n)
			return;
		PUSH(named_since, since[k]);
	}
	for (size_t i = 0; i < in->records.n; i++) {
		const struct region_record *x = &in->records.v[i];
		name_t to[2] = {x->rd.name, x->rd.name2};
		for (int k = 0; k < 2; k++)
			if (to[k] != NONE) {
				PUSH(named_since, to[k]);
				PUSH(named_since, x->owner);
			}
	}
	void *map = len < 2 * sizeof(uint32_t) ? MAP_FAILED :
		mmap(NULL, len, PROT_READ, MAP_PRIVATE, l->fd, l->head->part[P_NAMED_BY].at);
	if (map == MAP_FAILED)
		return;
	const uint32_t *csr = map;
	size_t n = csr[0];
	if (n > names.n || len / sizeof *csr < 2 + n ||
	    len / sizeof *csr - 2 - n != csr[1 + n]) {
		munmap(map, len);
		return;
	}
	named_by_map = map;
	named_by_len = len;
	mapped[P_NAMED_BY] = map;  /* written pages: none (update_in_place) */
	named_by_since(csr + 1, csr + 2 + n, n, named_since.v, named_since.n / 2);
}

static int patch(struct loaded *l, uint32_t zone, const struct change *c)
{
	struct names_aside aside;
	uint32_t *sets = NULL;
	names_set_aside(&aside);
	taken_whole(c->new_end_line != c->old_end_line, zones.v[zone].sign != NULL);
	if (!take_arrays(l, zone, &aside, &sets)) {
		names_put_back(&aside);
		return 0;
	}
	renumbered.rrset = renumbered.name = renumbered.record = NONE;
	const struct image_head *h = l->head;
	ordered = h->ordered;
	size_t from = ordered_from(sets, c->first_line);
	if (c->new_end_line != c->old_end_line)
		copy_from_change(c, sets, from);
	size_t nimage = rdatas.n, nnames = names.n, nremoved = 0;
	uint8_t *removed = xcalloc(nimage ? nimage : 1, 1);
	for (size_t r = from; r < ordered && (sets[r] == NONE || lines.v[r] < c->old_end_line); r++)
		nremoved += removed[r] = sets[r] != NONE;
	for (size_t r = ordered; r < nimage; r++)  /* those builds over the image added */
		nremoved += removed[r] = sets[r] != NONE && lines.v[r] >= c->first_line &&
					 lines.v[r] < c->old_end_line;
	size_t spelled = names_spelled_otherwise;
	name_t origin = name_from_wire(h->origin);
	struct region in = {0};
	struct ttls ttls = {.fallback = h->ttl, .fallback_known = 1};
	read_zone_region(zone, l->text + c->start, c->new_end - c->start, c->first_line,
			 h->origin, h->origin_len, origin, ttls, &in);
	if (!l->trusted) {
		digest_parts(l);  /* what is left of it, beside its thread */
		join_beside(&l->digest);
	}
	int quiet = l->digested == h->digest && !in.odd && names_spelled_otherwise == spelled &&
		    files_quietly(zone, &in, removed);
	if (quiet) {
		struct patch p = {.zone = zone, .nsets = rrsets.n, .sets = sets, .lines = &lines,
				  .first_new = nnames, .first_moved = from};
		p.touched = xcalloc(rrsets.n + in.records.n + 1, 1);
		apply_change(&p, c, &in, removed, nimage);
		/* The names' memos of their cuts as the image keeps them, but where a cut came or
		 * went: all worked out again (and kept so). */
		if (p.cut_changed)
			redirects_again();
		take_named_by(l, zone, &in);
		changed.n = 0;
		for (size_t i = 0; i < p.named.n; i++)
			PUSH(changed, p.named.v[i]);
		for (size_t i = 0; i < p.owners.n; i++)
			PUSH(changed, p.owners.v[i]);
		for (name_t id = nnames; id < names.n; id++)  /* new: the change's, or its names' */
			PUSH(changed, id);
		RESERVE(hashes, names.n - hashes.n);
		for (name_t id = hashes.n; id < names.n; id++)
			hashes.v[hashes.n++] = node_hash(id);
		changed_state = h->state;
		changed_zone = zone;
		rechecking = h->quiet == 1 && h->state != 0;
		VEC_FREE(lost);
		lost.v = p.lost.v;  /* taken over */
		lost.n = p.lost.n;
		lost.cap = p.lost.cap;
		first_new = new_from = nnames;
		cut_made = p.cut_made;
		left_over = h->left_over + nremoved;
		struct head now = {.known = 1, .end = h->head_end, .origin_len = h->origin_len,
				   .ttls = ttls};
		memcpy(now.origin, h->origin, h->origin_len);
		size_t nspans;
		const struct span *spans = part_of(l, P_SPANS, &nspans);
		spans_now(spans, nspans / sizeof *spans, c, &in, &now);
		lines_wanted = 1;
		if (!update_in_place(l, zone, c, &now, p.sets)) {
			write_image(zone, l->text, l->text_len, 1, &now, NULL);
			l->text = NULL;  /* the writer's now */
		}
		lines_wanted = 0;
		VEC_FREE(lines);
		VEC_FREE(now.spans);
		free(p.touched);
		free(p.owners.v);
		free(p.named.v);
	} else {
		drop_arrays(zone, &aside);
	}
	munmap(sets, HUGE_RESERVE);
	free(removed);
	VEC_FREE(in.records);
	VEC_FREE(in.spans);
	return quiet;
}

int image_read_zone(uint32_t zone)
{
	left_over = 0;
	rechecking = 0;
	if (!image_in || zones.n != 1 || zones.v[zone].records || rrsets.n || rrset_pos.n || rdatas.n ||
	    rdata_raw.n || nodes.n || zones.v[zone].types.n)
		return 0;
	struct loaded l = {.fd = -1};
	struct change c;
	int done = check_image(&l, zone);
	size_t old_len, nspans;
	const char *old = done ? part_of(&l, P_TEXT, &old_len) : NULL;
	const struct span *spans = done ? part_of(&l, P_SPANS, &nspans) : NULL;
	done = done && map_text(&l, zone) &&
	       find_change(old, old_len, l.text, l.text_len, spans, nspans / sizeof *spans,
			   l.head->head_end, &c);
	done = done && patch(&l, zone, &c);
	zones.v[zone].over_image = done;
	if (done)  /* a count: progress.py */
		phase_took("changed lines read", 0.0, c.new_end_line - c.first_line, "lines");
	join_beside(&l.digest);
	for (int i = 0; i < NPARTS; i++)
		free(l.chunks[i]);
	if (l.text)
		munmap((void *)l.text, l.text_len);
	if (l.map)
		munmap((void *)l.map, l.map_len);
	if (l.fd >= 0)
		close(l.fd);
	return done;
}

const uint64_t *image_name_hashes(size_t *n)
{
	*n = hashes.n;
	return hashes.n ? hashes.v : NULL;
}

const name_t *image_changed_names(uint64_t state, size_t *n)
{
	static const name_t none[1];  /* a change of no record (the file saved again) names none */
	*n = changed.n;
	if (!state || changed_state != state || zones.v[changed_zone].sign)
		return NULL;
	return changed.v ? changed.v : none;
}

name_t image_new_from(void)
{
	return new_from;
}

int image_recheck(uint32_t zone, struct recheck *r)
{
	if (!rechecking || changed_zone != zone)
		return 0;
	*r = (struct recheck){.names = changed.v, .n = changed.n, .lost = lost.v,
			      .nlost = lost.n, .first_new = first_new, .cut_made = cut_made};
	return 1;
}

void image_beside_state(uint64_t state)
{
	image_written();
	if (!made || !state)
		return;
	int fd = open(made, O_WRONLY);  /* none: its writer failed, and took it away */
	if (fd < 0)
		return;
	uint64_t now[2] = {state, diagnostics_count() == 0};
	_Static_assert(offsetof(struct image_head, quiet) == offsetof(struct image_head, state) + 8,
		       "the state and `quiet` written at once");
	if (put_at(fd, now, sizeof now, offsetof(struct image_head, state)) == 0 && made_stamped)
		stamp(fd);  /* its head alone: the parts as digested */
	close(fd);
}

void image_reset(void)
{
	free(made);
	made = NULL;
	made_stamped = 0;
	VEC_FREE(changed);
	changed_state = 0;
	VEC_FREE(lost);
	rechecking = cut_made = 0;
	new_from = NONE;
	image_written();
	memset(mapped, 0, sizeof mapped);
	if (named_by_map)
		munmap((void *)named_by_map, named_by_len);
	named_by_map = NULL;
	named_by_len = 0;
	VEC_FREE(named_since);
	VEC_FREE(lines);
	VEC_FREE(hashes);
	lines_wanted = 0;
	left_over = ordered = 0;
	image_out = image_in = NULL;
}
