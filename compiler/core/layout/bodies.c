/*
 * bodies.c - every distinct body once: answers repeat (the same NODATA at most names of a
 * zone), and the layout stores each once. Each
 * thread of the answers stage fills a table of its own; the tables are merged after.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"

struct body_table bodies;
const bytes_t *arenas[MAX_ARENAS];
static size_t narenas;

/* Octets of a spilled arena kept mapped past those let go: the bodies just made, which the
 * next ones most often match. */
#define KEPT_MAPPED (8u << 20)

/* One word into a running hash. */
static uint64_t mix_word(uint64_t h, const uint8_t *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	h = (h ^ w) * 0x9E3779B97F4A7C15ull;
	return h ^ h >> 29;
}

/* Bodies are hashed once each, gigabytes of them for a large signed zone: 32 octets at a
 * time in four lanes, whose multiplies do not wait on each other, then eight at a time. */
static uint64_t mix(uint64_t h, const uint8_t *p, size_t n)
{
	uint64_t w;
	if (n >= 32) {
		uint64_t a = h, b = h ^ 0x6A09E667F3BCC908ull, c = h ^ 0xBB67AE8584CAA73Bull,
			 d = h ^ 0x3C6EF372FE94F82Bull;
		for (; n >= 32; p += 32, n -= 32) {
			a = mix_word(a, p);
			b = mix_word(b, p + 8);
			c = mix_word(c, p + 16);
			d = mix_word(d, p + 24);
		}
		h = ((a ^ b * 0xC2B2AE3D27D4EB4Full) ^ c * 0x165667B19E3779F9ull) ^
		    d * 0xD6E8FEB86659FD93ull;
	}
	for (; n >= 8; p += 8, n -= 8)
		h = mix_word(h, p);
	w = 0;
	if (n)  /* p may be NULL then: a body with no fixups */
		memcpy(&w, p, n);
	h = (h ^ w ^ n) * 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 32);
}

static void resize(struct body_table *t, size_t nslots);

void body_table_init(struct body_table *t)
{
	memset(t, 0, sizeof *t);
	resize(t, 1 << 16);
	t->spilled = spill_open(&t->arena);
	/* The tables are made on the main thread, before the threads that fill them start. */
	if (narenas == MAX_ARENAS)
		fail("more than %d tables of bodies", MAX_ARENAS);
	t->arena_index = narenas;
	arenas[narenas++] = &t->arena;
}

/* Open addressing, linear probing, at most half full: a slot holds the body's id and the
 * high half of its hash, so that a lookup reads one cache line of slots and a body only
 * when the tags match. With chains it read a body per link, and the answers stage spent a
 * fifth of its time there, in cache misses. */
static size_t first_slot(const struct body_table *t, uint64_t h)
{
	return h & (t->nslots - 1);
}

static uint32_t tag_of(uint64_t h)
{
	return h >> 32;
}

static void resize(struct body_table *t, size_t nslots)
{
	huge_free(t->slots, t->nslots * sizeof *t->slots);
	t->nslots = nslots;
	t->slots = huge_alloc(t->nslots * sizeof *t->slots);
	memset(t->slots, 0xFF, t->nslots * sizeof *t->slots);
	for (uint32_t id = 0; id < t->list.n; id++) {
		size_t s = first_slot(t, t->hashes[id]);
		while (t->slots[s].id != NONE)
			s = (s + 1) & (t->nslots - 1);
		t->slots[s] = (struct body_slot){tag_of(t->hashes[id]), id};
	}
}

/* Room for `more` bodies beyond those there without a rehash on the way. */
void body_table_expect(struct body_table *t, size_t more)
{
	size_t need = t->nslots;
	while (need < 2 * (t->list.n + more))
		need *= 2;
	if (need != t->nslots)
		resize(t, need);
}

