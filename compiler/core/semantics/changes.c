/*
 * changes.c - what a change of the zones reaches, for a build over an earlier build of the
 * same set (layout/reuse.c): each name's state (a digest of its records in file order, its
 * place in the tree), compared with the earlier build's, and from the names that changed,
 * every name whose answers may read one of them.
 *
 * An answer reads, besides its own name's records: the records of the names its records
 * name (a CNAME's target and on along the chain, the addresses of an NS, MX, SRV or SVCB
 * target: RFC 1034 §4.3.2, RFC 1035 §3.3.9), its ancestors (whether one is an empty
 * non-terminal, a cut above it), and below a cut the cut's referral (RFC 1034 §4.3.2 step
 * 3b) with its glue; a name a wildcard synthesizes reads the wildcard (RFC 4592), a name
 * that does not exist its closest encloser; a name below a DNAME's owner reads its image
 * below the target (RFC 6672 §3.3: dname.c). So a change reaches its name, its ancestors,
 * whatever names them, closed under the same rules; at a cut or a wildcard's parent
 * everything below, below a name come or gone every name there, from a wildcard reached
 * the names it synthesizes, from an image the name below the owner, and at a DNAME made,
 * gone or changed every name below its owner. A zone's apex is a name like any other but
 * for its SOA, which every negative answer holds (RFC 2308 §3): its serial alone changed,
 * reuse.c writes the new one in; anything else of it changed is a full build. In a signed
 * zone an answer reads the chain too (its proofs): reuse.c copies regions only where the
 * chain is as it was, or its proofs read it as before (proofuse.c), so the reach need not
 * see it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bake.h"
#include "hash.h"

__typeof__(name_states) name_states;
static uint64_t *soa_states;  /* per zone */

/* After patch_name_states: the earlier states taken out and those made again, each by key,
 * the only ones where the earlier states and this build's can differ (changes_reach). */
static VEC(struct name_state) patched_out, patched_in;
static int patched;

/* Per name, hashed: its wire form as spelled (an answer writes names as they are spelled,
 * so a name spelled otherwise is a change), and its key (lowercased). Each from its parent's
 * and its first label, memoized: one pass over the labels. 0: not yet. */
static uint64_t *spelled, *keyed;

static uint64_t label_hash(name_t id, int lower)
{
	uint8_t label[64];
	size_t len = N(id)->label_len;
	memcpy(label, name_label(id), len);
	for (size_t i = 0; lower && i < len; i++)
		if (label[i] >= 'A' && label[i] <= 'Z')
			label[i] += 'a' - 'A';
	return zb_hash(label, len, lower ? KEY_SEED : 0x77697265);
}

/* MEMO NULL: not memoized (a few names' states made again). */
static uint64_t memo_hash(uint64_t *memo, name_t id, int lower)
{
	if (id == NONE)
		return 1;
	if (!memo)
		return mix64(memo_hash(NULL, N(id)->parent, lower) ^ label_hash(id, lower)) | 1;
	if (!memo[id])
		memo[id] = mix64(memo_hash(memo, N(id)->parent, lower) ^ label_hash(id, lower)) | 1;
	return memo[id];
}

static uint64_t spelling(name_t id)
{
	return memo_hash(spelled, id, 0);
}

/* A name's key digested (its lowercased wire form, from the root down), memoized in MEMO
 * (one per name, zeroed): the state's key of a name, and the chain check's (chaincheck.c). */
uint64_t name_key_digest(uint64_t *memo, name_t id)
{
	return memo_hash(memo, id, 1);
}

static uint64_t key_of(name_t id)
{
	return name_key_digest(keyed, id);
}

