/*
 * layout.c - the blob, written straight to zonedata.bin, laid out so that a change of the
 * zone moves little of it (a binary delta of one change stays small):
 *
 *   zeros | the denial region | the CH answers | the groups' table | one region per group
 *
 * A group of the perfect hash (phash.c) has a region of its own: its pilots, its nodes in
 * slot order (each with its DO twin right after it when a zone is signed), its nodes of
 * answers for names below a node, their type entries, every answer they use (each distinct
 * one once in the group), and their names. Inside a region every offset is counted from
 * where it is written (a node's from the node, a type entry's from the entry, an answer's
 * from the answer): a region reads the same wherever it lies, so a change in one group
 * moves the regions after it without changing an octet of them, and only the table's
 * offsets change. Each region starts a page (REGION_ALIGN): one that grows or shrinks
 * within its last page moves none, and a rebuild finds most where the earlier server has
 * them. The struct layouts are runtime/zonedata.h's own.
 */
#define _GNU_SOURCE  /* copy_file_range */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bake.h"
#include "zonedata.h"

_Static_assert(MAX_KEYS == ZB_MAX_KEYS, "the keys an answer names: as many as the responder takes");
_Static_assert(KEY_LEN == sizeof(struct zb_entry_key), "an answer's key: the responder's");

#define ALIGN 8
/* Each name starts a block of 16 octets and is zero-padded to a whole block: the responder
 * compares names a block at a time (runtime/query/lookup.h), with aligned loads, so a region
 * starts on a boundary at least that wide, and a cache line's. Zeros after the last: the
 * responder copies a short body in blocks of 32 (runtime/query/respond.c), reading up to 31
 * octets past its end. */
#define NAME_ALIGN 16
/* A page of 4096 octets, whatever the machine's: a region that grows within the room its
 * last page has left moves no region after it, so that a rebuild keeps the earlier
 * server's octets where they lie (write_layout's `kept`) and a binary delta stays small.
 * Its cost, half a page a region on average: 5.8 MB, 2.3%, at a million names. */
#define REGION_ALIGN 4096
#define HEAD sizeof(struct zb_head)  /* first: no denial and no answer is at offset 0 */
#define TAIL 32

static uint64_t align(uint64_t n, uint64_t to)
{
	return (n + to - 1) & ~(to - 1);
}

/* The blob goes out through a shared mapping of zonedata.bin, made its full size at once
 * (a sparse file: what is never written reads as zeros, so padding is only a step forward).
 * Two threads write its regions at once: through write(2) they would take the file's lock
 * in turn for every buffer, and spin on it, where each writes its own pages of a mapping.
 * Where the file system cannot map a file to write it (some network and shared-folder
 * ones), the blob is laid out in memory and written whole after; ZONEBAKE_LAYOUT_IN_MEMORY
 * takes that way anywhere (the tests). */
struct out {
	uint8_t *map;
	uint64_t at;      /* the blob's offset of the next octet put */
	uint64_t base;    /* the blob's place in the file */
	uint64_t size;
	const char *path;
	int in_memory;    /* `map` is anonymous memory, not the file's pages */
	int fd;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (n > o->size - o->at)
		fail("%s: the layout passes the planned %llu octets", o->path,
		     (unsigned long long)o->size);
	if (n)
		memcpy(o->map + o->at, p, n);
	o->at += n;
}

static void pad_to(struct out *o, uint64_t to)
{
	if (to > o->size)
		fail("%s: the layout passes the planned %llu octets", o->path,
		     (unsigned long long)o->size);
	if (to > o->at)
		o->at = to;
}

static int has_denial(const struct body *b)
{
	return b->dynamic_proof || b->proof_keys;
}

/* The answer record, its body unless another answer's holds it (`hosted`, sharing.c), its
 * fixups, and when it has one, its denial's place. */
static size_t fixups_end(const struct body *b, int hosted)
{
	size_t octets = hosted ? 0 : b->data_len + b->data_len % 2;
	return sizeof(struct zb_answer) + octets + 2u * b->nfixups;
}

static size_t answer_size(const struct body *b, int hosted)
{
	size_t n = fixups_end(b, hosted);
	if (body_is_alias(b))
		return align(n, 4) + sizeof(struct zb_answer_alias);
	return has_denial(b) ? align(n, 4) + sizeof(struct zb_answer_denial) +
		(size_t)KEY_LEN * b->proof_keys : n;
}

static uint64_t denial_off, chaos_off, groups_off, regions_off, total;
static uint64_t numbers_off, chaos_table_off;  /* the head's tables (zonedata.h, zb_head) */
static uint32_t nanswers;
static uint32_t *region_at;       /* per group: file offset of its region (below 4 GiB: checked) */
static uint32_t *region_size, *region_answers;  /* ...its size, the answers it holds */
static struct chaos *chaos_answers;
static size_t nchaos_answers;

/* ---- one group's region ---- */

/* Its nodes' offset in it: after its pilots, which end right before them (zb_candidate). */
static uint32_t region_nodes_at(const struct phash_group *pg)
{
	return align(2u * pg->nbuckets, 4);
}


