/*
 * resolve.c - the RFC 1034 §4.3.2 algorithm over one zone, run for every answer: where a name
 * falls (below a cut, below a DNAME, an exact match, a wildcard match, or nothing), and the
 * whole response to one question, following CNAME and DNAME chains inside the zone as Knot
 * DNS does.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"

#define MAX_CHAIN 8

enum where { DELEGATED, BELOW_DNAME, EXACT, SYNTHESIZED, MISSING };

/* The highest cut or DNAME owner at or above a name of a zone, or NONE: the first on the
 * way down from the apex decides for every name below it (ZoneView._redirect); the apex may
 * own a DNAME (RFC 6672 §2.3), never a cut. Remembered per name, with the root standing for
 * "none" (the root is never either). */
uint32_t redirect(name_t name)
{
	struct name *n = N(name);
	if (n->redirect == NONE) {
		uint32_t above = n->flags & NAME_ORIGIN ? NONE : redirect(n->parent);
		if (above == NONE && (n->flags & (NAME_CUT | NAME_DNAME)))
			above = name;
		n->redirect = above == NONE ? ROOT : above;
	}
	return n->redirect == ROOT ? NONE : n->redirect;
}

/* A name's memo from its parent's (`up`, that of a name of the zone): ROOT for none, NONE
 * where the parent's is not known. */
static uint32_t memo_below(const struct name *x, name_t id, uint32_t up)
{
	uint32_t above = NONE;
	if (!(x->flags & NAME_ORIGIN)) {
		if (up == NONE)
			return NONE;
		above = up == ROOT ? NONE : up;
	}
	if (above == NONE && (x->flags & (NAME_CUT | NAME_DNAME)))
		above = id;
	return above == NONE ? ROOT : above;
}

/* The memo of each name of a zone among `n` names (each after its parent, as names.c interns
 * them) worked out at once, as redirect() works it out: the image of a zone keeps it
 * (image.c), so that a build over the image reads it where it is instead of writing it into
 * every name's page again. A name whose parent's is not known is left to redirect(). */
void redirects_fill(struct name *v, size_t n)
{
	for (size_t id = 0; id < n; id++) {
		struct name *x = &v[id];
		if (x->zone == NONE)
			continue;
		uint32_t memo = memo_below(x, id, x->parent == NONE ? NONE : v[x->parent].redirect);
		if (memo != NONE)
			x->redirect = memo;
	}
}

/* Worked out aside, and written only where they differ: a build over an image (whose names
 * are the image's pages until written) where a cut came or went changes the memos of the
 * names below it alone, and writing every name's took a copy of each page. */
void redirects_again(void)
{
	uint32_t *memo = xmalloc((names.n ? names.n : 1) * sizeof *memo);
	memset(memo, 0xFF, (names.n ? names.n : 1) * sizeof *memo);  /* NONE: forgotten */
	for (name_t id = 0; id < names.n; id++) {
		const struct name *x = &names.v[id];
		if (x->zone != NONE)
			memo[id] = memo_below(x, id, x->parent == NONE ? NONE : memo[x->parent]);
	}
	for (name_t id = 0; id < names.n; id++)
		if (names.v[id].redirect != memo[id])
			names.v[id].redirect = memo[id];
	free(memo);
}

/* Whether a name of a zone lies below one of its cuts: it has no node then, the cut's
 * referral answers for it. */
int under_cut(name_t name)
{
	uint32_t above = N(name)->flags & NAME_ORIGIN ? NONE : redirect(N(name)->parent);
	return above != NONE && (N(above)->flags & NAME_CUT);
}

/* redirect() for a zone: the memo holds each name's own zone's; a parent zone's view of a
 * name in its child's namespace is walked (views.c). */
static uint32_t redirect_in(uint32_t zone, name_t name)
{
	if (N(name)->zone == zone)
		return redirect(name);
	uint32_t above = name == zones.v[zone].origin ? NONE : redirect_in(zone, N(name)->parent);
	if (above == NONE && (flags_in(zone, name) & (NAME_CUT | NAME_DNAME)))
		above = name;
	return above;
}

/* What a redirect is: a cut wins over a DNAME at the same name, as in ZoneView. */
static enum where redirect_kind(uint32_t zone, name_t at)
{
	return flags_in(zone, at) & NAME_CUT ? DELEGATED : BELOW_DNAME;
}

static int exists_in(uint32_t zone, name_t name)
{
	return flags_in(zone, name) & NAME_EXISTS;
}

