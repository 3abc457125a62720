/*
 * bodies.c - every distinct body once: answers repeat (the same NODATA at most names of a
 * zone), and the layout stores each once, as layout.py does with its dict of Bodies. Each
 * thread of the answers stage fills a table of its own; the tables are merged after.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"

struct body_table bodies;

/* Eight octets at a time: bodies are hashed once each, some hundreds of megabytes of them. */
static uint64_t mix(uint64_t h, const uint8_t *p, size_t n)
{
	uint64_t w;
	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9E3779B97F4A7C15ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, p, n);
	h = (h ^ w ^ n) * 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 32);
}

void body_table_init(struct body_table *t)
{
	memset(t, 0, sizeof *t);
	t->nbuckets = 1 << 16;
	t->buckets = xmalloc(t->nbuckets * sizeof *t->buckets);
	memset(t->buckets, 0xFF, t->nbuckets * sizeof *t->buckets);
	reserve_huge((void **)&t->arena.v, &t->arena.cap);
}

static void relink(struct body_table *t)
{
	memset(t->buckets, 0xFF, t->nbuckets * sizeof *t->buckets);
	for (uint32_t id = 0; id < t->list.n; id++) {
		size_t bucket = t->hashes[id] & (t->nbuckets - 1);
		t->list.v[id].hash_next = t->buckets[bucket];
		t->buckets[bucket] = id;
	}
}

static uint64_t hash_of(const struct body *b, const uint8_t *data, const uint16_t *fixups)
{
	uint16_t fields[5] = {b->base_len, b->data_len, b->nfixups, b->trunc_len,
			      b->trunc_arcount};
	uint64_t h = 0xCBF29CE484222325ull;
	h = mix(h, b->header, 10);
	h = mix(h, (const uint8_t *)fields, sizeof fields);
	h = mix(h, data, b->data_len);
	return mix(h, (const uint8_t *)fixups, 2u * b->nfixups);
}

/* `b`'s id in the table, added if it is new: with a copy of its data and fixups, or when it
 * comes from another table (b.arena set), where it is. */
static uint32_t intern(struct body_table *t, struct body b, uint64_t h, const uint8_t *data,
		       const uint16_t *fixups)
{
	for (uint32_t id = t->buckets[h & (t->nbuckets - 1)]; id != NONE;
	     id = t->list.v[id].hash_next) {
		const struct body *o = &t->list.v[id];
		if (t->hashes[id] == h && memcmp(o->header, b.header, 10) == 0 &&
		    o->base_len == b.base_len && o->data_len == b.data_len &&
		    o->nfixups == b.nfixups && o->trunc_len == b.trunc_len &&
		    o->trunc_arcount == b.trunc_arcount &&
		    memcmp(body_data(o), data, b.data_len) == 0 &&
		    memcmp(body_data(o) + b.data_len, fixups, 2u * b.nfixups) == 0)
			return id;
	}
	if (b.arena == NULL) {  /* new here, not merged from another table */
		b.arena = &t->arena;
		b.data = t->arena.n;
		bytes_put(&t->arena, data, b.data_len);
		bytes_put(&t->arena, fixups, 2u * b.nfixups);
	}
	size_t cap = t->list.cap;
	PUSH(t->list, b);
	if (t->list.cap != cap)
		t->hashes = xrealloc(t->hashes, t->list.cap * sizeof *t->hashes);
	uint32_t id = t->list.n - 1;
	t->hashes[id] = h;
	if (t->list.n > t->nbuckets) {
		t->nbuckets *= 2;
		t->buckets = xrealloc(t->buckets, t->nbuckets * sizeof *t->buckets);
		relink(t);
	} else {
		size_t bucket = h & (t->nbuckets - 1);
		t->list.v[id].hash_next = t->buckets[bucket];
		t->buckets[bucket] = id;
	}
	return id;
}

uint32_t intern_body(struct body_table *t, const uint8_t header[10], uint16_t base_len,
		     const uint8_t *data, uint16_t data_len, const uint16_t *fixups,
		     uint16_t nfixups, uint16_t trunc_len, uint16_t trunc_arcount)
{
	struct body b = {.base_len = base_len, .data_len = data_len, .nfixups = nfixups,
			 .trunc_len = trunc_len, .trunc_arcount = trunc_arcount};
	memcpy(b.header, header, 10);
	return intern(t, b, hash_of(&b, data, fixups), data, fixups);
}

/* Every body of `from` into `into`; map[id in from] = its id in into. */
void merge_bodies(struct body_table *into, const struct body_table *from, uint32_t *map)
{
	for (uint32_t id = 0; id < from->list.n; id++) {
		const struct body *b = &from->list.v[id];
		const uint8_t *data = body_data(b);
		map[id] = intern(into, *b, from->hashes[id], data,
				 (const uint16_t *)(data + b->data_len));
	}
}

void body_table_free(struct body_table *t)
{
	free(t->list.v);
	free(t->hashes);
	free(t->buckets);
}