/* What a node of the region holds: its answers by type, its default, and for names below
 * it either an answer or a node of answers by type (a wildcard's, copied into the region,
 * or a DNAME synthesis's, RFC 6672 §3.3). */
struct node_plan {
	uint32_t types, ntypes;       /* in `typed` */
	uint32_t default_body;
	uint32_t miss_body;           /* NONE: `miss_node` answers */
	uint32_t miss_node;           /* index among the region's nodes */
	uint32_t types_at;            /* region offset of its first type entry */
};

/* The answers a region holds, by body id: a small open-addressing table of its own, emptied
 * for each region (a region holds about a thousand), so that threads lay regions out side
 * by side without a table the size of all the answers each. */
struct placed {
	uint32_t *id;  /* NONE: free */
	uint32_t *at;
	size_t cap, n;
};

static size_t placed_slot(const struct placed *p, uint32_t id)
{
	size_t s = (id * 0x9E3779B1u) & (p->cap - 1);
	while (p->id[s] != NONE && p->id[s] != id)
		s = (s + 1) & (p->cap - 1);
	return s;
}

static void placed_grow(struct placed *p)
{
	struct placed old = *p;
	p->cap = old.cap ? 2 * old.cap : 1024;
	p->id = xmalloc(p->cap * sizeof *p->id);
	p->at = xmalloc(p->cap * sizeof *p->at);
	memset(p->id, 0xFF, p->cap * sizeof *p->id);
	for (size_t k = 0; k < old.cap; k++)
		if (old.id[k] != NONE) {
			size_t s = placed_slot(p, old.id[k]);
			p->id[s] = old.id[k];
			p->at[s] = old.at[k];
		}
	free(old.id);
	free(old.at);
}

/* 1 when `id` is new to the region. */
static int placed_add(struct placed *p, uint32_t id)
{
	if (2 * (p->n + 1) > p->cap)
		placed_grow(p);
	size_t s = placed_slot(p, id);
	if (p->id[s] == id)
		return 0;
	p->id[s] = id;
	p->n++;
	return 1;
}

static uint32_t *placed_at(const struct placed *p, uint32_t id)
{
	return &p->at[placed_slot(p, id)];
}

static void placed_clear(struct placed *p)
{
	if (p->n)
		memset(p->id, 0xFF, p->cap * sizeof *p->id);
	p->n = 0;
}

/* A region, planned: its nodes (slot nodes then nodes of answers below, each plain and, in
 * a signed set, its twin), its answers and where each part starts. */
struct region {
	uint32_t nslots, nbuckets, nmiss;
	VEC(struct node_plan) nodes;   /* (nslots + nmiss) * runs, a node's twin after it */
	VEC(uint32_t) slot_key;        /* per slot: key index or NONE */
	VEC(uint32_t) missing;         /* the keys that have a node of answers below */
	VEC(uint32_t) bodies;          /* in the order written */
	struct placed placed;          /* each of `bodies`: its offset in the region */
	/* Each of `bodies`: the index among them of the one that holds its octets, from
	 * host_off on, or NONE (sharing.c). */
	VEC(uint32_t) host, host_off;
	struct sharing sharing;
	uint32_t nodes_at, types_at, answers_at, names_at, size;
};

static uint32_t runs;             /* 2 when a zone is signed: every node has a DO twin */
static const struct phash *hash;
static const uint32_t *name_off_of;  /* key_off */
static uint32_t denial_base;
static uint32_t *node_of_name;    /* a wildcard is known by its name (node_answers) */

/* The bodies that have an overflow answer (a DNAME's), a bit each: few do, and reading each
 * body's record to find out was a cache miss per answer. */
static uint64_t *overflows;

static void use_body(struct region *r, uint32_t body)
{
	while (body != NONE && placed_add(&r->placed, body)) {
		PUSH(r->bodies, body);
		if (!(overflows[body / 64] >> (body % 64) & 1))
			break;
		body = bodies.list.v[body].overflow;  /* in the region too */
	}
}

static void use_types(struct region *r, uint32_t first, uint32_t n)
{
	for (uint32_t t = 0; t < n; t++)
		use_body(r, typed.v[first + t].body);
}

/* A node's plan from its answers (plain or with DO); its miss node, when it needs one, is
 * numbered `miss_node` (the caller fills it in with miss_plan). */
static struct node_plan node_plan(const struct node_answers *na, uint32_t miss_node)
{
	struct node_plan p = {.types = na->types, .ntypes = na->ntypes,
			      .default_body = na->default_body, .miss_body = NONE,
			      .miss_node = NONE};
	if (na->miss_ntypes == 0 && na->miss_body != NONE)
		p.miss_body = na->miss_body;
	else
		p.miss_node = miss_node;
	return p;
}

/* The node of answers for names below a node: by type (a DNAME's), or a copy of the
 * wildcard's own answers by type. */
