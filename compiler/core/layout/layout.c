/*
 * layout.c - the blob, written straight to zonedata.bin: nodes in slot
 * order, type entries, pilots, every distinct answer (record, body, fixups), the names. The
 * struct layouts are runtime/zonedata.h's own. Every part's place is known before any is
 * written, so two threads write the parts at once.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bake.h"
#include "zonedata.h"

#define ALIGN 8
/* Each name starts a block of 16 octets and is zero-padded to a whole block: the responder
 * compares names a block at a time (runtime/query/lookup.h). Zeros after the last: the
 * responder copies a short body in blocks of 32 (runtime/query/respond.c), reading up to 31 octets
 * past its end, and the names come after every body. */
#define NAME_ALIGN 16
#define NAMES_TAIL 32

static size_t align(size_t n, size_t to)
{
	return (n + to - 1) & ~(to - 1);
}

/* Nodes after the hash's slots: each holds a node's answers for names below it by type. */
static size_t miss_nodes;

/* The blob goes out through buffers of our own: hundreds of megabytes in small pieces. Two
 * threads write it, each its own part at its own offsets. */
struct out {
	int fd;
	uint64_t at;      /* the file offset of the next octet put */
	const char *path;
	size_t used;
	uint8_t buffer[1 << 22];
};

static void flush(struct out *o)
{
	uint64_t start = o->at - o->used;
	for (size_t done = 0; done < o->used;) {
		ssize_t n = pwrite(o->fd, o->buffer + done, o->used - done, start + done);
		if (n <= 0)
			fail("cannot write %s", o->path);
		done += n;
	}
	o->used = 0;
}