/* Below an existing name, a name that does not exist: its wildcard's, or nothing
 * (ZoneView._below). */
static enum where below(uint32_t zone, name_t encloser, name_t *at)
{
	*at = N(encloser)->zone == zone ? N(encloser)->wildcard : NONE;
	return *at != NONE ? SYNTHESIZED : MISSING;
}

/* The closest existing name above a name that does not exist. */
static name_t closest(uint32_t zone, name_t name)
{
	name_t encloser = N(name)->parent;
	while (!exists_in(zone, encloser))
		encloser = N(encloser)->parent;
	return encloser;
}

/* Where a name falls in a zone (ZoneView.locate); `*at` is the referral's cut, or where the
 * records are. */
static enum where locate(uint32_t zone, name_t name, uint16_t qtype, name_t *at)
{
	if (name != zones.v[zone].origin) {
		uint32_t r = redirect_in(zone, N(name)->parent);
		if (r != NONE) {
			*at = r;
			return redirect_kind(zone, r);
		}
	}
	uint8_t flags = flags_in(zone, name);
	if ((flags & NAME_CUT) && qtype != T_DS) {
		*at = name;
		return DELEGATED;
	}
	if (flags & NAME_EXISTS) {
		*at = name;
		return EXACT;
	}
	return below(zone, closest(zone, name), at);
}

/* Where a name below `encloser` (an existing name) falls that does not exist itself
 * (ZoneView.locate_below). */
static enum where locate_below(uint32_t zone, name_t encloser, name_t *at)
{
	uint32_t r = redirect_in(zone, encloser);
	if (r != NONE) {
		*at = r;
		return redirect_kind(zone, r);
	}
	return below(zone, encloser, at);
}

static void add_rrset(struct response *r, entries_t *section, name_t owner, uint32_t rrset)
{
	add_signed(r, section, owner, rrset, NONE);
}

/* RFC 2308 §3, RFC 4035 §3.1.3: the SOA and its signatures at min(SOA TTL, MINIMUM). */
static void negative_soa(struct response *r, uint32_t zone)
{
	const struct zone *z = &zones.v[zone];
	add_signed(r, &r->authority, z->origin, z->soa, z->neg_ttl);
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
	if (!in_zone(zone, target))
		return;
	static const uint16_t types[2] = {T_A, T_AAAA};
	for (int t = 0; t < 2; t++) {
		uint32_t set = rrset_in(zone, target, types[t]);
		if (set != NONE && !added(r, target, types[t]))
			add_rrset(r, section, target, set);
	}
}

/* A wildcard's A and AAAA for a target it matches, owned by the target (RFC 4592 §3.3.1:
 * the lookup for additional data synthesizes as any lookup does). */
static void add_synthesized_addresses(struct response *r, uint32_t zone, name_t wildcard,
				      name_t target)
{
	static const uint16_t types[2] = {T_A, T_AAAA};
	for (int t = 0; t < 2; t++) {
		uint32_t set = rrset_in(zone, wildcard, types[t]);
		if (set != NONE && !added(r, target, types[t]))
			add_rrset(r, &r->optional, target, set);
	}
}

/* Addresses of an NS, MX or SRV target (RFC 1034 §4.3.2 step 6): from this zone (glue
 * included), or from the zone of the set that holds the target when the name exists there
 * (not below or at a cut); where the name does not exist, a wildcard's that matches it. */
static void add_set_addresses(struct response *r, uint32_t zone, name_t target)
{
	uint32_t from = in_zone(zone, target) ? zone : N(target)->zone;
	if (from == NONE)
		return;
	name_t at;
	enum where where = locate(from, target, T_A, &at);
	if (from == zone)
		add_addresses(r, &r->optional, zone, target);
	else if (where == EXACT)
		add_addresses(r, &r->optional, from, target);
	if (where == SYNTHESIZED)
		add_synthesized_addresses(r, from, at, target);
}

/* RFC 9460 §4.1: for an SVCB or HTTPS answer, the records of each TargetName in the zone:
 * its own SVCB or HTTPS RRset (an AliasMode chain goes on there), its A and AAAA. A
 * TargetName of "." names no other name (the owner's own, in ServiceMode: the client asks
 * for the owner's addresses anyway), and Knot adds nothing for it either. */
