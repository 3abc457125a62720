/*
 * zones.c - records into RRsets, and the checks of compiler/validate.py turned around: where
 * the Python pipeline would print an error or a warning, the baker declines, so that the
 * Python pipeline prints it. A zone the baker accepts compiles without a diagnostic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include "bake.h"

__typeof__(rdatas) rdatas;
__typeof__(rrsets) rrsets;
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
		decline("the origin %s needs the full reader", origin);
	if (N(name)->flags & NAME_ORIGIN)
		decline("the zone %s is listed twice", origin);
	if (name_is_wildcard(name))
		decline("the zone %s is a wildcard", origin);
	struct zone z = {.origin = name, .path = path, .display = display, .soa = NONE,
			 .file = add_file(display)};
	PUSH(zones, z);
	N(name)->flags |= NAME_ORIGIN;
	N(name)->zone = zones.n - 1;
	return zones.n - 1;
}

uint32_t rrset_at(name_t name, uint16_t type)
{
	for (uint32_t s = N(name)->rrsets; s != NONE; s = rrsets.v[s].next)
		if (rrsets.v[s].type == type)
			return s;
	return NONE;
}

/* Names are interned, so two records' names are equal when their ids are. */
static int same_rdata(const struct rdata *a, const struct rdata *b)
{
	return a->name == b->name && a->name2 == b->name2 && a->raw_len == b->raw_len &&
	       memcmp(rdata_raw.v + a->raw, rdata_raw.v + b->raw, a->raw_len) == 0;
}

static void mark_exists(name_t name, name_t origin)
{
	for (;;) {
		struct name *n = N(name);
		if (n->flags & NAME_EXISTS)
			return;
		n->flags |= NAME_EXISTS;
		PUSH(nodes, name);
		if (name == origin)
			return;
		name = n->parent;
	}
}

void add_record(uint32_t zone, name_t owner, uint16_t type, uint32_t ttl, struct rdata rd,
		struct pos pos)
{
	struct zone *z = &zones.v[zone];
	const char *where = files.v[pos.file];
	uint32_t line = pos.line;
	if (N(owner)->zone != zone)
		decline("%s:%u: %s is outside the zone (or inside another served zone)", where,
			line, name_text(owner));
	/* A wildcard owns data (RFC 4592); a '*' deeper in a name is a label like any other to
	 * dnspython, which the baker leaves to it. */
	for (name_t n = owner; n != z->origin; n = N(n)->parent)
		if (n != owner && name_is_wildcard(n))
			decline("%s:%u: a name below a wildcard", where, line);
	if (name_is_wildcard(owner))
		N(N(owner)->parent)->wildcard = owner;
	PUSH(rdatas, rd);
	uint32_t r = rdatas.n - 1;
	uint32_t s = rrset_at(owner, type);
	if (s == NONE) {
		struct rrset set = {.owner = owner, .type = type, .ttl = ttl, .first = r, .last = r,
				    .count = 1, .next = NONE, .pos = pos};
		PUSH(rrsets, set);
		s = rrsets.n - 1;
		uint32_t *link = &N(owner)->rrsets;
		while (*link != NONE)
			link = &rrsets.v[*link].next;
		*link = s;
		types_add(&z->types, type);
		mark_exists(owner, z->origin);
		return;
	}
	struct rrset *set = &rrsets.v[s];
	for (uint32_t i = set->first; i != NONE; i = rdatas.v[i].next)
		if (same_rdata(&rdatas.v[i], &rdatas.v[r]))
			decline("%s:%u: a duplicate record", where, line);
	if (type == T_SOA || type == T_CNAME)
		decline("%s:%u: a second %s record", where, line, type == T_SOA ? "SOA" : "CNAME");
	if (ttl != set->ttl)
		decline("%s:%u: TTLs differ in an RRset", where, line);
	rdatas.v[set->last].next = r;
	set->last = r;
	set->count++;
}

static int has_address(name_t name)
{
	return rrset_at(name, T_A) != NONE || rrset_at(name, T_AAAA) != NONE;
}

