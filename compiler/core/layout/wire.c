/*
 * wire.c - each answer serialized once: the body after the question, written as if the
 * question were for `base` at offset 12 (RFC 1035 §4.1.4: owner names may point into it),
 * with the positions of the pointers the responder shifts for a longer query name.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"

#define HEADER_LEN 12
#define QUESTION_TAIL 4
#define MAX_NAME 255
#define MAX_POINTER 0x3FFF
#define MAX_MESSAGE 65535

/* The compression table: where each name (a suffix of something written) was last written
 * in the current body, by name id, in a small open-addressed table (a body holds a few names,
 * the set may have millions). `gen` stamps the entries of the current body, so nothing is
 * cleared between bodies. */
struct written {
	name_t name;
	uint32_t pos;
	uint32_t gen;
};

/* One thread's serializer. */
struct wire {
	struct written *table;
	uint32_t table_bits;   /* the table has 1 << table_bits entries */
	uint32_t in_table;     /* entries of the current body */
	uint32_t gen;
	bytes_t out;           /* the body, from body_start */
	size_t body_start;     /* message offset of out.v[0] */
	size_t limit;          /* no pointer target past this: a shift could push it out of range */
	int frozen;            /* no new pointer targets: past a DNAME split they would move */
	int holds_soa;         /* an SOA record, or an RRSIG over one, written (struct body) */
	size_t dname_split;    /* message offset of the split, 0 when none */
	size_t dname_target;   /* message offset of the last DNAME target written */
	size_t cname_target;   /* message offset of the last CNAME target written */
	VEC(uint16_t) pointers;  /* the fixups, then the body's keys (body_trailer) */
	size_t keyed_words;      /* of `pointers`, the keys' */
	size_t oversize;       /* the length of the last message serialize refused */
	/* In an answer whose denial the responder completes: where the NSEC3 RRsets' owners
	 * start, their first label written whole (runtime/zonedata.h, zb_answer_denial.skip). */
	int mark_nsec3;
	uint32_t nsec3_at[MAX_PROVED];
	size_t nnsec3;
};

size_t wire_oversize(const struct wire *w)
{
	return w->oversize;
}

#define TABLE_BITS 10  /* to start with: grown when half full */

struct wire *wire_new(void)
{
	struct wire *w = xcalloc(1, sizeof *w);
	w->table_bits = TABLE_BITS;
	w->table = xcalloc((size_t)1 << TABLE_BITS, sizeof *w->table);
	w->gen = 1;  /* the table's zeros are no body's */
	return w;
}

void wire_free(struct wire *w)
{
	free(w->table);
	free(w->out.v);
	free(w->pointers.v);
	free(w);
}

static size_t tell(const struct wire *w)
{
	return w->body_start + w->out.n;
}

/* The entry of `name` in the current body's table, or the free one where it would go. */
static struct written *table_slot(const struct wire *w, name_t name)
{
	uint32_t mask = (1u << w->table_bits) - 1;
	uint32_t i = (name * 0x9E3779B1u) >> (32 - w->table_bits);
	while (w->table[i].gen == w->gen && w->table[i].name != name)
		i = (i + 1) & mask;
	return &w->table[i];
}

/* Where `name` was last written in the current body, or NULL. */
static const struct written *table_find(const struct wire *w, name_t name)
{
	const struct written *e = table_slot(w, name);
	return e->gen == w->gen ? e : NULL;
}

/* Twice the room, the current body's entries moved over. */
static void table_grow(struct wire *w)
{
	struct written *old = w->table;
	size_t n = (size_t)1 << w->table_bits;
	w->table_bits++;
	w->table = xcalloc(2 * n, sizeof *w->table);
	for (size_t i = 0; i < n; i++)
		if (old[i].gen == w->gen)
			*table_slot(w, old[i].name) = old[i];
	free(old);
}

