/*
 * changedlines.c - the lines of a zone file that changed since its image was read
 * (image.c), and their records put in place of those of the lines they replace: what a
 * reading of the whole file would have filed, in the order it would have filed it. The
 * rules that decide where this holds are image.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "read/image.h"

/* ---- what changed ---- */

/* Newlines in [p, p + n): sixteen octets at a time in each of four vectors (GCC's and
 * Clang's vector extensions, SIMD where the processor has it), each lane counting up to 4 a
 * round, summed before it could pass 255. A third of the time of eight octets at a time in
 * one word, over the tens of megabytes before a change in a million names' file. */
typedef uint8_t octets16 __attribute__((vector_size(16)));
#define ROUNDS 63  /* 63 * 4 <= 255 */

static size_t newlines(const char *p, size_t n)
{
	const octets16 nl = {'\n', '\n', '\n', '\n', '\n', '\n', '\n', '\n',
			     '\n', '\n', '\n', '\n', '\n', '\n', '\n', '\n'};
	size_t count = 0, i = 0;
	while (i + 64 <= n) {
		octets16 sum = {0};
		for (size_t end = i + 64 * ROUNDS; i + 64 <= n && i < end; i += 64) {
			octets16 v[4];
			memcpy(v, p + i, sizeof v);
			sum -= (octets16)(v[0] == nl) + (octets16)(v[1] == nl) +
			       (octets16)(v[2] == nl) + (octets16)(v[3] == nl);
		}
		uint8_t lanes[16];
		memcpy(lanes, &sum, sizeof lanes);
		for (int k = 0; k < 16; k++)
			count += lanes[k];
	}
	for (; i < n; i++)
		count += p[i] == '\n';
	return count;
}

/* The octets both texts begin with and those both end with, found from either end at once,
 * the end's on a thread of its own (each about half of a million names' file, which the core
 * waits for before anything else): a page of each compared at a time, and the newlines of
 * those the texts begin with counted while they are at hand. The end's stops where what it
 * found reaches what the beginning's has (they may not overlap: `suffix` is at most `max -
 * prefix`), so that texts that differ at one end are compared once. */
#define SCAN_STEP 4096

struct scan {
	const char *old, *now;
	size_t old_len, now_len, max;
	size_t front;  /* the octets found alike from the beginning so far: published */
	size_t suffix;  /* the end's, once joined */
};

static void *scan_back(void *arg)
{
	struct scan *s = arg;
	const char *a = s->old + s->old_len, *b = s->now + s->now_len;
	size_t i = 0;
	for (;;) {
		size_t limit = s->max - __atomic_load_n(&s->front, __ATOMIC_RELAXED);
		if (i >= limit)
			break;
		if (i + SCAN_STEP <= s->max &&
		    memcmp(a - i - SCAN_STEP, b - i - SCAN_STEP, SCAN_STEP) == 0) {
			i += SCAN_STEP;
			continue;
		}
		while (i < limit && a[-1 - (ptrdiff_t)i] == b[-1 - (ptrdiff_t)i])
			i++;
		break;
	}
	s->suffix = i;
	return NULL;
}

/* The common prefix, and in *LINES the newlines of its first *COUNTED octets. */
static size_t scan_front(struct scan *s, size_t *counted, size_t *lines)
{
	size_t i = 0, nl = 0;
	while (i + SCAN_STEP <= s->max && memcmp(s->old + i, s->now + i, SCAN_STEP) == 0) {
		nl += newlines(s->old + i, SCAN_STEP);
		i += SCAN_STEP;
		__atomic_store_n(&s->front, i, __ATOMIC_RELAXED);
	}
	*counted = i;
	*lines = nl;
	while (i < s->max && s->old[i] == s->now[i])
		i++;
	return i;
}

static int at_line_start(const char *t, size_t at)
{
	return at == 0 || t[at - 1] == '\n';
}

/* The line at `at` and those after it up to `end`: 1 when none is a directive. */
static int no_directive(const char *t, size_t at, size_t end)
{
	for (; at < end; at++)
		if (at_line_start(t, at) && t[at] == '$')
			return 0;
	return 1;
}

