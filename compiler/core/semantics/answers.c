/*
 * answers.c - every node's answers: for every node, the body for each
 * query type whose answer differs from the node's default, the default, and the answer for a
 * name below it that has no node.
 *
 * The nodes are shared out between threads, one a processor: each has its own response,
 * serializer and table of bodies, and reads the names and records only. The tables are
 * merged after, in thread order; the layout numbers the bodies by first use, so the result
 * does not depend on how many threads there were.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bake.h"

__typeof__(node_answers) node_answers;
__typeof__(signed_answers) signed_answers;
__typeof__(typed) typed;

#define MAX_THREADS 16
#define NODES_PER_THREAD 50000  /* below this a thread costs more than it saves */
#define BODIES_PER_NODE 4       /* about what a hosting zone has: the tables start that big */

/* An answer too long for a DNS message: the build stops with an error naming the node. */
struct oversized {
	size_t node, length;
};

struct worker {
	pthread_t thread;
	size_t begin, end;  /* its nodes */
	int minimal;
	struct body_table *bodies;
	struct wire *wire;
	struct response response;
	struct response target;  /* an alias's target's (aliases.c) */
	types_t qtypes, miss_qtypes;
	VEC(uint32_t) staged, ids, miss_staged;
	VEC(struct typed_body) typed;  /* node_answers.types index this, until merged */
	VEC(struct oversized) oversized;
	struct proof_log proofs;  /* what its nodes' proofs read of a chain (proofuse.c) */
};

/* A wildcard's answers are written for any name it matches, against its parent; queried
 * literally ('*.x') the same answers are right (RFC 4592 §2.2.1). */
static uint32_t answer(struct worker *w, uint32_t zone, name_t name, name_t base,
		       uint16_t qtype)
{
	int every_rrset = qtype == QTYPE_ANY_OVER_TCP;
	name_t start = name_is_wildcard(name) ? NONE : name;
	resolve(&w->response, zone, start, base, every_rrset ? T_ANY : qtype, w->minimal,
		every_rrset);
	if (start != NONE && !every_rrset) {
		uint32_t alias = compose_alias(w->wire, w->bodies, &w->response, &w->target, zone,
					       name, qtype, w->minimal);
		if (alias != NONE)
			return alias;
	}
	return serialize(w->wire, w->bodies, &w->response, base);
}

/* The types of a node that can answer other than the default, ascending, in `out`. */
static void qtypes_of(name_t name, types_t *out)
{
	const struct name *n = N(name);
	name_t at;
	out->n = 0;
	enum node_kind kind = node_location(name, &at);
	if (kind == NODE_DELEGATED) {
		/* One referral answers every type, but DS at the cut itself (RFC 4035 §3.1.4.1). */
		if (at == name && !name_is_wildcard(name))
			types_add(out, T_DS);
		return;
	}
	types_add(out, QTYPE_ANY_OVER_TCP);
	types_add(out, T_ANY);
	if (kind == NODE_DATA)
		for (uint32_t s = n->rrsets; s != NONE; s = rrsets.v[s].next)
			types_add(out, rrsets.v[s].type);
	if (kind == NODE_BELOW_DNAME || rrset_at(name, T_CNAME) != NONE) {
		/* chains reach anything */
		const types_t *zone_types = &zones.v[n->zone].types;
		for (size_t i = 0; i < zone_types->n; i++)
			types_add(out, zone_types->v[i]);
		types_add(out, T_DS);
		types_add(out, T_CNAME);
	}
}

/* The index among qtypes[0..q) of a type whose answer is the one for qtypes[q], or q: ANY
 * over UDP at a name with records gets the lowest type's RRset (RFC 8482 §4.1; resolve.c's
 * answer_from), so its body is that type's, already made when the type sorts first. */
static size_t same_answer(name_t name, const uint16_t *qtypes, size_t q)
{
	uint32_t first = N(name)->rrsets;
	if (qtypes[q] != T_ANY || first == NONE)
		return q;
	uint16_t lowest = rrsets.v[any_rrset(first)].type;
	for (size_t i = 0; i < q; i++)
		if (qtypes[i] == lowest)
			return i;
	return q;
}

static uint32_t parent_ds(struct worker *w, uint32_t parent, name_t name)
{
	resolve(&w->response, parent, name, name, T_DS, w->minimal, 0);
	return serialize(w->wire, w->bodies, &w->response, name);
}

