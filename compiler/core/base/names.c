/*
 * names.c - every name the zone set mentions, interned: one id per name (ignoring ASCII case),
 * with its parent's id, so that walking up a name, comparing two names or finding a suffix in
 * the compression table is an integer operation.
 *
 * Each name is kept in one spelling, the first the zone set gives it: a name written in two
 * letter cases (an owner `Mail` and an MX target `mail`) is served as it was first written,
 * everywhere. Names compare without regard to case (RFC 4343 §3), so answers mean the same;
 * and one spelling keeps name compression whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "hash.h"

__typeof__(names) names;
static bytes_t labels;       /* first labels, as spelled */
/* Open addressing, linear probing, at most half full. A slot holds the high half of the
 * name's hash beside its id, so that a probe reads a name only when the tags match: with
 * chains, reading the zone files spent a third of its time on the names of each chain. */
static struct name_slot { uint32_t tag, id; } *table;  /* id NONE when empty */
static size_t table_size;    /* a power of two */
size_t names_spelled_otherwise;

static inline uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static uint64_t hash_of(name_t parent, const uint8_t *label, size_t len)
{
	uint64_t h = 0x9E3779B97F4A7C15ull * (parent + 1);
	for (size_t i = 0; i < len; i++)
		h = (h ^ lower(label[i])) * 0x100000001B3ull;
	return h ^ (h >> 29);
}

static void place(uint64_t h, name_t id)
{
	size_t s = h & (table_size - 1);
	while (table[s].id != NONE)
		s = (s + 1) & (table_size - 1);
	table[s] = (struct name_slot){h >> 32, id};
}

static void rehash(size_t size)
{
	huge_free(table, table_size * sizeof *table);
	table = huge_alloc(size * sizeof *table);
	memset(table, 0xFF, size * sizeof *table);
	table_size = size;
	for (name_t id = 1; id < names.n; id++) {
		struct name *n = N(id);
		place(hash_of(n->parent, labels.v + n->label, n->label_len), id);
	}
}

void names_init(void)
{
	struct name root = {.parent = NONE, .wire_len = 1, .zone = NONE, .rrsets = NONE,
			    .redirect = NONE, .wildcard = NONE};
	PUSH(names, root);
	rehash(1 << 16);
}

/* Room for about `count` names from the start: growing the table as the zone files are read
 * took a twentieth of the reading. */
void names_expect(size_t count)
{
	size_t size = table_size;
	while (size < 2 * count)
		size *= 2;
	if (size > table_size)
		rehash(size);
}

void names_seal(void)
{
	huge_free(table, table_size * sizeof *table);
	table = NULL;
	table_size = 0;
}

const uint8_t *name_label(name_t id)
{
	return labels.v + N(id)->label;
}

static int same_ignoring_case(const uint8_t *a, const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (lower(a[i]) != lower(b[i]))
			return 0;
	return 1;
}

/* Fetch ahead the slot where name_child(parent, label, len) will look first: for a name not
 * seen before it is the only memory the lookup reads. */
void name_child_prefetch(name_t parent, const uint8_t *label, size_t len)
{
	__builtin_prefetch(&table[hash_of(parent, label, len) & (table_size - 1)]);
}

/* The name `label`.`parent`; the caller has checked the label and the name's length. */
name_t name_child(name_t parent, const uint8_t *label, size_t len)
{
	uint64_t h = hash_of(parent, label, len);
	size_t s = h & (table_size - 1);
	for (; table[s].id != NONE; s = (s + 1) & (table_size - 1)) {
		if (table[s].tag != (uint32_t)(h >> 32))
			continue;
		name_t id = table[s].id;
		struct name *n = N(id);
		if (n->parent != parent || n->label_len != len)
			continue;
		const uint8_t *known = labels.v + n->label;
		if (!same_ignoring_case(known, label, len))
			continue;
		if (memcmp(known, label, len) != 0)
			names_spelled_otherwise++;
		if (n->flags & NAME_GONE)  /* no record names it since a build over an image */
			*n = (struct name){.parent = parent, .label = n->label, .label_len = len,
					   .nlabels = n->nlabels, .wire_len = n->wire_len,
					   .zone = N(parent)->zone, .rrsets = NONE, .redirect = NONE,
					   .wildcard = NONE};
		return id;
	}
	struct name *p = N(parent);
	struct name n = {
		.parent = parent, .label = labels.n, .label_len = len, .nlabels = p->nlabels + 1,
		.wire_len = p->wire_len + 1 + len,
		.zone = p->zone, .rrsets = NONE, .redirect = NONE, .wildcard = NONE,
	};
	bytes_put(&labels, label, len);
	PUSH(names, n);
	name_t id = names.n - 1;
	if (2 * names.n > table_size)
		rehash(table_size * 2);
	else
		table[s] = (struct name_slot){h >> 32, id};
	return id;
}

