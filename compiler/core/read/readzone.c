/*
 * readzone.c - read a zone file: the lexer (zonefile.c) reads its text, and this file interns
 * the names the lexer leaves as text and files the records (zones.c), in file order. For a
 * large file the lexer runs on a thread of its own, a few blocks of records ahead: the two
 * halves take about the same time, and reading was the longest part of the bake with one
 * core. Names get their ids in the order they first appear either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bake.h"
#include "read/lexed.h"

#define LEX_BESIDE_FROM (1 << 20)  /* octets; a smaller file is read before a thread starts */
#define QUEUE_BLOCKS 8
#define AHEAD 8                    /* records whose names are fetched ahead */

struct reader {
	const struct zone *zone;
	uint32_t zone_index;
	name_t origin;
	name_t last;    /* the previous owner, NONE before the first */
	uint32_t line;  /* of the record being filed */
	uint32_t file;  /* the file it comes from: the zone's, or one it includes */
	int depth;      /* of $INCLUDEs: what each changed, to put back after it */
	struct { name_t origin, last; uint32_t file; } before[MAX_INCLUDE_DEPTH];
};

static name_t name_field(const struct reader *r, struct token t)
{
	name_t name;
	if (parse_name(t.p, t.len, r->origin, &name) != 0)
		decline("%s:%u: the name %.*s needs the full reader", r->zone->display, r->line,
			(int)t.len, t.p);
	return name;
}

/* A name of one label below the origin (most owners are): its slot in the names table is
 * fetched ahead, while the records before it are filed. */
static void prefetch_name(const struct reader *r, struct token t)
{
	if (t.len > 0 && t.len <= 63 && t.p[0] != '@' && !memchr(t.p, '.', t.len))
		name_child_prefetch(r->origin, (const uint8_t *)t.p, t.len);
}

/* A record's names interned, in file order: its owner's (when it gives one), then those of
 * its data. */
static struct rdata names_of(struct reader *r, const struct lexed *it)
{
	if (it->owner.p)
		r->last = name_field(r, it->owner);
	struct rdata rd = it->rd;
	if (it->nnames > 0)
		rd.name = name_field(r, it->names[0]);
	if (it->nnames > 1)
		rd.name2 = name_field(r, it->names[1]);
	return rd;
}

static void file_block(struct reader *r, const struct lexed_block *b)
{
	for (size_t i = 0; i < b->n; i++) {
		if (i + AHEAD < b->n) {
			const struct lexed *ahead = &b->v[i + AHEAD];
			if (ahead->owner.p)
				prefetch_name(r, ahead->owner);
			for (size_t k = 0; k < ahead->nnames; k++)
				prefetch_name(r, ahead->names[k]);
		}
		const struct lexed *it = &b->v[i];
		r->line = it->line;
		if (it->kind == LEXED_ORIGIN) {
			r->origin = name_field(r, it->owner);
			continue;
		}
		if (it->kind == LEXED_INCLUDE) {
			r->before[r->depth].origin = r->origin;
			r->before[r->depth].last = r->last;
			r->before[r->depth++].file = r->file;
			if (it->owner.p)
				r->origin = name_field(r, it->owner);
			r->file = add_file(it->display);
			continue;
		}
		if (it->kind == LEXED_INCLUDED) {
			r->depth--;
			r->origin = r->before[r->depth].origin;
			r->last = r->before[r->depth].last;
			r->file = r->before[r->depth].file;
			continue;
		}
		struct rdata rd = names_of(r, it);
		if (it->kind == LEXED_RECORD) {
			size_t before = rdatas.n;
			add_record(r->zone_index, r->last, it->type, it->ttl, rd,
				   (struct pos){r->file, it->line});
			if (rdatas.n > before)
				image_line(before, it->line);
		}
	}
}

/* One thread: each block is filed as soon as the lexer has filled it. */
static void file_here(struct lexer *lx, int last)
{
	(void)last;
	void (*hook)(void *) = before_decline;
	before_decline = NULL;  /* a record declined while filing is declined as it is */
	file_block(lx->queue, lx->block);
	lx->block->n = 0;
	kept_filed(lx, lx->filling + 1);
	before_decline = hook;
}