static void add_service_records(struct response *r, uint32_t zone, uint32_t rrset)
{
	const struct rrset *set = &rrsets.v[rrset];
	for (uint32_t i = set->first; i != NONE; i = rdatas.v[i].next) {
		name_t target = rdatas.v[i].name;
		if (target == ROOT || !in_zone(zone, target))
			continue;
		uint32_t service = rrset_in(zone, target, set->type);
		if (service != NONE && service != rrset && !added(r, target, set->type))
			add_rrset(r, &r->optional, target, service);
		add_addresses(r, &r->optional, zone, target);
	}
}

static void add_target_addresses(struct response *r, uint32_t zone, uint32_t rrset)
{
	uint16_t type = rrsets.v[rrset].type;
	if (type == T_SVCB || type == T_HTTPS) {
		add_service_records(r, zone, rrset);
		return;
	}
	if (type != T_NS && type != T_MX && type != T_SRV)
		return;
	for (uint32_t i = rrsets.v[rrset].first; i != NONE; i = rdatas.v[i].next)
		add_set_addresses(r, zone, rdatas.v[i].name);
}

static void referral(struct response *r, uint32_t zone, name_t cut)
{
	uint32_t ns = rrset_in(zone, cut, T_NS);
	add_rrset(r, &r->authority, cut, ns);
	for (uint32_t i = rrsets.v[ns].first; i != NONE; i = rdatas.v[i].next) {
		name_t target = rdatas.v[i].name;
		/* RFC 9471 §3: glue below the cut is required, other addresses optional. */
		entries_t *section = name_is_below_or_at(target, cut) ? &r->additional
								      : &r->optional;
		add_addresses(r, section, zone, target);
	}
	if (!r->dnssec)
		return;
	/* RFC 4035 §3.1.4: the DS RRset signed, or the proof that there is none. */
	uint32_t ds = rrset_in(zone, cut, T_DS);
	if (ds != NONE)
		add_rrset(r, &r->authority, cut, ds);
	else
		prove_nodata(r, zone, cut);
}

/* Of a name's RRsets, the one first in (type, type covered) order after `after`, or NONE;
 * RRSIG RRsets only when `sigs`. */
static uint32_t next_rrset(uint32_t first, uint32_t after, int sigs)
{
	uint32_t best = NONE;
	uint32_t done = after == NONE ? 0 : (uint32_t)rrsets.v[after].type << 16 |
					    rrsets.v[after].covers;
	for (uint32_t s = first; s != NONE; s = rrsets.v[s].next) {
		const struct rrset *set = &rrsets.v[s];
		uint32_t key = (uint32_t)set->type << 16 | set->covers;
		if ((after == NONE || key > done) && (sigs || set->type != T_RRSIG) &&
		    (best == NONE || key < ((uint32_t)rrsets.v[best].type << 16 |
					     rrsets.v[best].covers)))
			best = s;
	}
	return best;
}

/* Whether an RRSIG RRset of a name's signs one of its RRsets (rrset.sigs). */
static int signs_here(uint32_t first, uint32_t sigs)
{
	for (uint32_t s = first; s != NONE; s = rrsets.v[s].next)
		if (rrsets.v[s].sigs == sigs)
			return 1;
	return 0;
}

/* The one RRset ANY over UDP gets at a name (RFC 8482 §4.1): the lowest type, as Knot picks
 * it, never the signatures themselves while there is something they sign. */
uint32_t any_rrset(uint32_t first)
{
	uint32_t set = next_rrset(first, NONE, 0);
	return set != NONE ? set : next_rrset(first, NONE, 1);
}

/* The RRset a type asks for: for RRSIG, the signatures of one RRset, those of the lowest type
 * covered, as Knot answers (RFC 4035 §3.1 leaves it open; all of them could pass any size). */
static uint32_t rrset_for(uint32_t zone, name_t at, uint16_t qtype)
{
	if (qtype != T_RRSIG)
		return rrset_in(zone, at, qtype);
	uint32_t best = NONE;
	for (uint32_t s = first_rrset(zone, at); s != NONE; s = rrsets.v[s].next)
		if (rrsets.v[s].type == T_RRSIG &&
		    (best == NONE || rrsets.v[s].covers < rrsets.v[best].covers))
			best = s;
	return best;
}

/* _answer_from: the records at one name; returns a CNAME target to follow, or NONE, and
 * `*nodata` 1 when it has neither the type nor a CNAME. */
