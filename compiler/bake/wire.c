/*
 * wire.c - compiler/wire.py's serialize() for the baker's answers: the body after the
 * question, written as if the question were for `base` at offset 12, with the same
 * compression choices made in the same order, so that the bytes are the same.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"

#define HEADER_LEN 12
#define QUESTION_TAIL 4
#define MAX_NAME 255
#define MAX_POINTER 0x3FFF
#define MAX_MESSAGE 65535

/* One thread's serializer. The compression table says where each name (a suffix of
 * something written) was last written, by name id; `gen` stamps the entries of the current
 * body, so nothing is cleared between bodies. */
struct wire {
	uint32_t *pos, *stamp;
	uint32_t gen;
	bytes_t out;           /* the body, from body_start */
	size_t body_start;     /* message offset of out.v[0] */
	size_t limit;          /* no pointer target past this: a shift could push it out of range */
	VEC(uint16_t) pointers;
	size_t oversize;       /* the length of the last message serialize refused */
};

size_t wire_oversize(const struct wire *w)
{
	return w->oversize;
}

struct wire *wire_new(void)
{
	struct wire *w = xcalloc(1, sizeof *w);
	w->pos = xmalloc(names.n * sizeof *w->pos);
	w->stamp = xcalloc(names.n, sizeof *w->stamp);
	return w;
}

void wire_free(struct wire *w)
{
	free(w->pos);
	free(w->stamp);
	free(w->out.v);
	free(w->pointers.v);
	free(w);
}

static size_t tell(const struct wire *w)
{
	return w->body_start + w->out.n;
}

static void table_add(struct wire *w, name_t name, size_t pos)
{
	if (pos <= w->limit) {
		w->pos[name] = pos;
		w->stamp[name] = w->gen;
	}
}

/* An absolute name, ending in a pointer to the longest suffix already written. Names in
 * rdata may not point into the question (it keeps the client's letter case). */
static void write_name(struct wire *w, name_t name, int owner)
{
	for (name_t s = name; s != ROOT; s = N(s)->parent) {
		if (w->stamp[s] == w->gen && (owner || w->pos[s] >= w->body_start)) {
			PUSH(w->pointers, (uint16_t)(tell(w) - w->body_start));
			bytes_u16(&w->out, 0xC000 | w->pos[s]);
			return;
		}
		table_add(w, s, tell(w));
		uint8_t len = N(s)->label_len;
		bytes_put(&w->out, &len, 1);
		bytes_put(&w->out, name_label(s), len);
	}
	bytes_put(&w->out, "", 1);
}

static void write_uncompressed(struct wire *w, name_t name)
{
	uint8_t wire[256];
	bytes_put(&w->out, wire, name_wire(name, wire));
}

static void write_rdata(struct wire *w, uint16_t type, const struct rdata *rd)
{
	const uint8_t *raw = rdata_raw.v + rd->raw;
	switch (type) {
	case T_NS:
	case T_CNAME:
	case T_PTR:
		write_name(w, rd->name, 0);
		return;
	case T_MX:
		bytes_put(&w->out, raw, 2);
		write_name(w, rd->name, 0);
		return;
	case T_SOA:
		write_name(w, rd->name, 0);
		write_name(w, rd->name2, 0);
		bytes_put(&w->out, raw, 20);
		return;
	case T_SRV:  /* RFC 2782: the target is never compressed */
		bytes_put(&w->out, raw, 6);
		write_uncompressed(w, rd->name);
		return;
	default:
		bytes_put(&w->out, raw, rd->raw_len);
	}
}

/* One RRset; returns how many records it holds. */
static uint32_t write_entry(struct wire *w, const struct entry *e)
{
	const struct rrset *set = &rrsets.v[e->rrset];
	for (uint32_t i = set->first; i != NONE; i = rdatas.v[i].next) {
		if (e->owner == OWNER_QNAME)
			bytes_u16(&w->out, 0xC000 | HEADER_LEN);  /* whatever it is: never shifted */
		else
			write_name(w, e->owner, 1);
		bytes_u16(&w->out, set->type);
		bytes_u16(&w->out, CLASS_IN);
		bytes_u32(&w->out, e->ttl);
		size_t length_at = w->out.n;
		bytes_u16(&w->out, 0);
		write_rdata(w, set->type, &rdatas.v[i]);
		size_t rdlen = w->out.n - length_at - 2;
		w->out.v[length_at] = rdlen >> 8;
		w->out.v[length_at + 1] = rdlen & 0xFF;
		if (tell(w) > 2 * MAX_MESSAGE)
			break;  /* far too long already: refused below */
	}
	return set->count;
}

static uint32_t write_section(struct wire *w, const entries_t *section)
{
	uint32_t count = 0;
	for (size_t i = 0; i < section->n; i++)
		count += write_entry(w, &section->v[i]);
	return count;
}

/* The body of a response whose question is for `base`: stages it, and returns its index
 * among the staged, or NONE when it does not fit a DNS message (wire_oversize says how long
 * it would be). */
uint32_t serialize(struct wire *w, struct body_table *t, const struct response *r, name_t base)
{
	w->gen++;
	size_t base_len = N(base)->wire_len;
	w->body_start = HEADER_LEN + base_len + QUESTION_TAIL;
	w->limit = MAX_POINTER - (MAX_NAME - base_len);
	w->out.n = 0;
	w->pointers.n = 0;
	size_t offset = HEADER_LEN;  /* every suffix of the question is a target */
	for (name_t s = base; s != ROOT; s = N(s)->parent) {
		table_add(w, s, offset);
		offset += 1 + N(s)->label_len;
	}
	uint32_t an = write_section(w, &r->answer);
	uint32_t ns = write_section(w, &r->authority);
	uint32_t ar = write_section(w, &r->additional);
	size_t trunc_len = w->out.n;
	uint32_t optional = write_section(w, &r->optional);
	if (w->body_start + w->out.n > MAX_MESSAGE) {
		w->oversize = w->body_start + w->out.n;
		return NONE;
	}
	uint16_t flags = 0x8000 | (r->aa ? 0x0400 : 0) | (r->rcode & 0xF);
	uint16_t fields[5] = {flags, 1, an, ns, ar + optional};
	uint8_t header[10];
	for (int i = 0; i < 5; i++) {
		header[2 * i] = fields[i] >> 8;
		header[2 * i + 1] = fields[i] & 0xFF;
	}
	return stage_body(t, header, base_len, w->out.v, w->out.n, w->pointers.v,
			   w->pointers.n, trunc_len, ar);
}