/* The first line from `at` (before `end`) that holds more than blanks and a comment: 1 when
 * there is none, or it begins with its owner. */
static int owner_first(const char *t, size_t at, size_t end)
{
	while (at < end) {
		size_t i = at;
		while (i < end && (t[i] == ' ' || t[i] == '\t'))
			i++;
		if (i < end && t[i] != '\n' && t[i] != ';' && t[i] != '\r')
			return i == at;
		while (i < end && t[i] != '\n')
			i++;
		at = i + 1;
	}
	return 1;
}

/* Parentheses outside quotes and comments, opened and closed as often: the lexer reads the
 * lines they join within them. */
static int balanced(const char *t, size_t at, size_t end)
{
	long depth = 0;
	int quoted = 0;
	for (size_t i = at; i < end; i++) {
		char c = t[i];
		if (quoted) {
			if (c == '\\')
				i++;
			else if (c == '"' || c == '\n')
				quoted = 0;
		} else if (c == '\\') {
			i++;
		} else if (c == '"') {
			quoted = 1;
		} else if (c == ';') {
			while (i < end && t[i] != '\n')
				i++;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (--depth < 0)
				return 0;
		}
	}
	return depth == 0;
}

int find_change(const char *old, size_t old_len, const char *now, size_t now_len,
		const struct span *spans, size_t nspans, size_t head_end, struct change *c)
{
	struct scan s = {old, now, old_len, now_len, old_len < now_len ? old_len : now_len, 0, 0};
	struct beside back;
	size_t counted, counted_lines;
	start_beside(&back, scan_back, &s);
	size_t prefix = scan_front(&s, &counted, &counted_lines);
	join_beside(&back);
	if (prefix == old_len && prefix == now_len) {  /* the same text */
		*c = (struct change){old_len, old_len, old_len, 0, 0, 0};
		return 1;
	}
	size_t suffix = s.suffix < s.max - prefix ? s.suffix : s.max - prefix;
	c->start = prefix;
	while (!at_line_start(old, c->start))
		c->start--;
	c->old_end = old_len - suffix;
	c->new_end = now_len - suffix;
	/* Whole lines, and each record over several lines wholly in or out. */
	for (int moved = 1; moved;) {
		moved = 0;
		while (c->old_end < old_len &&
		       !(at_line_start(old, c->old_end) && at_line_start(now, c->new_end)))
			c->old_end++, c->new_end++;
		for (size_t i = 0; i < nspans; i++) {
			if (spans[i].from >= c->old_end || spans[i].to <= c->start)
				continue;
			if (spans[i].from < c->start)
				c->start = spans[i].from, moved = 1;
			if (spans[i].to > c->old_end) {
				c->new_end += spans[i].to - c->old_end;
				c->old_end = spans[i].to;
				moved = 1;
			}
		}
	}
	if (c->start < head_end || !no_directive(old, c->start, c->old_end) ||
	    !no_directive(now, c->start, c->new_end) || !owner_first(now, c->start, c->new_end) ||
	    !owner_first(now, c->new_end, now_len) || !balanced(now, c->start, c->new_end))
		return 0;
	c->first_line = 1 + (c->start >= counted ?
			     counted_lines + newlines(old + counted, c->start - counted) :
			     newlines(old, c->start));
	/* A last line without its newline is a line all the same. */
	c->old_end_line = c->first_line + newlines(old + c->start, c->old_end - c->start) +
			  (c->old_end > c->start && old[c->old_end - 1] != '\n');
	c->new_end_line = c->first_line + newlines(now + c->start, c->new_end - c->start) +
			  (c->new_end > c->start && now[c->new_end - 1] != '\n');
	return 1;
}

/* ---- the records put in ---- */