static uint64_t rrset_digest(uint32_t zone, const struct rrset *s)
{
	uint64_t h = mix64((uint64_t)zone << 32 ^ (uint64_t)s->type << 16 ^ s->covers);
	h = mix64(h ^ (uint64_t)s->ttl << 32 ^ s->count);
	/* An SOA's serial (its raw octets' first four) is left out: a new serial alone is
	 * patched into the regions a build over this one copies (layout/reuse.c). */
	size_t skip = s->type == T_SOA ? 4 : 0;
	for (uint32_t r = s->first; r != NONE; r = rdatas.v[r].next) {
		const struct rdata *rd = &rdatas.v[r];
		size_t from = rd->raw_len >= skip ? skip : 0;
		h = mix64(h ^ zb_hash(rdata_raw.v + rd->raw + from, rd->raw_len - from, h));
		h = mix64(h ^ spelling(rd->name)) + spelling(rd->name2);
	}
	return h;
}

/* By key: the keys are hashes, even over their range, so by their top 16 bits into
 * buckets of a few each (a counting sort), then each bucket by insertion. qsort took a
 * tenth of a million names' build. */
static void sort_by_key(struct name_state *v, size_t n)
{
	enum { BITS = 16 };
	size_t *start = xcalloc((1u << BITS) + 1, sizeof *start);
	struct name_state *out = xmalloc((n ? n : 1) * sizeof *out);
	for (size_t i = 0; i < n; i++)
		start[(v[i].key >> (64 - BITS)) + 1]++;
	for (size_t b = 0; b < 1u << BITS; b++)
		start[b + 1] += start[b];
	for (size_t i = 0; i < n; i++)
		out[start[v[i].key >> (64 - BITS)]++] = v[i];
	for (size_t i = 1; i < n; i++) {
		struct name_state x = out[i];
		size_t j = i;
		for (; j > 0 && out[j - 1].key > x.key; j--)
			out[j] = out[j - 1];
		out[j] = x;
	}
	memcpy(v, out, n * sizeof *v);
	free(out);
	free(start);
}

/* A name's state, of `records` (its RRsets' digests mixed in the zone's order). Every name
 * of a zone has one: one that holds nothing but is named by a record is in answers too (a
 * CNAME's target), and so is its coming and going. */
static struct name_state state_of(name_t id, uint64_t records)
{
	const struct name *n = N(id);
	struct name_state st = {.digest = mix64(records ^ spelling(id)), .name = id};
	st.key = key_of(id);
	st.parent = n->parent == NONE ? 0 : key_of(n->parent);
	st.flags = (n->flags & NAME_CUT ? STATE_CUT : 0) |
		   (n->flags & NAME_DNAME ? STATE_DNAME : 0) |
		   (n->flags & NAME_ORIGIN ? STATE_ORIGIN : 0) |
		   (name_is_wildcard(id) ? STATE_WILDCARD : 0) |
		   (n->flags & NAME_EXISTS ? STATE_EXISTS : 0);
	return st;
}

static void make_soa_states(void)
{
	free(soa_states);
	soa_states = xcalloc(zones.n ? zones.n : 1, sizeof *soa_states);
	for (uint32_t z = 0; z < zones.n; z++)
		if (zones.v[z].soa != NONE)
			soa_states[z] = rrset_digest(z, &rrsets.v[zones.v[z].soa]) | 1;
}

/* Where name_states is a states_copy (patch_name_states), its mapping. */
static struct states_copy states_mapped;

/* The states and what a patch of them took out and made again, let go. */
static void name_states_free(void)
{
	if (states_mapped.base) {
		munmap(states_mapped.base, states_mapped.len);
		memset(&states_mapped, 0, sizeof states_mapped);
		memset(&name_states, 0, sizeof name_states);
	}
	VEC_FREE(name_states);
	VEC_FREE(patched_out);
	VEC_FREE(patched_in);
	patched = 0;
}

