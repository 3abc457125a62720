/*
 * layout.c - compiler/layout.py's pack(), written straight to zonedata.bin: nodes in slot
 * order, type entries, pilots, every distinct answer (record, body, fixups), the names. The
 * struct layouts are runtime/zonedata.h's own.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bake.h"
#include "zonedata.h"

#define ALIGN 8

static size_t align(size_t n, size_t to)
{
	return (n + to - 1) & ~(to - 1);
}

static VEC(uint32_t) numbered;  /* body ids in answer-number order */
/* Body id -> its number, NONE until numbered: apart from the bodies, which are much larger,
 * so that the random lookups by slot order stay in cache. */
static uint32_t *number;

static uint32_t number_of(uint32_t body)
{
	if (number[body] == NONE) {
		number[body] = numbered.n;
		PUSH(numbered, body);
	}
	return number[body];
}

/* The blob goes out through a buffer of our own: hundreds of megabytes in small pieces. */
struct out {
	int fd;
	uint64_t at;
	const char *path;
	size_t used;
	uint8_t buffer[1 << 22];
};

static void flush(struct out *o)
{
	for (size_t done = 0; done < o->used;) {
		ssize_t n = write(o->fd, o->buffer + done, o->used - done);
		if (n <= 0)
			fail("cannot write %s", o->path);
		done += n;
	}
	o->used = 0;
}

static void put(struct out *o, const void *p, size_t n)
{
	if (o->used + n > sizeof o->buffer)
		flush(o);
	if (n > sizeof o->buffer)
		fail("a piece too large to write");
	memcpy(o->buffer + o->used, p, n);
	o->used += n;
	o->at += n;
}

static void pad_to(struct out *o, uint64_t to)
{
	static const uint8_t zeros[64];
	while (o->at < to)
		put(o, zeros, to - o->at < sizeof zeros ? to - o->at : sizeof zeros);
}

void write_layout(const char *path, const struct phash *ph, const uint8_t *keys,
		  const uint32_t *key_off, struct chaos *chaos, size_t nchaos,
		  struct layout_info *info)
{
	/* Number the answers as the layout meets them: by slot; a node's types, miss, default. */
	number = xmalloc((bodies.list.n ? bodies.list.n : 1) * sizeof *number);
	memset(number, 0xFF, (bodies.list.n ? bodies.list.n : 1) * sizeof *number);
	size_t type_count = 0;
	for (uint32_t slot = 0; slot < ph->nslots; slot++) {
		uint32_t i = ph->slots[slot];
		if (i == NONE)
			continue;
		const struct node_answers *na = &node_answers.v[i];
		for (uint32_t t = 0; t < na->ntypes; t++)
			number_of(typed.v[na->types + t].body);
		if (na->miss_body != NONE)
			number_of(na->miss_body);
		number_of(na->default_body);
		type_count += na->ntypes;
	}
	for (size_t c = 0; c < nchaos; c++)
		number_of(chaos[c].body);

	uint64_t types_off = align(sizeof(struct zb_node) * (uint64_t)ph->nslots, ALIGN);
	uint64_t pilots_off = align(types_off + sizeof(struct zb_type_entry) * type_count, ALIGN);
	uint64_t position = align(pilots_off + 2ull * ph->nbuckets, ALIGN);
	uint32_t *answer_at = xmalloc((numbered.n ? numbered.n : 1) * sizeof *answer_at);
	for (size_t k = 0; k < numbered.n; k++) {
		const struct body *b = &bodies.list.v[numbered.v[k]];
		position = align(position, 4);
		if (position > UINT32_MAX)
			decline("the data passes 4 GiB");
		answer_at[k] = position;
		position += sizeof(struct zb_answer) + b->data_len + b->data_len % 2 + 2u * b->nfixups;
	}
	uint64_t names_off = position;
	if (names_off + key_off[node_answers.n] > UINT32_MAX)
		decline("the data passes 4 GiB");
#define OFFSET(body) answer_at[number[body]]

	static struct out o;
	o.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	o.path = path;
	if (o.fd < 0)
		fail("cannot create %s", path);
	/* A miss answered by a wildcard names the wildcard's slot. */
	uint32_t *slot_of = xmalloc(names.n * sizeof *slot_of);
	for (uint32_t slot = 0; slot < ph->nslots; slot++)
		if (ph->slots[slot] != NONE)
			slot_of[nodes.v[ph->slots[slot]]] = slot;
	uint32_t name_at = names_off, type_index = 0;
	for (uint32_t slot = 0; slot < ph->nslots; slot++) {
		uint32_t i = ph->slots[slot];
		struct zb_node node = {0};
		if (i != NONE) {
			const struct node_answers *na = &node_answers.v[i];
			uint32_t key_len = key_off[i + 1] - key_off[i];
			node = (struct zb_node){
				.name_off = name_at, .types_off = type_index,
				.default_answer = OFFSET(na->default_body),
				.ntypes = na->ntypes, .name_len = key_len,
			};
			if (na->miss_body != NONE) {
				node.miss = OFFSET(na->miss_body);
				node.miss_kind = ZB_MISS_ANSWER;
			} else {
				node.miss = slot_of[na->miss_wildcard];
				node.miss_kind = ZB_MISS_WILDCARD;
			}
			name_at += key_len;
			type_index += na->ntypes;
		}
		put(&o, &node, sizeof node);
	}
	pad_to(&o, types_off);
	for (uint32_t slot = 0; slot < ph->nslots; slot++) {
		uint32_t i = ph->slots[slot];
		if (i == NONE)
			continue;
		const struct node_answers *na = &node_answers.v[i];
		for (uint32_t t = 0; t < na->ntypes; t++) {
			const struct typed_body *tb = &typed.v[na->types + t];
			struct zb_type_entry e = {.qtype = tb->qtype, .answer = OFFSET(tb->body)};
			put(&o, &e, sizeof e);
		}
	}
	pad_to(&o, pilots_off);
	put(&o, ph->pilots, 2u * ph->nbuckets);
	for (size_t k = 0; k < numbered.n; k++) {
		const struct body *b = &bodies.list.v[numbered.v[k]];
		pad_to(&o, answer_at[k]);
		uint32_t body_at = answer_at[k] + sizeof(struct zb_answer);
		uint32_t fixups_at = align(body_at + b->data_len, 2);
		struct zb_answer a = {
			.body_len = b->data_len, .base_len = b->base_len, .nfixups = b->nfixups,
			.trunc_len = b->trunc_len, .trunc_arcount = b->trunc_arcount,
			.body_off = body_at, .fixups_off = fixups_at,
		};
		memcpy(a.header, b->header, 10);
		put(&o, &a, sizeof a);
		put(&o, body_data(b), b->data_len);
		pad_to(&o, fixups_at);
		put(&o, body_data(b) + b->data_len, 2u * b->nfixups);
	}
	pad_to(&o, names_off);
	for (uint32_t slot = 0; slot < ph->nslots; slot++) {
		uint32_t i = ph->slots[slot];
		if (i != NONE)
			put(&o, keys + key_off[i], key_off[i + 1] - key_off[i]);
	}
	pad_to(&o, o.at + 8);  /* the responder reads names a word at a time */
	flush(&o);
	if (close(o.fd) != 0)
		fail("cannot write %s", path);
	for (size_t c = 0; c < nchaos; c++)
		chaos[c].offset = OFFSET(chaos[c].body);
	info->size = o.at;
	info->types_off = types_off;
	info->pilots_off = pilots_off;
	info->nanswers = numbered.n;
	free(answer_at);
	free(slot_of);
#undef OFFSET
}
