/*
 * zones.c - records into RRsets, and the checks named-checkzone and kzonecheck make, and
 * more: errors stop the build, warnings are printed and the zone is served as written; every
 * one names its record's file and line (diagnostics.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include "bake.h"

__typeof__(rdatas) rdatas;
__typeof__(rrsets) rrsets;
__typeof__(rrset_pos) rrset_pos;
__typeof__(zones) zones;
__typeof__(nodes) nodes;
__typeof__(files) files;
bytes_t rdata_raw;

uint32_t add_file(const char *display)
{
	PUSH(files, display);
	return files.n - 1;
}

int types_has(const types_t *types, uint16_t type)
{
	for (size_t i = 0; i < types->n; i++)
		if (types->v[i] == type)
			return 1;
	return 0;
}

int types_add(types_t *types, uint16_t type)
{
	if (types_has(types, type))
		return 0;
	RESERVE(*types, 1);
	size_t i = types->n++;
	for (; i > 0 && types->v[i - 1] > type; i--)
		types->v[i] = types->v[i - 1];
	types->v[i] = type;
	return 1;
}

uint32_t add_zone(const char *origin, const char *path, const char *display)
{
	name_t name;
	size_t len = strlen(origin);
	if (len == 0 || origin[len - 1] != '.' || parse_name(origin, len, ROOT, &name) != 0)
		unsupported("the origin %s needs the full reader", origin);
	if (N(name)->flags & NAME_ORIGIN)
		unsupported("the zone %s is listed twice", origin);
	if (name_is_wildcard(name))
		unsupported("the zone %s is a wildcard", origin);
	struct zone z = {.origin = name, .origin_text = origin, .path = path, .display = display, .soa = NONE,
			 .file = add_file(display)};
	PUSH(zones, z);
	N(name)->flags |= NAME_ORIGIN;
	N(name)->zone = zones.n - 1;
	return zones.n - 1;
}

/* Names interned before every zone was known (the origins, as the manifest is read) get
 * their zone now: a parent is interned before its children, so one pass in id order. */
void assign_zones(void)
{
	for (name_t id = 1; id < names.n; id++)
		if (!(N(id)->flags & NAME_ORIGIN))
			N(id)->zone = N(N(id)->parent)->zone;
}

/* Names are interned, so two records' names are equal when their ids are. */
int same_rdata(const struct rdata *a, const struct rdata *b)
{
	return a->name == b->name && a->name2 == b->name2 && a->raw_len == b->raw_len &&
	       (a->raw_len == 0 ||
		memcmp(rdata_raw.v + a->raw, rdata_raw.v + b->raw, a->raw_len) == 0);
}

/* The name and its ancestors up to the apex exist in the zone (empty non-terminals, RFC
 * 4592 §2.2.2); those of the zone's own namespace are nodes of the tree. */
static void mark_exists(uint32_t zone, name_t name, name_t origin)
{
	for (;;) {
		struct name *n = N(name);
		if (flags_in(zone, name) & NAME_EXISTS)
			return;
		set_flags_in(zone, name, NAME_EXISTS);
		if (n->zone == zone) {
			PUSH(nodes, name);
			/* A wildcard that exists answers below its parent, also as an empty
			 * non-terminal above other names (RFC 4592 §2.2.1). */
			if (name_is_wildcard(name))
				N(n->parent)->wildcard = name;
		}
		if (name == origin)
			return;
		name = n->parent;
	}
}

/* As mark_exists for each RRset in turn, in a zone of its own namespace (a set of one zone,
 * image.c): worked out aside, then written only where it differs, for the names are the
 * image's pages until written, and most stay as they were. */
