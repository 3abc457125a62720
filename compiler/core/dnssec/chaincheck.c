/*
 * chaincheck.c - a signed zone's denial chain, checked as its signer should have made it.
 * NSEC (RFC 4035 §2.3, RFC 4034 §4.1): one at every authoritative name, each naming the next
 * in canonical order and the last the apex, its type bitmap the types at its owner.
 * NSEC3 (RFC 5155 §7.1): one matching every authoritative name and empty non-terminal (an
 * insecure delegation, and a non-terminal only above such, may be left to an opt-out NSEC3
 * that covers it), each naming the next hash, its bitmap its name's types; the parameters as
 * RFC 9276 §3.1 advises. A wrong chain proves a name away that exists, or fails validation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "hash.h"
#include "query/nsec3hash.h"

#define MAX_TYPES 256 /* a name's types we compare; more are not served by anyone */
#define NSEC3_OPT_OUT 1
#define MAX_ITERATIONS 100  /* RFC 9276 §3.2: validators may treat more as insecure */

typedef struct {
	uint16_t v[MAX_TYPES];
	size_t n;
} typelist;

static void add_type(typelist *t, uint16_t type)
{
	size_t i = 0;
	while (i < t->n && t->v[i] < type)
		i++;
	if ((i < t->n && t->v[i] == type) || t->n == MAX_TYPES)
		return;
	memmove(t->v + i + 1, t->v + i, (t->n - i) * sizeof *t->v);
	t->v[i] = type;
	t->n++;
}

/* The types a chain entry must list for a name: its RRsets' (RRSIG among them); at a cut,
 * what the parent is authoritative for (RFC 4035 §2.3: NS, DS, NSEC, RRSIG). */
static void types_at(uint32_t zone, name_t name, typelist *t)
{
	t->n = 0;
	int cut = flags_in(zone, name) & NAME_CUT;
	for (uint32_t s = first_rrset(zone, name); s != NONE; s = rrsets.v[s].next) {
		uint16_t type = rrsets.v[s].type;
		if (!cut || type == T_NS || type == T_DS || type == T_NSEC || type == T_RRSIG)
			add_type(t, type);
	}
}

/* A type bitmap (RFC 4034 §4.1.2); 0 when malformed. */
static int bitmap_types(const uint8_t *p, size_t len, typelist *t)
{
	t->n = 0;
	for (size_t at = 0; at < len;) {
		if (at + 2 > len || p[at + 1] == 0 || p[at + 1] > 32 || at + 2 + p[at + 1] > len)
			return 0;
		unsigned window = p[at];
		for (unsigned i = 0; i < p[at + 1]; i++)
			for (unsigned bit = 0; bit < 8; bit++)
				if (p[at + 2 + i] & (0x80 >> bit))
					add_type(t, window << 8 | i << 3 | bit);
		at += 2 + p[at + 1];
	}
	return 1;
}

/* The types of `a` that `b` lacks, both ascending. */
static void types_not_in(const typelist *a, const typelist *b, typelist *out)
{
	out->n = 0;
	for (size_t i = 0, j = 0; i < a->n; i++) {
		while (j < b->n && b->v[j] < a->v[i])
			j++;
		if (j == b->n || b->v[j] != a->v[i])
			out->v[out->n++] = a->v[i];
	}
}

static void list_types(const typelist *t, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	for (size_t i = 0; i < t->n && n + 1 < cap; i++)
		n += snprintf(out + n, cap - n, "%s%s", i ? " " : "", type_name(t->v[i]));
	if (t->n == 0)
		snprintf(out, cap, "no type");
}

/* A wire name as text, for a message: the names it names need not be the zone's. */
static void wire_text(const uint8_t *wire, char *out, size_t cap)
{
	size_t n = 0;
	for (size_t at = 0; wire[at] && n + 8 < cap; at += 1 + wire[at]) {
		for (size_t i = 1; i <= wire[at] && n + 8 < cap; i++) {
			uint8_t ch = wire[at + i];
			n += ch > ' ' && ch < 127 && ch != '.' && ch != '\\' ?
			     snprintf(out + n, cap - n, "%c", ch) : snprintf(out + n, cap - n, "\\%03u", ch);
		}
		n += snprintf(out + n, cap - n, ".");
	}
	if (n == 0)
		snprintf(out, cap, ".");
}