static name_t answer_from(struct response *r, uint32_t zone, name_t at, name_t owner,
			  uint16_t qtype, int minimal, int every_rrset, int *nodata)
{
	*nodata = 0;
	uint32_t first = in_zone(zone, at) ? first_rrset(zone, at) : NONE;
	if (qtype == T_ANY && first != NONE && every_rrset) {
		/* Every RRset by type, the signatures too (RRSIG is a type at the name, with DO
		 * clear as with DO set), each RRset's behind it: the same records in the same
		 * order either way, so that the answer without DO is the start of the answer
		 * with it, and both hold the answers to the types (layout/sharing.c). */
		for (uint32_t set = next_rrset(first, NONE, 1); set != NONE;
		     set = next_rrset(first, set, 1)) {
			if (rrsets.v[set].type == T_RRSIG && signs_here(first, set))
				continue;  /* behind the RRset it signs */
			add_with_signatures(&r->answer, owner, set);
			if (!minimal)
				add_target_addresses(r, zone, set);
		}
		return NONE;
	}
	uint32_t set = NONE;
	if (qtype == T_ANY && first != NONE)
		set = any_rrset(first);
	else if (first != NONE)
		set = rrset_for(zone, at, qtype);
	if (set != NONE) {
		add_rrset(r, &r->answer, owner, set);
		if (!minimal)
			add_target_addresses(r, zone, set);
		return NONE;
	}
	uint32_t cname = first == NONE ? NONE : rrset_in(zone, at, T_CNAME);
	if (cname != NONE) {
		add_rrset(r, &r->answer, owner, cname);
		return rdatas.v[rrsets.v[cname].first].name;
	}
	negative_soa(r, zone);  /* NODATA (RFC 2308 §2.2) */
	*nodata = 1;
	return NONE;
}

/* The DNAME for a query name below `encloser`, and the CNAME the responder completes
 * (_synthesize_dname). Returns the closest existing name above the query name's image, where
 * the lookup goes on, or NONE when the image leaves the zone or falls back under the DNAME. */
static name_t synthesize_dname(struct response *r, uint32_t zone, name_t owner,
			       name_t encloser)
{
	uint32_t dname = rrset_in(zone, owner, T_DNAME);
	name_t target = rdatas.v[rrsets.v[dname].first].name;
	add_rrset(r, &r->answer, owner, dname);
	r->dname_rrset = dname;
	r->dname_position = r->answer.n;
	r->dname_image = encloser == owner ? target : dname_image(encloser)->image;
	if (!in_zone(zone, target) || name_is_below_or_at(target, owner) ||
	    r->dname_image == NONE)
		return NONE;  /* outside, back under the DNAME, or YXDOMAIN (RFC 6672 §2.2) */
	name_t image = r->dname_image;
	while (!exists_in(zone, image) && image != zones.v[zone].origin)
		image = N(image)->parent;
	return image;
}

/* RFC 6672 §3.3: the DNAME, then a CNAME from the name to its image under the target
 * (_follow_dname); the image, or NONE when it would pass 255 octets (YXDOMAIN, §2.2). */
static name_t follow_dname(struct response *r, uint32_t zone, name_t dname_owner, name_t name,
			   name_t owner)
{
	add_rrset(r, &r->answer, dname_owner, rrset_in(zone, dname_owner, T_DNAME));
	const struct dname_image *image = dname_image(name);
	if (image->cname == NONE) {
		r->rcode = RCODE_YXDOMAIN;
		return NONE;
	}
	add_rrset(r, &r->answer, owner, image->cname);
	return image->image;
}

static void reset(struct response *r)
{
	r->rcode = 0;
	r->aa = 1;
	r->answer.n = r->authority.n = r->additional.n = r->optional.n = 0;
	r->dname_rrset = NONE;
	r->dname_image = NONE;
	r->nproved = 0;
	r->dynamic_proof = 0;
	r->proof_also = 0;
	r->nkeys = 0;
}

/* The name a proof is about: `name`, or for the query name (NONE) rewritten by a DNAME,
 * the image of the node the query name is below. When that image does not exist, nothing
 * exists below it either, so what denies it denies the query name's image (RFC 6672 §3.3);
 * when it exists (it is then `encloser`, the closest encloser of the query name's image),
 * the image is the responder's to deny, by the query name's next label put in front of it
 * (runtime/query/denial.c, the image denial denialdata.c writes at the node). */
static name_t image_or(const struct response *r, name_t name, name_t encloser)
{
	if (name != NONE || r->dname_rrset == NONE)
		return name;
	return r->dname_image == encloser ? NONE : r->dname_image;
}