/* A name in uncompressed wire form, checked already: its labels interned from the root down,
 * as the zone files' names are. */
name_t name_from_wire(const uint8_t *wire)
{
	size_t starts[128], n = 0;
	for (size_t at = 0; wire[at] != 0; at += 1 + wire[at])
		starts[n++] = at;
	name_t name = ROOT;
	while (n-- > 0)
		name = name_child(name, wire + starts[n] + 1, wire[starts[n]]);
	return name;
}

int name_is_wildcard(name_t id)
{
	return N(id)->label_len == 1 && labels.v[N(id)->label] == '*';
}

int name_is_below_or_at(name_t name, name_t above)
{
	uint8_t depth = N(above)->nlabels;
	while (N(name)->nlabels > depth)
		name = N(name)->parent;
	return name == above;
}

static size_t write_wire(const struct name *v, const uint8_t *octets, name_t id, uint8_t *out,
			 int lowered)
{
	size_t at = 0;
	for (; id != ROOT; id = v[id].parent) {
		const struct name *n = &v[id];
		out[at++] = n->label_len;
		for (size_t i = 0; i < n->label_len; i++)
			out[at++] = lowered ? lower(octets[n->label + i]) : octets[n->label + i];
	}
	out[at++] = 0;
	return at;
}

size_t name_key(name_t id, uint8_t *out)
{
	return write_wire(names.v, labels.v, id, out, 1);
}

size_t name_wire(name_t id, uint8_t *out)
{
	return write_wire(names.v, labels.v, id, out, 0);
}

uint64_t name_key_hash(const struct name *v, const uint8_t *label_octets, name_t id)
{
	uint8_t key[256];
	return zb_hash(key, write_wire(v, label_octets, id, key, 1), 0);
}

uint64_t node_hash(name_t id)
{
	return name_key_hash(names.v, labels.v, id);
}

/* dnspython's text form: special characters escaped with a backslash, others outside
 * printable ASCII as \DDD (RFC 1035 §5.1). Four buffers in turn, so that a message can
 * hold four names. */
const char *name_text(name_t id)
{
	static _Thread_local char texts[4][1024];  /* the chain checks run beside (main.c) */
	static _Thread_local unsigned turn;
	char *text = texts[turn++ % 4];
	size_t at = 0;
	if (id == ROOT)
		return ".";
	for (; id != ROOT; id = N(id)->parent) {
		const struct name *n = N(id);
		for (size_t i = 0; i < n->label_len; i++) {
			uint8_t c = labels.v[n->label + i];
			if (strchr("\"().;\\@$", c) && c)
				at += snprintf(text + at, 3, "\\%c", c);
			else if (c > 0x20 && c < 0x7F)
				text[at++] = c;
			else
				at += snprintf(text + at, 5, "\\%03u", c);
		}
		text[at++] = '.';
	}
	text[at] = 0;
	return text;
}

void names_image_parts(const uint8_t **label_octets, size_t *nlabels, const void **slots,
		       size_t *slot_bytes)
{
	*label_octets = labels.v;
	*nlabels = labels.n;
	*slots = table;
	*slot_bytes = table_size * sizeof *table;
}

int names_adopt(struct name *v, size_t n, size_t cap, uint8_t *label_octets, size_t nlabels,
		size_t labels_cap, void *slots, size_t slot_bytes)
{
	if (slot_bytes % sizeof *table || (slot_bytes / sizeof *table) & (slot_bytes / sizeof *table - 1))
		return 0;
	names_reset();
	names.v = v;
	names.n = n;
	names.cap = cap;
	labels.v = label_octets;
	labels.n = nlabels;
	labels.cap = labels_cap;
	table = slots;
	table_size = slot_bytes / sizeof *table;
	return 1;
}

void names_set_aside(struct names_aside *a)
{
	a->names = names.v, a->n = names.n, a->cap = names.cap;
	a->labels = labels;
	a->table = table, a->table_size = table_size;
	a->spelled_otherwise = names_spelled_otherwise;
	memset(&names, 0, sizeof names);
	memset(&labels, 0, sizeof labels);
	table = NULL;
	table_size = 0;
}

void names_put_back(struct names_aside *a)
{
	names_reset();
	names.v = a->names, names.n = a->n, names.cap = a->cap;
	labels = a->labels;
	table = a->table, table_size = a->table_size;
	names_spelled_otherwise = a->spelled_otherwise;
	memset(a, 0, sizeof *a);
}

void names_reset(void)
{
	VEC_FREE(names);
	bytes_release(&labels);
	huge_free(table, table_size * sizeof *table);
	table = NULL;
	table_size = 0;
	names_spelled_otherwise = 0;
}
