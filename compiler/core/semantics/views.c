/*
 * views.c - what a zone holds at a name. A name belongs to the deepest zone of the set at or
 * above it, and holds that zone's RRsets and flags (struct name). When a parent zone and its
 * child are served together, the parent also holds records in the child's namespace: the
 * delegation's NS and DS at the child's apex, glue below it. Those are kept here, per zone
 * and name, so that the parent's checks and answers (a referral, DS at the cut, RFC 4035
 * §3.1.4.1) see the parent's data, as its own zone file says, and the child answers for
 * every name in its namespace.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"

/* A zone's RRsets and flags at a name of another zone's namespace. */
struct foreign {
	uint32_t zone;
	name_t name;
	uint32_t rrsets;
	uint8_t flags;
};

static VEC(struct foreign) foreign;
static uint32_t *slots;  /* open addressing over `foreign`; NONE when empty */
static size_t nslots;    /* a power of two, at least twice foreign.n */

static size_t slot_of(uint32_t zone, name_t name)
{
	uint64_t h = ((uint64_t)zone << 32 | name) * 0x9E3779B97F4A7C15ull;
	return (h >> 32) & (nslots - 1);
}

/* The slots made again, `size` of them, for the entries there are. */
static void rehash(size_t size)
{
	free(slots);
	nslots = size;
	slots = xmalloc(nslots * sizeof *slots);
	memset(slots, 0xFF, nslots * sizeof *slots);
	for (uint32_t i = 0; i < foreign.n; i++) {
		size_t t = slot_of(foreign.v[i].zone, foreign.v[i].name);
		while (slots[t] != NONE)
			t = (t + 1) & (nslots - 1);
		slots[t] = i;
	}
}

/* Room for `count` more, made at once: an NSEC3 chain adds a name of the hashed view for
 * each name of its zone, and growing by doubling placed them all again twenty times. */
void views_expect(size_t count)
{
	size_t size = nslots ? nslots : 64;
	while (size < 2 * (foreign.n + count))
		size *= 2;
	if (size > nslots)
		rehash(size);
	RESERVE(foreign, count);
}

static struct foreign *find(uint32_t zone, name_t name, int add)
{
	if (nslots == 0) {
		if (!add)
			return NULL;
		rehash(64);
	}
	size_t s = slot_of(zone, name);
	for (; slots[s] != NONE; s = (s + 1) & (nslots - 1)) {
		struct foreign *f = &foreign.v[slots[s]];
		if (f->zone == zone && f->name == name)
			return f;
	}
	if (!add)
		return NULL;
	struct foreign f = {zone, name, NONE, 0};
	PUSH(foreign, f);
	slots[s] = foreign.n - 1;
	if (2 * foreign.n > nslots)
		rehash(nslots * 2);
	return &foreign.v[foreign.n - 1];
}

size_t views_count(void)
{
	return foreign.n;
}

uint32_t *rrsets_head(uint32_t zone, name_t name)
{
	if (N(name)->zone == zone)
		return &N(name)->rrsets;
	return &find(zone, name, 1)->rrsets;
}

uint32_t first_rrset(uint32_t zone, name_t name)
{
	if (N(name)->zone == zone)
		return N(name)->rrsets;
	const struct foreign *f = find(zone, name, 0);
	return f ? f->rrsets : NONE;
}

uint32_t rrset_in(uint32_t zone, name_t name, uint16_t type)
{
	for (uint32_t s = first_rrset(zone, name); s != NONE; s = rrsets.v[s].next)
		if (rrsets.v[s].type == type)
			return s;
	return NONE;
}

uint32_t rrset_covering(uint32_t zone, name_t name, uint16_t type, uint16_t covers)
{
	for (uint32_t s = first_rrset(zone, name); s != NONE; s = rrsets.v[s].next)
		if (rrsets.v[s].type == type && rrsets.v[s].covers == covers)
			return s;
	return NONE;
}

uint32_t rrset_at(name_t name, uint16_t type)
{
	return rrset_in(N(name)->zone, name, type);
}

uint8_t flags_in(uint32_t zone, name_t name)
{
	if (N(name)->zone == zone)
		return N(name)->flags;
	const struct foreign *f = find(zone, name, 0);
	return f ? f->flags : 0;
}

void set_flags_in(uint32_t zone, name_t name, uint8_t flags)
{
	if (N(name)->zone == zone)
		N(name)->flags |= flags;
	else
		find(zone, name, 1)->flags |= flags;
}

int occluded(uint32_t zone, name_t name)
{
	name_t origin = zones.v[zone].origin;
	while (name != origin && name != NONE) {
		name = N(name)->parent;
		if (flags_in(zone, name) & (NAME_CUT | NAME_DNAME))
			return 1;
	}
	return 0;
}

uint32_t delegating_zone(name_t name)
{
	if (!(N(name)->flags & NAME_ORIGIN) || name == ROOT)
		return NONE;
	uint32_t parent = N(N(name)->parent)->zone;
	return parent != NONE && (flags_in(parent, name) & NAME_CUT) ? parent : NONE;
}

int in_zone(uint32_t zone, name_t name)
{
	return N(name)->zone == zone || name_is_below_or_at(name, zones.v[zone].origin);
}

void views_reset(void)
{
	VEC_FREE(foreign);
	free(slots);
	slots = NULL;
	nslots = 0;
}