void rederive_zone(uint32_t zone)
{
	struct zone *z = &zones.v[zone];
	uint8_t *exists = xcalloc(names.n ? names.n : 1, 1);
	name_t *wildcard = xmalloc((names.n ? names.n : 1) * sizeof *wildcard);
	memset(wildcard, 0xFF, (names.n ? names.n : 1) * sizeof *wildcard);
	nodes.n = 0;
	z->types.n = 0;
	for (size_t s = z->rrsets_begin; s < z->rrsets_end; s++) {
		if (!rrsets.v[s].count)
			continue;  /* gone, left in its place (changedlines.c) */
		types_add(&z->types, rrsets.v[s].type);
		for (name_t name = rrsets.v[s].owner; !exists[name]; name = N(name)->parent) {
			exists[name] = 1;
			if (N(name)->zone == zone) {
				PUSH(nodes, name);
				if (name_is_wildcard(name))
					wildcard[N(name)->parent] = name;
			}
			if (name == z->origin)
				break;
		}
	}
	for (name_t id = 0; id < names.n; id++) {
		struct name *n = N(id);
		if (n->zone != zone)
			continue;
		uint8_t flags = exists[id] ? n->flags | NAME_EXISTS : n->flags & ~NAME_EXISTS;
		if (n->flags != flags)
			n->flags = flags;
		if (n->wildcard != wildcard[id])
			n->wildcard = wildcard[id];
	}
	free(exists);
	free(wildcard);
}

/* Types a name holds one record of (dnspython's singletons): a second would replace the
 * first there, silently; here it is an error. */
const char *why_single(uint16_t type)
{
	switch (type) {
	case T_SOA:
		return "a zone has exactly one";
	case T_CNAME:
		return "an alias has one target (RFC 2181 §10.1)";
	case T_DNAME:
		return "a name has one redirection (RFC 6672 §2.4)";
	case T_NSEC:
	case 30:  /* NXT */
		return "a name holds one";
	}
	return NULL;
}

uint32_t push_rrset(struct rrset set, struct pos pos)
{
	PUSH(rrsets, set);
	PUSH(rrset_pos, pos);
	return rrsets.n - 1;
}

/* An RRset of one record, `r`, last among its owner's in `view` (file order). */
static uint32_t new_rrset(uint32_t zone, uint32_t view, name_t owner, uint16_t type,
			  uint16_t covers, uint32_t ttl, uint32_t r, struct pos pos)
{
	struct zone *z = &zones.v[zone];
	struct rrset set = {.owner = owner, .type = type, .covers = covers, .ttl = ttl,
			    .first = r, .last = r, .count = 1, .next = NONE, .sigs = NONE};
	uint32_t s = push_rrset(set, pos);
	uint32_t *link = rrsets_head(view, owner);
	while (*link != NONE)
		link = &rrsets.v[*link].next;
	*link = s;
	types_add(&z->types, type);
	if (view == zone)
		mark_exists(zone, owner, z->origin);
	/* A cut from its first NS on (RFC 1034 §4.2.1): marked here, where the RRset is filed,
	 * so that the image of a zone (image.c) keeps its cuts for a rebuild's checks of its
	 * change alone; the patch of an image keeps them so (changedlines.c, cut_now). */
	if (type == T_NS && view == zone && owner != z->origin)
		set_flags_in(zone, owner, NAME_CUT);
	return s;
}

void add_record(uint32_t zone, name_t owner, uint16_t type, uint32_t ttl, struct rdata rd,
		struct pos pos)
{
	struct zone *z = &zones.v[zone];
	if (!in_zone(zone, owner)) {
		diagnose(zone, ERROR, pos, "%s is outside the zone %s", name_text(owner),
			 name_text(z->origin));
		return;
	}
	uint16_t covers = 0;
	if (type == T_RRSIG) {
		if (rd.raw_len < 2) {
			diagnose(zone, ERROR, pos, "%s RRSIG: no type covered", name_text(owner));
			return;
		}
		covers = rdata_raw.v[rd.raw] << 8 | rdata_raw.v[rd.raw + 1];
	}
	uint32_t view = type == T_NSEC3 || covers == T_NSEC3 ? HASHED_VIEW(zone) : zone;
	PUSH(rdatas, rd);
	uint32_t r = rdatas.n - 1;
	uint32_t s = rrset_covering(view, owner, type, covers);
	if (s == NONE) {
		new_rrset(zone, view, owner, type, covers, ttl, r, pos);
		return;
	}
	struct rrset *set = &rrsets.v[s];
	for (uint32_t i = set->first; i != NONE; i = rdatas.v[i].next)
		if (same_rdata(&rdatas.v[i], &rdatas.v[r])) {
			diagnose(zone, WARNING, pos, "duplicate record %s %s dropped",
				 name_text(owner), type_name(type));
			rdatas.n--;
			return;
		}
	const char *why = why_single(type);
	if (why) {
		diagnose(zone, ERROR, pos, "a second %s record at %s (first at line %u); %s",
			 type_name(type), name_text(owner), set_pos(set).line, why);
		rdatas.n--;
		return;
	}
	if (ttl != set->ttl) {
		/* RFC 2181 §5.2: TTLs in an RRset must match; the lowest is served, as BIND does. */
		diagnose(zone, WARNING, pos, "TTL %u differs from %u in the %s %s RRset (first at "
			 "line %u); serving the lowest", ttl, set->ttl, name_text(owner),
			 type_name(type), set_pos(set).line);
		if (ttl < set->ttl)
			set->ttl = ttl;
	}
	rdatas.v[set->last].next = r;
	set->last = r;
	set->count++;
}