/* Two threads: the lexer fills the blocks in turn, the reading thread files them. */
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct lexed_block *blocks;
	size_t produced, consumed;  /* blocks; blocks[consumed .. produced) wait to be filed */
	int done;
};

static void hand_over(struct lexer *lx, int last)
{
	struct queue *q = lx->queue;
	pthread_mutex_lock(&q->lock);
	if (lx->block->n > 0)
		q->produced++;
	q->done = last;
	pthread_cond_broadcast(&q->changed);
	if (last) {
		while (q->consumed < q->produced)
			pthread_cond_wait(&q->changed, &q->lock);
	} else {
		while (q->produced - q->consumed == QUEUE_BLOCKS)
			pthread_cond_wait(&q->changed, &q->lock);
		lx->block = &q->blocks[q->produced % QUEUE_BLOCKS];
		lx->block->n = 0;
		kept_filed(lx, q->consumed);
	}
	pthread_mutex_unlock(&q->lock);
}

static void file_queue(struct reader *r, struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (q->consumed == q->produced && !q->done)
			pthread_cond_wait(&q->changed, &q->lock);
		if (q->consumed == q->produced)
			break;
		const struct lexed_block *b = &q->blocks[q->consumed % QUEUE_BLOCKS];
		pthread_mutex_unlock(&q->lock);
		file_block(r, b);
		pthread_mutex_lock(&q->lock);
		q->consumed++;
		pthread_cond_broadcast(&q->changed);
	}
	pthread_mutex_unlock(&q->lock);
}

static void *lex_thread(void *lx)
{
	lex_zone_file(lx);
	return NULL;
}

/* The record data's octets must stay where they are while the other thread compares them
 * (a duplicate record): an array reserved once, which never moves. */
static int raw_stays(void)
{
	if (rdata_raw.cap >= HUGE_RESERVE)
		return 1;
	bytes_t stable = {0};
	reserve_huge((void **)&stable.v, &stable.cap);
	if (stable.cap < HUGE_RESERVE)
		return 0;
	if (rdata_raw.n)
		memcpy(stable.v, rdata_raw.v, rdata_raw.n);
	stable.n = rdata_raw.n;
	free(rdata_raw.v);
	rdata_raw = stable;
	return 1;
}

/* ZONEBAKE_BAKE_THREADS overrides (the tests read small files both ways). */
static int lex_beside(size_t size)
{
	const char *forced = getenv("ZONEBAKE_BAKE_THREADS");
	int wanted = forced ? atol(forced) > 1
		     : size >= LEX_BESIDE_FROM && sysconf(_SC_NPROCESSORS_ONLN) > 1;
	return wanted && raw_stays();
}

/* The file's text. A large one is mapped rather than read: its pages are in the page cache
 * already, and a copy would take as much fresh memory again, which the kernel must clear
 * first (a tenth of the baker's time went to clearing pages). A small one is read into a
 * buffer used again for the next: mapping and unmapping each of a provider's 10,000 small
 * files cost more than reading them. Nothing reads past `len`. */
#define READ_BELOW (64 << 10)