/* A cut strictly above `name`, walking up to the apex (validate.py's _below_any). */
static int below_cut(name_t name, name_t origin)
{
	while (name != origin) {
		name = N(name)->parent;
		if (N(name)->flags & NAME_CUT)
			return 1;
	}
	return 0;
}

static uint32_t soa_minimum(uint32_t soa)
{
	const uint8_t *raw = rdata_raw.v + rdatas.v[rrsets.v[soa].first].raw;
	return (uint32_t)raw[16] << 24 | raw[17] << 16 | raw[18] << 8 | raw[19];
}

/* Everything of validate.py, for one zone: any finding declines. */
void check_zone(uint32_t zone)
{
	struct zone *z = &zones.v[zone];
	const char *where = z->display;
	z->soa = rrset_at(z->origin, T_SOA);
	if (z->soa == NONE || rrset_at(z->origin, T_NS) == NONE)
		decline("%s: no SOA or no NS at the apex", where);
	uint32_t minimum = soa_minimum(z->soa);
	if (minimum > 86400)
		decline("%s: SOA MINIMUM over a day", where);
	z->neg_ttl = rrsets.v[z->soa].ttl < minimum ? rrsets.v[z->soa].ttl : minimum;

	/* Cuts first: the glue checks need them all. */
	/* The first private type the zone does not hold stands for every type it does not. */
	z->unused_qtype = 65280;
	while (types_has(&z->types, z->unused_qtype))
		z->unused_qtype++;
	uint32_t stamp = zone + 1;
	for (size_t s = z->rrsets_begin; s < z->rrsets_end; s++) {
		const struct rrset *set = &rrsets.v[s];
		if (set->type == T_NS && set->owner != z->origin)
			N(set->owner)->flags |= NAME_CUT;
		if (set->type == T_NS)
			for (uint32_t i = set->first; i != NONE; i = rdatas.v[i].next)
				N(rdatas.v[i].name)->stamp = stamp;  /* an NS target of this zone */
	}
	for (size_t s = z->rrsets_begin; s < z->rrsets_end; s++) {
		const struct rrset *set = &rrsets.v[s];
		name_t owner = set->owner;
		if (set->type == T_NS && name_is_wildcard(owner))
			decline("%s:%u: a wildcard with NS records", where, set->pos.line);
		if (set->type == T_SOA && owner != z->origin)
			decline("%s:%u: SOA below the apex", where, set->pos.line);
		if (set->type != T_CNAME && rrset_at(owner, T_CNAME) != NONE)
			decline("%s:%u: CNAME and other data", where, set->pos.line);
		if (set->type == T_NS || set->type == T_MX) {
			for (uint32_t i = set->first; i != NONE; i = rdatas.v[i].next) {
				name_t target = rdatas.v[i].name;
				int inside = N(target)->zone == zone;
				if (inside && rrset_at(target, T_CNAME) != NONE)
					decline("%s:%u: a target that is a CNAME", where, set->pos.line);
				if (set->type == T_NS && inside && !has_address(target))
					decline("%s:%u: glue missing", where, set->pos.line);
			}
		}
		if ((set->type == T_A || set->type == T_AAAA) && N(owner)->stamp != stamp &&
		    below_cut(owner, z->origin))
			decline("%s:%u: glue no delegation uses", where, set->pos.line);
	}
}

/* The records, once every answer is made: only the answers are read after. Their memory goes
 * back now, for the layout's pages of zonedata.bin to take: on this kind of machine (a VM)
 * pages the process has not had before cost more than the copying into them. */
void release_records(void)
{
	free(rdatas.v);
	free(rrsets.v);
	if (rdata_raw.cap >= HUGE_RESERVE)
		munmap(rdata_raw.v, rdata_raw.cap);  /* readzone.c's reservation */
	else
		free(rdata_raw.v);
	memset(&rdatas, 0, sizeof rdatas);
	memset(&rrsets, 0, sizeof rrsets);
	memset(&rdata_raw, 0, sizeof rdata_raw);
}