/* A signature of the RRset `covered` that has none yet, as add_record would add it: its
 * RRSIG RRset made, last at its owner, and linked. The signer's millions of signatures,
 * without add_record's search for an RRSIG RRset there is not (a walk of the owner's
 * RRsets, a lookup in the hashed view for an NSEC3's). */
void add_first_signature(uint32_t zone, uint32_t covered, struct rdata rd, struct pos pos)
{
	const struct rrset *c = &rrsets.v[covered];
	uint32_t view = c->type == T_NSEC3 ? HASHED_VIEW(zone) : zone;
	PUSH(rdatas, rd);
	uint32_t s = new_rrset(zone, view, c->owner, T_RRSIG, c->type, c->ttl, rdatas.n - 1, pos);
	rrsets.v[covered].sigs = s;
}

static uint32_t soa_minimum(uint32_t soa)
{
	const uint8_t *raw = rdata_raw.v + rdatas.v[rrsets.v[soa].first].raw;
	return (uint32_t)raw[16] << 24 | raw[17] << 16 | raw[18] << 8 | raw[19];
}

/* The names of a zone in the order they first own a record: a
 * name is met at its first RRset. */
#define EACH_NAME(z, s, owner) \
	for (size_t s = (z)->rrsets_begin; s < (z)->rrsets_end; s++) \
		for (name_t owner = rrsets.v[s].owner; \
		     owner != NONE && first_rrset(zone, owner) == s; \
		     owner = NONE)

#define EACH_RRSET(zone, owner, s) \
	for (uint32_t s = first_rrset(zone, owner); s != NONE; s = rrsets.v[s].next)
#define EACH_RDATA(set, i) for (uint32_t i = (set)->first; i != NONE; i = rdatas.v[i].next)

/* The zone's names in the order they first own a record (EACH_NAME's: the order the checks
 * speak in), each with what its RRsets hold that a check looks for, made in one walk: each
 * check then passes over the names that concern it. Each walking every name's RRsets, the
 * checks were a sixth of a million names' rebuild. */
enum {
	HOLDS_SOA = 1, HOLDS_CNAME = 2, HOLDS_NS = 4, HOLDS_MX = 8, HOLDS_DNAME = 16,
	HOLDS_ADDRESS = 32,
	HOLDS_OTHER = 64,  /* a type but CNAME, RRSIG and NSEC */
};
struct owner {
	name_t name;
	uint32_t first;  /* its first RRset */
	uint8_t holds;
};
typedef VEC(struct owner) owners_t;

static uint8_t type_holds(uint16_t type)
{
	uint8_t holds = type == T_SOA ? HOLDS_SOA : type == T_CNAME ? HOLDS_CNAME :
			type == T_NS ? HOLDS_NS : type == T_MX ? HOLDS_MX :
			type == T_DNAME ? HOLDS_DNAME :
			type == T_A || type == T_AAAA ? HOLDS_ADDRESS : 0;
	if (type != T_CNAME && type != T_RRSIG && type != T_NSEC)
		holds |= HOLDS_OTHER;
	return holds;
}

static int by_first_line(const void *x, const void *y)
{
	const struct owner *a = x, *b = y;
	uint32_t la = rrset_pos.v[a->first].line, lb = rrset_pos.v[b->first].line;
	return la != lb ? (la > lb) - (la < lb) : (a->first > b->first) - (a->first < b->first);
}

