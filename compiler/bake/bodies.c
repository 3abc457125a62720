/*
 * bodies.c - every distinct body once: answers repeat (the same NODATA at most names of a
 * zone), and the layout stores each once, as layout.py does with its dict of Bodies.
 */
#include <string.h>

#include "bake.h"

__typeof__(bodies) bodies;
bytes_t body_arena;
static uint32_t *table;  /* buckets: first body id, NONE when empty */
static size_t table_size;

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

static void init_table(void)
{
	table_size = 1 << 16;
	table = xmalloc(table_size * sizeof *table);
	memset(table, 0xFF, table_size * sizeof *table);
}

static uint64_t *hashes;  /* per body: its hash */

static void relink(void)
{
	memset(table, 0xFF, table_size * sizeof *table);
	for (uint32_t id = 0; id < bodies.n; id++) {
		size_t bucket = hashes[id] & (table_size - 1);
		bodies.v[id].hash_next = table[bucket];
		table[bucket] = id;
	}
}

uint32_t intern_body(const uint8_t header[10], uint16_t base_len, const uint8_t *data,
		     uint16_t data_len, const uint16_t *fixups, uint16_t nfixups,
		     uint16_t trunc_len, uint16_t trunc_arcount)
{
	uint16_t fields[5] = {base_len, data_len, nfixups, trunc_len, trunc_arcount};
	uint64_t h = 0xCBF29CE484222325ull;
	h = mix(h, header, 10);
	h = mix(h, (const uint8_t *)fields, sizeof fields);
	h = mix(h, data, data_len);
	h = mix(h, (const uint8_t *)fixups, 2u * nfixups);
	if (!table) {
		init_table();
		reserve_huge((void **)&body_arena.v, &body_arena.cap);
	}
	for (uint32_t id = table[h & (table_size - 1)]; id != NONE; id = bodies.v[id].hash_next) {
		const struct body *b = &bodies.v[id];
		if (hashes[id] == h && memcmp(b->header, header, 10) == 0 &&
		    b->base_len == base_len && b->data_len == data_len &&
		    b->nfixups == nfixups && b->trunc_len == trunc_len &&
		    b->trunc_arcount == trunc_arcount &&
		    memcmp(body_arena.v + b->data, data, data_len) == 0 &&
		    memcmp(body_arena.v + b->data + data_len, fixups, 2u * nfixups) == 0)
			return id;
	}
	struct body b = {.base_len = base_len, .data_len = data_len, .nfixups = nfixups,
			 .trunc_len = trunc_len, .trunc_arcount = trunc_arcount,
			 .data = body_arena.n};
	memcpy(b.header, header, 10);
	bytes_put(&body_arena, data, data_len);
	bytes_put(&body_arena, fixups, 2u * nfixups);
	size_t cap = bodies.cap;
	PUSH(bodies, b);
	if (bodies.cap != cap)
		hashes = xrealloc(hashes, bodies.cap * sizeof *hashes);
	uint32_t id = bodies.n - 1;
	hashes[id] = h;
	if (bodies.n > table_size) {
		table_size *= 2;
		table = xrealloc(table, table_size * sizeof *table);
		relink();
	} else {
		size_t bucket = h & (table_size - 1);
		bodies.v[id].hash_next = table[bucket];
		table[bucket] = id;
	}
	return id;
}