static uint64_t hash_of(const struct body *b, const uint8_t *data, const uint16_t *fixups)
{
	uint32_t fields[12] = {b->base_len, b->data_len, b->nfixups, b->trunc_len,
			       b->trunc_arcount, b->dname_split,
			       b->dname_owner_len << 8 | b->dname_max_prefix, b->overflow,
			       (uint32_t)b->proof_keys << 24 | b->dynamic_proof << 16 | b->proof_at,
			       b->proof_skip[0],
			       b->proof_skip[1], b->proof_also};
	uint64_t h = 0xCBF29CE484222325ull;
	h = mix(h, b->header, 10);
	h = mix(h, (const uint8_t *)fields, sizeof fields);
	h = mix(h, data, b->data_len);
	return mix(h, (const uint8_t *)fixups, body_trailer(b));
}

/* A body's octets, where they are while its table is being written: the arena's buffer or
 * its file (spill.c), or another table's arena. */
static const uint8_t *arena_bytes(const struct body_table *t, const struct body *o)
{
	return t->spilled && o->arena == t->arena_index ? spill_at(t->spilled, &t->arena, o->data)
							 : body_data(o);
}

static int same_octets(const uint8_t *octets, const struct body *b, const uint8_t *data,
		       const uint16_t *fixups)
{
	return memcmp(octets, data, b->data_len) == 0 &&
	       memcmp(octets + b->data_len, fixups, body_trailer(b)) == 0;
}

/* `b`'s id in the table, added if it is new: with a copy of its data and fixups, or when it
 * comes from another table (b.arena set), where it is. */
static uint32_t intern(struct body_table *t, struct body b, uint64_t h, const uint8_t *data,
		       const uint16_t *fixups)
{
	size_t s = first_slot(t, h);
	for (; t->slots[s].id != NONE; s = (s + 1) & (t->nslots - 1)) {
		uint32_t id = t->slots[s].id;
		const struct body *o = &t->list.v[id];
		if (t->slots[s].tag == tag_of(h) && t->hashes[id] == h &&
		    memcmp(o->header, b.header, 10) == 0 &&
		    o->base_len == b.base_len && o->data_len == b.data_len &&
		    o->nfixups == b.nfixups && o->trunc_len == b.trunc_len &&
		    o->trunc_arcount == b.trunc_arcount && o->dname_split == b.dname_split &&
		    o->dname_owner_len == b.dname_owner_len &&
		    o->dname_max_prefix == b.dname_max_prefix && o->overflow == b.overflow &&
		    o->dynamic_proof == b.dynamic_proof && o->proof_keys == b.proof_keys &&
		    o->proof_at == b.proof_at &&
		    o->proof_skip[0] == b.proof_skip[0] && o->proof_skip[1] == b.proof_skip[1] &&
		    o->proof_also == b.proof_also &&
		    same_octets(arena_bytes(t, o), &b, data, fixups))
			return id;
	}
	if (b.arena == NO_ARENA) {  /* new here, not merged from another table */
		if (t->arena.n + b.data_len + body_trailer(&b) > UINT32_MAX)
			unsupported("the answers pass 4 GiB");
		b.arena = t->arena_index;
		b.data = t->arena.n;
		if (t->spilled) {
			spill_room(t->spilled, &t->arena, b.data_len + body_trailer(&b));
			spill_put(t->spilled, &t->arena, data, b.data_len);
			spill_put(t->spilled, &t->arena, fixups, body_trailer(&b));
		} else {
			bytes_put(&t->arena, data, b.data_len);
			bytes_put(&t->arena, fixups, body_trailer(&b));
		}
		if (t->spilled && t->arena.n - t->let_go > 2 * KEPT_MAPPED) {
			/* From the start: pages a match read back are let go again. */
			t->let_go = t->arena.n - KEPT_MAPPED;
			spill_let_go(&t->arena, 0, t->let_go);
		}
	}
	size_t cap = t->list.cap;
	PUSH(t->list, b);
	if (t->list.cap != cap)
		t->hashes = xrealloc(t->hashes, t->list.cap * sizeof *t->hashes);
	uint32_t id = t->list.n - 1;
	t->hashes[id] = h;
	if (2 * t->list.n > t->nslots) {
		resize(t, 2 * t->nslots);
	} else {
		t->slots[s] = (struct body_slot){tag_of(h), id};
	}
	return id;
}

/* Staging: the answers stage serializes all of a node's bodies, staging each, then interns
 * them together. A body's slot is fetched when it is staged, while the next body is being
 * made, instead of stalling the lookup: most bodies are new, and a new one's slot is a cache
 * miss in a table of tens of megabytes. */
