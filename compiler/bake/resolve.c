/*
 * resolve.c - compiler/resolve.py for the baker's subset: no wildcards and no DNAMEs, one
 * zone per name. Same steps in the same order, so that the sections come out the same.
 */
#include "bake.h"

#define MAX_CHAIN 8

enum where { DELEGATED, EXACT, MISSING };

/* The highest cut at or above a name of a zone, or NONE: the first cut on the way down from
 * the apex decides for every name below it (ZoneView._redirect). Remembered per name, with
 * the root standing for "no cut" (the root is never a cut). */
uint32_t redirect(name_t name)
{
	struct name *n = N(name);
	if (n->redirect == NONE) {
		uint32_t above = n->flags & NAME_ORIGIN ? NONE : redirect(n->parent);
		if (above == NONE && (n->flags & NAME_CUT))
			above = name;
		n->redirect = above == NONE ? ROOT : above;
	}
	return n->redirect == ROOT ? NONE : n->redirect;
}

static int contains(uint32_t zone, name_t name)
{
	return N(name)->zone == zone;
}

/* Where a name falls in its zone (ZoneView.locate); `*cut` is the referral's cut. */
static enum where locate(name_t name, uint16_t qtype, name_t *cut)
{
	const struct name *n = N(name);
	if (!(n->flags & NAME_ORIGIN)) {
		uint32_t r = redirect(n->parent);
		if (r != NONE) {
			*cut = r;
			return DELEGATED;
		}
	}
	if ((n->flags & NAME_CUT) && qtype != T_DS) {
		*cut = name;
		return DELEGATED;
	}
	return n->flags & NAME_EXISTS ? EXACT : MISSING;
}

static void add_entry(entries_t *section, name_t owner, uint32_t rrset, uint32_t ttl)
{
	struct entry e = {owner, rrset, ttl};
	PUSH(*section, e);
}

static void add_rrset(entries_t *section, name_t owner, uint32_t rrset)
{
	add_entry(section, owner, rrset, rrsets.v[rrset].ttl);
}

static void negative_soa(struct response *r, uint32_t zone)
{
	const struct zone *z = &zones.v[zone];
	add_entry(&r->authority, z->origin, z->soa, z->neg_ttl);
}

/* Already in the additional or optional section: (owner, type), as _already_added. */
static int added(const struct response *r, name_t owner, uint16_t type)
{
	const entries_t *sections[2] = {&r->additional, &r->optional};
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < sections[s]->n; i++) {
			const struct entry *e = &sections[s]->v[i];
			if (e->owner == owner && rrsets.v[e->rrset].type == type)
				return 1;
		}
	return 0;
}

/* The A and AAAA RRsets at a name of the zone, glue included, once each (_add_once). */
static void add_addresses(struct response *r, entries_t *section, uint32_t zone, name_t target)
{
	if (!contains(zone, target))
		return;
	static const uint16_t types[2] = {T_A, T_AAAA};
	for (int t = 0; t < 2; t++) {
		uint32_t set = rrset_at(target, types[t]);
		if (set != NONE && !added(r, target, types[t]))
			add_rrset(section, target, set);
	}
}

/* ZoneView.set_addresses: from this zone, or from the zone of the set that holds the target
 * when the name exists there (not below or at a cut). */
static void add_set_addresses(struct response *r, uint32_t zone, name_t target)
{
	if (contains(zone, target)) {
		add_addresses(r, &r->optional, zone, target);
		return;
	}
	uint32_t other = N(target)->zone;
	name_t cut;
	if (other != NONE && locate(target, T_A, &cut) == EXACT)
		add_addresses(r, &r->optional, other, target);
}

static void add_target_addresses(struct response *r, uint32_t zone, uint32_t rrset)
{
	uint16_t type = rrsets.v[rrset].type;
	if (type != T_NS && type != T_MX && type != T_SRV)
		return;
	for (uint32_t i = rrsets.v[rrset].first; i != NONE; i = rdatas.v[i].next)
		add_set_addresses(r, zone, rdatas.v[i].name);
}