struct zone_chain {
	uint32_t zone;
	size_t missing, misnext, bitmaps;
};

static void check_bitmap(struct zone_chain *c, const struct rrset *entry, name_t name,
			 const uint8_t *bitmap, size_t len)
{
	typelist want, have;
	types_at(c->zone, name, &want);
	if (!bitmap_types(bitmap, len, &have) || have.n != want.n ||
	    memcmp(have.v, want.v, have.n * sizeof *have.v) != 0) {
		if (c->bitmaps++ >= SHOWN_EACH)
			return;
		/* Both lists, then what differs: one type among ten is easily missed. */
		char listed[1024], held[1024], extra[1024], lacking[1024];
		typelist more, less;
		list_types(&have, listed, sizeof listed);
		list_types(&want, held, sizeof held);
		types_not_in(&have, &want, &more);
		types_not_in(&want, &have, &less);
		list_types(&more, extra, sizeof extra);
		list_types(&less, lacking, sizeof lacking);
		diagnose(c->zone, ERROR, set_pos(entry), "%s at %s lists %s, but %s holds %s: %s%s%s%s%s "
			 "(RFC 4034 §4.1.2)", type_name(entry->type), name_text(entry->owner), listed,
			 name_text(name), held, more.n ? extra : "", more.n ? " listed, not held" : "",
			 more.n && less.n ? "; " : "", less.n ? lacking : "",
			 less.n ? " held, not listed" : "");
	}
}

/* Each authoritative name with data, once. */
#define EACH_DATA_NAME(zone, z, s, name) \
	for (size_t s = (z)->rrsets_begin; s < (z)->rrsets_end; s++) \
		for (name_t name = rrsets.v[s].owner; \
		     name != NONE && first_rrset(zone, name) == s && !occluded(zone, name); \
		     name = NONE)

static void check_nsec(struct zone_chain *c)
{
	uint32_t zone = c->zone;
	const struct zone *z = &zones.v[zone];
	EACH_DATA_NAME(zone, z, s, name)
		if (rrset_in(zone, name, T_NSEC) == NONE && c->missing++ < SHOWN_EACH)
			diagnose(zone, ERROR, rrset_pos.v[s], "%s has no NSEC record: the chain "
				 "must pass through every name that holds data (RFC 4035 §2.3)",
				 name_text(name));
	size_t n = chain_length(zone);
	for (size_t i = 0; i < n; i++) {
		const struct rrset *set = &rrsets.v[chain_rrset(zone, i)];
		const struct rdata *rd = &rdatas.v[set->first];
		uint8_t next[256], want[256];
		size_t at = 0;
		const uint8_t *raw = rdata_raw.v + rd->raw;
		while (at < rd->raw_len && raw[at])
			at += 1 + raw[at];
		if (at >= rd->raw_len || at + 1 > sizeof next)
			continue;  /* malformed: the reader declines it */
		memcpy(next, raw, at + 1);
		for (size_t j = 0; j <= at; j++)
			next[j] += next[j] >= 'A' && next[j] <= 'Z' ? 32 : 0;  /* lengths are < 64 */
		size_t want_len = name_key(rrsets.v[chain_rrset(zone, (i + 1) % n)].owner, want);
		if ((want_len != at + 1 || memcmp(next, want, want_len) != 0) &&
		    c->misnext++ < SHOWN_EACH) {
			char next_text[1024];
			wire_text(next, next_text, sizeof next_text);
			diagnose(zone, ERROR, set_pos(set), "NSEC at %s names %s next, but the next name "
				 "in canonical order is %s (RFC 4034 §4.1.1)", name_text(set->owner),
				 next_text, name_text(rrsets.v[chain_rrset(zone, (i + 1) % n)].owner));
		}
		check_bitmap(c, set, set->owner, raw + at + 1, rd->raw_len - at - 1);
	}
}

