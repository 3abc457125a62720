/*
 * chainmake.c - the records a zone signed at build time gains before its signatures
 * (signer.c): the DNSKEY RRset; CDS and CDNSKEY for its key-signing keys (RFC 7344 §4; none
 * when the zone has its own, such as RFC 8078 §4's deletion records); NSEC3PARAM; and the
 * NSEC chain (RFC 4035 §2.3) or the NSEC3 chain (RFC 5155 §7.1) with RFC 9276's parameters,
 * 0 iterations and no salt. chaincheck.c then checks them as it checks any signer's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "query/nsec3hash.h"

#define MAX_TYPES 1024
#define NSEC3_SHA1 1       /* RFC 5155 §11 */
#define NSEC3_OPT_OUT 1    /* RFC 5155 §3.1.2.1 */
#define DS_SHA256 2        /* RFC 4509 */

/* Generated records stand where the zone's SOA does: messages about them point there. */
static struct pos generated(uint32_t zone)
{
	return rrset_pos.v[zones.v[zone].soa];
}

static void add_raw(uint32_t zone, name_t owner, uint16_t type, uint32_t ttl,
		    const uint8_t *p, size_t len)
{
	struct rdata rd = {.raw = rdata_raw.n, .raw_len = len, .name = NONE, .name2 = NONE,
			   .next = NONE};
	bytes_put(&rdata_raw, p, len);
	add_record(zone, owner, type, ttl, rd, generated(zone));
}

static int holds(uint32_t zone, name_t owner, uint16_t type, const uint8_t *p, size_t len)
{
	uint32_t set = rrset_in(zone, owner, type);
	for (uint32_t i = set == NONE ? NONE : rrsets.v[set].first; i != NONE; i = rdatas.v[i].next)
		if (rdatas.v[i].raw_len == len && memcmp(rdata_raw.v + rdatas.v[i].raw, p, len) == 0)
			return 1;
	return 0;
}

/* The zone's keys in its DNSKEY RRset (the zone's own DNSKEY records stay: another
 * signer's, in a multi-signer setup); CDS (SHA-256) and CDNSKEY for each signing KSK. */
static void add_keys(uint32_t zone)
{
	const struct zone *z = &zones.v[zone];
	const struct zone_signing *s = z->sign;
	name_t apex = z->origin;
	uint32_t own = rrset_in(zone, apex, T_DNSKEY);
	uint32_t ttl = rrsets.v[own != NONE ? own : z->soa].ttl;  /* as Knot's dnskey-ttl */
	int own_cds = rrset_in(zone, apex, T_CDS) != NONE || rrset_in(zone, apex, T_CDNSKEY) != NONE;
	for (size_t k = 0; k < s->keys.n; k++)
		if (!holds(zone, apex, T_DNSKEY, s->keys.v[k].rdata, s->keys.v[k].len))
			add_raw(zone, apex, T_DNSKEY, ttl, s->keys.v[k].rdata, s->keys.v[k].len);
	for (size_t k = 0; k < s->keys.n && !own_cds; k++) {
		const struct signing_key *key = &s->keys.v[k];
		if (!key->ksk || !key->signs)
			continue;
		add_raw(zone, apex, T_CDNSKEY, ttl, key->rdata, key->len);
		/* RFC 4034 §5.1.4: the digest of the owner (canonical) and the DNSKEY's RDATA. */
		uint8_t owned[255 + 4 + 2048], ds[4 + SHA256_LEN];
		size_t n = name_key(apex, owned);
		if (n + key->len > sizeof owned)
			continue;  /* keys.py reads only Ed25519 and P-256 keys: never */
		memcpy(owned + n, key->rdata, key->len);
		ds[0] = key->tag >> 8;
		ds[1] = key->tag & 0xFF;
		ds[2] = key->algorithm;
		ds[3] = DS_SHA256;
		sha256(owned, n + key->len, ds + 4);
		add_raw(zone, apex, T_CDS, ttl, ds, sizeof ds);
	}
	if (s->denial == T_NSEC3) {
		/* Hash, flags, iterations, salt length (RFC 5155 §4.2); TTL 0, as BIND gives it:
		 * only signers read it. */
		static const uint8_t param[5] = {NSEC3_SHA1, 0, 0, 0, 0};
		add_raw(zone, apex, T_NSEC3PARAM, 0, param, sizeof param);
	}
}

struct typeset {
	uint16_t v[MAX_TYPES];
	size_t n;
};

static void type_add(struct typeset *t, uint16_t type)
{
	size_t i = t->n;
	for (size_t j = 0; j < t->n; j++)
		if (t->v[j] == type)
			return;
	if (t->n == MAX_TYPES)
		return;
	for (; i > 0 && t->v[i - 1] > type; i--)
		t->v[i] = t->v[i - 1];
	t->v[i] = type;
	t->n++;
}