static struct node_plan miss_plan(const struct node_answers *all, const struct node_answers *na)
{
	if (na->miss_ntypes > 0)
		return (struct node_plan){.types = na->miss_types, .ntypes = na->miss_ntypes,
					  .default_body = na->miss_body, .miss_body = NONE,
					  .miss_node = NONE};
	const struct node_answers *w = &all[node_of_name[na->miss_wildcard]];
	return (struct node_plan){.types = w->types, .ntypes = w->ntypes,
				  .default_body = w->default_body, .miss_body = NONE,
				  .miss_node = NONE};
}

static int needs_miss_node(const struct node_answers *na)
{
	return na->miss_ntypes > 0 || na->miss_body == NONE;
}

static const struct node_answers *answers_of(uint32_t run)
{
	return run ? signed_answers.v : node_answers.v;
}

/* A region's answers are where their nodes' were made, scattered over the arenas: fetched a
 * few ahead, the record and then its octets, so that the cache misses overlap. */
enum { AHEAD = 16 };

static void prefetch_body(const struct region *r, size_t k)
{
	if (k + AHEAD < r->bodies.n)
		__builtin_prefetch(&bodies.list.v[r->bodies.v[k + AHEAD]]);
	if (k + AHEAD / 2 < r->bodies.n) {
		const uint8_t *data = body_data(&bodies.list.v[r->bodies.v[k + AHEAD / 2]]);
		__builtin_prefetch(data);
		__builtin_prefetch(data + 64);
	}
}

/* Per group, while planned and not yet written: what sharing.c found for its answers, in
 * r->bodies' order, each's host then its offset in it, so that the writing takes the
 * planning's finding rather than reading every body's octets again. */
static uint32_t **shared_of;

static void share_region(struct region *r, uint32_t g)
{
	r->host.n = r->host_off.n = 0;
	RESERVE(r->host, r->bodies.n);
	RESERVE(r->host_off, r->bodies.n);
	uint32_t *saved = shared_of[g];
	if (saved) {  /* the writing: the planning found these */
		for (size_t k = 0; k < r->bodies.n; k++) {
			r->host.v[k] = saved[2 * k];
			r->host_off.v[k] = saved[2 * k + 1];
		}
		free(saved);
		shared_of[g] = NULL;
		return;
	}
	share_bodies(&r->sharing, r->bodies.v, r->bodies.n, r->host.v, r->host_off.v);
	saved = shared_of[g] = xmalloc(2 * (r->bodies.n ? r->bodies.n : 1) * sizeof *saved);
	for (size_t k = 0; k < r->bodies.n; k++) {
		saved[2 * k] = r->host.v[k];
		saved[2 * k + 1] = r->host_off.v[k];
	}
}

static void plan_region(struct region *r, uint32_t g)
{
	const struct phash_group *pg = &hash->groups[g];
	r->nslots = pg->nslots;
	r->nbuckets = pg->nbuckets;
	r->nodes.n = r->slot_key.n = r->bodies.n = r->missing.n = 0;
	r->nmiss = 0;
	placed_clear(&r->placed);  /* each distinct answer once in the region */
	/* Slot nodes first, then their miss nodes, numbered in slot order. */
	for (uint32_t s = 0; s < pg->nslots; s++) {
		uint32_t i = hash->slots[pg->first_slot + s];
		if (s + AHEAD < pg->nslots && hash->slots[pg->first_slot + s + AHEAD] != NONE)
			for (uint32_t run = 0; run < runs; run++)
				__builtin_prefetch(&answers_of(run)[hash->slots[pg->first_slot + s + AHEAD]]);
		PUSH(r->slot_key, i);
		int needs = 0;
		for (uint32_t run = 0; run < runs && i != NONE; run++)
			needs |= needs_miss_node(&answers_of(run)[i]);
		uint32_t miss_node = needs ? pg->nslots + r->nmiss++ : NONE;
		if (needs)
			PUSH(r->missing, i);
		for (uint32_t run = 0; run < runs; run++) {
			struct node_plan p = {.miss_body = NONE, .miss_node = NONE,
					      .default_body = NONE};
			if (i != NONE)
				p = node_plan(&answers_of(run)[i], miss_node);
			PUSH(r->nodes, p);
		}
	}
	for (size_t m = 0; m < r->missing.n; m++)
		for (uint32_t run = 0; run < runs; run++) {
			const struct node_answers *na = &answers_of(run)[r->missing.v[m]];
			struct node_plan p = {.miss_body = NONE, .miss_node = NONE,
					      .default_body = NONE};
			if (needs_miss_node(na))
				p = miss_plan(answers_of(run), na);
			PUSH(r->nodes, p);
		}
	/* Offsets: pilots, nodes, type entries, answers, names. */
	r->nodes_at = region_nodes_at(pg);
	uint64_t at = align(r->nodes_at + (uint64_t)sizeof(struct zb_node) * r->nodes.n, ALIGN);
	r->types_at = at;
	for (size_t k = 0; k < r->nodes.n; k++) {
		struct node_plan *p = &r->nodes.v[k];
		if (k + AHEAD < r->nodes.n && r->nodes.v[k + AHEAD].ntypes)
			__builtin_prefetch(&typed.v[r->nodes.v[k + AHEAD].types]);
		if (k + AHEAD / 2 < r->nodes.n && r->nodes.v[k + AHEAD / 2].default_body != NONE)
			__builtin_prefetch(&bodies.list.v[r->nodes.v[k + AHEAD / 2].default_body]);
		p->types_at = at;
		at += (uint64_t)sizeof(struct zb_type_entry) * p->ntypes;
		if (p->default_body != NONE)
			use_body(r, p->default_body);
		use_types(r, p->types, p->ntypes);
		use_body(r, p->miss_body);
	}
	share_region(r, g);
	r->answers_at = at;
	for (size_t k = 0; k < r->bodies.n; k++) {
		if (k + AHEAD < r->bodies.n)
			__builtin_prefetch(&bodies.list.v[r->bodies.v[k + AHEAD]]);
		at = align(at, 4);
		*placed_at(&r->placed, r->bodies.v[k]) = at;
		at += answer_size(&bodies.list.v[r->bodies.v[k]], r->host.v[k] != NONE);
	}
	at = align(at, NAME_ALIGN);
	r->names_at = at;
	for (uint32_t s = 0; s < r->nslots; s++) {
		uint32_t i = r->slot_key.v[s];
		if (i != NONE)
			at += align(name_off_of[i + 1] - name_off_of[i], NAME_ALIGN);
	}
	if (at > UINT32_MAX)
		unsupported("a group of the perfect hash passes 4 GiB");
	r->size = at;
}