/* An answer of node i that would not fit a DNS message: the first found is reported. */
static void note_oversized(struct worker *w, size_t i)
{
	if (w->oversized.n == 0 || w->oversized.v[w->oversized.n - 1].node != i) {
		struct oversized o = {i, wire_oversize(w->wire)};
		PUSH(w->oversized, o);
	}
}

/* The first record of the node in the order of positions, or its zone file's line 0. */
static struct pos first_position(name_t name)
{
	struct pos best = {zones.v[N(name)->zone].file, 0};
	int found = 0;
	for (uint32_t s = N(name)->rrsets; s != NONE; s = rrsets.v[s].next) {
		struct pos p = rrset_pos.v[s];
		int c = found ? strcmp(files.v[p.file], files.v[best.file]) : -1;
		if (c < 0 || (c == 0 && p.line < best.line))
			best = p;
		found = 1;
	}
	return best;
}

/* The answers for names below a node whose miss is a DNAME synthesis, by type: the chain
 * from the query name's image may end in a wildcard's or a CNAME target's records, which
 * differ by type (RFC 6672 §3.3, RFC 4592). Every type of the zone, and those that reach
 * anything; staged, their indices in w->miss_staged beside w->miss_qtypes. */
static size_t stage_typed_misses(struct worker *w, uint32_t zone, name_t name, size_t i)
{
	types_t *qtypes = &w->miss_qtypes;
	qtypes->n = 0;
	const types_t *zone_types = &zones.v[zone].types;
	for (size_t t = 0; t < zone_types->n; t++)
		types_add(qtypes, zone_types->v[t]);
	static const uint16_t reach_anything[] = {QTYPE_ANY_OVER_TCP, T_ANY, T_DS, T_CNAME};
	for (size_t t = 0; t < sizeof reach_anything / sizeof *reach_anything; t++)
		types_add(qtypes, reach_anything[t]);
	w->miss_staged.n = 0;
	for (size_t q = 0; q < qtypes->n; q++) {
		uint16_t qtype = qtypes->v[q];
		int every_rrset = qtype == QTYPE_ANY_OVER_TCP;
		resolve(&w->response, zone, NONE, name, every_rrset ? T_ANY : qtype, w->minimal,
			every_rrset);
		uint32_t staged = serialize(w->wire, w->bodies, &w->response, name);
		if (staged == NONE)
			note_oversized(w, i);
		PUSH(w->miss_staged, staged);
	}
	return qtypes->n;
}

/* A node's bodies are staged as they are made and interned together at the end (bodies.c
 * says why); `staged` holds their indices until then. */
static void answer_node(struct worker *w, size_t i, struct node_answers *out)
{
	name_t name = nodes.v[i];
	name_t base = name_is_wildcard(name) ? N(name)->parent : name;
	uint32_t zone = N(name)->zone;
	uint16_t unused = zones.v[zone].unused_qtype;
	qtypes_of(name, &w->qtypes);
	const uint16_t *qtypes = w->qtypes.v;
	size_t nq = w->qtypes.n;
	RESERVE(w->staged, nq);
	uint32_t *staged = w->staged.v;
	uint32_t default_staged = answer(w, zone, name, base, unused);
	for (size_t q = 0; q < nq; q++) {
		size_t same = same_answer(name, qtypes, q);
		staged[q] = same < q ? staged[same] : answer(w, zone, name, base, qtypes[q]);
		if (staged[q] == NONE)
			note_oversized(w, i);
	}
	/* RFC 4035 §3.1.4.1: DS belongs to the parent side of a cut; when the parent is
	 * served too, it answers (as Knot does), whatever the child holds. */
	uint32_t parent = delegating_zone(name);
	uint32_t ds_staged = parent == NONE ? NONE : parent_ds(w, parent, name);
	if (parent != NONE && ds_staged == NONE)
		note_oversized(w, i);
	struct node_answers na = {.types = w->typed.n, .miss_body = NONE};
	na.miss_wildcard = miss_wildcard(name);
	if (default_staged == NONE)
		note_oversized(w, i);
	uint32_t miss_staged = NONE;
	size_t nmiss = 0;
	if (na.miss_wildcard == NONE) {
		resolve(&w->response, zone, NONE, name, unused, w->minimal, 0);
		int synthesized = w->response.dname_rrset != NONE;
		miss_staged = serialize(w->wire, w->bodies, &w->response, name);
		if (miss_staged == NONE)
			note_oversized(w, i);
		if (synthesized)
			nmiss = stage_typed_misses(w, zone, name, i);
	}
	RESERVE(w->ids, w->bodies->staged.n);
	uint32_t *id = w->ids.v;
	intern_staged(w->bodies, id);
	if (w->oversized.n > 0 && w->oversized.v[w->oversized.n - 1].node == i)
		return;  /* the build stops: the node's answers are not needed */
	na.default_body = id[default_staged];
	int ds_put = ds_staged == NONE;
	for (size_t q = 0; q < nq; q++) {
		if (!ds_put && qtypes[q] >= T_DS) {
			struct typed_body t = {T_DS, id[ds_staged]};
			PUSH(w->typed, t);
			ds_put = 1;
			if (qtypes[q] == T_DS)
				continue;
		}
		if (id[staged[q]] != na.default_body) {
			struct typed_body t = {qtypes[q], id[staged[q]]};
			PUSH(w->typed, t);
		}
	}
	if (!ds_put) {
		struct typed_body t = {T_DS, id[ds_staged]};
		PUSH(w->typed, t);
	}
	na.ntypes = w->typed.n - na.types;
	if (miss_staged != NONE)
		na.miss_body = id[miss_staged];
	na.miss_types = w->typed.n;
	for (size_t q = 0; q < nmiss; q++)
		if (id[w->miss_staged.v[q]] != na.miss_body) {
			struct typed_body t = {w->miss_qtypes.v[q], id[w->miss_staged.v[q]]};
			PUSH(w->typed, t);
		}
	na.miss_ntypes = w->typed.n - na.miss_types;
	*out = na;
}