/* The types a chain entry lists for a name (chaincheck.c's types_at): at a cut, only what
 * the parent is authoritative for (RFC 4035 §2.3). */
static void types_at(uint32_t zone, name_t name, struct typeset *t)
{
	t->n = 0;
	int cut = flags_in(zone, name) & NAME_CUT;
	for (uint32_t s = first_rrset(zone, name); s != NONE; s = rrsets.v[s].next)
		if (!cut || rrsets.v[s].type == T_NS || rrsets.v[s].type == T_DS)
			type_add(t, rrsets.v[s].type);
}

static int has_type(const struct typeset *t, uint16_t type)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i] == type)
			return 1;
	return 0;
}

/* RFC 4034 §4.1.2: per window of 256 types in use, its number, its length, its bits. */
static void put_bitmap(bytes_t *out, const struct typeset *t)
{
	for (size_t i = 0; i < t->n;) {
		unsigned window = t->v[i] >> 8, len = 0;
		uint8_t bits[32] = {0};
		for (; i < t->n && t->v[i] >> 8 == window; i++) {
			unsigned low = t->v[i] & 0xFF;
			bits[low / 8] |= 0x80 >> (low % 8);
			len = low / 8 + 1;
		}
		uint8_t head[2] = {window, len};
		bytes_put(out, head, 2);
		bytes_put(out, bits, len);
	}
}

/* Each authoritative name with data, once (no glue, nothing below a DNAME). */
typedef VEC(name_t) name_list;

static void data_names(uint32_t zone, name_list *out)
{
	const struct zone *z = &zones.v[zone];
	for (size_t s = z->rrsets_begin; s < rrsets.n; s++) {
		name_t owner = rrsets.v[s].owner;
		if (first_rrset(zone, owner) == s && !occluded(zone, owner))
			PUSH(*out, owner);
	}
}

struct keyed {
	name_t name;
	uint32_t key;  /* in `keys`: length, then the lowercased wire name */
};

static const bytes_t *sorting;

static int by_name(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	return canonical_cmp(sorting->v + a->key + 1, sorting->v + b->key + 1);
}

static void add_nsec_chain(uint32_t zone)
{
	name_list owners = {0};
	data_names(zone, &owners);
	bytes_t keys = {0};
	struct keyed *order = xmalloc((owners.n ? owners.n : 1) * sizeof *order);
	for (size_t i = 0; i < owners.n; i++) {
		order[i] = (struct keyed){owners.v[i], keys.n};
		RESERVE(keys, 256);
		keys.v[keys.n] = name_key(owners.v[i], keys.v + keys.n + 1);
		keys.n += 1 + keys.v[keys.n];
	}
	sorting = &keys;
	qsort(order, owners.n, sizeof *order, by_name);
	uint32_t ttl = zones.v[zone].neg_ttl;  /* RFC 9077 §3.3 */
	bytes_t rdata = {0};
	struct typeset *types = xmalloc(sizeof *types);
	for (size_t i = 0; i < owners.n; i++) {
		const uint8_t *next = keys.v + order[(i + 1) % owners.n].key;
		rdata.n = 0;
		bytes_put(&rdata, next + 1, next[0]);
		types_at(zone, order[i].name, types);
		type_add(types, T_NSEC);
		type_add(types, T_RRSIG);  /* the NSEC's own signature, at every name */
		put_bitmap(&rdata, types);
		add_raw(zone, order[i].name, T_NSEC, ttl, rdata.v, rdata.n);
	}
	free(types);
	free(rdata.v);
	free(order);
	free(keys.v);
	free(owners.v);
}

struct hashed {
	uint8_t hash[ZB_SHA1_LEN];
	name_t name;
	uint32_t bitmap;  /* in the chain's `bitmaps`: its length (16 bits), then it */
};

/* The label of an NSEC3 owner: the hash in base32hex, lowercased (RFC 5155 §3, RFC 4648 §7). */
static void base32hex(const uint8_t hash[ZB_SHA1_LEN], uint8_t out[32])
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuv";
	for (size_t i = 0; i < 32; i++) {
		size_t bit = i * 5;
		unsigned v = (hash[bit / 8] << 8 | (bit / 8 + 1 < ZB_SHA1_LEN ? hash[bit / 8 + 1] : 0))
			     >> (11 - bit % 8) & 31;
		out[i] = digits[v];
	}
}

/* Each chain entry's hash and type bitmap, in the zone's order: its names' records are read
 * where they lie. Made in hash order, each entry read two or three names' records at random,
 * most of a million names' chain. */