/* Reading the whole file numbers the RRsets, so the names, in the order of their lines;
 * over an image a name new to the zone, or one whose first record is new, comes after
 * those from before (image.c). The checks speak in the order of the lines all the same, as
 * a build into an empty directory would (an image is of one file: its lines order it). */
static void in_line_order(owners_t *o)
{
	if (image_new_from() == NONE)
		return;
	for (size_t i = 1; i < o->n; i++)
		if (by_first_line(&o->v[i - 1], &o->v[i]) > 0) {
			qsort(o->v, o->n, sizeof *o->v, by_first_line);
			return;
		}
}

/* In the same walk, the names' marks the checks read: a DNAME, and the zone's stamp on every
 * NS target (advise). `cuts`: whether the zone has a cut (marked as its NS were filed,
 * new_rrset). */
static owners_t owners_of(uint32_t zone, int *cuts)
{
	struct zone *z = &zones.v[zone];
	owners_t o = {0};
	uint32_t stamp = zone + 1;
	*cuts = 0;
	EACH_NAME(z, s, owner) {
		uint8_t holds = 0;
		EACH_RRSET(zone, owner, t) {
			uint16_t type = rrsets.v[t].type;
			holds |= type_holds(type);
			if (type == T_NS) {
				EACH_RDATA(&rrsets.v[t], i)
					N(rdatas.v[i].name)->stamp = stamp;
				if (owner != z->origin)
					*cuts = 1;
			}
			if (type == T_DNAME)
				set_flags_in(zone, owner, NAME_DNAME);
		}
		PUSH(o, ((struct owner){owner, (uint32_t)s, holds}));
	}
	in_line_order(&o);
	return o;
}

#define EACH_OWNER(o, it, wanted) \
	for (const struct owner *it = (o)->v, *end_ = (o)->n ? (o)->v + (o)->n : (o)->v; \
	     it != end_; it++) \
		if ((it->holds & (wanted)) == (wanted))

/* The apex holds the SOA and NS; no other name holds an SOA (RFC 1035 §5.2). */
static void check_apex(uint32_t zone, const owners_t *o)
{
	struct zone *z = &zones.v[zone];
	const char *origin = name_text(z->origin);
	if (z->soa == NONE)
		diagnose(zone, ERROR, (struct pos){z->file, 1}, "no SOA record at the zone apex %s",
			 origin);
	else if (rrset_in(zone, z->origin, T_NS) == NONE)
		diagnose(zone, ERROR, rrset_pos.v[z->soa], "no NS records at the zone apex %s",
			 origin);
	EACH_OWNER(o, it, HOLDS_SOA) {
		name_t owner = it->name;
		uint32_t soa = rrset_in(zone, owner, T_SOA);
		if (owner != z->origin)
			diagnose(zone, ERROR, rrset_pos.v[soa], "SOA record at %s, which is not the "
				 "zone apex %s", name_text(owner), name_text(z->origin));
	}
}

/* RFC 2181 §10.1: a CNAME stands alone; RFC 4035 §2.5: but for its RRSIG and NSEC. */
static void check_cname(uint32_t zone, const owners_t *o)
{
	EACH_OWNER(o, it, HOLDS_CNAME | HOLDS_OTHER) {
		name_t owner = it->name;
		uint32_t cname = rrset_in(zone, owner, T_CNAME);
		EACH_RRSET(zone, owner, other) {
			uint16_t type = rrsets.v[other].type;
			if (type == T_CNAME || type == T_RRSIG || type == T_NSEC)
				continue;
			diagnose(zone, ERROR, rrset_pos.v[other], "%s has a CNAME and %s data (RFC "
				 "2181 §10.1; CNAME at line %u)", name_text(owner), type_name(type),
				 rrset_pos.v[cname].line);
		}
	}
}

/* RFC 6672 §2.4: no name may exist below a DNAME owner (it could never be reached). */
static void check_dname(uint32_t zone, const owners_t *o)
{
	struct zone *z = &zones.v[zone];
	if (!types_has(&z->types, T_DNAME))
		return;
	EACH_OWNER(o, it, 0) {
		name_t owner = it->name;
		size_t s = it->first;
		for (name_t above = owner; above != z->origin;) {
			above = N(above)->parent;
			uint32_t dname = rrset_in(zone, above, T_DNAME);
			if (dname == NONE)
				continue;
			diagnose(zone, ERROR, rrset_pos.v[s], "%s lies below the DNAME at %s (line %u), "
				 "which redirects every name under it (RFC 6672 §2.4)", name_text(owner),
				 name_text(above), rrset_pos.v[dname].line);
			break;
		}
	}
}