static void region_free(struct region *r)
{
	free(r->nodes.v);
	free(r->slot_key.v);
	free(r->missing.v);
	free(r->bodies.v);
	free(r->placed.id);
	free(r->placed.at);
	free(r->host.v);
	free(r->host_off.v);
	sharing_free(&r->sharing);
}

/* An answer at region offset `at` (the region starting at file offset `base`), its body at
 * region offset `body_at`: right after its record, or in another answer's body, written
 * already or to be (sharing.c); its overflow answer, if it has one, at `overflow_at`. */
static void put_answer(struct out *o, uint64_t base, uint32_t id, uint32_t at,
		       uint32_t body_at, uint32_t overflow_at)
{
	const struct body *b = &bodies.list.v[id];
	int hosted = body_at != at + sizeof(struct zb_answer);
	uint32_t fixups_at = align(at + sizeof(struct zb_answer) + (hosted ? 0 : b->data_len), 2);
	uint32_t denial_at = align(at + fixups_end(b, hosted), 4);
	pad_to(o, base + at);
	struct zb_answer a = {
		.body_len = b->data_len, .base_len = b->base_len, .nfixups = b->nfixups,
		.trunc_len = b->trunc_len, .trunc_arcount = b->trunc_arcount,
		.body_off = (int32_t)(body_at - at), .fixups_off = fixups_at - at,
		.dname_split = b->dname_split, .dname_owner_len = b->dname_owner_len,
		.dname_max_prefix = b->dname_max_prefix,
		.overflow = b->overflow == NONE ? 0 : (int32_t)(overflow_at - at),
		.denial = has_denial(b) ? denial_at - at : 0,
	};
	if (body_is_alias(b))
		a.overflow = (int32_t)(denial_at - at);  /* its struct zb_answer_alias */
	memcpy(a.header, b->header, 10);
	put(o, &a, sizeof a);
	if (!hosted)
		put(o, body_data(b), b->data_len);
	pad_to(o, base + fixups_at);
	put(o, body_data(b) + b->data_len, 2u * b->nfixups);
	if (body_is_alias(b)) {
		uint32_t key = node_of_name[b->alias_target], group, slot;
		if (key == NONE)
			fail("an alias's target %s has no node", name_text(b->alias_target));
		phash_key_place(hash, key, &group, &slot);
		struct zb_answer_alias alias = {
			.group = group, .target_at = b->alias_at,
			.node = (slot * runs + b->alias_run) * sizeof(struct zb_node)};
		pad_to(o, base + denial_at);
		put(o, &alias, sizeof alias);
	}
	if (has_denial(b)) {
		const uint8_t *trailer = body_data(b) + b->data_len + 2u * b->nfixups;
		uint32_t zone;
		memcpy(&zone, trailer, 4);
		struct zb_answer_denial d = {.at = b->proof_at, .nkeys = b->proof_keys,
					     .by_name = b->dynamic_proof,
					     .skip = {b->proof_skip[0], b->proof_skip[1]},
					     .also = b->proof_also ? denial_base +
						     denial_entry_at(b->proof_also - 1) : 0,
					     .chain = b->proof_keys ? denial_base +
						     denial_chain_at(zone) : 0};
		pad_to(o, base + denial_at);
		put(o, &d, sizeof d);
		put(o, trailer + 4, (size_t)KEY_LEN * b->proof_keys);
	}
}

