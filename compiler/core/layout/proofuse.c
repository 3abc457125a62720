/*
 * proofuse.c - which NSEC3 entries each group's answers read, kept in the state, so that a
 * build over this one copies the regions whose proofs a changed chain leaves as they were
 * (reuse.c). A name or a type come or gone changes the chain; a full build of every answer
 * for it took most of such a rebuild.
 *
 * A proof reads entries of the zone's chain (proofs.c, RFC 5155 §7.2): one matching a name
 * (the closest encloser, a name's own NODATA), one covering a name (the next closer name,
 * the wildcard), and holds each by its key, its hash's first octets (struct zb_entry_key),
 * by its offset in the data (`also`) or whole. Each read is logged with the node whose
 * answers made it, and kept as (entry, how, group), the entry by its hash's first 61 bits;
 * a wildcard's under its parent's group too, whose region holds a copy of its answers. A build over this one
 * reads the earlier chain from the earlier data and this build's from its denial region,
 * both as the responder does (runtime/zonedata.h), and finds the entries that read
 * otherwise now:
 *   - gone: every read of it;
 *   - its next hash another (a hash come or gone right after it): a cover, whose span
 *     changed; a match stays a match while its hash is there;
 *   - its offset another: a read by offset;
 *   - its octets another (its types, its signatures): a read that holds it whole.
 * Any other read finds the same entry the same way and names it alike; where it is named by
 * its key the responder copies the entry from this build's chain. A group with no read of
 * these kinds keeps its region, as far as the chain goes.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "query/wire.h"
#include "zonedata.h"

static VEC(struct proof_use) uses;  /* this build's, from every thread's log */

/* The zones with a chain, where each is an NSEC3 chain: how many; 0 where none is, or an NSEC
 * chain is (an answer names its entries by their index in the chain, which every name come
 * or gone moves). A read does not name its zone: the entries of all the chains are told
 * apart by their hashes (told_apart). */
static uint32_t nsec3_zones(void)
{
	uint32_t found = 0;
	for (uint32_t z = 0; z < zones.n; z++) {
		if (!chain_kind(z))
			continue;
		if (chain_kind(z) != T_NSEC3)
			return 0;
		found++;
	}
	return found;
}

int proofs_logged(void)
{
	return reuse_wanted() && nsec3_zones() > 0;
}

void proof_uses_take(struct proof_log *log)
{
	RESERVE(uses, log->uses.n);
	if (log->uses.n)
		memcpy(uses.v + uses.n, log->uses.v, log->uses.n * sizeof *uses.v);
	uses.n += log->uses.n;
	VEC_FREE(log->uses);
}

/* ---- a chain, as the data holds it ---- */

/* Each entry of a chain: its hash, and its struct zb_denial's offset in the data. */
struct chain_entry {
	const uint8_t *hash;
	uint32_t at;
};

struct chain_view {
	const uint8_t *region;  /* the denial region, at `base` in the data */
	uint64_t base, len;
	struct chain_entry *v;
	size_t n;
};

/* `len` octets at data offset `at`, or NULL where the region does not hold them. */
static const uint8_t *in_region(const struct chain_view *c, uint64_t at, uint64_t len)
{
	if (at < c->base || at - c->base > c->len || len > c->len - (at - c->base))
		return NULL;
	return c->region + (at - c->base);
}

/* The chain at data offset `at`, its pages read into c->v: 1, or 0 where it is not one. */
static int read_chain(struct chain_view *c, uint64_t at, struct zb_chain *head)
{
	const uint8_t *p = in_region(c, at, sizeof *head);
	if (!p)
		return 0;
	memcpy(head, p, sizeof *head);
	const uint8_t *pages = in_region(c, head->pages_off,
					 (uint64_t)head->npages * sizeof(struct zb_chain_page));
	if (head->kind != ZB_DENIAL_NSEC3 || !pages || head->count > c->len / 20)
		return 0;
	c->v = xmalloc((head->count ? head->count : 1) * sizeof *c->v);
	c->n = 0;
	for (uint32_t k = 0; k < head->npages; k++) {
		struct zb_chain_page page;
		struct zb_page_buckets dir;
		memcpy(&page, pages + k * sizeof page, sizeof page);
		const uint8_t *d = in_region(c, page.off, sizeof dir);
		if (!d)
			return 0;
		memcpy(&dir, d, sizeof dir);
		uint64_t hashes = page.off + sizeof dir + 4 * ((uint64_t)dir.nbuckets + 1);
		const uint8_t *h = in_region(c, hashes, 24 * (uint64_t)page.count);
		if (!h || page.count > head->count - c->n)
			return 0;
		for (uint32_t i = 0; i < page.count; i++) {
			uint32_t from_page;
			memcpy(&from_page, h + 20 * (size_t)page.count + 4 * i, 4);
			c->v[c->n++] = (struct chain_entry){h + 20 * i, page.off + from_page};
		}
	}
	return c->n == head->count;
}