static void table_add(struct wire *w, name_t name, size_t pos)
{
	if (pos <= w->limit && !w->frozen) {
		struct written *e = table_slot(w, name);
		if (e->gen != w->gen && 2 * ++w->in_table > (1u << w->table_bits)) {
			table_grow(w);
			e = table_slot(w, name);
		}
		*e = (struct written){.name = name, .pos = pos, .gen = w->gen};
	}
}

/* One label of a name, written whole where a later name may point. */
static void write_label(struct wire *w, name_t s)
{
	table_add(w, s, tell(w));
	uint8_t len = N(s)->label_len;
	bytes_put(&w->out, &len, 1);
	bytes_put(&w->out, name_label(s), len);
}

/* An absolute name, ending in a pointer to the longest suffix already written. Names in
 * rdata may not point into the question (it keeps the client's letter case). */
static void write_name(struct wire *w, name_t name, int owner)
{
	for (name_t s = name; s != ROOT; s = N(s)->parent) {
		const struct written *at = table_find(w, s);
		if (at && (owner || at->pos >= w->body_start)) {
			PUSH(w->pointers, (uint16_t)(tell(w) - w->body_start));
			bytes_u16(&w->out, 0xC000 | at->pos);
			return;
		}
		write_label(w, s);
	}
	bytes_put(&w->out, "", 1);
}

/* A name written whole, where it may not end in a pointer (RFC 6672 §2.5, RFC 2782); names
 * written after it may still point into it. */
static void write_uncompressed(struct wire *w, name_t name)
{
	for (name_t s = name; s != ROOT; s = N(s)->parent) {
		write_label(w, s);
	}
	bytes_put(&w->out, "", 1);
}

