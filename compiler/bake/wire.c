/*
 * wire.c - compiler/wire.py's serialize() for the baker's answers: the body after the
 * question, written as if the question were for `base` at offset 12, with the same
 * compression choices made in the same order, so that the bytes are the same.
 */
#include <string.h>

#include "bake.h"

#define HEADER_LEN 12
#define QUESTION_TAIL 4
#define MAX_NAME 255
#define MAX_POINTER 0x3FFF
#define MAX_MESSAGE 65535

/* The compression table: where each name (a suffix of something written) was last written,
 * by name id. `gen` stamps the entries of the current body, so nothing is cleared between
 * bodies. */
static uint32_t *where_pos, *where_gen;
static size_t where_cap;
static uint32_t gen;

static struct {
	bytes_t out;           /* the body, from body_start */
	size_t body_start;     /* message offset of out.v[0] */
	size_t limit;          /* no pointer target past this: a shift could push it out of range */
	VEC(uint16_t) pointers;
} w;

static size_t tell(void)
{
	return w.body_start + w.out.n;
}

static void table_add(name_t name, size_t pos)
{
	if (pos <= w.limit) {
		where_pos[name] = pos;
		where_gen[name] = gen;
	}
}

/* An absolute name, ending in a pointer to the longest suffix already written. Names in
 * rdata may not point into the question (it keeps the client's letter case). */
static void write_name(name_t name, int owner)
{
	for (name_t s = name; s != ROOT; s = N(s)->parent) {
		if (where_gen[s] == gen && (owner || where_pos[s] >= w.body_start)) {
			PUSH(w.pointers, (uint16_t)(tell() - w.body_start));
			bytes_u16(&w.out, 0xC000 | where_pos[s]);
			return;
		}
		table_add(s, tell());
		uint8_t len = N(s)->label_len;
		bytes_put(&w.out, &len, 1);
		bytes_put(&w.out, name_label(s), len);
	}
	bytes_put(&w.out, "", 1);
}

static void write_uncompressed(name_t name)
{
	uint8_t wire[256];
	bytes_put(&w.out, wire, name_wire(name, wire));
}

static void write_rdata(uint16_t type, const struct rdata *rd)
{
	const uint8_t *raw = rdata_raw.v + rd->raw;
	switch (type) {
	case T_NS:
	case T_CNAME:
	case T_PTR:
		write_name(rd->name, 0);
		return;
	case T_MX:
		bytes_put(&w.out, raw, 2);
		write_name(rd->name, 0);
		return;
	case T_SOA:
		write_name(rd->name, 0);
		write_name(rd->name2, 0);
		bytes_put(&w.out, raw, 20);
		return;
	case T_SRV:  /* RFC 2782: the target is never compressed */
		bytes_put(&w.out, raw, 6);
		write_uncompressed(rd->name);
		return;
	default:
		bytes_put(&w.out, raw, rd->raw_len);
	}
}

/* One RRset; returns how many records it holds. */
static uint32_t write_entry(const struct entry *e)
{
	const struct rrset *set = &rrsets.v[e->rrset];
	for (uint32_t i = set->first; i != NONE; i = rdatas.v[i].next) {
		if (e->owner == OWNER_QNAME)
			bytes_u16(&w.out, 0xC000 | HEADER_LEN);  /* whatever it is: never shifted */
		else
			write_name(e->owner, 1);
		bytes_u16(&w.out, set->type);
		bytes_u16(&w.out, CLASS_IN);
		bytes_u32(&w.out, e->ttl);
		size_t length_at = w.out.n;
		bytes_u16(&w.out, 0);
		write_rdata(set->type, &rdatas.v[i]);
		size_t rdlen = w.out.n - length_at - 2;
		w.out.v[length_at] = rdlen >> 8;
		w.out.v[length_at + 1] = rdlen & 0xFF;
		if (tell() > 2 * MAX_MESSAGE)
			break;  /* far too long already: refused below */
	}
	return set->count;
}

static uint32_t write_section(const entries_t *section)
{
	uint32_t count = 0;
	for (size_t i = 0; i < section->n; i++)
		count += write_entry(&section->v[i]);
	return count;
}

static void grow_table(void)
{
	if (where_cap >= names.n)
		return;
	size_t old = where_cap;
	where_cap = names.n;
	where_pos = xrealloc(where_pos, where_cap * sizeof *where_pos);
	where_gen = xrealloc(where_gen, where_cap * sizeof *where_gen);
	memset(where_gen + old, 0, (where_cap - old) * sizeof *where_gen);
}

/* The body of a response whose question is for `base`; returns the distinct body's id. */
uint32_t serialize(const struct response *r, name_t base)
{
	grow_table();
	gen++;
	size_t base_len = N(base)->wire_len;
	w.body_start = HEADER_LEN + base_len + QUESTION_TAIL;
	w.limit = MAX_POINTER - (MAX_NAME - base_len);
	w.out.n = 0;
	w.pointers.n = 0;
	size_t offset = HEADER_LEN;  /* every suffix of the question is a target */
	for (name_t s = base; s != ROOT; s = N(s)->parent) {
		table_add(s, offset);
		offset += 1 + N(s)->label_len;
	}
	uint32_t an = write_section(&r->answer);
	uint32_t ns = write_section(&r->authority);
	uint32_t ar = write_section(&r->additional);
	size_t trunc_len = w.out.n;
	uint32_t optional = write_section(&r->optional);
	if (w.body_start + w.out.n > MAX_MESSAGE)
		decline("the response for %s would be over %u octets", name_text(base),
			MAX_MESSAGE);
	uint16_t flags = 0x8000 | (r->aa ? 0x0400 : 0) | (r->rcode & 0xF);
	uint16_t fields[5] = {flags, 1, an, ns, ar + optional};
	uint8_t header[10];
	for (int i = 0; i < 5; i++) {
		header[2 * i] = fields[i] >> 8;
		header[2 * i + 1] = fields[i] & 0xFF;
	}
	return intern_body(header, base_len, w.out.v, w.out.n, w.pointers.v, w.pointers.n,
			   trunc_len, ar);
}