static int by_owner_type(const void *x, const void *y)
{
	const struct region_record *a = *(struct region_record *const *)x,
				   *b = *(struct region_record *const *)y;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* Whether filing the new records among those that stay would say anything (zones.c's
 * add_record): then the file is read whole, and says it. */
int files_quietly(uint32_t zone, const struct region *in, const uint8_t *removed)
{
	size_t n = in->records.n;
	const struct region_record **sorted = xmalloc((n ? n : 1) * sizeof *sorted);
	for (size_t i = 0; i < n; i++)
		sorted[i] = &in->records.v[i];
	qsort(sorted, n, sizeof *sorted, by_owner_type);
	int quiet = 1;
	for (size_t i = 0, j; quiet && i < n; i = j) {
		const struct region_record *x = sorted[i];
		for (j = i + 1; j < n && sorted[j]->owner == x->owner && sorted[j]->type == x->type;)
			j++;
		if (image_forbidden_type(x->type) || !in_zone(zone, x->owner)) {
			quiet = 0;
			break;
		}
		uint32_t s = rrset_in(zone, x->owner, x->type);
		size_t staying = 0;
		for (uint32_t r = s == NONE ? NONE : rrsets.v[s].first; quiet && r != NONE;
		     r = rdatas.v[r].next) {
			if (removed[r])
				continue;
			staying++;
			for (size_t k = i; k < j && quiet; k++)
				quiet = !same_rdata(&rdatas.v[r], &sorted[k]->rd);
		}
		uint32_t ttl = staying ? rrsets.v[s].ttl : x->ttl;
		for (size_t k = i; k < j && quiet; k++) {
			quiet = sorted[k]->ttl == ttl;
			for (size_t m = i; m < k && quiet; m++)
				quiet = !same_rdata(&sorted[m]->rd, &sorted[k]->rd);
		}
		if (why_single(x->type) && staying + (j - i) > 1)
			quiet = 0;
	}
	free(sorted);
	return quiet;
}

/* ---- the patch ---- */


static void touch(struct patch *p, uint32_t s)
{
	if (!p->touched[s]) {
		p->touched[s] = 1;
		PUSH(p->owners, rrsets.v[s].owner);
	}
}

static void unlink_record(struct patch *p, uint32_t r)
{
	uint32_t s = p->sets[r];
	struct rrset *set = &rrsets.v[s];
	uint32_t before = NONE;
	for (uint32_t i = set->first; i != r; i = rdatas.v[i].next)
		before = i;
	if (before == NONE)
		set->first = rdatas.v[r].next;
	else
		rdatas.v[before].next = rdatas.v[r].next;
	if (set->last == r)
		set->last = before;
	set->count--;
	rdatas.v[r].next = NONE;
	p->sets[r] = NONE;
	p->lines->v[r] = 0;
	touch(p, s);
}

/* A record into its RRset, in line order. */
static void link_record(struct patch *p, uint32_t s, uint32_t r)
{
	struct rrset *set = &rrsets.v[s];
	uint32_t *link = &set->first;
	while (*link != NONE && p->lines->v[*link] < p->lines->v[r])
		link = &rdatas.v[*link].next;
	rdatas.v[r].next = *link;
	*link = r;
	if (rdatas.v[r].next == NONE)
		set->last = r;
	set->count++;
	p->sets[r] = s;
	touch(p, s);
}

static int by_line(const void *x, const void *y)
{
	uint32_t a = rrset_pos.v[*(const uint32_t *)x].line,
		 b = rrset_pos.v[*(const uint32_t *)y].line;
	return a < b ? -1 : a > b;
}

/* An owner's RRsets relinked in the order their first records come, the empty ones left out. */
static void relink_owner(struct patch *p, name_t owner)
{
	uint32_t *head = rrsets_head(p->zone, owner);
	VEC(uint32_t) sets = {0};
	for (uint32_t s = *head; s != NONE; s = rrsets.v[s].next)
		if (rrsets.v[s].count)
			PUSH(sets, s);
	if (sets.n > 1)
		qsort(sets.v, sets.n, sizeof *sets.v, by_line);
	*head = NONE;
	for (size_t i = sets.n; i-- > 0;) {
		rrsets.v[sets.v[i]].next = *head;
		*head = sets.v[i];
	}
	free(sets.v);
}

/* An owner is a cut while it owns NS and is not the apex: marked as reading marks it
 * (zones.c's new_rrset), which the image keeps. */
static void cut_now(struct patch *p, name_t owner)
{
	struct name *n = N(owner);
	int cut = owner != zones.v[p->zone].origin && rrset_in(p->zone, owner, T_NS) != NONE;
	if (cut && !(n->flags & NAME_CUT) && owner < p->first_new)
		p->cut_made = 1;
	if (!cut != !(n->flags & NAME_CUT))
		p->cut_changed = 1;
	if (!cut && (n->flags & NAME_CUT))
		p->cut_lost = 1;
	n->flags = cut ? n->flags | NAME_CUT : n->flags & ~NAME_CUT;
}

/* The RRsets in the order their first records come, as reading puts them, the empty ones
 * left out; what names them numbered again (a zone the build signs, or whose last good copy
 * is kept: apply_change). Those untouched are in that order already, and keep it: each
 * moves in place by as many places as RRsets came and went before it (the array is the
 * image's, most of it where it was), those that move back in the order they come, those
 * that move on in the other, so that none lands on one not moved yet. (An image written
 * while the zone was not signed may hold RRsets out of that order: those builds over it
 * added, after the others; they keep their place among the untouched.) */
static void reorder_rrsets(struct patch *p)
{
	VEC(uint32_t) moved = {0};
	uint32_t *renumber = xmalloc((rrsets.n ? rrsets.n : 1) * sizeof *renumber);
	for (uint32_t s = 0; s < rrsets.n; s++)
		if (p->touched[s] && rrsets.v[s].count)
			PUSH(moved, s);
	if (moved.n > 1)
		qsort(moved.v, moved.n, sizeof *moved.v, by_line);
	memset(renumber, 0xFF, (rrsets.n ? rrsets.n : 1) * sizeof *renumber);  /* NONE: gone */
	size_t n = 0, m = 0;
	for (uint32_t s = 0; s <= rrsets.n; s++) {
		if (s < rrsets.n && (p->touched[s] || !rrsets.v[s].count))
			continue;  /* among `moved`, or gone */
		while (m < moved.n && (s == rrsets.n ||
				       rrset_pos.v[moved.v[m]].line < rrset_pos.v[s].line))
			renumber[moved.v[m++]] = n++;
		if (s < rrsets.n)
			renumber[s] = n++;
	}
	struct rrset *aside = xmalloc((moved.n ? moved.n : 1) * sizeof *aside);
	struct pos *aside_pos = xmalloc((moved.n ? moved.n : 1) * sizeof *aside_pos);
	for (size_t k = 0; k < moved.n; k++) {
		aside[k] = rrsets.v[moved.v[k]];
		aside_pos[k] = rrset_pos.v[moved.v[k]];
	}
	for (uint32_t s = 0; s < rrsets.n; s++)  /* those that move back */
		if (!p->touched[s] && renumber[s] != NONE && renumber[s] < s) {
			rrsets.v[renumber[s]] = rrsets.v[s];
			rrset_pos.v[renumber[s]] = rrset_pos.v[s];
		}
	for (uint32_t s = rrsets.n; s-- > 0;)  /* those that move on */
		if (!p->touched[s] && renumber[s] != NONE && renumber[s] > s) {
			rrsets.v[renumber[s]] = rrsets.v[s];
			rrset_pos.v[renumber[s]] = rrset_pos.v[s];
		}
	for (size_t k = 0; k < moved.n; k++) {
		rrsets.v[renumber[moved.v[k]]] = aside[k];
		rrset_pos.v[renumber[moved.v[k]]] = aside_pos[k];
	}
	/* Written only where they change: the pages left alone stay the image's. */
	for (size_t s = 0; s < n; s++)
		if (rrsets.v[s].next != NONE && renumber[rrsets.v[s].next] != rrsets.v[s].next)
			rrsets.v[s].next = renumber[rrsets.v[s].next];
	for (name_t id = 0; id < names.n; id++)
		if (names.v[id].rrsets != NONE && renumber[names.v[id].rrsets] != names.v[id].rrsets)
			names.v[id].rrsets = renumber[names.v[id].rrsets];
	for (size_t r = 0; r < rdatas.n; r++)
		if (p->sets[r] != NONE && renumber[p->sets[r]] != p->sets[r])
			p->sets[r] = renumber[p->sets[r]];
	rrsets.n = rrset_pos.n = n;
	free(aside);
	free(aside_pos);
	free(renumber);
	free(moved.v);
}

/* Of the names in `list` (marked 1 in `out`, or 2 already), those with a name below them
 * that is not among them and whose flags hold `want` of `flag`, or below one marked 2:
 * marked 2. One look at every name. */
static void below_them(uint8_t *out, const name_t *list, size_t n, uint8_t flag, uint8_t want)
{
	for (name_t id = 0; id < names.n; id++) {
		name_t up = names.v[id].parent;
		if (up != NONE && out[up] && !out[id] && (names.v[id].flags & flag) == want)
			out[up] = 2;
	}
	for (int more = 1; more;) {
		more = 0;
		for (size_t i = 0; i < n; i++) {
			name_t up = names.v[list[i]].parent;
			if (out[list[i]] == 2 && up != NONE && out[up] == 1)
				out[up] = more = 2;
		}
	}
}

/* What zones.c's rederive_zone makes from every RRset (the names' existence, the tree's
 * nodes, wildcards, the zone's types), made again from the image's where the change touched
 * it: an owner with data exists and so do the names above it; one left without exists only
 * while a name below it does (an empty non-terminal, RFC 4592 §2.2.2), and the same goes
 * for the names above it that have no data. The nodes after one gone move up, one come goes
 * last. Where a cut went (the names below it, which the image's tree leaves out, come
 * back), and in a zone the build signs (its denial follows the nodes' order), all is
 * made again. */
static void rederive_touched(struct patch *p)
{
	uint32_t zone = p->zone;
	struct zone *z = &zones.v[zone];
	if (p->cut_lost || z->sign) {
		rederive_zone(zone);
		return;
	}
	VEC(name_t) emptied = {0};
	for (size_t i = 0; i < p->owners.n; i++) {
		name_t o = p->owners.v[i];
		if (*rrsets_head(zone, o) == NONE) {  /* relink_owner left the empty ones out */
			if (N(o)->flags & NAME_EXISTS)
				PUSH(emptied, o);
			continue;
		}
		for (name_t name = o; !(N(name)->flags & NAME_EXISTS); name = N(name)->parent) {
			N(name)->flags |= NAME_EXISTS;
			if (N(name)->zone == zone) {
				PUSH(nodes, name);
				if (name_is_wildcard(name))
					N(N(name)->parent)->wildcard = name;
			}
			if (name == z->origin)
				break;
		}
	}
	uint8_t *out = emptied.n ? xcalloc(names.n, 1) : NULL, *leaves = NULL;
	while (emptied.n) {
		for (size_t i = 0; i < emptied.n; i++)
			out[emptied.v[i]] = 1;
		below_them(out, emptied.v, emptied.n, NAME_EXISTS, NAME_EXISTS);
		size_t n = 0;
		for (size_t i = 0; i < emptied.n; i++) {
			name_t e = emptied.v[i];
			if (out[e] == 1) {  /* nothing below it: out of the tree */
				if (!leaves)
					leaves = xcalloc(names.n, 1);
				leaves[e] = 1;
				N(e)->flags &= ~NAME_EXISTS;
				name_t up = e == z->origin ? NONE : N(e)->parent;
				if (up != NONE && N(up)->wildcard == e)
					N(up)->wildcard = NONE;
				if (up != NONE && up != z->origin && *rrsets_head(zone, up) == NONE &&
				    (N(up)->flags & NAME_EXISTS) && !out[up])
					emptied.v[n++] = up;  /* its turn next */
			}
			out[e] = 0;
		}
		emptied.n = n;
	}
	if (leaves) {
		size_t kept = 0;
		for (size_t i = 0; i < nodes.n; i++)
			if (!leaves[nodes.v[i]]) {
				if (kept != i)
					nodes.v[kept] = nodes.v[i];
				kept++;
			}
		nodes.n = kept;
	}
	free(out);
	free(leaves);
	free(emptied.v);
	/* The types: those of the RRsets touched that hold records, and of those emptied, the
	 * ones another RRset still holds (looked for from the start: most are common). */
	for (size_t i = 0; i < p->owners.n; i++)
		for (uint32_t s = *rrsets_head(zone, p->owners.v[i]); s != NONE; s = rrsets.v[s].next)
			types_add(&z->types, rrsets.v[s].type);
	for (size_t s = 0; s < rrsets.n; s++) {
		if (!p->touched[s] || rrsets.v[s].count || !types_has(&z->types, rrsets.v[s].type))
			continue;
		uint16_t type = rrsets.v[s].type;
		size_t k = 0;
		while (k < rrsets.n && (rrsets.v[k].count == 0 || rrsets.v[k].type != type))
			k++;
		if (k < rrsets.n)
			continue;  /* another holds it */
		size_t i = 0;
		while (z->types.v[i] != type)
			i++;
		memmove(z->types.v + i, z->types.v + i + 1, (z->types.n - i - 1) * sizeof *z->types.v);
		z->types.n--;
	}
}

/* Names no record names any more, with no name below them that any does: gone, as they are
 * from a reading of the file whole. Only names the records taken out named may be. */
static void mark_gone(struct patch *p, const name_t *named, size_t nnamed)
{
	uint8_t *candidate = xcalloc(names.n ? names.n : 1, 1);
	VEC(name_t) list = {0};
	name_t origin = zones.v[p->zone].origin;
	for (size_t i = 0; i < nnamed; i++)
		for (name_t id = named[i]; id != NONE && !candidate[id]; id = names.v[id].parent) {
			if (id == origin || names.v[id].zone != p->zone ||
			    names.v[id].rrsets != NONE)
				break;  /* the apex, outside the zone, or owns records: stays */
			candidate[id] = 1;
			PUSH(list, id);
		}
	if (list.n) {  /* 2: a record names it; then one below it stays, not gone */
		for (size_t r = 0; r < rdatas.n; r++) {
			if (p->sets[r] == NONE)
				continue;
			if (rdatas.v[r].name != NONE && candidate[rdatas.v[r].name])
				candidate[rdatas.v[r].name] = 2;
			if (rdatas.v[r].name2 != NONE && candidate[rdatas.v[r].name2])
				candidate[rdatas.v[r].name2] = 2;
		}
		below_them(candidate, list.v, list.n, NAME_GONE, 0);
		for (size_t i = 0; i < list.n; i++)
			if (candidate[list.v[i]] == 1) {
				struct name *n = &names.v[list.v[i]];
				n->flags = NAME_GONE;
				n->zone = NONE;
				n->wildcard = NONE;
			}
	}
	free(candidate);
	free(list.v);
}

void apply_change(struct patch *p, const struct change *c, const struct region *in,
		  const uint8_t *removed, size_t nimage)
{
	uint32_t shift = c->new_end_line - c->old_end_line;  /* modulo 2^32: lines may go */
	for (size_t r = p->first_moved; r < nimage; r++) {
		if (!removed[r])
			continue;
		uint16_t type = rrsets.v[p->sets[r]].type;
		if (type == T_A || type == T_AAAA)
			PUSH(p->lost, rrsets.v[p->sets[r]].owner);
		PUSH(p->named, rrsets.v[p->sets[r]].owner);
		if (rdatas.v[r].name != NONE)
			PUSH(p->named, rdatas.v[r].name);
		if (rdatas.v[r].name2 != NONE)
			PUSH(p->named, rdatas.v[r].name2);
		unlink_record(p, r);
	}
	size_t named_before = p->named.n;  /* those may be gone */
	if (shift) {
		for (size_t r = p->first_moved; r < nimage; r++)
			if (p->sets[r] != NONE && p->lines->v[r] >= c->old_end_line)
				p->lines->v[r] += shift;
		for (size_t s = 0; s < rrsets.n; s++)
			if (rrset_pos.v[s].line >= c->old_end_line)
				rrset_pos.v[s].line += shift;
	}
	for (size_t i = 0; i < in->records.n; i++) {
		const struct region_record *x = &in->records.v[i];
		uint32_t s = rrset_in(p->zone, x->owner, x->type);
		if (s == NONE) {
			struct rrset set = {.owner = x->owner, .type = x->type, .ttl = x->ttl,
					    .first = NONE, .last = NONE, .next = NONE, .sigs = NONE};
			s = push_rrset(set, (struct pos){zones.v[p->zone].file, x->line});
			uint32_t *link = rrsets_head(p->zone, x->owner);
			while (*link != NONE)
				link = &rrsets.v[*link].next;
			*link = s;
		}
		if (rrsets.v[s].count == 0)
			rrsets.v[s].ttl = x->ttl;
		struct rdata rd = x->rd;
		rd.next = NONE;
		if (x->type == T_CNAME)
			PUSH(p->lost, x->owner);
		PUSH(p->named, x->owner);
		if (rd.name != NONE)
			PUSH(p->named, rd.name);
		if (rd.name2 != NONE)
			PUSH(p->named, rd.name2);
		PUSH(rdatas, rd);
		PUSH(*p->lines, x->line);
		link_record(p, s, rdatas.n - 1);
	}
	/* Each RRset touched starts where its first record is; one that came, went or starts
	 * elsewhere changes the order of them all. */
	for (size_t i = 0; i < p->owners.n; i++)
		for (uint32_t s = *rrsets_head(p->zone, p->owners.v[i]); s != NONE;
		     s = rrsets.v[s].next) {
			if (!p->touched[s])
				continue;
			if (rrsets.v[s].count == 0 ||
			    rrset_pos.v[s].line != p->lines->v[rrsets.v[s].first] || s >= p->nsets)
				p->shape = 1;
			if (rrsets.v[s].count)
				rrset_pos.v[s].line = p->lines->v[rrsets.v[s].first];
		}
	for (size_t i = 0; i < p->owners.n; i++) {
		relink_owner(p, p->owners.v[i]);
		cut_now(p, p->owners.v[i]);
	}
	if (p->shape) {
		/* In a zone the build does not sign, no RRset is numbered again: a new one stays
		 * where it came, after the others, and one gone stays in its place, empty (what
		 * reads them in order, the states and the tree, passes those by: changes.c,
		 * zones.c's rederive_zone). Nothing of the output follows the order of RRsets in
		 * the array (an owner's are read by their links, which are in file order; the
		 * states, the perfect hash and the answers go by names), but a signed zone's
		 * states do (its signatures are made in that order), and so does the last good
		 * copy --keep-going keeps (records.c): those are put back in order. */
		if (zones.v[p->zone].sign || zones.v[p->zone].keep_records) {
			image_copy_renumbered();
			reorder_rrsets(p);
		}
		zones.v[p->zone].rrsets_end = rrsets.n;
		rederive_touched(p);
	}
	if (named_before)
		mark_gone(p, p->named.v, named_before);
}

/* The spans of the file now: the image's outside the change, moved with it, and those of
 * the lines read. */
void spans_now(const struct span *old, size_t n, const struct change *c,
	       const struct region *in, struct head *h)
{
	for (size_t i = 0; i < n && old[i].to <= c->start; i++)
		PUSH(h->spans, old[i]);
	for (size_t i = 0; i < in->spans.n; i++)
		PUSH(h->spans, ((struct span){c->start + in->spans.v[i].from,
					      c->start + in->spans.v[i].to}));
	for (size_t i = 0; i < n; i++)
		if (old[i].from >= c->old_end)
			PUSH(h->spans, ((struct span){old[i].from - c->old_end + c->new_end,
						      old[i].to - c->old_end + c->new_end}));
}