static void check_parameters(uint32_t zone)
{
	const struct zone *z = &zones.v[zone];
	uint16_t iterations;
	const uint8_t *salt;
	uint8_t salt_len;
	chain_parameters(zone, &iterations, &salt, &salt_len);
	uint32_t param = rrset_in(zone, z->origin, T_NSEC3PARAM);
	struct pos pos = rrset_pos.v[param != NONE ? param : chain_rrset(zone, 0)];
	if (iterations > MAX_ITERATIONS)
		diagnose(zone, ERROR, pos, "NSEC3 iterations %u: validators treat a zone with more "
			 "than %u as insecure or bogus (RFC 9276 §3.2); sign it with 0", iterations,
			 MAX_ITERATIONS);
	else if (iterations > 0)
		diagnose(zone, WARNING, pos, "NSEC3 iterations %u: RFC 9276 §3.1 says 0; more "
			 "cost every resolver and protect nothing", iterations);
	if (salt_len > 0)
		diagnose(zone, WARNING, pos, "NSEC3 salt of %u octets: RFC 9276 §3.1 says none",
			 salt_len);
}

/*
 * The names an NSEC3 chain must match or cover, checked against it in hash order: each name
 * looked up in the chain by itself would read its entry at random, three or four cache
 * misses a name, most of a million names' check. So each name is hashed and its types taken
 * in the zone's order (where its records lie), the asks sorted by hash and walked beside the
 * chain, whose entries lie in hash order; what is wrong is diagnosed after, in the order the
 * names were asked, as if one by one.
 */
#define TYPES_INLINE 7  /* a name's types carried in its ask; more are compared after */

struct nsec3_ask {  /* sorted by hash: digests_sort's record, no padding */
	uint8_t hash[ZB_SHA1_LEN];
	uint32_t seq;      /* in the order asked */
	uint16_t types[TYPES_INLINE];
	uint8_t ntypes;    /* TYPES_INLINE + 1: more */
	uint8_t unused;
};
_Static_assert(sizeof(struct nsec3_ask) == ZB_SHA1_LEN + 4 + 2 * TYPES_INLINE + 2,
	       "struct nsec3_ask is packed");

struct nsec3_asked {  /* by seq */
	name_t name;
	uint32_t set;      /* where its diagnostic points: its first RRset's, or a name's below */
	uint8_t optional;  /* an insecure delegation (or a non-terminal above only such) */
	uint8_t found;     /* FOUND_ flags */
	uint32_t index;    /* the chain entry at or before its hash */
};
enum { FOUND_MATCH = 1, FOUND_BITMAP_DIFFERS = 2, FOUND_OPT_OUT = 4 };

typedef VEC(struct nsec3_ask) asks_t;
typedef VEC(struct nsec3_asked) asked_t;

static void ask_nsec3(struct zone_chain *c, asks_t *asks, asked_t *asked, name_t name,
		      int optional, uint32_t set)
{
	struct nsec3_ask a = {.seq = asked->n};
	uint8_t key[256];
	name_hash(c->zone, key, name_key(name, key), a.hash);
	typelist want;
	types_at(c->zone, name, &want);
	a.ntypes = want.n > TYPES_INLINE ? TYPES_INLINE + 1 : want.n;
	memcpy(a.types, want.v, (a.ntypes <= TYPES_INLINE ? a.ntypes : 0) * sizeof *a.types);
	PUSH(*asks, a);
	PUSH(*asked, ((struct nsec3_asked){name, set, optional, 0, 0}));
}

/* An entry's type bitmap: past the hash, flags, iterations, salt and next hash. */
static const uint8_t *nsec3_bitmap(const struct rrset *set, size_t *len)
{
	const uint8_t *raw = rdata_raw.v + rdatas.v[set->first].raw;
	size_t at = 5 + raw[4];
	at += 1 + raw[at];
	*len = rdatas.v[set->first].raw_len - at;
	return raw + at;
}

/* Each ask, in hash order, against the entry at or before its hash (the last, for one before
 * the first: the chain wraps). */