uint64_t proof_entry(const uint8_t *hash)
{
	return zb_get64(hash) & ~(uint64_t)PROOF_HOW;
}

/* Hashes ascending, no two alike in their first 61 bits: a read names one entry. */
static int told_apart(const struct chain_view *c)
{
	for (size_t i = 1; i < c->n; i++)
		if (proof_entry(c->v[i - 1].hash) >= proof_entry(c->v[i].hash))
			return 0;
	return c->n > 0;
}

/* An entry's struct zb_denial, whole: its octets and their length, or NULL. */
static const uint8_t *entry_octets(const struct chain_view *c, uint32_t at, size_t *len)
{
	struct zb_denial d;
	const uint8_t *p = in_region(c, at, sizeof d);
	if (!p)
		return NULL;
	memcpy(&d, p, sizeof d);
	*len = sizeof d + 2u * d.npointers + d.len;
	return in_region(c, at, *len);
}

/* How an earlier entry reads now: which reads of it no longer read the same. */
#define BROKEN_ALL 8u

static uint8_t broken_how(const struct chain_view *was, size_t i, const struct chain_view *now,
			  size_t j)
{
	const struct chain_entry *e = &was->v[i], *f = &now->v[j];
	const uint8_t *next_was = was->v[(i + 1) % was->n].hash, *next_now = now->v[(j + 1) % now->n].hash;
	return (memcmp(next_was, next_now, 20) ? PROOF_COVER : 0) |
	       (e->at != f->at ? PROOF_ALSO : 0);
}

/* Whether a read that holds the entry whole reads the same: its octets are. */
static int same_octets(const struct chain_view *was, const struct chain_entry *e,
		       const struct chain_view *now, const struct chain_entry *f)
{
	size_t a = 0, b = 0;
	const uint8_t *x = entry_octets(was, e->at, &a), *y = entry_octets(now, f->at, &b);
	return x && y && a == b && memcmp(x, y, a) == 0;
}

/* A zone's chain in the earlier data and in this build's, each entry of the earlier one
 * against this build's of the same hash. */
struct zone_chains {
	struct chain_view was, now;
	uint8_t *broken;      /* per earlier entry: BROKEN_ALL, or the kinds of reads broken */
	uint32_t *moved_to;   /* its place in this build's chain, NONE: gone */
};

/* 0 where the two cannot be compared entry for entry: another place in the region (a zone
 * signed or no longer before it: each of its nodes and answers names its header by its
 * offset), other parameters. */
static int read_zone_chains(struct zone_chains *c, uint32_t zone)
{
	uint32_t was_at = reuse_earlier_chain_at(zone), now_at = denial_chain_at(zone);
	struct zb_chain a, b;
	if (was_at != now_at || !read_chain(&c->was, c->was.base + was_at, &a) ||
	    !read_chain(&c->now, c->now.base + now_at, &b) || !told_apart(&c->was) ||
	    !told_apart(&c->now) || a.iterations != b.iterations || a.salt_len != b.salt_len ||
	    a.apex_len != b.apex_len || memcmp(a.salt, b.salt, a.salt_len) != 0)
		return 0;
	c->broken = xmalloc(c->was.n);
	c->moved_to = xmalloc(c->was.n * sizeof *c->moved_to);
	for (size_t i = 0, j = 0; i < c->was.n; i++) {
		while (j < c->now.n && memcmp(c->now.v[j].hash, c->was.v[i].hash, 20) < 0)
			j++;
		int here = j < c->now.n && memcmp(c->now.v[j].hash, c->was.v[i].hash, 20) == 0;
		c->broken[i] = here ? broken_how(&c->was, i, &c->now, j) : BROKEN_ALL;
		c->moved_to[i] = here ? j : NONE;
	}
	return 1;
}

/* An earlier entry of any zone's chain: by its read's id, in order. */
struct pick {
	uint64_t id;
	uint32_t zone, i;
};

static int by_id(const void *x, const void *y)
{
	const struct pick *a = x, *b = y;
	return (a->id > b->id) - (a->id < b->id);
}