static const char *open_file(const char *path, size_t *len, int *mapped)
{
	static char small[READ_BELOW];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		decline("cannot open %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		decline("%s is not a regular file", path);
	*len = st.st_size;
	*mapped = *len >= READ_BELOW;
	const char *text = small;
	if (*mapped) {
		void *map = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			decline("cannot read %s: %s", path, strerror(errno));
		text = map;
	} else {
		for (size_t done = 0; done < *len;) {
			ssize_t n = read(fd, small + done, *len - done);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				decline("cannot read %s: %s", path, n ? strerror(errno) : "it shrank");
			done += n;
		}
	}
	close(fd);
	/* A name per 100 octets: fewer than hosting zones have (the 1M-name example has one
	 * per 94), so that the table is not made bigger than it will need. */
	names_expect(names.n + *len / 100);
	return text;
}

/* The lexer of the file being read on this thread alone, or NULL: what a decline leaves
 * behind, for a caller that compiles again in the same process (reading_reset). */
static struct lexer *in_progress;

static void release_lexer(struct lexer *lx)
{
	free_kept(lx);
	if (lx->mapped)
		munmap((void *)lx->text, lx->size);
	free(lx);
}

void read_zone_file(uint32_t zone_index)
{
	const struct zone *zone = &zones.v[zone_index];
	struct reader r = {.zone = zone, .zone_index = zone_index, .origin = zone->origin,
			   .last = NONE, .file = zone->file};
	struct lexer *lx = xcalloc(1, sizeof *lx);
	lx->zone = zone;
	int mapped;
	lx->text = open_file(zone->path, &lx->size, &mapped);
	lx->mapped = mapped;
	int beside = 0;
	if (lex_beside(lx->size)) {
		struct queue q = {.lock = PTHREAD_MUTEX_INITIALIZER,
				  .changed = PTHREAD_COND_INITIALIZER};
		q.blocks = xmalloc(QUEUE_BLOCKS * sizeof *q.blocks);
		lx->block = &q.blocks[0];
		lx->block->n = 0;
		lx->deliver = hand_over;
		lx->queue = &q;
		pthread_t lexer;
		beside = pthread_create(&lexer, NULL, lex_thread, lx) == 0;
		if (beside) {
			file_queue(&r, &q);
			pthread_join(lexer, NULL);
		}
		free(q.blocks);
		lx->block = NULL;
	}
	if (!beside) {
		lx->block = xmalloc(sizeof *lx->block);
		lx->block->n = 0;
		lx->deliver = file_here;
		lx->queue = &r;
		in_progress = lx;
		lex_zone_file(lx);
		in_progress = NULL;
		free(lx->block);
	}
	image_keep(zone_index, lx);
	release_lexer(lx);
}

/* ---- a part of a zone file, for a build over its image (image.c) ---- */

struct region_reader {
	struct reader r;
	struct region *out;
};

/* As file_block, but the records kept in a list, not filed. */
static void collect_block(struct region_reader *rr, const struct lexed_block *b)
{
	struct reader *r = &rr->r;
	for (size_t i = 0; i < b->n; i++) {
		const struct lexed *it = &b->v[i];
		r->line = it->line;
		if (it->kind != LEXED_RECORD && it->kind != LEXED_PARTIAL) {
			rr->out->odd = 1;  /* a directive: image.c reads the file whole instead */
			continue;
		}
		struct rdata rd = names_of(r, it);
		if (it->kind == LEXED_RECORD && r->last != NONE)
			PUSH(rr->out->records, ((struct region_record){r->last, it->type, it->ttl,
								      it->line, rd}));
		else if (it->kind == LEXED_RECORD)
			rr->out->odd = 1;
	}
}

static void collect_here(struct lexer *lx, int last)
{
	(void)last;
	void (*hook)(void *) = before_decline;
	before_decline = NULL;
	collect_block(lx->queue, lx->block);
	lx->block->n = 0;
	kept_filed(lx, lx->filling + 1);
	before_decline = hook;
}

void read_zone_region(uint32_t zone_index, const char *text, size_t size, uint32_t first_line,
		      const uint8_t *origin_wire, size_t origin_len, name_t origin,
		      struct ttls ttls, struct region *out)
{
	const struct zone *zone = &zones.v[zone_index];
	struct region_reader rr = {.r = {.zone = zone, .zone_index = zone_index,
					 .origin = origin, .last = NONE, .file = zone->file},
				   .out = out};
	struct lexer *lx = xcalloc(1, sizeof *lx);
	lx->zone = zone;
	lx->text = text;
	lx->size = size;
	memcpy(lx->origin, origin_wire, origin_len);
	lx->origin_len = origin_len;
	lx->ttls = ttls;
	lx->block = xmalloc(sizeof *lx->block);
	lx->block->n = 0;
	lx->deliver = collect_here;
	lx->queue = &rr;
	in_progress = lx;
	lex_region(lx, first_line);
	in_progress = NULL;
	out->odd |= lx->head.late;
	for (size_t i = 0; i < lx->head.spans.n; i++)
		PUSH(out->spans, lx->head.spans.v[i]);
	free(lx->block);
	lx->block = NULL;
	release_lexer(lx);
}

void reading_reset(void)
{
	if (!in_progress)
		return;
	free(in_progress->block);
	release_lexer(in_progress);
	in_progress = NULL;
}
