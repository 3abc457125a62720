/*
 * sharing.c - a region's answers whose octets another answer of the region holds already:
 * their bodies are not written again, the answer's record points into the other's.
 *
 * Much of a region's body octets are another body's over again: the answer to A is the
 * first records of the answer to ANY over TCP, a NODATA's SOA without DO is the start of
 * the same NODATA with DO, an alias's answer holds its target's NSEC3 proof as the target's
 * own does. A body is compared as octets, compression pointers and all: equal octets at the
 * same name are the same records, wherever they are copied from (a body's compression
 * pointers point into the question, or are listed in its own fixups, which stay its own).
 * The responder reads a body at its answer's body_off either way (runtime/zonedata.h).
 *
 * Bodies are taken longest first; each looks for its octets among the runs of whole records
 * of those that keep their own, by a hash of its records' hashes that every run's is worked
 * out from in a step (a polynomial over the records, by prefixes), then compared octet for
 * octet. Of the runs with its octets the first added is taken, so that the same region
 * always shares the same way.
 */
#include <stdlib.h>

#include "bake.h"

/* A body shorter than this keeps its own octets: a few to save. */
#define MIN_SHARED 16
/* The runs of a host looked in: its starts, of up to MAX_PREFIX records (the answer to a
 * type is the start of the answer to ANY over TCP at the name, the answer without DO the
 * start of the one with it), and elsewhere runs of up to MAX_RUN records (a few RRsets
 * with their signatures). */
#define MAX_PREFIX 64
#define MAX_RUN 8
#define MULTIPLIER 0x9E3779B97F4A7C15ull  /* odd: a run's hash is a difference of two */

static int shareable(const struct body *b)
{
	/* A DNAME synthesis's body is finished at query time from the split on: it keeps its
	 * own. An alias's CNAME part is copied whole, as any body. */
	return b->data_len >= MIN_SHARED && (b->dname_split == 0 || body_is_alias(b));
}

/* A record's octets hashed eight at a time (the last word zero-filled). */
static uint64_t record_hash(const uint8_t *d, size_t len)
{
	uint64_t h = len * 0xC2B2AE3D27D4EB4Full, w;
	for (; len >= 8; d += 8, len -= 8) {
		memcpy(&w, d, 8);
		h = (h ^ w) * 0xFF51AFD7ED558CCDull;
		h ^= h >> 32;
	}
	if (len) {
		w = 0;
		memcpy(&w, d, len);
		h = (h ^ w) * 0xFF51AFD7ED558CCDull;
		h ^= h >> 32;
	}
	return h;
}

/* A body's record starts (its end last) into `starts`, at most `max`; how many. A body
 * that does not parse to its end stops at its last whole record. */
static size_t record_starts(const uint8_t *d, size_t len, uint32_t *starts, size_t max)
{
	size_t n = 0, at = 0;
	do {
		starts[n++] = (uint32_t)at;
	} while (n < max && (at = body_record_end(d, len, at)) != 0);
	return n;
}

/* The hash of records [0, i) for each i below n into `prefix`, the records between
 * `starts`; the hash of records [a, b) is then prefix[b] - prefix[a] * MULTIPLIER^(b - a). */
static void prefix_hashes(const uint8_t *d, const uint32_t *starts, size_t n, uint64_t *prefix)
{
	prefix[0] = 0;
	for (size_t i = 1; i < n; i++)
		prefix[i] = prefix[i - 1] * MULTIPLIER +
			    record_hash(d + starts[i - 1], starts[i] - starts[i - 1]);
}

static size_t slot_of(const struct sharing *s, uint64_t key)
{
	return (size_t)((key ^ key >> 29) * 0xBF58476D1CE4E5B9ull >> 32) & (s->cap - 1);
}

static void put_spot(struct sharing *s, struct spot p)
{
	size_t slot = slot_of(s, p.key);
	while (s->spots[slot].k != NONE)
		slot = (slot + 1) & (s->cap - 1);
	s->spots[slot] = p;
	s->used.v[s->used.n++] = (uint32_t)slot;
}

/* A table of `cap` spots (a power of two), all free: a larger one made, or the slots the
 * last region used freed (a region uses few of a table sized for the largest). */
static void clear_spots(struct sharing *s, size_t cap)
{
	if (cap > s->cap) {
		free(s->spots);
		s->spots = xmalloc(cap * sizeof *s->spots);
		s->cap = cap;
		memset(s->spots, 0xFF, s->cap * sizeof *s->spots);
	} else {
		for (size_t i = 0; i < s->used.n; i++)
			s->spots[s->used.v[i]].k = NONE;
	}
	s->used.n = 0;
	RESERVE(s->used, s->cap / 2);
}