static void write_region(struct out *o, uint32_t g, const struct region *r, const uint8_t *keys)
{
	uint64_t base = region_at[g];
	const uint32_t node_size = sizeof(struct zb_node);
	pad_to(o, base + r->nodes_at - 2u * r->nbuckets);
	put(o, hash->pilots + hash->groups[g].first_bucket, 2u * r->nbuckets);
	pad_to(o, base + r->nodes_at);
	uint32_t name_at = r->names_at;
	for (uint32_t k = 0; k < r->nodes.n; k++) {
		const struct node_plan *p = &r->nodes.v[k];
		uint32_t at = r->nodes_at + k * node_size, run = k % runs, index = k / runs;
		struct zb_node node = {0};
		if (p->default_body != NONE) {
			node.types_off = p->types_at - at;
			node.ntypes = p->ntypes;
			node.default_answer = *placed_at(&r->placed, p->default_body) - at;
			if (p->miss_body != NONE) {
				node.miss = *placed_at(&r->placed, p->miss_body) - at;
				node.miss_kind = ZB_MISS_ANSWER;
			} else if (p->miss_node != NONE) {
				node.miss = r->nodes_at + (p->miss_node * runs + run) * node_size - at;
				node.miss_kind = ZB_MISS_NODE;
			}
		}
		uint32_t i = index < r->nslots ? r->slot_key.v[index] : NONE;
		if (i != NONE && run == 0) {
			node.name_len = name_off_of[i + 1] - name_off_of[i];
			node.name_off = name_at - at;
			name_at += align(node.name_len, NAME_ALIGN);
		} else if (i != NONE) {  /* a DO twin: in place of a name, its denial */
			node.name_off = denial_of_node[i] == NONE ? 0 : denial_base + denial_of_node[i];
		}
		put(o, &node, sizeof node);
	}
	pad_to(o, base + r->types_at);
	for (uint32_t k = 0; k < r->nodes.n; k++) {
		const struct node_plan *p = &r->nodes.v[k];
		for (uint32_t t = 0; t < p->ntypes; t++) {
			const struct typed_body *tb = &typed.v[p->types + t];
			uint32_t at = p->types_at + t * sizeof(struct zb_type_entry);
			struct zb_type_entry e = {.qtype = tb->qtype,
						  .answer = *placed_at(&r->placed, tb->body) - at};
			put(o, &e, sizeof e);
		}
	}
	for (size_t k = 0; k < r->bodies.n; k++) {
		prefetch_body(r, k);
		uint32_t id = r->bodies.v[k], overflow = bodies.list.v[id].overflow;
		uint32_t at = *placed_at(&r->placed, id), body_at = at + sizeof(struct zb_answer);
		if (r->host.v[k] != NONE)
			body_at = *placed_at(&r->placed, r->bodies.v[r->host.v[k]]) +
				  sizeof(struct zb_answer) + r->host_off.v[k];
		put_answer(o, base, id, at, body_at,
			   overflow == NONE ? 0 : *placed_at(&r->placed, overflow));
		reuse_site(g, at, &bodies.list.v[id]);
	}
	pad_to(o, base + r->names_at);
	for (uint32_t s = 0; s < r->nslots; s++) {
		uint32_t i = r->slot_key.v[s];
		if (i == NONE)
			continue;
		put(o, keys + name_off_of[i], name_off_of[i + 1] - name_off_of[i]);
		pad_to(o, align(o->at, NAME_ALIGN));
	}
	if (o->at != base + r->size)
		fail("a region of %llu octets, not the %u planned",
		     (unsigned long long)(o->at - base), r->size);
}

/* The earlier build's regions into the file by the kernel, page cache to page cache (no
 * page of either file faulted in here): each run of groups reused whose regions lie one
 * after the other as they did (the gaps between them, zeros, with them) in one call, on a
 * thread of its own while the passes write the other regions: two threads copying into one
 * file would each wait for its lock in turn. */
struct copier {
	const struct out *out;  /* the file written: its descriptor, where the blob lies */
	uint8_t *copied;        /* per group: the kernel wrote its region */
};

static int copies_any(void)
{
	int fd;
	int64_t at;
	for (uint32_t g = 0; g < hash->ngroups; g++)
		if (reused_file(g, &fd, &at))
			return 1;
	return 0;
}

static void *copy_runs(void *arg)
{
	struct copier *c = arg;
	for (uint32_t g = 0, end; g < hash->ngroups; g = end) {
		int fd;
		int64_t earlier, next;
		end = g + 1;
		if (c->copied[g] || !reused_file(g, &fd, &earlier))
			continue;  /* there already (keep_in_place), or written by the passes */
		uint64_t len = region_size[g];
		for (; end < hash->ngroups && !c->copied[end] && reused_file(end, &fd, &next) &&
		       (uint64_t)(next - earlier) == region_at[end] - region_at[g]; end++)
			len = region_at[end] - region_at[g] + region_size[end];
		loff_t at = earlier, to = c->out->base + region_at[g];
		while (len) {
			ssize_t n = copy_file_range(fd, &at, c->out->fd, &to, len, 0);
			if (n <= 0)
				return NULL;  /* what is left goes through the mapping */
			len -= n;
		}
		memset(c->copied + g, 1, end - g);
	}
	return NULL;
}