/* A node whose answers differ with DO set (RFC 3225): in a signed zone, or a signed parent's
 * child apex (DS). */
static int answers_signed(name_t name)
{
	uint32_t parent = delegating_zone(name);
	return chain_kind(N(name)->zone) || (parent != NONE && chain_kind(parent));
}

/* The nodes whose answers to make (build_answers' `make`), or NULL: all. */
static const uint8_t *making;

static const struct node_answers unmade = {.default_body = NONE, .miss_body = NONE,
					   .miss_wildcard = NONE};

/* Whether the proofs' reads are logged (proofuse.c). */
static int logging;

static void *work(void *arg)
{
	struct worker *w = arg;
	proofs_log_to(logging ? &w->proofs : NULL);
	for (size_t i = w->begin; i < w->end; i++) {
		if (making && !making[i]) {
			node_answers.v[i] = unmade;
			if (signed_answers.n)
				signed_answers.v[i] = unmade;
			continue;
		}
		w->response.dnssec = 0;
		proofs_log_node(&w->proofs, i);
		answer_node(w, i, &node_answers.v[i]);
		if (signed_answers.n == 0)
			continue;
		signed_answers.v[i] = node_answers.v[i];
		if (answers_signed(nodes.v[i])) {
			w->response.dnssec = 1;
			answer_node(w, i, &signed_answers.v[i]);
		}
	}
	proofs_log_to(NULL);
	body_table_done(w->bodies);  /* the merge reads its bodies */
	return NULL;
}

/* One a processor, each with NODES_PER_THREAD of the `count` nodes to make at least;
 * ZONEBAKE_BAKE_THREADS overrides (the tests use it to run the merge on small sets). */
static size_t thread_count(size_t count)
{
	const char *forced = getenv("ZONEBAKE_BAKE_THREADS");
	long n = forced ? atol(forced) : sysconf(_SC_NPROCESSORS_ONLN);
	if (!forced && (size_t)n > count / NODES_PER_THREAD)
		n = count / NODES_PER_THREAD;
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (size_t)n;
}

/* Worker k's bodies into the set's table, and its nodes' body ids and types after. */
static void merge(struct worker *w)
{
	uint32_t *map = xmalloc((w->bodies->list.n + 1) * sizeof *map);
	if (w->bodies != &bodies) {
		/* Its index goes first: the merge reads its bodies and their hashes alone, and
		 * the set's table grows while they are all there. */
		body_table_unindex(w->bodies);
		merge_bodies(&bodies, w->bodies, map);
	} else
		for (uint32_t id = 0; id < bodies.list.n; id++)
			map[id] = id;
	size_t offset = typed.n;
	for (size_t t = 0; t < w->typed.n; t++) {
		struct typed_body tb = {w->typed.v[t].qtype, map[w->typed.v[t].body]};
		PUSH(typed, tb);
	}
	for (size_t i = w->begin; i < w->end; i++)
		for (int dnssec = 0; dnssec <= (signed_answers.n > 0); dnssec++) {
			struct node_answers *na = dnssec ? &signed_answers.v[i] : &node_answers.v[i];
			if (na->default_body == NONE)
				continue;  /* not made */
			na->types += offset;
			na->miss_types += offset;
			na->default_body = map[na->default_body];
			if (na->miss_body != NONE)
				na->miss_body = map[na->miss_body];
		}
	free(map);
}