static void add_spot(struct sharing *s, struct spot p)
{
	if (2 * (s->used.n + 1) > s->cap) {
		struct spot *old = s->spots;
		size_t old_cap = s->cap;
		s->spots = NULL;
		s->cap = 0;
		clear_spots(s, 2 * old_cap);
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].k != NONE)
				put_spot(s, old[i]);
		free(old);
	}
	put_spot(s, p);
}

/* Body `k`'s runs of whole records (its octets `d`), as places to find another body's. */
static void add_runs(struct sharing *s, uint32_t k, const uint8_t *d, size_t len)
{
	uint32_t starts[MAX_PREFIX + 1];
	uint64_t h[MAX_PREFIX + 1];
	size_t n = record_starts(d, len, starts, sizeof starts / sizeof *starts);
	prefix_hashes(d, starts, n, h);
	for (size_t a = 0; a + 1 < n; a++) {
		uint64_t scale = 1;  /* MULTIPLIER^(b - a) */
		for (size_t b = a + 1; b < n && (a == 0 || b - a <= MAX_RUN); b++) {
			uint32_t run = starts[b] - starts[a];
			scale *= MULTIPLIER;
			if (run >= MIN_SHARED)
				add_spot(s, (struct spot){.key = h[b] - h[a] * scale, .k = k,
							  .off = starts[a], .len = run});
		}
	}
}

/* Whether run `p` was added before run `q` (share_bodies' order: longer hosts first, then
 * by index; a host's runs by offset). */
static int added_before(const uint32_t *ids, const struct spot *p, const struct spot *q)
{
	uint16_t p_len = bodies.list.v[ids[p->k]].data_len;
	uint16_t q_len = bodies.list.v[ids[q->k]].data_len;
	if (p_len != q_len)
		return p_len > q_len;
	return p->k != q->k ? p->k < q->k : p->off < q->off;
}

/* Where `ids[k]`'s octets are among the runs added: its host's index, the offset in the
 * host in *off; NONE where nowhere. Of several runs with them, the first added: the order
 * they lie in the table follows the other runs' hashes (a probe that wrapped round, moved
 * in a larger table, comes first), and a region that holds the same bodies but for a new
 * SOA serial shares the same way as before (reuse.c patches the serial into the copy). */
static uint32_t find_host(const struct sharing *s, const uint32_t *ids, uint32_t k,
			  uint32_t *off)
{
	const struct body *b = &bodies.list.v[ids[k]];
	const uint8_t *octets = body_data(b);
	uint32_t starts[MAX_PREFIX + 1];
	uint64_t h[MAX_PREFIX + 1];
	size_t n = record_starts(octets, b->data_len, starts, sizeof starts / sizeof *starts);
	if (n < 2 || starts[n - 1] != b->data_len)
		return NONE;  /* longer than a run looked up, or not whole records */
	prefix_hashes(octets, starts, n, h);
	uint64_t key = h[n - 1];
	const struct spot *first = NULL;
	for (size_t slot = slot_of(s, key); s->spots[slot].k != NONE;
	     slot = (slot + 1) & (s->cap - 1)) {
		const struct spot *p = &s->spots[slot];
		if (p->key == key && p->len == b->data_len &&
		    (!first || added_before(ids, p, first)) &&
		    memcmp(body_data(&bodies.list.v[ids[p->k]]) + p->off, octets, p->len) == 0)
			first = p;
	}
	if (!first)
		return NONE;
	*off = first->off;
	return first->k;
}

static int longest_first(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void share_bodies(struct sharing *s, const uint32_t *ids, size_t n, uint32_t *host,
		  uint32_t *host_off)
{
	size_t octets = 0;
	s->order.n = 0;
	RESERVE(s->order, n);
	for (size_t k = 0; k < n; k++) {
		const struct body *b = &bodies.list.v[ids[k]];
		host[k] = NONE;
		host_off[k] = 0;
		if (!shareable(b))
			continue;
		octets += b->data_len;
		s->order.v[s->order.n++] = (uint64_t)(UINT16_MAX - b->data_len) << 32 | k;
	}
	if (s->order.n < 2)
		return;
	qsort(s->order.v, s->order.n, sizeof *s->order.v, longest_first);
	/* Records of 64 octets or so, a few runs each, at half load; more grow the table. */
	size_t cap = 64;
	while (cap < octets / 16)
		cap *= 2;
	clear_spots(s, cap);
	for (size_t i = 0; i < s->order.n; i++) {
		uint32_t k = (uint32_t)s->order.v[i];
		if ((host[k] = find_host(s, ids, k, &host_off[k])) == NONE) {
			const struct body *b = &bodies.list.v[ids[k]];
			add_runs(s, k, body_data(b), b->data_len);
		}
	}
}

void sharing_free(struct sharing *s)
{
	free(s->spots);
	VEC_FREE(s->used);
	VEC_FREE(s->order);
	*s = (struct sharing){0};
}