/* Where the blob's first `kept` octets are the earlier build's data as it lay (cc.py copied
 * it there while the build began): each reused region that lies where it lay stays, marked
 * in `copied`; all else there is made zeros again, as in a new file, before anything is
 * written: the head and tables, the regions written or moved, the gaps beside them, the
 * tail. A gap between two regions that stay is the earlier's, zeros. */
#define SMALL_ZEROS (1 << 20)  /* written as zeros through the mapping (the head and tables,
				* a region or two); past it, a hole punched in the file */
static void zeros_again(struct out *o, uint64_t from, uint64_t to)
{
	if (from < to && (to - from < SMALL_ZEROS ||
			  fallocate(o->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				    (off_t)(o->base + from), (off_t)(to - from)) != 0))
		memset(o->map + from, 0, to - from);
}

/* The same but for the denial region's octets, which write_layout writes over at once:
 * in place, the pages the earlier build's held (the prefill's copy) take them, where a hole
 * punched first would have the kernel find new ones (200 MiB at a million names signed). */
static void zeros_but_denial(struct out *o, uint64_t from, uint64_t to)
{
	uint64_t denial_end = denial_off + denial_region.n;
	if (denial_end <= from || denial_off >= to) {
		zeros_again(o, from, to);
		return;
	}
	zeros_again(o, from, denial_off);
	zeros_again(o, denial_end, to);
}

static void keep_in_place(struct out *o, uint64_t kept, uint8_t *copied)
{
	uint64_t from = 0;  /* where the octets to clear begin */
	uint32_t staying = 0;
	for (uint32_t g = 0; g < hash->ngroups; g++) {
		int fd;
		int64_t earlier;
		if (!reused_file(g, &fd, &earlier) || (uint64_t)earlier != o->base + region_at[g] ||
		    region_at[g] + region_size[g] > kept)
			continue;
		if (g == 0 || !copied[g - 1])
			zeros_but_denial(o, from, region_at[g]);
		copied[g] = 1;
		staying++;
		from = region_at[g] + region_size[g];
	}
	zeros_but_denial(o, from, kept);
	phase_took("regions in place", 0, staying, "regions");  /* a count: progress.py */
}

/* The reused regions the kernel did not write (another file system, an error), through
 * the mapping; then in each, what changed around it (reuse.c). On two threads, each half of
 * the groups: a new serial is written into thousands of pages, each written first here. */
struct finishing {
	struct out out;
	const uint8_t *copied;
	uint32_t from, to;  /* the groups */
};

static void *finish_groups(void *arg)
{
	struct finishing *f = arg;
	for (uint32_t g = f->from; g < f->to; g++) {
		const uint8_t *octets;
		uint32_t answers, size = reused_region(g, &octets, &answers);
		if (size == NONE)
			continue;
		f->out.at = region_at[g];
		if (!f->copied[g])
			put(&f->out, octets, size);
		reuse_patch(g, f->out.map + region_at[g]);
	}
	/* Out of the resident set, as run_pass lets go of its regions: unmapping thousands of
	 * pages written took the main thread milliseconds more at the end. */
	if (!f->out.in_memory && f->from < f->to)
		let_go_pages(f->out.map + region_at[f->from],
			     f->out.map + region_at[f->to - 1] + region_size[f->to - 1]);
	return NULL;
}

static void finish_reused(const struct out *o, const uint8_t *copied)
{
	uint32_t half = hash->ngroups / 2;
	struct finishing first = {*o, copied, 0, half}, second = {*o, copied, half, hash->ngroups};
	struct beside other;
	start_beside(&other, finish_groups, &first);
	finish_groups(&second);
	join_beside(&other);
}

/* ---- the whole ---- */

/* The state (reuse.c), written on a thread beside the copy of the regions reused and their
 * patches: its names were written while the build went on (reuse.c's write_names), the rest
 * needs the regions laid out. */
struct state_job {
	const uint8_t *blob;
	uint64_t total, seed;
};

static void *write_state_beside(void *arg)
{
	const struct state_job *job = arg;
	write_state(job->blob, job->total, groups_off, job->seed);
	return NULL;
}

/* Regions are planned, then written, by two threads at once, each taking the next few
 * groups in turn: a region is laid out from its own group's nodes alone. */
#define THREADS 2
#define GROUPS_AT_ONCE 16

struct pass {
	int writing;              /* 0: planning (each region's size into region_at) */
	struct out out;           /* writing: the mapping */
	const uint8_t *keys;
	uint32_t next;            /* atomic: the first group not yet taken */
};