static void hash_entry(uint32_t zone, name_t name, struct typeset *types, bytes_t *bitmaps,
		       struct hashed *h)
{
	uint8_t key[256], no_salt[1] = {0};
	h->name = name;
	zb_nsec3_hash(key, name_key(name, key), no_salt, 0, 0, h->hash);
	types_at(zone, name, types);
	/* Signed there: every RRset of a name with data but at a cut its DS alone. */
	if (types->n > 0 && (!(flags_in(zone, name) & NAME_CUT) || has_type(types, T_DS)))
		type_add(types, T_RRSIG);
	size_t at = bitmaps->n;
	bytes_put(bitmaps, "\0\0", 2);
	put_bitmap(bitmaps, types);
	size_t len = bitmaps->n - at - 2;  /* at most 256 windows of 34 octets */
	bitmaps->v[at] = len >> 8;
	bitmaps->v[at + 1] = len & 0xFF;
	h->bitmap = at;
}

/* How far ahead of its insertion an NSEC3 owner's slot among the names is fetched. */
#define OWNERS_AHEAD 8

/* RFC 5155 §7.1: an NSEC3 for every authoritative name and every empty non-terminal; with
 * opt-out, none for an insecure delegation, nor for a non-terminal above only such. */
static void add_nsec3_chain(uint32_t zone)
{
	const struct zone *z = &zones.v[zone];
	int opt_out = z->sign->opt_out;
	if (N(z->origin)->wire_len + 33 > 255) {
		diagnose(zone, ERROR, generated(zone), "the origin %s is too long for NSEC3 owner "
			 "names (a 32-octet label in front); sign it with denial = \"nsec\"",
			 name_text(z->origin));
		return;
	}
	name_list owners = {0};
	data_names(zone, &owners);
	uint8_t *seen = xcalloc(names.n, 1);
	VEC(struct hashed) chain = {0};
	bytes_t bitmaps = {0};
	struct typeset *types = xmalloc(sizeof *types);
	for (size_t i = 0; i < owners.n; i++) {
		name_t name = owners.v[i];
		if (opt_out && (flags_in(zone, name) & NAME_CUT) && rrset_in(zone, name, T_DS) == NONE)
			continue;
		for (; !seen[name]; name = N(name)->parent) {
			seen[name] = 1;
			RESERVE(chain, 1);
			hash_entry(zone, name, types, &bitmaps, &chain.v[chain.n++]);
			if (name == z->origin)
				break;
		}
	}
	free(types);
	free(seen);
	/* By hash first: its octets lead the entry, which has no padding. */
	_Static_assert(sizeof *chain.v == ZB_SHA1_LEN + 8, "struct hashed is packed");
	digests_sort((uint8_t *)chain.v, chain.n, sizeof *chain.v);
	for (size_t i = 1; i < chain.n; i++)
		if (memcmp(chain.v[i - 1].hash, chain.v[i].hash, ZB_SHA1_LEN) == 0)
			diagnose(zone, ERROR, generated(zone), "%s and %s have the same NSEC3 hash "
				 "(RFC 5155 §7.1): sign the zone with denial = \"nsec\"",
				 name_text(chain.v[i - 1].name), name_text(chain.v[i].name));
	names_expect(names.n + chain.n);  /* not grown halfway */
	views_expect(chain.n);            /* the hashed view's names */
	uint8_t (*labels)[32] = xmalloc((chain.n ? chain.n : 1) * sizeof *labels);
	for (size_t i = 0; i < chain.n; i++)
		base32hex(chain.v[i].hash, labels[i]);
	uint32_t ttl = z->neg_ttl;  /* RFC 9077 §3.3 */
	bytes_t rdata = {0};
	for (size_t i = 0; i < chain.n; i++) {
		if (i + OWNERS_AHEAD < chain.n)
			name_child_prefetch(z->origin, labels[i + OWNERS_AHEAD], 32);
		/* Hash, flags, iterations, salt length (RFC 5155 §3.2), the next hash, the
		 * types. */
		uint8_t head[6] = {NSEC3_SHA1, opt_out ? NSEC3_OPT_OUT : 0, 0, 0, 0, ZB_SHA1_LEN};
		const uint8_t *bitmap = bitmaps.v + chain.v[i].bitmap;
		rdata.n = 0;
		bytes_put(&rdata, head, sizeof head);
		bytes_put(&rdata, chain.v[(i + 1) % chain.n].hash, ZB_SHA1_LEN);
		bytes_put(&rdata, bitmap + 2, bitmap[0] << 8 | bitmap[1]);
		add_raw(zone, name_child(z->origin, labels[i], 32), T_NSEC3, ttl, rdata.v, rdata.n);
	}
	free(labels);
	free(rdata.v);
	free(bitmaps.v);
	free(chain.v);
	free(owners.v);
}

void add_denial(uint32_t zone)
{
	add_keys(zone);
	if (zones.v[zone].sign->denial == T_NSEC3)
		add_nsec3_chain(zone);
	else
		add_nsec_chain(zone);
}