static void referral(struct response *r, uint32_t zone, name_t cut)
{
	uint32_t ns = rrset_at(cut, T_NS);
	add_rrset(&r->authority, cut, ns);
	for (uint32_t i = rrsets.v[ns].first; i != NONE; i = rdatas.v[i].next) {
		name_t target = rdatas.v[i].name;
		/* RFC 9471 §3: glue below the cut is required, other addresses optional. */
		entries_t *section = name_is_below_or_at(target, cut) ? &r->additional
								      : &r->optional;
		add_addresses(r, section, zone, target);
	}
}

/* _answer_from: the records at one name; returns a CNAME target to follow, or NONE. */
static name_t answer_from(struct response *r, uint32_t zone, name_t at, name_t owner,
			  uint16_t qtype, int minimal, int every_rrset)
{
	uint32_t first = contains(zone, at) ? N(at)->rrsets : NONE;
	if (qtype == T_ANY && first != NONE && every_rrset) {
		/* Every RRset, by type. */
		uint32_t done = 0;
		for (;;) {
			uint32_t best = NONE;
			for (uint32_t s = first; s != NONE; s = rrsets.v[s].next)
				if (rrsets.v[s].type > done &&
				    (best == NONE || rrsets.v[s].type < rrsets.v[best].type))
					best = s;
			if (best == NONE)
				return NONE;
			add_rrset(&r->answer, owner, best);
			if (!minimal)
				add_target_addresses(r, zone, best);
			done = rrsets.v[best].type;
		}
	}
	if (qtype == T_ANY && first != NONE) {
		/* RFC 8482 §4.1: one RRset, the lowest type, as Knot picks it. */
		qtype = rrsets.v[first].type;
		for (uint32_t s = first; s != NONE; s = rrsets.v[s].next)
			if (rrsets.v[s].type < qtype)
				qtype = rrsets.v[s].type;
	}
	uint32_t set = first == NONE ? NONE : rrset_at(at, qtype);
	if (set != NONE) {
		add_rrset(&r->answer, owner, set);
		if (!minimal)
			add_target_addresses(r, zone, set);
		return NONE;
	}
	uint32_t cname = first == NONE ? NONE : rrset_at(at, T_CNAME);
	if (cname != NONE) {
		add_rrset(&r->answer, owner, cname);
		return rdatas.v[rrsets.v[cname].first].name;
	}
	negative_soa(r, zone);  /* NODATA (RFC 2308 §2.2) */
	return NONE;
}

static void reset(struct response *r)
{
	r->rcode = 0;
	r->aa = 1;
	r->answer.n = r->authority.n = r->additional.n = r->optional.n = 0;
}

/* The response to a question for `start`, a name of the zone's tree. */
void resolve(struct response *r, uint32_t zone, name_t start, uint16_t qtype, int minimal,
	     int every_rrset)
{
	name_t seen[MAX_CHAIN];
	size_t nseen = 0;
	name_t name = start;
	reset(r);
	seen[nseen++] = start;
	for (int hop = 0; hop < MAX_CHAIN; hop++) {
		name_t cut, next = NONE;
		switch (locate(name, qtype, &cut)) {
		case DELEGATED:
			referral(r, zone, cut);
			if (hop == 0)
				r->aa = 0;  /* a referral is not an authoritative answer */
			return;
		case EXACT:
			next = answer_from(r, zone, name, name, qtype, minimal, every_rrset);
			break;
		case MISSING:
			r->rcode = RCODE_NXDOMAIN;
			negative_soa(r, zone);
			return;
		}
		if (next == NONE || !contains(zone, next) || hop + 1 == MAX_CHAIN)
			return;
		for (size_t i = 0; i < nseen; i++)
			if (seen[i] == next)
				return;
		seen[nseen++] = next;
		name = next;
	}
}

/* A name below `encloser` that has no node: a referral if a cut is at or above the encloser,
 * else NXDOMAIN (no wildcards here). */
void resolve_miss(struct response *r, uint32_t zone, name_t encloser)
{
	reset(r);
	uint32_t cut = redirect(encloser);
	if (cut != NONE) {
		referral(r, zone, cut);
		r->aa = 0;
		return;
	}
	r->rcode = RCODE_NXDOMAIN;
	negative_soa(r, zone);
}