static int has_address(uint32_t zone, name_t name)
{
	return rrset_in(zone, name, T_A) != NONE || rrset_in(zone, name, T_AAAA) != NONE;
}

/* An NS target inside the zone needs an address there: below a cut it is glue, which
 * nobody else can supply (RFC 1034 §4.2.1, RFC 9471); named-checkzone and kzonecheck
 * agree. `lenient` makes it a warning, as the peers let operators have it. */
static void check_glue(uint32_t zone, const owners_t *o, int lenient)
{
	struct zone *z = &zones.v[zone];
	EACH_OWNER(o, it, HOLDS_NS) {
		name_t owner = it->name;
		uint32_t ns = rrset_in(zone, owner, T_NS);
		EACH_RDATA(&rrsets.v[ns], i) {
			name_t target = rdatas.v[i].name;
			if (!name_is_below_or_at(target, z->origin) || has_address(zone, target))
				continue;
			diagnose(zone, lenient ? WARNING : ERROR, rrset_pos.v[ns], "%s NS %s: no A or "
				 "AAAA record for it in the zone (glue missing)", name_text(owner),
				 name_text(target));
		}
	}
}

/* A cut strictly above `name`, walking up to the apex. */
static int below_cut(uint32_t zone, name_t name, name_t origin)
{
	while (name != origin) {
		name = N(name)->parent;
		if (flags_in(zone, name) & NAME_CUT)
			return 1;
	}
	return 0;
}

/* Legal but probably wrong: served as written, with a warning. `cuts`: whether the zone
 * has any. */
static void advise(uint32_t zone, const owners_t *o, int cuts)
{
	struct zone *z = &zones.v[zone];
	uint32_t stamp = zone + 1;  /* on each NS target of this zone (owners_of) */
	int aliases = types_has(&z->types, T_CNAME);
	EACH_OWNER(o, it, 0) {
		name_t owner = it->name;
		static const uint16_t named[2] = {T_NS, T_MX};
		for (int t = 0; t < 2 && aliases && (it->holds & (HOLDS_NS | HOLDS_MX)); t++) {
			uint32_t set = rrset_in(zone, owner, named[t]);
			if (set == NONE)
				continue;
			EACH_RDATA(&rrsets.v[set], i) {
				name_t target = rdatas.v[i].name;
				if (!in_zone(zone, target) || rrset_in(zone, target, T_CNAME) == NONE)
					continue;
				diagnose(zone, WARNING, rrset_pos.v[set], "%s %s %s is an alias (CNAME); "
					 "RFC 2181 §10.3 forbids that", name_text(owner), type_name(named[t]),
					 name_text(target));
			}
		}
		uint32_t dname = it->holds & HOLDS_DNAME ? rrset_in(zone, owner, T_DNAME) : NONE;
		if (dname != NONE &&
		    name_is_below_or_at(rdatas.v[rrsets.v[dname].first].name, owner))
			diagnose(zone, WARNING, rrset_pos.v[dname], "%s DNAME %s: the target lies "
				 "below the owner, so every name under it redirects again without end "
				 "(RFC 6672 §5.2)", name_text(owner),
				 name_text(rdatas.v[rrsets.v[dname].first].name));
		uint32_t ns = it->holds & HOLDS_NS ? rrset_in(zone, owner, T_NS) : NONE;
		if (ns != NONE && name_is_wildcard(owner))
			diagnose(zone, WARNING, rrset_pos.v[ns], "wildcard %s has NS records (RFC "
				 "4592 §4.2: their meaning is undefined)", name_text(owner));
		static const uint16_t addresses[2] = {T_A, T_AAAA};
		if (!cuts || !(it->holds & HOLDS_ADDRESS) || N(owner)->stamp == stamp ||
		    !below_cut(zone, owner, z->origin))
			continue;
		for (int t = 0; t < 2; t++) {
			uint32_t set = rrset_in(zone, owner, addresses[t]);
			if (set != NONE)
				diagnose(zone, WARNING, rrset_pos.v[set], "%s %s lies below a delegation "
					 "but no NS record names it: glue nobody uses", name_text(owner),
					 type_name(addresses[t]));
		}
	}
	if (z->soa != NONE && soa_minimum(z->soa) > 86400)
		diagnose(zone, WARNING, rrset_pos.v[z->soa], "SOA MINIMUM %u is over a day; "
			 "negative answers will be cached that long (RFC 2308 §5)",
			 soa_minimum(z->soa));
}