int compute_name_states(void)
{
	name_states_free();
	uint64_t *digest = xcalloc(names.n ? names.n : 1, sizeof *digest);
	spelled = xcalloc(names.n ? names.n : 1, sizeof *spelled);
	for (uint32_t z = 0; z < zones.n; z++) {
		/* A name's RRsets in file order, as patch_name_states mixes them: in the array's,
		 * but in a zone read over an image and not signed (a signed zone's are put back in
		 * order), where an RRset new to a name lies after all the others, linked in its
		 * place (changedlines.c; the image keeps that order for the builds after it): by
		 * their links, from the first. Every RRset of such a zone is linked. */
		int by_links = zones.v[z].over_image && !zones.v[z].sign;
		for (uint32_t s = zones.v[z].rrsets_begin; s < zones.v[z].rrsets_end; s++) {
			if (!rrsets.v[s].count)
				continue;  /* gone, left in its place by a build over the image */
			name_t owner = rrsets.v[s].owner;
			if (by_links && first_rrset(z, owner) != s)
				continue;  /* mixed from its owner's first */
			for (uint32_t t = s; t != NONE; t = by_links ? rrsets.v[t].next : NONE)
				digest[owner] = mix64(digest[owner] ^ rrset_digest(z, &rrsets.v[t])) | 1;
		}
	}
	name_states.n = 0;
	keyed = xcalloc(names.n ? names.n : 1, sizeof *keyed);
	for (name_t id = ROOT; id < names.n; id++)
		if (N(id)->zone != NONE)
			PUSH(name_states, state_of(id, digest[id]));
	make_soa_states();
	free(digest);
	free(spelled);
	free(keyed);
	spelled = keyed = NULL;
	sort_by_key(name_states.v, name_states.n);
	for (size_t i = 1; i < name_states.n; i++)
		if (name_states.v[i].key == name_states.v[i - 1].key)
			return 0;  /* two names alike in 64 bits: no build over this one is told apart */
	return 1;
}

static const struct name_state *find(const struct name_state *v, size_t n, uint64_t key);

static int by_key(const void *x, const void *y)
{
	uint64_t a = ((const struct name_state *)x)->key, b = ((const struct name_state *)y)->key;
	return a < b ? -1 : a > b;
}

/* The states made again, sorted (`fresh`), are those of as many names as were taken out of
 * the earlier states (`dropped`, marked in `drop`), each under the key of one of them: the
 * earlier states with these written over theirs are the new, in the same order. */
static int same_names(const struct name_state *old, size_t nold, const uint8_t *drop,
		      size_t dropped, const struct name_state *fresh, size_t nfresh)
{
	if (dropped != nfresh)
		return 0;
	for (size_t j = 0; j < nfresh; j++) {
		const struct name_state *was = find(old, nold, fresh[j].key);
		if (!was || !drop[was - old] || (j && fresh[j].key == fresh[j - 1].key))
			return 0;
	}
	return 1;
}

/* The earlier states but those taken out (`drop`, into patched_out), with those made again
 * (`fresh`, sorted) among them by key: 0 where two keys are alike. */
static int merge_states(const struct name_state *old, size_t nold, const uint8_t *drop,
			const struct name_state *fresh, size_t nfresh)
{
	int unique = 1;
	RESERVE(name_states, nold + nfresh);
	for (size_t i = 0, j = 0; i < nold || j < nfresh;) {
		if (i < nold && drop[i]) {
			PUSH(patched_out, old[i]);
			i++;
		} else if (j < nfresh && (i == nold || fresh[j].key <= old[i].key)) {
			unique &= i == nold || fresh[j].key != old[i].key;
			unique &= !name_states.n ||
				  name_states.v[name_states.n - 1].key != fresh[j].key;
			name_states.v[name_states.n++] = fresh[j++];
		} else {
			name_states.v[name_states.n++] = old[i++];  /* its `name` unknown: 0 */
		}
	}
	return unique;
}