static void walk_chain(uint32_t zone, const asks_t *asks, asked_t *asked, uint8_t *matched)
{
	size_t n = chain_length(zone);
	uint32_t next = 0;  /* the first entry after the ask's hash */
	for (size_t k = 0; k < asks->n; k++) {
		const struct nsec3_ask *a = &asks->v[k];
		while (next < n && memcmp(chain_hash(zone, next), a->hash, ZB_SHA1_LEN) <= 0)
			next++;
		uint32_t index = next ? next - 1 : n - 1;
		struct nsec3_asked *to = &asked->v[a->seq];
		const struct rrset *set = &rrsets.v[chain_rrset(zone, index)];
		to->index = index;
		if (!next || memcmp(chain_hash(zone, index), a->hash, ZB_SHA1_LEN) != 0) {
			to->found = rdata_raw.v[rdatas.v[set->first].raw + 1] & NSEC3_OPT_OUT
				    ? FOUND_OPT_OUT : 0;
			continue;
		}
		matched[index] = 1;
		to->found = FOUND_MATCH;
		size_t len;
		const uint8_t *bitmap = nsec3_bitmap(set, &len);
		typelist have;
		if (a->ntypes > TYPES_INLINE || !bitmap_types(bitmap, len, &have) ||
		    have.n != a->ntypes || memcmp(have.v, a->types, have.n * sizeof *have.v) != 0)
			to->found |= FOUND_BITMAP_DIFFERS;  /* check_bitmap tells, or finds it alike */
	}
}

/* What walk_chain found wrong, in the order asked. */
static void diagnose_asked(struct zone_chain *c, const asked_t *asked)
{
	uint32_t zone = c->zone;
	for (size_t k = 0; k < asked->n; k++) {
		const struct nsec3_asked *a = &asked->v[k];
		if (a->found & FOUND_BITMAP_DIFFERS) {
			const struct rrset *set = &rrsets.v[chain_rrset(zone, a->index)];
			size_t len;
			const uint8_t *bitmap = nsec3_bitmap(set, &len);
			check_bitmap(c, set, a->name, bitmap, len);
		} else if (!(a->found & FOUND_MATCH) && !(a->optional && (a->found & FOUND_OPT_OUT)) &&
			   c->missing++ < SHOWN_EACH) {
			diagnose(zone, ERROR, rrset_pos.v[a->set], "%s has no NSEC3 record%s (RFC 5155 "
				 "§7.1)", name_text(a->name), a->optional ? ", and the NSEC3 that "
				 "covers it is not opt-out" : "");
		}
	}
}

static void check_nsec3(struct zone_chain *c)
{
	uint32_t zone = c->zone;
	const struct zone *z = &zones.v[zone];
	check_parameters(zone);
	size_t n = chain_length(zone);
	for (size_t i = 0; i < n; i++) {
		const struct rrset *set = &rrsets.v[chain_rrset(zone, i)];
		const uint8_t *raw = rdata_raw.v + rdatas.v[set->first].raw;
		size_t at = 5 + raw[4];
		if (raw[at] != ZB_SHA1_LEN ||
		    memcmp(raw + at + 1, chain_hash(zone, (i + 1) % n), ZB_SHA1_LEN) != 0) {
			if (c->misnext++ < SHOWN_EACH)
				diagnose(zone, ERROR, set_pos(set), "NSEC3 at %s does not name the next hash "
					 "of the chain, %s (RFC 5155 §3.1.7)", name_text(set->owner),
					 name_text(rrsets.v[chain_rrset(zone, (i + 1) % n)].owner));
		}
	}
	/* Per name: 1 an empty non-terminal, 2 one needed (above a name not opted out). */
	uint8_t *ent = xcalloc(names.n, 1), *matched = xcalloc(n ? n : 1, 1);
	asks_t asks = {0};
	asked_t asked = {0};
	EACH_DATA_NAME(zone, z, s, name) {
		int cut = flags_in(zone, name) & NAME_CUT;
		int optional = cut && rrset_in(zone, name, T_DS) == NONE;
		ask_nsec3(c, &asks, &asked, name, optional, s);
		for (name_t up = N(name)->parent; name != z->origin && up != z->origin;
		     up = N(up)->parent)
			if (first_rrset(zone, up) == NONE)
				ent[up] |= 1 | (optional ? 0 : 2);
	}
	EACH_DATA_NAME(zone, z, s, name)
		for (name_t up = N(name)->parent; name != z->origin && up != z->origin;
		     up = N(up)->parent)
			if (ent[up] & 1) {
				ask_nsec3(c, &asks, &asked, up, !(ent[up] & 2), s);
				ent[up] = 0;  /* once */
			}
	if (n && asks.n) {
		digests_sort((uint8_t *)asks.v, asks.n, sizeof *asks.v);
		walk_chain(zone, &asks, &asked, matched);
	}
	diagnose_asked(c, &asked);
	VEC_FREE(asks);
	VEC_FREE(asked);
	size_t stale = 0;
	for (size_t i = 0; i < n; i++)
		if (!matched[i] && stale++ < SHOWN_EACH)
			diagnose(zone, WARNING, rrset_pos.v[chain_rrset(zone, i)], "NSEC3 at %s "
				 "matches no name of the zone", name_text(rrsets.v[chain_rrset(zone,
				 i)].owner));
	free(ent);
	free(matched);
}