/* The response to a question for `start`, a name of the zone, or when `start` is NONE, for
 * the query name: a name below `encloser` that has no node, written as OWNER_QNAME. */
void resolve(struct response *r, uint32_t zone, name_t start, name_t encloser, uint16_t qtype,
	     int minimal, int every_rrset)
{
	name_t seen[MAX_CHAIN];
	size_t nseen = 0;
	name_t name = start, owner = start == NONE ? OWNER_QNAME : start;
	reset(r);
	r->key_zone = zone;  /* its entries' owners end in its apex, a suffix of any question */
	if (start != NONE)
		seen[nseen++] = start;
	for (int hop = 0; hop < MAX_CHAIN; hop++) {
		name_t at, next = NONE;
		enum where where = name != NONE ? locate(zone, name, qtype, &at)
						: locate_below(zone, encloser, &at);
		switch (where) {
		case DELEGATED:
			referral(r, zone, at);
			if (hop == 0)
				r->aa = 0;  /* a referral is not an authoritative answer */
			return;
		case BELOW_DNAME:
			if (name != NONE) {
				next = follow_dname(r, zone, at, name, owner);
				break;
			}
			/* The query name itself is rewritten: its image lies below the image of
			 * the encloser, and is followed there, once (RFC 6672 §3.3). */
			if (r->dname_rrset != NONE)
				return;
			encloser = synthesize_dname(r, zone, at, encloser);
			if (encloser == NONE)
				return;
			owner = OWNER_DNAME_IMAGE;
			continue;
		case EXACT:
		case SYNTHESIZED: {
			int nodata;
			next = answer_from(r, zone, at, owner, qtype, minimal, every_rrset, &nodata);
			if (!r->dnssec)
				break;
			if (where == SYNTHESIZED)
				prove_wildcard(r, zone, image_or(r, name, encloser), at, nodata);
			else if (nodata)
				prove_nodata(r, zone, at);
			break;
		}
		case MISSING:
			r->rcode = RCODE_NXDOMAIN;
			negative_soa(r, zone);
			name = image_or(r, name, encloser);
			if (r->dnssec)
				prove_nxdomain(r, zone, name, name == NONE ? encloser
									   : closest(zone, name));
			return;
		}
		if (next == NONE || !in_zone(zone, next) || hop + 1 == MAX_CHAIN)
			return;
		for (size_t i = 0; i < nseen; i++)
			if (seen[i] == next)
				return;
		seen[nseen++] = next;
		name = owner = next;
	}
}

/* The wildcard that answers for the names below `encloser` that have no node, or NONE when
 * `resolve` with no start gives their answer. */
name_t miss_wildcard(name_t encloser)
{
	name_t at;
	return locate_below(N(encloser)->zone, encloser, &at) == SYNTHESIZED ? at : NONE;
}

/* The image under a DNAME of the names below a node that have no node, when it exists and the
 * lookup for such a name's image ends below it (no cut or DNAME at or above it): then an
 * NXDOMAIN or a wildcard's answer there has its proof found by the responder, from the image
 * (image_or). NONE otherwise. */
name_t miss_image(name_t node)
{
	uint32_t zone = N(node)->zone;
	name_t owner = redirect(node);
	if (owner == NONE || redirect_kind(zone, owner) != BELOW_DNAME)
		return NONE;
	name_t target = rdatas.v[rrsets.v[rrset_in(zone, owner, T_DNAME)].first].name;
	if (!in_zone(zone, target) || name_is_below_or_at(target, owner))
		return NONE;
	name_t image = node == owner ? target : dname_image(node)->image;
	if (image == NONE || !exists_in(zone, image) || redirect_in(zone, image) != NONE)
		return NONE;
	return image;
}

/* Where a node falls, for the types that reach different answers at it: delegated (`*at`
 * the cut), below a DNAME, or with records of its own; for a wildcard as for any name
 * below its parent. */
enum node_kind node_location(name_t name, name_t *at)
{
	uint32_t zone = N(name)->zone;
	enum where where = name_is_wildcard(name) ? locate_below(zone, N(name)->parent, at)
						  : locate(zone, name, QTYPE_ANY_OVER_TCP, at);
	return where == DELEGATED ? NODE_DELEGATED : where == BELOW_DNAME ? NODE_BELOW_DNAME
									  : NODE_DATA;
}