static void *run_pass(void *arg)
{
	struct pass *pass = arg;
	struct region r = {0};
	struct out out = pass->out, *o = pass->writing ? &out : NULL;
	uint64_t page_size = sysconf(_SC_PAGESIZE);
	for (;;) {
		uint32_t g = __atomic_fetch_add(&pass->next, GROUPS_AT_ONCE, __ATOMIC_RELAXED);
		if (g >= hash->ngroups)
			break;
		uint32_t end = g + GROUPS_AT_ONCE < hash->ngroups ? g + GROUPS_AT_ONCE : hash->ngroups;
		uint32_t first = g;
		if (o)
			o->at = region_at[g];
		for (; g < end; g++) {
			const uint8_t *octets;
			uint32_t answers, size = reused_region(g, &octets, &answers);
			if (size != NONE && o) {  /* an earlier build's: finish_reused's */
				pad_to(o, region_at[g] + size);
				continue;
			}
			if (size == NONE) {
				plan_region(&r, g);
				size = r.size;
				answers = r.bodies.n;
			}
			if (o)
				write_region(o, g, &r, pass->keys);
			else
				region_at[g] = region_size[g] = size, region_answers[g] = answers;
		}
		/* Written: out of the resident set (the page cache has them). The pages these
		 * regions share with their neighbours' stay, which the other thread may write. */
		if (o && !o->in_memory)
			let_go_pages(o->map + align(region_at[first], page_size), o->map + o->at);
	}
	region_free(&r);
	return NULL;
}

static void run_passes(struct pass *pass)
{
	pthread_t helper;
	int helped = pthread_create(&helper, NULL, run_pass, pass) == 0;
	run_pass(pass);
	if (helped)
		pthread_join(helper, NULL);
}

/* Where what follows the denial region starts: past room for it to grow. A chain's entries
 * come and go with the names (a name added: its NSEC3 and signature, some 300 octets), and
 * the regions of the groups after it then move only when it outgrows the room, so that a
 * rebuild keeps the earlier server's regions where they lie and a binary delta stays small.
 * The room is a power of two at least a 64th of the region: at most 1/32 more data (zeros,
 * never written), 1 MiB at 200,000 names signed. */
static uint64_t past_denial(uint64_t at, uint64_t n)
{
	uint64_t room = REGION_ALIGN;
	while (n && room < n / 64)
		room *= 2;
	return n ? align(at + n, room) : align(at, ALIGN);
}

uint32_t place_denial_region(void)
{
	denial_relocate(HEAD);  /* once: the offsets it moves are let go after */
	return HEAD;
}

void plan_layout(const struct phash *ph, const uint32_t *key_off, struct chaos *chaos,
		 size_t nchaos, struct layout_info *info)
{
	hash = ph;
	name_off_of = key_off;
	runs = signed_answers.n ? 2 : 1;
	denial_off = denial_base = place_denial_region();
	chaos_off = past_denial(denial_off, denial_region.n);
	uint64_t at = chaos_off;
	for (size_t c = 0; c < nchaos; c++) {
		at = align(at, 4);
		if (at > UINT32_MAX)
			unsupported("the data passes 4 GiB");
		chaos[c].offset = at;
		at += answer_size(&bodies.list.v[chaos[c].body], 0);
	}
	chaos_answers = chaos;
	nchaos_answers = nchaos;
	at = numbers_off = align(at, ALIGN);
	at += zones.n * sizeof(struct zb_zone_numbers);
	chaos_table_off = at;
	at += nchaos * sizeof(uint32_t);
	groups_off = align(at, ALIGN);
	regions_off = align(groups_off + sizeof(struct zb_group) * ph->ngroups, REGION_ALIGN);
	region_at = xmalloc((ph->ngroups ? ph->ngroups : 1) * sizeof *region_at);
	region_size = xmalloc((ph->ngroups ? ph->ngroups : 1) * sizeof *region_size);
	region_answers = xmalloc((ph->ngroups ? ph->ngroups : 1) * sizeof *region_answers);
	shared_of = xcalloc(ph->ngroups ? ph->ngroups : 1, sizeof *shared_of);
	node_of_name = xmalloc((names.n ? names.n : 1) * sizeof *node_of_name);
	memset(node_of_name, 0xFF, (names.n ? names.n : 1) * sizeof *node_of_name);
	for (uint32_t i = 0; i < nodes.n; i++)
		node_of_name[nodes.v[i]] = i;
	overflows = xcalloc(bodies.list.n / 64 + 1, sizeof *overflows);
	for (size_t k = 0; k < bodies.list.n; k++)
		if (bodies.list.v[k].overflow != NONE)
			overflows[k / 64] |= 1ull << (k % 64);
	struct pass planning = {0};
	run_passes(&planning);
	at = regions_off;
	uint32_t answers = nchaos;
	for (uint32_t g = 0; g < ph->ngroups; g++) {
		uint32_t size = region_at[g];
		answers += region_answers[g];
		if (at + size > UINT32_MAX)
			unsupported("the data passes 4 GiB");
		region_at[g] = at;
		at = align(at + size, REGION_ALIGN);
	}
	total = at + TAIL;
	info->size = total;
	info->groups_off = groups_off;
	info->ngroups = ph->ngroups;
	info->group_mask = ph->group_mask;
	info->nslots = ph->nslots;
	info->nanswers = nanswers = answers;  /* each distinct one once per region, as stored */
	reuse_layout(region_at, region_size, region_answers, ph->ngroups);
	info->signed_nodes = runs - 1;
}

/* The numbers the responder starts from (zonedata.h, struct zb_head): the head, and the
 * zones' serials and expiries and the CH answers' offsets after the CH answers. */