uint8_t *proofs_unstable(const struct state_proof *old, size_t nold, const uint8_t *blob,
			 uint64_t blob_len, uint64_t old_denial_len, uint32_t base, uint32_t ngroups)
{
	if (!nsec3_zones() || nold == 0 || base > blob_len || old_denial_len > blob_len - base)
		return NULL;
	struct zone_chains *c = xcalloc(zones.n ? zones.n : 1, sizeof *c);
	VEC(struct pick) picks = {0};
	uint8_t *unstable = NULL;
	for (uint32_t z = 0; z < zones.n; z++) {
		if (!chain_kind(z))
			continue;
		c[z].was = (struct chain_view){.region = blob + base, .base = base,
					       .len = old_denial_len};
		c[z].now = (struct chain_view){.region = denial_region.v, .base = base,
					       .len = denial_region.n};
		if (!read_zone_chains(&c[z], z))
			goto out;
		RESERVE(picks, c[z].was.n);
		for (uint32_t i = 0; i < c[z].was.n; i++)
			picks.v[picks.n++] = (struct pick){proof_entry(c[z].was.v[i].hash), z, i};
	}
	/* One chain's entries are in order already; several chains' are told apart too. */
	if (nsec3_zones() > 1) {
		qsort(picks.v, picks.n, sizeof *picks.v, by_id);
		for (size_t k = 1; k < picks.n; k++)
			if (picks.v[k - 1].id == picks.v[k].id)
				goto out;
	}
	/* The reads, by entry as the earlier chains are: each group with one that reads
	 * otherwise. */
	unstable = xcalloc(ngroups ? ngroups : 1, 1);
	for (size_t k = 0, i = 0; k < nold; k++) {
		uint64_t id = old[k].entry & ~(uint64_t)PROOF_HOW;
		unsigned how = old[k].entry & PROOF_HOW;
		while (i < picks.n && picks.v[i].id < id)
			i++;
		if (i == picks.n || picks.v[i].id != id) {
			free(unstable);  /* a read of no entry: not these chains' state */
			unstable = NULL;
			goto out;
		}
		const struct zone_chains *zc = &c[picks.v[i].zone];
		uint32_t e = picks.v[i].i;
		int otherwise = (zc->broken[e] & BROKEN_ALL) || (zc->broken[e] & how) ||
				((how & PROOF_WHOLE) &&
				 !same_octets(&zc->was, &zc->was.v[e], &zc->now,
					      &zc->now.v[zc->moved_to[e]]));
		if (otherwise && old[k].group < ngroups)
			unstable[old[k].group] = 1;
	}
out:
	for (uint32_t z = 0; z < zones.n; z++) {
		free(c[z].broken);
		free(c[z].moved_to);
		free(c[z].was.v);
		free(c[z].now.v);
	}
	free(c);
	VEC_FREE(picks);
	return unstable;
}

/* ---- the reads the state keeps ---- */

static int by_entry(const void *x, const void *y)
{
	const struct state_proof *a = x, *b = y;
	if (a->entry != b->entry)
		return a->entry < b->entry ? -1 : 1;
	return (a->group > b->group) - (a->group < b->group);
}

static int same_proof(const struct state_proof *a, const struct state_proof *b)
{
	return a->entry == b->entry && a->group == b->group;
}

/* A group laid out by this build: its reads are this build's. */
static int laid_out(const uint8_t *reused, uint32_t nreused, uint32_t g)
{
	return !reused || g >= nreused || !reused[g];
}

struct state_proof *proofs_for_state(const struct state_proof *old, size_t nold,
				     const uint8_t *reused, uint32_t nreused,
				     const struct phash *ph, size_t *n)
{
	*n = 0;
	if (!uses.n && !nold)
		return NULL;
	uint32_t *group_of = xmalloc((nodes.n ? nodes.n : 1) * sizeof *group_of);
	memset(group_of, 0xFF, (nodes.n ? nodes.n : 1) * sizeof *group_of);
	for (uint32_t g = 0; g < ph->ngroups; g++)
		for (uint32_t k = ph->member_start[g]; k < ph->member_start[g + 1]; k++)
			group_of[ph->members[k]] = g;
	VEC(struct state_proof) fresh = {0};
	for (size_t k = 0; k < uses.n; k++) {
		uint32_t node = uses.v[k].node, g = node < nodes.n ? group_of[node] : NONE;
		uint32_t copy_at = NONE;  /* a wildcard's parent, holding a copy of its answers */
		if (node < nodes.n && name_is_wildcard(nodes.v[node])) {
			uint8_t key[256];
			size_t len = name_key(N(nodes.v[node])->parent, key);
			phash_slot(ph, key, len, &copy_at);
		}
		uint32_t in[2] = {g, copy_at};
		for (int c = 0; c < 2; c++)
			if (in[c] != NONE && laid_out(reused, nreused, in[c]))
				PUSH(fresh, ((struct state_proof){uses.v[k].entry, in[c], 0}));
	}
	free(group_of);
	if (fresh.n > 1)
		qsort(fresh.v, fresh.n, sizeof *fresh.v, by_entry);
	/* The earlier reads of the groups copied, and these, merged in order, each once. */
	struct state_proof *out = xmalloc((fresh.n + nold ? fresh.n + nold : 1) * sizeof *out);
	size_t i = 0, j = 0;
	while (i < nold || j < fresh.n) {
		const struct state_proof *next;
		if (i < nold && laid_out(reused, nreused, old[i].group)) {
			i++;
			continue;
		}
		if (j == fresh.n || (i < nold && by_entry(&old[i], &fresh.v[j]) <= 0))
			next = &old[i++];
		else
			next = &fresh.v[j++];
		if (!*n || !same_proof(&out[*n - 1], next))
			out[(*n)++] = *next;
	}
	VEC_FREE(fresh);
	return out;
}

void proofs_reset(void)
{
	VEC_FREE(uses);
}