uint32_t stage_body(struct body_table *t, const struct body *fields, const uint8_t *data,
		    const uint16_t *fixups)
{
	struct body b = *fields;
	b.arena = NO_ARENA;
	b.data = t->staged_bytes.n;
	/* A body with an overflow is hashed when its overflow's id is known: intern_staged. */
	uint64_t h = b.overflow == NONE ? hash_of(&b, data, fixups) : 0;
	__builtin_prefetch(&t->slots[first_slot(t, h)]);
	bytes_put(&t->staged_bytes, data, b.data_len);
	bytes_put(&t->staged_bytes, fixups, body_trailer(&b));
	PUSH(t->staged, b);
	PUSH(t->staged_hashes, h);
	return t->staged.n - 1;
}

void intern_staged(struct body_table *t, uint32_t *ids)
{
	for (size_t k = 0; k < t->staged.n; k++) {
		const uint8_t *data = t->staged_bytes.v + t->staged.v[k].data;
		struct body b = t->staged.v[k];
		b.data = 0;
		uint64_t h = t->staged_hashes.v[k];
		if (b.overflow != NONE) {
			b.overflow = ids[b.overflow];
			h = hash_of(&b, data, (const uint16_t *)(data + b.data_len));
		}
		ids[k] = intern(t, b, h, data, (const uint16_t *)(data + b.data_len));
	}
	t->staged.n = t->staged_hashes.n = t->staged_bytes.n = 0;
}

uint32_t intern_body(struct body_table *t, const uint8_t header[10], uint16_t base_len,
		     const uint8_t *data, uint16_t data_len, const uint16_t *fixups,
		     uint16_t nfixups, uint16_t trunc_len, uint16_t trunc_arcount)
{
	uint32_t id;
	struct body b = {.base_len = base_len, .data_len = data_len, .nfixups = nfixups,
			 .trunc_len = trunc_len, .trunc_arcount = trunc_arcount, .overflow = NONE};
	memcpy(b.header, header, 10);
	stage_body(t, &b, data, fixups);
	intern_staged(t, &id);
	return id;
}

/* Every body of `from` into `into`; map[id in from] = its id in into. */
void merge_bodies(struct body_table *into, const struct body_table *from, uint32_t *map)
{
	body_table_expect(into, from->list.n);
	enum { AHEAD = 16 };  /* the hashes are known: fetch the slots before they are needed */
	for (uint32_t id = 0; id < from->list.n; id++) {
		if (id + AHEAD < from->list.n)
			__builtin_prefetch(&into->slots[first_slot(into, from->hashes[id + AHEAD])]);
		struct body b = from->list.v[id];
		const uint8_t *data = body_data(&b);
		uint64_t h = from->hashes[id];
		if (b.overflow != NONE) {  /* interned before the body: mapped already */
			b.overflow = map[b.overflow];
			h = hash_of(&b, data, (const uint16_t *)(data + b.data_len));
		}
		map[id] = intern(into, b, h, data, (const uint16_t *)(data + b.data_len));
	}
}

void body_table_unindex(struct body_table *t)
{
	huge_free(t->slots, t->nslots * sizeof *t->slots);
	t->slots = NULL;
	t->nslots = 0;
}

void body_table_done(struct body_table *t)
{
	spill_close(t->spilled, &t->arena);
	t->spilled = NULL;
}

void body_table_seal(struct body_table *t)
{
	body_table_done(t);
	free(t->hashes);
	t->hashes = NULL;
	body_table_unindex(t);
}

void body_table_free(struct body_table *t)
{
	free(t->list.v);
	free(t->hashes);
	huge_free(t->slots, t->nslots * sizeof *t->slots);
	free(t->staged.v);
	free(t->staged_hashes.v);
	free(t->staged_bytes.v);
}

void bodies_reset(void)
{
	body_table_free(&bodies);
	spill_close(bodies.spilled, &bodies.arena);
	for (size_t i = 0; i < narenas; i++)
		bytes_release((bytes_t *)arenas[i]);  /* the other tables' structs stay: a few each */
	memset(&bodies, 0, sizeof bodies);
	narenas = 0;
}