int patch_name_states(const struct name_state *old, size_t nold, const name_t *changed,
		      size_t nchanged, struct states_copy copy)
{
	name_states_free();
	/* The names, their ancestors (their existence, an empty non-terminal's, may have come
	 * or gone with them), each once. */
	uint8_t *seen = calloc(names.n ? names.n : 1, 1);  /* sparse: few are touched */
	uint8_t *drop = calloc(nold ? nold : 1, 1);
	if (!seen || !drop)
		fail("out of memory");
	VEC(struct name_state) fresh = {0};
	size_t dropped = 0;
	for (size_t i = 0; i < nchanged; i++)
		for (name_t id = changed[i]; id != NONE && !seen[id]; id = N(id)->parent) {
			seen[id] = 1;
			const struct name_state *was = find(old, nold, key_of(id));
			if (was && !drop[was - old])
				drop[was - old] = 1, dropped++;
			if (N(id)->zone == NONE)
				continue;
			uint64_t records = 0;  /* as compute_name_states mixes them: in zone order */
			for (uint32_t s = N(id)->rrsets; s != NONE; s = rrsets.v[s].next)
				records = mix64(records ^ rrset_digest(N(id)->zone, &rrsets.v[s])) | 1;
			PUSH(fresh, state_of(id, records));
		}
	free(seen);
	if (fresh.n > 1)
		qsort(fresh.v, fresh.n, sizeof *fresh.v, by_key);
	/* The same names as the earlier build's (a value changed, the file saved again): its
	 * states, copied on write, patched where they changed, instead of all copied into
	 * memory of their own (32 MB at a million names, 15-30 ms). */
	int unique = 1;
	if (copy.v && same_names(old, nold, drop, dropped, fresh.v, fresh.n)) {
		for (size_t j = 0; j < fresh.n; j++) {
			const struct name_state *was = find(old, nold, fresh.v[j].key);
			PUSH(patched_out, *was);  /* in the order of their keys, as `fresh` */
			copy.v[was - old] = fresh.v[j];
		}
		states_mapped = copy;
		name_states.v = copy.v;
		name_states.n = name_states.cap = nold;
	} else {
		if (copy.base)
			munmap(copy.base, copy.len);
		unique = merge_states(old, nold, drop, fresh.v, fresh.n);
	}
	free(drop);
	VEC_FREE(patched_in);
	patched_in.v = fresh.v;  /* taken over */
	patched_in.n = fresh.n;
	patched_in.cap = fresh.cap;
	patched = 1;
	make_soa_states();
	return unique;
}

uint64_t soa_state(uint32_t zone)
{
	return soa_states ? soa_states[zone] : 0;
}

/* ---- what a change reaches ---- */

static const struct name_state *find(const struct name_state *v, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].key < key)
			lo = mid + 1;
		else if (v[mid].key > key)
			hi = mid;
		else
			return &v[mid];
	}
	return NULL;
}

/* A list per name, in one array (a CSR): who names it in its records, its children. Over
 * the first `n` names; `kept`: lent by an image (image.c), not freed here. */
struct lists {
	uint32_t *start, *item;
	size_t n;
	int kept;
};

static void lists_free(struct lists *l)
{
	if (!l->kept) {
		free(l->start);
		free(l->item);
	}
	memset(l, 0, sizeof *l);
}

/* Where zone ZONE's record names TARGET in the namespace of another zone of the set
 * below ZONE's origin, that zone's apex (the topmost, under zones nested deeper): ZONE
 * delegates it (views.c), and what the record's owner answers in ZONE holds the referral
 * there (a CNAME's target's, RFC 1034 §4.3.2 step 3b; an MX's glue), which changes with the
 * delegation's NS, DS and addresses, at the apex. NONE where TARGET is ZONE's own or lies
 * outside ZONE's namespace. */
static name_t delegated_at(uint32_t zone, name_t target)
{
	name_t apex = NONE;
	for (name_t a = target; a != NONE; a = N(a)->parent) {
		if (a == zones.v[zone].origin)
			return apex;
		if (N(a)->flags & NAME_ORIGIN)
			apex = a;
	}
	return NONE;
}

/* Each name's list of the owners whose records name it (a CSR: counted, then filled), over
 * the first n names (the records name none after them), from the RRsets [begin, end) of each
 * of `nranges` ranges; where the ranges are the zones' (`zoned`), an owner naming a name in
 * the namespace of a zone it delegates is in the list of that zone's apex too. */