/* Go on writing at `to`, leaving what lies between to the other writer. */
static void jump_to(struct out *o, uint64_t to)
{
	flush(o);
	o->at = to;
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

/* How far ahead the loops over slots and answers fetch what they will read: they visit nodes
 * in slot order, random in memory. */
enum { AHEAD = 16 };

static void prefetch_node(const struct phash *ph, uint32_t slot)
{
	if (slot + AHEAD < ph->nslots && ph->slots[slot + AHEAD] != NONE)
		__builtin_prefetch(&node_answers.v[ph->slots[slot + AHEAD]]);
	if (slot + AHEAD / 2 < ph->nslots && ph->slots[slot + AHEAD / 2] != NONE)
		__builtin_prefetch(&typed.v[node_answers.v[ph->slots[slot + AHEAD / 2]].types]);
}

/* The type entries and the nodes of typed miss answers (after the hash's slots), counted,
 * with DO set too: the twins use as many nodes, in a second run of them. */
static size_t count_types(void)
{
	size_t types = 0;
	miss_nodes = 0;
	for (size_t i = 0; i < node_answers.n; i++) {
		types += node_answers.v[i].ntypes + node_answers.v[i].miss_ntypes;
		miss_nodes += node_answers.v[i].miss_ntypes > 0;
		if (signed_answers.n)
			types += signed_answers.v[i].ntypes + signed_answers.v[i].miss_ntypes;
	}
	return types;
}

/* Nodes in one run: the hash's slots, then the typed miss nodes. */
static uint64_t run_of_nodes(const struct phash *ph)
{
	return (uint64_t)ph->nslots + miss_nodes;
}

/* The answers go out in the order of their ids (bodies.c): made node after node, so a node's
 * answers lie together, and read from their arenas front to back, each arena's octets let go
 * once copied (spill.c). */
static void prefetch_answer(size_t k)
{
	if (k + AHEAD < bodies.list.n)
		__builtin_prefetch(&bodies.list.v[k + AHEAD]);
}

/* The answer record, its body, its fixups, and when it has one, its denial's place. */
static size_t fixups_end(const struct body *b)
{
	return sizeof(struct zb_answer) + b->data_len + b->data_len % 2 + 2u * b->nfixups;
}

static size_t answer_size(const struct body *b)
{
	size_t n = fixups_end(b);
	return b->dynamic_proof ? align(n, 4) + sizeof(struct zb_answer_denial) : n;
}

/* The answers are written in chunks, taken in turn by both writers. */
#define CHUNK 1024  /* small enough that the tests' generated zone has many */

struct answers_job {
	const char *path;
	int fd;
	const uint32_t *answer_at;
	uint64_t start;        /* where the first answer's padding begins */
	size_t next_chunk;     /* atomic */
};

static void write_answers(struct answers_job *job)
{
	struct out *o = xmalloc(sizeof *o);  /* megabytes: not on a thread's stack */
	o->fd = job->fd;
	o->path = job->path;
	o->used = 0;
	size_t n = bodies.list.n, nchunks = (n + CHUNK - 1) / CHUNK;
	for (;;) {
		size_t chunk = __atomic_fetch_add(&job->next_chunk, 1, __ATOMIC_RELAXED);
		if (chunk >= nchunks)
			break;
		size_t k = chunk * CHUNK, end = k + CHUNK < n ? k + CHUNK : n;
		const struct body *before = k ? &bodies.list.v[k - 1] : NULL;
		jump_to(o, k ? job->answer_at[k - 1] + answer_size(before) : job->start);
		for (; k < end; k++) {
			prefetch_answer(k);
			const struct body *b = &bodies.list.v[k];
			pad_to(o, job->answer_at[k]);
			uint32_t body_at = job->answer_at[k] + sizeof(struct zb_answer);
			uint32_t fixups_at = align(body_at + b->data_len, 2);
			struct zb_answer a = {
				.body_len = b->data_len, .base_len = b->base_len,
				.nfixups = b->nfixups, .trunc_len = b->trunc_len,
				.trunc_arcount = b->trunc_arcount, .body_off = body_at,
				.fixups_off = fixups_at, .dname_split = b->dname_split,
				.dname_owner_len = b->dname_owner_len,
				.dname_max_prefix = b->dname_max_prefix,
				.overflow = b->overflow == NONE ? 0 : job->answer_at[b->overflow],
			};
			uint32_t denial_at = align(job->answer_at[k] + fixups_end(b), 4);
			if (b->dynamic_proof)
				a.denial = denial_at;
			memcpy(a.header, b->header, 10);
			put(o, &a, sizeof a);
			put(o, body_data(b), b->data_len);
			pad_to(o, fixups_at);
			put(o, body_data(b) + b->data_len, 2u * b->nfixups);
			if (b->dynamic_proof) {
				struct zb_answer_denial d = {.at = b->proof_at,
							     .skip = {b->proof_skip[0], b->proof_skip[1]},
							     .also = b->proof_also};
				pad_to(o, denial_at);
				put(o, &d, sizeof d);
			}
		}
		/* The chunk's octets are out: let them go (a chunk from two arenas keeps its). */
		const struct body *first = &bodies.list.v[chunk * CHUNK], *last = &bodies.list.v[end - 1];
		if (first->arena == last->arena)
			spill_let_go(arenas[first->arena], first->data, last->data);
	}
	flush(o);
	free(o);
}

static void *answers_thread(void *job)
{
	write_answers(job);
	return NULL;
}

#define OFFSET(body) answer_at[body]

static void put_types(struct out *o, uint32_t first, uint32_t n, const uint32_t *answer_at)
{
	for (uint32_t t = 0; t < n; t++) {
		const struct typed_body *tb = &typed.v[first + t];
		struct zb_type_entry e = {.qtype = tb->qtype, .answer = OFFSET(tb->body)};
		put(o, &e, sizeof e);
	}
}

/* Where every part goes, between plan_layout and write_layout. */
static uint32_t *answer_at;  /* by body id */
static uint64_t types_off, pilots_off, denial_off, answers_off, names_off, names_size;
static uint32_t signed_base;  /* a node's DO twin's index: its own plus this; 0: none */

void plan_layout(const struct phash *ph, const uint32_t *key_off, struct chaos *chaos,
		 size_t nchaos, struct layout_info *info)
{
	size_t type_count = count_types();
	uint64_t runs = signed_answers.n ? 2 : 1;
	signed_base = signed_answers.n ? run_of_nodes(ph) : 0;
	types_off = align(sizeof(struct zb_node) * run_of_nodes(ph) * runs, ALIGN);
	pilots_off = align(types_off + sizeof(struct zb_type_entry) * type_count, ALIGN);
	denial_off = align(pilots_off + 2ull * ph->nbuckets, ALIGN);
	answers_off = align(denial_off + denial_region.n, ALIGN);
	if (answers_off > UINT32_MAX)
		unsupported("the data passes 4 GiB");
	denial_relocate(denial_off);
	uint64_t position = answers_off;
	answer_at = xmalloc((bodies.list.n ? bodies.list.n : 1) * sizeof *answer_at);
	for (size_t k = 0; k < bodies.list.n; k++) {
		prefetch_answer(k);
		position = align(position, 4);
		if (position > UINT32_MAX)
			unsupported("the data passes 4 GiB");
		answer_at[k] = position;
		position += answer_size(&bodies.list.v[k]);
	}
	names_off = align(position, NAME_ALIGN);
	names_size = 0;
	for (size_t i = 0; i < node_answers.n; i++)
		names_size += align(key_off[i + 1] - key_off[i], NAME_ALIGN);
	if (names_off + names_size > UINT32_MAX)
		unsupported("the data passes 4 GiB");

	for (size_t c = 0; c < nchaos; c++)
		chaos[c].offset = OFFSET(chaos[c].body);
	info->size = names_off + names_size + NAMES_TAIL;
	info->types_off = types_off;
	info->pilots_off = pilots_off;
	info->nanswers = bodies.list.n;
	info->signed_nodes = signed_base;
}

static struct out nodes_out, types_out, names_out;

/* One run of nodes in slot order, then their typed miss nodes: the plain ones (base 0), with
 * their names, or the DO twins (base signed_base), with their denials in place of names. */
static void write_nodes(const struct phash *ph, const struct node_answers *answers,
			uint32_t base, const uint32_t *slot_of, uint32_t *type_index,
			const uint8_t *keys, const uint32_t *key_off)
{
	uint32_t name_at = names_off;
	VEC(struct zb_node) extra = {0};
	for (uint32_t slot = 0; slot < ph->nslots; slot++) {
		prefetch_node(ph, slot);
		uint32_t i = ph->slots[slot];
		struct zb_node node = {0};
		if (i != NONE) {
			const struct node_answers *na = &answers[i];
			uint32_t key_len = key_off[i + 1] - key_off[i];
			node = (struct zb_node){
				.name_off = name_at, .types_off = *type_index,
				.default_answer = OFFSET(na->default_body),
				.ntypes = na->ntypes, .name_len = key_len,
			};
			if (base) {
				node.name_off = denial_of_node[i] == NONE ? 0 : denial_off + denial_of_node[i];
				node.name_len = 0;
			}
			put_types(&types_out, na->types, na->ntypes, answer_at);
			*type_index += na->ntypes;
			if (na->miss_ntypes > 0) {
				/* RFC 6672 §3.3: answers by type for names below, in a node of their own. */
				struct zb_node below = {.types_off = *type_index, .ntypes = na->miss_ntypes,
							.default_answer = OFFSET(na->miss_body)};
				put_types(&types_out, na->miss_types, na->miss_ntypes, answer_at);
				*type_index += na->miss_ntypes;
				node.miss = base + ph->nslots + extra.n;
				node.miss_kind = ZB_MISS_NODE;
				PUSH(extra, below);
			} else if (na->miss_body != NONE) {
				node.miss = OFFSET(na->miss_body);
				node.miss_kind = ZB_MISS_ANSWER;
			} else {
				node.miss = base + slot_of[na->miss_wildcard];
				node.miss_kind = ZB_MISS_NODE;
			}
			if (!base) {
				put(&names_out, keys + key_off[i], key_len);
				name_at += align(key_len, NAME_ALIGN);
				pad_to(&names_out, name_at);
			}
		}
		put(&nodes_out, &node, sizeof node);
	}
	for (size_t k = 0; k < extra.n; k++)
		put(&nodes_out, &extra.v[k], sizeof extra.v[k]);
	free(extra.v);
}

void write_layout(const char *path, const struct phash *ph, const uint8_t *keys,
		  const uint32_t *key_off)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fail("cannot create %s", path);
	/* The answers, most of the octets, on a second thread while this one writes the rest,
	 * then on both. */
	struct answers_job job = {.path = path, .fd = fd, .answer_at = answer_at,
				  .start = answers_off};
	pthread_t helper;
	int helped = pthread_create(&helper, NULL, answers_thread, &job) == 0;

	/* Nodes, type entries and names in one pass over the slots, each to its own place. */
	struct out *outs[] = {&nodes_out, &types_out, &names_out};
	uint64_t starts[] = {0, types_off, names_off};
	for (int k = 0; k < 3; k++)
		*outs[k] = (struct out){.fd = fd, .path = path, .at = starts[k]};
	/* A miss answered by a wildcard names the wildcard's slot. */
	uint32_t *slot_of = xmalloc(names.n * sizeof *slot_of);
	for (uint32_t slot = 0; slot < ph->nslots; slot++)
		if (ph->slots[slot] != NONE)
			slot_of[nodes.v[ph->slots[slot]]] = slot;
	uint32_t type_index = 0;
	write_nodes(ph, node_answers.v, 0, slot_of, &type_index, keys, key_off);
	if (signed_answers.n)
		write_nodes(ph, signed_answers.v, signed_base, slot_of, &type_index, keys, key_off);
	pad_to(&nodes_out, types_off);
	pad_to(&types_out, pilots_off);
	put(&types_out, ph->pilots, 2u * ph->nbuckets);
	pad_to(&types_out, denial_off);
	for (size_t done = 0; done < denial_region.n; done += 1 << 20)
		put(&types_out, denial_region.v + done,
		    denial_region.n - done < (1 << 20) ? denial_region.n - done : 1 << 20);
	pad_to(&types_out, answers_off);
	pad_to(&names_out, names_out.at + NAMES_TAIL);
	for (int k = 0; k < 3; k++)
		flush(outs[k]);
	write_answers(&job);
	if (helped)
		pthread_join(helper, NULL);
	if (close(fd) != 0)
		fail("cannot write %s", path);
	if (names_out.at != names_off + names_size + NAMES_TAIL)
		fail("the layout wrote %llu octets, not the %llu planned",
		     (unsigned long long)names_out.at,
		     (unsigned long long)(names_off + names_size + NAMES_TAIL));
	free(answer_at);
	answer_at = NULL;
	free(slot_of);
}
#undef OFFSET