static void put_head(struct out *o, const struct phash *ph, unsigned max_labels)
{
	struct zb_head head = {
		.data_len = total, .seed = ph->seed, .groups_off = groups_off,
		.ngroups = ph->ngroups, .group_mask = ph->group_mask, .nanswers = nanswers,
		.max_labels = max_labels, .signed_nodes = runs - 1, .zones_off = numbers_off,
		.nzones = zones.n, .chaos_off = chaos_table_off, .nchaos = nchaos_answers,
	};
	put(o, &head, sizeof head);
}

static void put_numbers(struct out *o)
{
	pad_to(o, numbers_off);
	for (size_t z = 0; z < zones.n; z++) {
		struct zb_zone_numbers n = {.serial = zones.v[z].serial,
					    .expires = zone_expiry ? zone_expiry[z] : 0};
		put(o, &n, sizeof n);
	}
	for (size_t c = 0; c < nchaos_answers; c++) {
		uint32_t answer = chaos_answers[c].offset;
		put(o, &answer, sizeof answer);
	}
}

void write_layout(const char *path, uint64_t base, uint64_t kept, const struct phash *ph,
		  const uint8_t *keys, unsigned max_labels)
{
	int fd = open(path, base ? O_RDWR : O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fail("cannot create %s", path);
	struct stat st;
	if (base % (uint64_t)sysconf(_SC_PAGESIZE) != 0 || fstat(fd, &st) != 0 ||
	    ((uint64_t)st.st_size < base + total && ftruncate(fd, base + total) != 0))
		fail("cannot write %s", path);
	void *map = getenv("ZONEBAKE_LAYOUT_IN_MEMORY") ? MAP_FAILED :
		mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)base);
	int in_memory = map == MAP_FAILED;
	if (in_memory)
		map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		fail("out of memory (%llu octets, to lay out %s)", (unsigned long long)total, path);
	struct out out = {.map = map, .size = total, .path = path, .in_memory = in_memory,
			  .fd = fd, .base = base};
	struct out *o = &out;
	uint8_t *copied = xcalloc(ph->ngroups ? ph->ngroups : 1, 1);
	if (!in_memory && kept)
		keep_in_place(o, kept, copied);
	put_head(o, ph, max_labels);
	pad_to(o, denial_off);
	put(o, denial_region.v, denial_region.n);
	for (size_t c = 0; c < nchaos_answers; c++)
		put_answer(o, 0, chaos_answers[c].body, chaos_answers[c].offset,
			   chaos_answers[c].offset + sizeof(struct zb_answer), 0);
	put_numbers(o);
	pad_to(o, groups_off);
	for (uint32_t g = 0; g < ph->ngroups; g++) {
		struct zb_group e = {.nodes_off = region_at[g] + region_nodes_at(&ph->groups[g]),
				     .nslots = ph->groups[g].nslots,
				     .nbuckets = ph->groups[g].nbuckets};
		put(o, &e, sizeof e);
	}
	if (!in_memory)
		let_go_pages(o->map, o->map + o->at);  /* as run_pass does its regions' */
	/* The regions, on two threads; the gaps between them (alignment) are never written: zeros. */
	struct pass writing = {.writing = 1, .out = out, .keys = keys};
	struct copier copier = {.out = o, .copied = copied};
	struct beside copying;
	/* Where the kernel copies most of the blob from an earlier build, its blocks are
	 * allocated first, at once: its copy into them then skips the file system's allocation
	 * of each block as it is written (ext4's delayed allocation). A blob written whole
	 * through the mapping is not: it gained nothing there. Where the file system cannot,
	 * the copy allocates them as it goes. */
	if (!in_memory && !kept && copies_any())
		(void)fallocate(fd, 0, (off_t)base, (off_t)total);
	if (!in_memory)
		start_beside(&copying, copy_runs, &copier);
	run_passes(&writing);
	/* The state the next build reads needs of the blob only its table, and of the regions
	 * written which answers hold an SOA or are aliases (reuse_site): written beside the rest. */
	struct state_job state = {map, total, ph->seed};
	struct beside stating;
	start_beside(&stating, write_state_beside, &state);
	if (!in_memory)
		join_beside(&copying);
	join_beside(&stating);
	finish_reused(o, copier.copied);
	free(copier.copied);
	/* The TAIL's zeros are the file's own. A page the disk had no room for has
	 * stopped the core already (SIGBUS, spill.c). */
	for (uint64_t done = 0; in_memory && done < total;) {
		ssize_t n = pwrite(fd, (uint8_t *)map + done, total - done, base + done);
		if (n <= 0)
			fail("cannot write %s", path);
		done += n;
	}
	if (munmap(map, total) != 0 || close(fd) != 0)
		fail("cannot write %s", path);
	free(region_at);
	free(region_size);
	free(region_answers);
	free(shared_of);
	free(node_of_name);
	free(overflows);
	region_at = region_size = region_answers = node_of_name = NULL;
	shared_of = NULL;
	overflows = NULL;
}