static struct lists referrers_of(size_t n, const uint32_t (*ranges)[2], size_t nranges,
				 int zoned)
{
	struct lists l = {xcalloc(n + 1, sizeof *l.start), NULL, n, 0};
	uint32_t *fill = NULL;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t z = 0; z < nranges; z++)
			for (uint32_t s = ranges[z][0]; s < ranges[z][1]; s++)
				for (uint32_t r = rrsets.v[s].first; r != NONE; r = rdatas.v[r].next) {
					name_t to[2] = {rdatas.v[r].name, rdatas.v[r].name2};
					for (int k = 0; k < 2; k++) {
						if (to[k] == NONE)
							continue;
						name_t apex = zoned ? delegated_at(z, to[k]) : NONE;
						if (pass == 0) {
							l.start[to[k] + 1]++;
							if (apex != NONE)
								l.start[apex + 1]++;
						} else {
							l.item[fill[to[k]]++] = rrsets.v[s].owner;
							if (apex != NONE)
								l.item[fill[apex]++] = rrsets.v[s].owner;
						}
					}
				}
		if (pass == 0) {
			for (name_t id = 0; id < n; id++)
				l.start[id + 1] += l.start[id];
			l.item = xmalloc((l.start[n] ? l.start[n] : 1) * sizeof *l.item);
			fill = xmalloc((n ? n : 1) * sizeof *fill);
			memcpy(fill, l.start, n * sizeof *fill);
		}
	}
	free(fill);
	return l;
}

static struct lists referrers(void)
{
	uint32_t (*ranges)[2] = xmalloc((zones.n ? zones.n : 1) * sizeof *ranges);
	for (uint32_t z = 0; z < zones.n; z++) {
		ranges[z][0] = zones.v[z].rrsets_begin;
		ranges[z][1] = zones.v[z].rrsets_end;
	}
	struct lists l = referrers_of(names.n, (const uint32_t (*)[2])ranges, zones.n,
				       zones.n > 1);  /* one zone delegates to none of the set */
	free(ranges);
	return l;
}

void named_by_lists(size_t n, uint32_t nsets, uint32_t **start, uint32_t **item)
{
	const uint32_t all[1][2] = {{0, nsets}};
	struct lists l = referrers_of(n, all, 1, 0);  /* one zone: none delegated */
	*start = l.start;
	*item = l.item;
}

/* Who names a name in its records: made by changes_prepare (beside the names' states) or
 * else by changes_reach, and kept for reuse.c's aliases; or, over the image of a zone, the
 * lists it keeps and the names since (named_by_since). Each name's children: made by
 * changes_reach where it walks below a name, at a cut or a wildcard that changed. */
static struct lists named_by_names, named_since, children_of;
static int prepared;

void changes_prepare(void)
{
	if (!prepared)
		named_by_names = referrers();
	prepared = 1;
}