/* What a zone's chain check reads: each RRset's owner (its key) and type, which make its
 * names, their types and where its cuts are; and the records of the chain and its
 * parameters. Names digested from their parents', once each (name_key_digest). */
static uint64_t check_input(uint32_t zone, uint64_t *memo)
{
	const struct zone *z = &zones.v[zone];
	uint64_t h = mix64(chain_kind(zone) ^ (uint64_t)(z->rrsets_end - z->rrsets_begin) << 16);
	for (uint32_t s = z->rrsets_begin; s < z->rrsets_end; s++) {
		const struct rrset *set = &rrsets.v[s];
		h = mix64(h ^ name_key_digest(memo, set->owner) ^ (uint64_t)set->type << 48 ^
			  set->covers);
		if (set->type == T_NSEC || set->type == T_NSEC3 || set->type == T_NSEC3PARAM)
			for (uint32_t r = set->first; r != NONE; r = rdatas.v[r].next)
				h = zb_hash(rdata_raw.v + rdatas.v[r].raw, rdatas.v[r].raw_len,
					    h ^ rdatas.v[r].raw_len);
	}
	return h | 1;
}

static uint64_t *checked;  /* per zone: chain_checked */
static size_t kept;        /* zones whose check the earlier build's stands for */

uint64_t chain_checked(uint32_t zone)
{
	return checked ? checked[zone] : 0;
}

/*
 * A zone's chain is checked unless the earlier build (reuse.c) checked the very same and
 * found nothing: its records, its names and their types, as check_input digests them, are
 * all the check reads, so it would find nothing again. A rebuild that changes a record's
 * value leaves them so, and the check was a second of a million names' rebuild.
 */
void check_chains(void)
{
	free(checked);
	checked = xcalloc(zones.n ? zones.n : 1, sizeof *checked);
	kept = 0;
	uint64_t *memo = NULL;
	for (uint32_t zone = 0; zone < zones.n; zone++) {
		struct zone_chain c = {.zone = zone};
		if (!chain_kind(zone))
			continue;
		if (!memo)
			memo = xcalloc(names.n, sizeof *memo);
		uint64_t input = check_input(zone, memo);
		if (input == reuse_earlier_chain(zone)) {
			checked[zone] = input;
			kept++;
			continue;
		}
		size_t found = diagnostics_count();
		if (chain_kind(zone) == T_NSEC)
			check_nsec(&c);
		else
			check_nsec3(&c);
		const struct pos pos = rrset_pos.v[chain_rrset(zone, 0)];
		diagnose_rest(zone, ERROR, pos, c.missing, "names without their chain entry");
		diagnose_rest(zone, ERROR, pos, c.misnext, "chain entries naming the wrong next one");
		diagnose_rest(zone, ERROR, pos, c.bitmaps, "type bitmaps that do not match their name");
		if (diagnostics_count() == found)
			checked[zone] = input;
	}
	free(memo);
}

size_t chains_kept(void)
{
	return kept;
}

void chains_checked_reset(void)
{
	free(checked);
	checked = NULL;
	kept = 0;
}