static void write_rdata(struct wire *w, uint16_t type, const struct rdata *rd)
{
	const uint8_t *raw = rdata_raw.v + rd->raw;
	switch (type) {
	case T_CNAME:
		w->cname_target = tell(w);
		write_name(w, rd->name, 0);
		return;
	case T_NS:
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
	case T_DNAME:  /* RFC 6672 §2.5: nor is a DNAME's */
		w->dname_target = tell(w);
		write_uncompressed(w, rd->name);
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
		if (set->type == T_SOA || (set->type == T_RRSIG && rdatas.v[i].raw_len >= 2 &&
					   (rdata_raw.v[rdatas.v[i].raw] << 8 |
					    rdata_raw.v[rdatas.v[i].raw + 1]) == T_SOA))
			w->holds_soa = 1;  /* RFC 4034 §3.1.1: the type an RRSIG covers comes first */
		if (w->mark_nsec3 && set->type == T_NSEC3 && i == set->first &&
		    w->nnsec3 < MAX_PROVED) {
			/* Its label whole, so that the responder can tell the entry by it. */
			w->nsec3_at[w->nnsec3++] = w->out.n;
			write_label(w, e->owner);
			write_name(w, N(e->owner)->parent, 1);
		} else if (e->owner == OWNER_QNAME) {
			bytes_u16(&w->out, 0xC000 | HEADER_LEN);  /* whatever it is: never shifted */
		} else if (e->owner == OWNER_DNAME_IMAGE) {
			/* The synthesized CNAME's target, as the responder completes it. */
			PUSH(w->pointers, (uint16_t)(tell(w) - w->body_start));
			bytes_u16(&w->out, 0xC000 | w->dname_split);
		} else {
			write_name(w, e->owner, 1);
		}
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

static uint32_t write_entries(struct wire *w, const struct entry *e, size_t n)
{
	uint32_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += write_entry(w, &e[i]);
	return count;
}

static uint32_t write_section(struct wire *w, const entries_t *section)
{
	return write_entries(w, section->v, section->n);
}

/* The CNAME a DNAME synthesizes for the query name (RFC 6672 §3.3): owner the question,
 * target the query name's own labels (the responder inserts them at the split) then a
 * pointer to the DNAME target, which the DNAME record wrote, uncompressed. */
static void write_dname_cname(struct wire *w, const struct rrset *dname)
{
	size_t target_at = w->dname_target;
	bytes_u16(&w->out, 0xC000 | HEADER_LEN);
	bytes_u16(&w->out, T_CNAME);
	bytes_u16(&w->out, CLASS_IN);
	bytes_u32(&w->out, dname->ttl);
	bytes_u16(&w->out, 2);
	w->dname_split = tell(w);
	PUSH(w->pointers, (uint16_t)(w->dname_split - w->body_start));
	bytes_u16(&w->out, 0xC000 | target_at);
	w->frozen = 1;  /* nothing may point past the insertion: it would move */
}

static void start_body(struct wire *w, name_t base)
{
	w->gen++;
	w->in_table = 0;
	size_t base_len = N(base)->wire_len;
	w->body_start = HEADER_LEN + base_len + QUESTION_TAIL;
	w->limit = MAX_POINTER - (MAX_NAME - base_len);
	w->frozen = 0;
	w->holds_soa = 0;
	w->dname_split = 0;
	w->out.n = 0;
	w->pointers.n = 0;
	w->keyed_words = 0;
	size_t offset = HEADER_LEN;  /* every suffix of the question is a target */
	for (name_t s = base; s != ROOT; s = N(s)->parent) {
		table_add(w, s, offset);
		offset += 1 + N(s)->label_len;
	}
}

static void set_header(struct body *b, int rcode, int aa, uint32_t an, uint32_t ns,
		       uint32_t ar)
{
	uint16_t flags = 0x8000 | (aa ? 0x0400 : 0) | (rcode & 0xF);
	uint16_t fields[5] = {flags, 1, an, ns, ar};
	for (int i = 0; i < 5; i++) {
		b->header[2 * i] = fields[i] >> 8;
		b->header[2 * i + 1] = fields[i] & 0xFF;
	}
}

/* The keys' zone and the keys after the fixups (struct body's trailer). */
static void put_keys(struct wire *w, const struct response *r)
{
	size_t words = 2 + KEY_LEN / 2 * (size_t)r->nkeys;
	RESERVE(w->pointers, words);
	uint16_t *at = w->pointers.v + w->pointers.n;
	memcpy(at, &r->key_zone, 4);
	memcpy(at + 2, r->keys, KEY_LEN * (size_t)r->nkeys);
	w->pointers.n += words;
	w->keyed_words = words;
}

/* Stages what is written (see serialize), or refuses it when it is too long. */
static uint32_t stage_written(struct wire *w, struct body_table *t, struct body *b)
{
	if (w->body_start + w->out.n > MAX_MESSAGE) {
		w->oversize = w->body_start + w->out.n;
		return NONE;
	}
	b->data_len = w->out.n;
	b->nfixups = w->pointers.n - w->keyed_words;
	b->holds_soa = w->holds_soa;
	return stage_body(t, b, w->out.v, w->pointers.v);
}

/* The answer when the query name's labels in front of the DNAME target would pass 255
 * octets: YXDOMAIN with the DNAME alone (RFC 6672 §2.2). */
static uint32_t serialize_overflow(struct wire *w, struct body_table *t,
				   const struct response *r, name_t base)
{
	start_body(w, base);
	uint32_t an = write_entries(w, r->answer.v, r->dname_position);
	struct body b = {.base_len = N(base)->wire_len, .trunc_len = w->out.n, .overflow = NONE};
	set_header(&b, RCODE_YXDOMAIN, 1, an, 0, 0);
	return stage_written(w, t, &b);
}

/* The answer section from its `first` RRset on and the sections after it, into the body
 * started; the denial's place and the counts into `b`. */
static void write_rest(struct wire *w, const struct response *r, size_t first, uint32_t an,
		       struct body *b)
{
	if (r->answer.n > first)  /* r->answer.v may be NULL: no pointer arithmetic on it */
		an += write_entries(w, r->answer.v + first, r->answer.n - first);
	w->mark_nsec3 = r->dynamic_proof;
	w->nnsec3 = 0;
	uint32_t ns = write_section(w, &r->authority);
	w->mark_nsec3 = 0;
	if (r->dynamic_proof || r->nkeys) {
		/* The responder puts the query name's denial and the keyed entries here: nothing
		 * after may be pointed to, it would move. */
		b->dynamic_proof = r->dynamic_proof;
		b->proof_keys = r->nkeys;
		b->proof_at = w->out.n;
		for (size_t i = 0; r->dynamic_proof && i < 2 && i < r->nproved; i++)
			b->proof_skip[i] = w->nnsec3 ? (i < w->nnsec3 ? w->nsec3_at[i] + 1 : 0)
				: r->nkeys ? 0 : r->proved[i] + 1;  /* NSEC3, NSEC3 keyed, NSEC */
		b->proof_also = r->dynamic_proof ? r->proof_also : 0;
		w->frozen = 1;
	}
	uint32_t ar = write_section(w, &r->additional);
	b->trunc_len = w->out.n;
	b->trunc_arcount = ar;
	uint32_t optional = write_section(w, &r->optional);
	set_header(b, r->rcode, r->aa, an, ns, ar + optional);
}

/* The body of a response whose question is for `base`: stages it, and returns its index
 * among the staged, or NONE when it does not fit a DNS message (wire_oversize says how long
 * it would be). A DNAME synthesis stages its overflow answer first. */
uint32_t serialize(struct wire *w, struct body_table *t, const struct response *r, name_t base)
{
	struct body b = {.base_len = N(base)->wire_len, .overflow = NONE};
	if (r->dname_rrset != NONE) {
		b.overflow = serialize_overflow(w, t, r, base);
		if (b.overflow == NONE)
			return NONE;
	}
	start_body(w, base);
	uint32_t an = 0;
	size_t first = 0;
	if (r->dname_rrset != NONE) {
		const struct rrset *dname = &rrsets.v[r->dname_rrset];
		an = write_entries(w, r->answer.v, r->dname_position) + 1;
		write_dname_cname(w, dname);
		first = r->dname_position;
		b.dname_split = w->dname_split - w->body_start;
		b.dname_owner_len = N(dname->owner)->wire_len;
		b.dname_max_prefix = MAX_NAME - N(rdatas.v[dname->first].name)->wire_len;
	}
	write_rest(w, r, first, an, &b);
	if (r->nkeys)
		put_keys(w, r);
	return stage_written(w, t, &b);
}

size_t serialized_length(struct wire *w, const struct response *r, name_t base)
{
	struct body b = {0};
	start_body(w, base);
	write_rest(w, r, 0, 0, &b);
	return w->out.n;
}

uint32_t serialize_alias(struct wire *w, struct body_table *t, const struct response *r,
			 size_t n, name_t base, name_t target, size_t behind)
{
	start_body(w, base);
	w->cname_target = 0;
	uint32_t an = write_entries(w, r->answer.v, n);
	size_t at = w->cname_target - w->body_start;
	uint32_t len = N(target)->wire_len;
	if (!w->cname_target || at + len > w->out.n ||
	    (w->out.v[at - 2] << 8 | w->out.v[at - 1]) != len)
		return NONE;  /* the target ends in a pointer: nothing stands for its question */
	if (HEADER_LEN + MAX_NAME + QUESTION_TAIL + w->out.n + behind > MAX_POINTER)
		return NONE;  /* the target's pointers, moved behind it, could pass 14 bits */
	struct body b = {.base_len = N(base)->wire_len, .overflow = NONE, .trunc_len = w->out.n,
			 .dname_split = w->out.n};
	b.alias_target = target;
	b.alias_at = at;
	b.alias_run = r->dnssec;
	set_header(&b, r->rcode, r->aa, an, 0, 0);
	w->pointers.n = 0;  /* an alias's answer is a name's own: never shifted */
	return stage_written(w, t, &b);
}