/* Between build_answers and merge_answers: the workers, their tables not yet merged. */
static struct worker *workers;
static size_t nworkers;

void build_answers(int minimal, const uint8_t *make)
{
	making = make;
	size_t made = nodes.n;  /* over an earlier build, those `make` names */
	for (size_t i = 0; make && i < nodes.n; i++)
		made -= !make[i];
	size_t n = nworkers = thread_count(made);
	/* The memo of cuts is written on first use: where several threads read it, filled
	 * now, before they do (a million names' worth: most of what a rebuild that makes a
	 * few answers spent here). The root too: a served root zone's answers reach it
	 * through its children's names. */
	for (name_t id = ROOT; n > 1 && id < names.n; id++)
		if (N(id)->zone != NONE)
			redirect(id);
	RESERVE(node_answers, nodes.n);
	node_answers.n = nodes.n;
	int any_signed = any_chain();
	if (any_signed) {
		RESERVE(signed_answers, nodes.n);
		signed_answers.n = nodes.n;
	}
	logging = proofs_logged();
	workers = xcalloc(n, sizeof *workers);
	for (size_t k = 0; k < n; k++) {
		struct worker *w = &workers[k];
		w->begin = nodes.n * k / n;
		w->end = nodes.n * (k + 1) / n;
		w->minimal = minimal;
		w->wire = wire_new();
		w->bodies = k == 0 ? &bodies : xmalloc(sizeof *w->bodies);
		if (k > 0)
			body_table_init(w->bodies);
		/* Over an earlier build, only the nodes `make` names: a table sized for every
		 * node would be most of what such a build spends here, zeroing its pages. */
		size_t to_make = w->end - w->begin;
		for (size_t i = w->begin; make && i < w->end; i++)
			to_make -= !make[i];
		body_table_expect(w->bodies, to_make * BODIES_PER_NODE);
	}
	/* Only once every table is made: making one registers its arena (bodies.c, spill.c),
	 * which the threads read. */
	for (size_t k = 1; k < n; k++)
		if (pthread_create(&workers[k].thread, NULL, work, &workers[k]) != 0)
			fail("cannot start a thread");
	work(&workers[0]);
	for (size_t k = 1; k < n; k++)
		pthread_join(workers[k].thread, NULL);
	for (size_t k = 0; k < n; k++)
		proof_uses_take(&workers[k].proofs);
	for (size_t k = 0; k < n; k++)
		for (size_t o = 0; o < workers[k].oversized.n; o++) {
			name_t name = nodes.v[workers[k].oversized.v[o].node];
			name_t base = name_is_wildcard(name) ? N(name)->parent : name;
			diagnose(N(name)->zone, ERROR, first_position(name), "the response for %s "
				 "would be %zu octets; a DNS message holds at most 65535",
				 name_text(base), workers[k].oversized.v[o].length);
		}
	making = NULL;
	phase("answers", made, "names");
	if (any_signed)
		build_denial_region();
	release_records();
}

void merge_answers(void)
{
	for (size_t k = 0; k < nworkers; k++) {
		struct worker *w = &workers[k];
		/* What making its answers took goes before the merge, its answers after. */
		wire_free(w->wire);
		free(w->qtypes.v);
		free(w->miss_qtypes.v);
		free(w->miss_staged.v);
		free(w->staged.v);
		free(w->ids.v);
		free(w->oversized.v);
		free(w->response.answer.v);
		free(w->response.authority.v);
		free(w->response.additional.v);
		free(w->response.optional.v);
		free(w->target.answer.v);
		free(w->target.authority.v);
		free(w->target.additional.v);
		free(w->target.optional.v);
		merge(w);
		if (k > 0)
			body_table_free(w->bodies);  /* its arena stays: merged bodies point there */
		free(w->typed.v);
	}
	free(workers);
	workers = NULL;
	body_table_seal(&bodies);
	phase("merge", bodies.list.n, "answers");
}

void answers_reset(void)
{
	VEC_FREE(node_answers);
	VEC_FREE(signed_answers);
	VEC_FREE(typed);
}