/* Each RRSIG RRset to the RRset it covers; a signature of nothing is worth a warning. */
static void link_signatures(uint32_t zone)
{
	struct zone *z = &zones.v[zone];
	for (size_t s = z->rrsets_begin; s < z->rrsets_end; s++) {
		struct rrset *sig = &rrsets.v[s];
		if (sig->type != T_RRSIG)
			continue;
		uint32_t view = sig->covers == T_NSEC3 ? HASHED_VIEW(zone) : zone;
		uint32_t covered = rrset_covering(view, sig->owner, sig->covers, 0);
		if (covered != NONE)
			rrsets.v[covered].sigs = s;
		else
			diagnose(zone, WARNING, set_pos(sig), "%s RRSIG covers %s, which %s does not hold",
				 name_text(sig->owner), type_name(sig->covers), name_text(sig->owner));
	}
}

/* ---- a rebuild's checks of what its change reaches ---- */

/* A name among those checked again, once, if it owns records in the zone. */
static void recheck_owner(uint32_t zone, owners_t *o, uint8_t *in, name_t name)
{
	if (name == NONE || in[name])
		return;
	in[name] = 1;
	uint32_t first = N(name)->zone == zone ? first_rrset(zone, name) : NONE;
	if (first == NONE)
		return;
	uint8_t holds = 0;
	EACH_RRSET(zone, name, t)
		holds |= type_holds(rrsets.v[t].type);
	PUSH(*o, ((struct owner){name, first, holds}));
}

/* One pass over the zone's NS and MX RRsets, where a change needs it: the owners of those
 * naming a name `wanted` marks 1 checked again, and each name it marks 2 that an NS names
 * stamped as owners_of stamps every NS target. */
static void scan_named(uint32_t zone, const uint8_t *wanted, owners_t *o, uint8_t *in)
{
	const struct zone *z = &zones.v[zone];
	for (size_t s = z->rrsets_begin; s < z->rrsets_end; s++) {
		const struct rrset *set = &rrsets.v[s];
		if (set->type != T_NS && set->type != T_MX)
			continue;
		EACH_RDATA(set, i) {
			name_t target = rdatas.v[i].name;
			if (target == NONE)
				continue;
			if (wanted[target] & 1)
				recheck_owner(zone, o, in, set->owner);
			if ((wanted[target] & 2) && set->type == T_NS)
				N(target)->stamp = zone + 1;
		}
	}
}

/* Whether the NS RRset of the nearest cut above `name` names it (glue, as it mostly is);
 * 0 leaves it to scan_named. */
static int named_by_cut_above(uint32_t zone, name_t name)
{
	for (name_t up = name; up != zones.v[zone].origin;) {
		up = N(up)->parent;
		if (!(flags_in(zone, up) & NAME_CUT))
			continue;
		uint32_t ns = rrset_in(zone, up, T_NS);
		if (ns == NONE)
			return 0;
		EACH_RDATA(&rrsets.v[ns], i)
			if (rdatas.v[i].name == name)
				return 1;
		return 0;
	}
	return 0;
}

/* After a change read over the image of a build that said nothing: the checks of the names
 * it can have made wrong, and nothing else, which say nothing where the whole would say
 * nothing. Those are the names the records taken out and put in name (owners, targets: a
 * name an NS no longer names may be unused glue), the NS and MX owners naming a name that
 * lost its addresses (glue missing, RFC 1034 §4.2.1) or became an alias (RFC 2181 §10.3).
 * A cut made above names from before (unused glue below it), a DNAME or a signature: the
 * whole is checked. 0 where it is to be, as where these checks say anything: the whole then
 * says it in its order. */