static int by_named(const void *x, const void *y)
{
	const uint32_t *a = x, *b = y;
	return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

void named_by_since(const uint32_t *start, const uint32_t *item, size_t n,
		    const uint32_t *pairs, size_t npairs)
{
	lists_free(&named_by_names);
	lists_free(&named_since);
	named_by_names = (struct lists){(uint32_t *)start, (uint32_t *)item, n, 1};
	/* The pairs (a name, an owner naming it) as a CSR of their own, over every name. */
	uint32_t *sorted = xmalloc((npairs ? npairs : 1) * 2 * sizeof *sorted);
	if (npairs)
		memcpy(sorted, pairs, npairs * 2 * sizeof *sorted);
	qsort(sorted, npairs, 2 * sizeof *sorted, by_named);
	struct lists l = {xcalloc(names.n + 1, sizeof *l.start), xmalloc((npairs ? npairs : 1) *
								       sizeof *l.item), names.n, 0};
	for (size_t k = 0; k < npairs; k++) {
		l.start[sorted[2 * k] + 1]++;
		l.item[k] = sorted[2 * k + 1];
	}
	for (size_t id = 0; id < names.n; id++)
		l.start[id + 1] += l.start[id];
	free(sorted);
	named_since = l;
	prepared = 1;
}

struct reach {
	uint8_t *reached, *walked;  /* per name */
	VEC(name_t) queue, stack;
	struct lists named_by, below, below_new;  /* `below`, `below_new` once needed */
};

static void reach(struct reach *r, name_t id)
{
	if (id != NONE && !r->reached[id]) {
		r->reached[id] = 1;
		PUSH(r->queue, id);
	}
}

/* The children of the names from `from` on, by their id less `from`: of every name from 0;
 * every child of a name new to a build over an image is new too (image_new_from), so a walk
 * below one needs these alone, not every name's (most of a rebuild's reach at 200,000
 * names). */
static struct lists children_from(name_t from)
{
	size_t n = names.n - from;
	struct lists l = {xcalloc(n + 1, sizeof *l.start), NULL, n, 0};
	for (name_t id = from; id < names.n; id++)
		if (N(id)->parent != NONE && N(id)->parent >= from)
			l.start[N(id)->parent - from + 1]++;
	for (size_t k = 0; k < n; k++)
		l.start[k + 1] += l.start[k];
	l.item = xmalloc((l.start[n] ? l.start[n] : 1) * sizeof *l.item);
	uint32_t *fill = xmalloc((n ? n : 1) * sizeof *fill);
	memcpy(fill, l.start, n * sizeof *fill);
	for (name_t id = from; id < names.n; id++)
		if (N(id)->parent != NONE && N(id)->parent >= from)
			l.item[fill[N(id)->parent - from]++] = id;
	free(fill);
	return l;
}

/* A name and every name below it, each subtree walked once (`walked`), whether or not its
 * names were reached before. */
static void reach_below(struct reach *r, name_t top)
{
	if (top == NONE || r->walked[top])
		return;
	name_t from = image_new_from();
	int new = from != NONE && top >= from;
	if (new && !r->below_new.start)
		r->below_new = children_from(from);
	else if (!new && !r->below.start)
		r->below = children_of = children_from(0);
	const struct lists *below = new ? &r->below_new : &r->below;
	name_t base = new ? from : 0;
	r->stack.n = 0;
	PUSH(r->stack, top);
	r->walked[top] = 1;
	while (r->stack.n) {
		name_t id = r->stack.v[--r->stack.n];
		reach(r, id);
		for (uint32_t c = below->start[id - base]; c < below->start[id - base + 1]; c++)
			if (!r->walked[below->item[c]]) {
				r->walked[below->item[c]] = 1;
				PUSH(r->stack, below->item[c]);
			}
	}
}

/* The names a wildcard below `parent` synthesizes that a record names (a CNAME's target, an
 * MX's: interned, not in the zone's tree): those below it with no name in the tree between
 * (RFC 4592 §3.3.1). Their owners' answers hold the wildcard's records, and what those name
 * in turn. */
static void reach_synthesized(struct reach *r, name_t parent)
{
	if (!r->below.start)
		r->below = children_of = children_from(0);
	size_t base = r->stack.n;  /* reach_below's stack, empty between its walks */
	PUSH(r->stack, parent);
	while (r->stack.n > base) {
		name_t id = r->stack.v[--r->stack.n];
		for (uint32_t c = r->below.start[id]; c < r->below.start[id + 1]; c++) {
			name_t child = r->below.item[c];
			if (N(child)->flags & NAME_EXISTS)
				continue;  /* a closest encloser of its own, and of those below it */
			reach(r, child);
			PUSH(r->stack, child);
		}
	}
}

/* The name of the nearest ancestor of a name the earlier build had and this one has not. */
static name_t nearest_here(const struct name_state *old, size_t nold, uint64_t parent)
{
	for (int depth = 0; parent && depth < 256; depth++) {
		const struct name_state *here = find(name_states.v, name_states.n, parent);
		if (here)
			return here->name;
		const struct name_state *before = find(old, nold, parent);
		if (!before)
			break;
		parent = before->parent;
	}
	return NONE;
}

uint8_t *changes_reach(const struct name_state *old, size_t nold, size_t *count)
{
	struct reach r = {.reached = xcalloc(names.n ? names.n : 1, 1),
			  .walked = xcalloc(names.n ? names.n : 1, 1)};
	if (!prepared)
		changes_prepare();
	r.named_by = named_by_names;
	size_t i = 0, j = 0;
	/* Every state compared with the earlier one of its key; after a patch, those it took
	 * out and made again only: the rest are the earlier states themselves. */
	const struct name_state *was_v = patched ? patched_out.v : old,
				*now = patched ? patched_in.v : name_states.v;
	size_t nwas = patched ? patched_out.n : nold, nnow = patched ? patched_in.n : name_states.n;
	while (i < nwas || j < nnow) {
		const struct name_state *was = i < nwas ? &was_v[i] : NULL,
					*is = j < nnow ? &now[j] : NULL;
		if (was && is && was->key == is->key) {
			i++, j++;
			if (was->digest == is->digest && was->flags == is->flags)
				continue;
		} else if (is && (!was || is->key < was->key)) {
			j++, was = NULL;
		} else {
			i++, is = NULL;
		}
		uint32_t flags = (was ? was->flags : 0) | (is ? is->flags : 0);
		/* A name gone: its nearest ancestor here, which may be an empty non-terminal no
		 * more. */
		name_t at = is ? is->name : nearest_here(old, nold, was->parent);
		reach(&r, at);
		if (is && (flags & STATE_CUT))  /* a cut made or gone: its referral's reach */
			reach_below(&r, is->name);
		/* A name come or gone that names below it stay: each of those has another closest
		 * encloser now, where a wildcard above may match it or no longer (RFC 4592 §3.3.1;
		 * a CNAME's target that does not exist). */
		if (is && ((was ? was->flags : 0) ^ is->flags) & STATE_EXISTS)
			reach_below(&r, is->name);
		if (flags & STATE_WILDCARD) {
			/* Every name the wildcard's parent has below it may be synthesized. */
			name_t parent = is ? N(is->name)->parent : at;
			reach_below(&r, parent);
		}
		if (flags & STATE_DNAME)  /* a DNAME made, gone or changed: every image below */
			reach_below(&r, at);
	}
	for (size_t q = 0; q < r.queue.n; q++) {
		name_t id = r.queue.v[q];
		if (!(N(id)->flags & NAME_ORIGIN))
			reach(&r, N(id)->parent);
		/* At an apex its parent zone delegates, the parent's DNAMEs into its namespace
		 * (the apex's named-by lists hold them: referrers_of) synthesize answers that
		 * hold the parent's referral there: each of their images. */
		int apex = delegating_zone(id) != NONE;
		for (int part = 0; part < 2; part++) {
			const struct lists *l = part ? &named_since : &r.named_by;
			for (uint32_t k = id < l->n ? l->start[id] : 0; id < l->n && k < l->start[id + 1];
			     k++) {
				reach(&r, l->item[k]);
				if (apex && (N(l->item[k])->flags & NAME_DNAME))
					reach_below(&r, l->item[k]);
			}
		}
		if (N(id)->flags & NAME_CUT)  /* its referral answers every name below it */
			reach_below(&r, id);
		if (name_is_wildcard(id))  /* what it answers changed, so did what it synthesizes */
			reach_synthesized(&r, N(id)->parent);
		const struct dname_image *image;
		size_t nimages;
		for (dname_readers(id, &image, &nimages); nimages--; image++)
			reach(&r, image->name);
	}
	*count = r.queue.n;
	free(r.queue.v);
	free(r.stack.v);
	free(r.walked);
	lists_free(&children_of);
	lists_free(&r.below_new);
	return r.reached;
}

void names_named_by(name_t id, int part, const uint32_t **first, const uint32_t **end)
{
	const struct lists *l = part ? &named_since : &named_by_names;
	*first = *end = l->item;
	if (id < l->n) {
		*first = l->item + l->start[id];
		*end = l->item + l->start[id + 1];
	}
}

void changes_reset(void)
{
	name_states_free();
	free(soa_states);
	soa_states = NULL;
	lists_free(&named_by_names);
	lists_free(&named_since);
	lists_free(&children_of);
	prepared = 0;
}