static int check_changed(uint32_t zone, int lenient, const struct recheck *rc)
{
	struct zone *z = &zones.v[zone];
	if (rc->cut_made || types_has(&z->types, T_DNAME) || types_has(&z->types, T_RRSIG))
		return 0;
	size_t mark = diagnostics_mark();
	uint8_t *in = xcalloc(names.n ? names.n : 1, 1), *wanted = xcalloc(names.n ? names.n : 1, 1);
	owners_t o = {0};
	for (size_t i = 0; i < rc->n; i++)
		recheck_owner(zone, &o, in, rc->names[i]);
	/* A new name was named by no record from before. */
	int scan = 0;
	for (size_t i = 0; i < rc->nlost; i++) {
		name_t x = rc->lost[i];
		if (x < rc->first_new &&
		    (!has_address(zone, x) || rrset_in(zone, x, T_CNAME) != NONE)) {
			wanted[x] |= 1;
			scan = 1;
		}
	}
	if (scan)
		scan_named(zone, wanted, &o, in);
	scan = 0;
	for (size_t k = 0; k < o.n; k++) {
		name_t x = o.v[k].name;
		N(x)->stamp = 0;
		if (!(o.v[k].holds & HOLDS_ADDRESS) || !below_cut(zone, x, z->origin))
			continue;
		if (named_by_cut_above(zone, x)) {
			N(x)->stamp = zone + 1;
		} else {
			wanted[x] |= 2;
			scan = 1;
		}
	}
	if (scan)
		scan_named(zone, wanted, &o, in);
	check_apex(zone, &o);
	check_cname(zone, &o);
	check_glue(zone, &o, lenient);
	advise(zone, &o, 1);
	VEC_FREE(o);
	free(in);
	free(wanted);
	if (diagnostics_count() == mark)
		return 1;
	diagnostics_drop(mark);
	return 0;
}

/* Every check of one zone, in the order their messages come. */
void check_zone(uint32_t zone, int lenient)
{
	struct zone *z = &zones.v[zone];
	z->soa = rrset_in(zone, z->origin, T_SOA);
	if (z->soa != NONE) {
		uint32_t minimum = soa_minimum(z->soa);
		z->neg_ttl = rrsets.v[z->soa].ttl < minimum ? rrsets.v[z->soa].ttl : minimum;
	}
	/* The first private type the zone does not hold stands for every type it does not. */
	z->unused_qtype = 65280;
	while (types_has(&z->types, z->unused_qtype))
		z->unused_qtype++;
	struct recheck rc;
	if (image_recheck(zone, &rc) && check_changed(zone, lenient, &rc))
		return;
	int cuts;
	owners_t owners = owners_of(zone, &cuts);
	check_apex(zone, &owners);
	check_cname(zone, &owners);
	check_dname(zone, &owners);
	check_glue(zone, &owners, lenient);
	if (types_has(&z->types, T_RRSIG))
		link_signatures(zone);
	advise(zone, &owners, cuts);
	VEC_FREE(owners);
}

/* The records, once every answer is made: only the answers are read after. Their memory goes
 * back now, for the layout's pages of the data to take: on this kind of machine (a VM)
 * pages the process has not had before cost more than the copying into them. */
void release_records(void)
{
	image_written();  /* its writer reads them */
	VEC_FREE(rdatas);
	VEC_FREE(rrsets);
	VEC_FREE(rrset_pos);
	bytes_release(&rdata_raw);  /* readzone.c's reservation, or image.c's */
}

void zones_reset(void)
{
	for (size_t z = 0; z < zones.n; z++) {
		struct zone *zone = &zones.v[z];
		free(zone->types.v);
		free((char *)zone->records);
		free((char *)zone->keep_records);
		if (zone->sign) {
			for (size_t k = 0; k < zone->sign->keys.n; k++)
				free((uint8_t *)zone->sign->keys.v[k].rdata);
			free(zone->sign->keys.v);
			free((char *)zone->sign->write_to);
			free(zone->sign);
		}
	}
	VEC_FREE(zones);
	VEC_FREE(nodes);
	VEC_FREE(files);
	VEC_FREE(rdatas);
	VEC_FREE(rrsets);
	VEC_FREE(rrset_pos);
	bytes_release(&rdata_raw);
}
