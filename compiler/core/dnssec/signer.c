/*
 * signer.c - a zone signed at build time: after its checks, chainmake.c adds its keys and
 * chain, then every RRset the zone signs (signatures.c's signable: DS at cuts, not glue, not
 * a cut's NS) gets an RRSIG by each algorithm's signing keys (RFC 4035 §2.2): the DNSKEY,
 * CDS and CDNSKEY RRsets by the key-signing keys, the rest by the zone-signing keys (an
 * algorithm with keys of one kind only signs everything with them, a combined signing key).
 *
 * The core holds no private key: it writes what each signature signs (RFC 4034 §3.1.8.1,
 * canonical.c) to the driver (compiler/dnssec/signing.py's file formats), says `sign COUNT` on
 * stderr, waits for `signed` on stdin and reads the signatures back. Signatures made by
 * earlier builds come from the cache instead, keyed by the SHA-256 of what they sign (their
 * times left out) and the key: with SOURCE_DATE_EPOCH a signature is reused only with the
 * very times asked for; otherwise while the driver's share of its validity is left (`sign`'s
 * REUSE_LEFT: signing.py's reuse_left, which also says when `zonebake follow` re-signs), so
 * that a rebuild signs only the RRsets that changed. The signatures then are checked and verified
 * as any signed zone's (signatures.c).
 *
 * An RRset that is as it was in the build that wrote the cache is not put in canonical form
 * and hashed at all: the cache keeps the trail of that build, per signature the RRset's
 * identity (its owner's key, type, the zone and the key) and a digest of its content as read
 * (its TTL, its records' octets in file order, their names as spelled), and where in the
 * cache its signature is. A signature taken by its trail has been verified, or made and
 * matched, by the build that made the cache: signatures.c looks up only a sample of them
 * again, which a trail gone wrong fails.
 *
 * The cache, in the driver's cache directory (native byte order: it is this machine's):
 * `ZBSCH2\0\0`, u64 the entries, the struct cached entries sorted by digest, u64 the trail's
 * entries, the struct trail entries. One file: the trail always names the cache it was
 * written with.
 */
#define _GNU_SOURCE  /* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bake.h"
#include "hash.h"

#define MAX_SIGNATURE 64  /* Ed25519 (RFC 8080 §4), ECDSA P-256 (RFC 6605 §4) */
#define RRSIG_FIXED 18    /* type covered ... key tag (RFC 4034 §3.1) */
#define TIMES_AT 8        /* expiration, inception */

struct cached {
	uint8_t digest[SHA256_LEN];
	uint32_t inception, expiration;
	uint8_t len;
	uint8_t signature[MAX_SIGNATURE];
};

/* A signature of the build that wrote the cache, as its trail has it. */
struct trail {
	uint64_t id, content;
	uint32_t cached;  /* in the cache */
	uint32_t spare;
};

static const char CACHE_MAGIC[8] = "ZBSCH2\0";
static const char REQUESTS_MAGIC[8] = "ZBSGN1\0";
static const char SIGNED_MAGIC[8] = "ZBSGD1\0";

/* A signature of this build: from the cache, or made by the driver now (verified as any
 * other unless verified before). Where it lies, not a copy: a million names' rebuild takes
 * millions from the cache, and copying them was a third of a gigabyte of new memory. */
struct made {
	uint32_t from;         /* its place in the cache it came from, or NONE */
	uint32_t at;           /* else its place in `fresh` */
	uint64_t id, content;  /* for the next build's trail */
};

/* The earlier builds' signatures, mapped (load_cache), and this build's (signer_finish
 * writes them as the next cache); of these, those the driver made, sorted and indexed for
 * signer_made. */
static const uint8_t *cache_map;
static size_t cache_map_len;
static const struct cached *cache;
static size_t ncache;
static struct digest_index cache_index;
static int cache_loaded;
static VEC(struct made) made;  /* this build's signatures: the next build's cache */
static VEC(struct cached) fresh;  /* of them, those the driver made */
static struct cached *fresh_sorted;  /* those, sorted (signer_finish) */
static size_t fresh_bytes;
static struct digest_index made_index;  /* over fresh_sorted */
static const struct trail *trail;  /* the cache's, and its table by id */
static size_t ntrail;
static uint32_t *trail_table;      /* index + 1; 0 empty */
static size_t trail_mask;
static VEC(uint8_t) trusted;       /* per record: an RRSIG taken by its trail */
static size_t ntrusted;

static struct cached *made_signature(const struct made *m)
{
	return m->from != NONE ? (struct cached *)&cache[m->from] : &fresh.v[m->at];
}

static uint64_t read_u64(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return x;
}

/* The trail's table: open addressing by id, at most half full. */
static void index_trail(void)
{
	size_t size = 2;
	while (size < 2 * ntrail)
		size *= 2;
	trail_table = xcalloc(size, sizeof *trail_table);
	trail_mask = size - 1;
	for (size_t i = 0; i < ntrail; i++) {
		size_t at = trail[i].id & trail_mask;
		while (trail_table[at])
			at = (at + 1) & trail_mask;
		trail_table[at] = i + 1;
	}
}

/*
 * The cache read onto huge pages (read_huge), on a thread beside the making of the chain
 * (sign_zone), which has the processor to itself: every signature taken from it is copied
 * out in RRset order, at random in its digest order (300 MB at a million names). Where it
 * cannot be read so, it is mapped.
 */
struct cache_read {
	const char *path;
	uint8_t *v;
	size_t len;
};

static void *read_cache(void *arg)
{
	struct cache_read *r = arg;
	r->v = read_huge(r->path, &r->len);
	return NULL;
}

static void load_cache(const char *path, const struct cache_read *in)
{
	cache_loaded = 1;
	if (in && in->v) {
		cache_map = in->v;
		cache_map_len = in->len;
	} else {
		cache_map = map_file(path, &cache_map_len, 1, NULL);
	}
	if (!cache_map || cache_map_len < 8 + 8 || memcmp(cache_map, CACHE_MAGIC, 8) != 0)
		return;
	const uint8_t *v = cache_map + 8;
	size_t len = cache_map_len - 8;
	/* A torn file: the entries it holds whole, and no trail. */
	uint64_t n = read_u64(v);
	size_t whole = (len - 8) / sizeof *cache;
	cache = (const struct cached *)(v + 8);
	ncache = n < whole ? n : whole;
	size_t at = (8 + ncache * sizeof *cache + 7) & ~(size_t)7;  /* the trail's u64s */
	if (ncache == n && len >= at && len - at >= 8) {
		uint64_t t = read_u64(v + at);
		if (t <= (len - at - 8) / sizeof *trail) {
			trail = (const struct trail *)(v + at + 8);
			ntrail = t;
		}
	}
}

/* The cache's index by digest, made when the lookups are many: a binary search over
 * millions of signatures costs a microsecond, and a rebuild looks up few. */
#define SEARCHED_BEFORE_INDEX 256
static size_t searched;

static const struct cached *by_digest(const uint8_t digest[SHA256_LEN])
{
	if (ncache == 0)
		return NULL;
	if (++searched == SEARCHED_BEFORE_INDEX)
		digest_index_of_records(&cache_index, (const uint8_t *)cache, ncache, SHA256_LEN,
					sizeof *cache);
	if (searched >= SEARCHED_BEFORE_INDEX) {
		int equal;
		size_t rank = digest_rank(&cache_index, digest, &equal);
		return rank && equal ? &cache[rank - 1] : NULL;
	}
	size_t lo = 0, hi = ncache;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(cache[mid].digest, digest, SHA256_LEN);
		if (c == 0)
			return &cache[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The signatures the driver made, in digest order, ties in the order made: their digests'
 * first 8 octets and their number (big-endian), 12 octets each, sorted as digests are
 * (digestindex.c), then a run of equal first octets by the whole digest, by insertion
 * (SHA-256: never, in practice). */
#define ORDER_KEY 12
static void sort_made(uint32_t *order, size_t n)
{
	uint8_t *keys = xmalloc((n ? n : 1) * ORDER_KEY);
	for (size_t i = 0; i < n; i++) {
		uint8_t *k = keys + i * ORDER_KEY;
		memcpy(k, made_signature(&made.v[order[i]])->digest, 8);
		k[8] = order[i] >> 24, k[9] = order[i] >> 16, k[10] = order[i] >> 8, k[11] = order[i];
	}
	digests_sort(keys, n, ORDER_KEY);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *k = keys + i * ORDER_KEY;
		order[i] = (uint32_t)k[8] << 24 | k[9] << 16 | k[10] << 8 | k[11];
	}
	for (size_t a = 0, b; a < n; a = b) {
		for (b = a + 1; b < n && !memcmp(keys + a * ORDER_KEY, keys + b * ORDER_KEY, 8); b++)
			;
		for (size_t i = a + 1; i < b; i++)
			for (size_t j = i; j > a &&
					   memcmp(made_signature(&made.v[order[j - 1]])->digest,
						  made_signature(&made.v[order[j]])->digest,
						  SHA256_LEN) > 0;
			     j--) {
				uint32_t t = order[j];
				order[j] = order[j - 1];
				order[j - 1] = t;
			}
	}
	free(keys);
}

/* A cached signature is reused with the very times asked for under SOURCE_DATE_EPOCH, else
 * while enough of its validity is left. */
static const struct cached *in_time(const struct cached *c, const struct zone_signing *s)
{
	if (s->exact)
		return c->inception == s->inception && c->expiration == s->expiration ? c : NULL;
	uint32_t validity = s->expiration - s->inception;
	int64_t left = (int64_t)c->expiration - s->inception;
	return c->expiration - c->inception == validity && c->inception <= s->inception &&
	       left >= (int64_t)s->reuse_left ? c : NULL;
}

static const struct cached *cached_for(const uint8_t digest[SHA256_LEN],
				       const struct zone_signing *s)
{
	const struct cached *c = by_digest(digest);
	return c ? in_time(c, s) : NULL;
}

/* The signature the trail has for an RRset of this identity and content, in time. The
 * trail is in the order the earlier build signed, which is this build's wherever the zone
 * did not change: the next entry is tried first, and the cache entries a few ahead are
 * fetched meanwhile (the cache is in digest order: each is a cache miss). */
#define TRAIL_AHEAD 16
static size_t trail_next;

#define TRAIL_NEAR 64

static const struct cached *trailed(uint64_t id, uint64_t content, const struct zone_signing *s)
{
	if (!trail)
		return NULL;
	const struct trail *t = NULL;
	/* Near the next place (a name or two came or went), else by the table. */
	size_t from = trail_next > TRAIL_NEAR ? trail_next - TRAIL_NEAR : 0;
	size_t to = trail_next + TRAIL_NEAR < ntrail ? trail_next + TRAIL_NEAR : ntrail;
	for (size_t i = trail_next; !t && i < to; i++)
		if (trail[i].id == id)
			t = &trail[i];
	for (size_t i = from; !t && i < trail_next && i < ntrail; i++)
		if (trail[i].id == id)
			t = &trail[i];
	if (!t) {
		if (!trail_table)
			index_trail();
		for (size_t at = id & trail_mask; trail_table[at]; at = (at + 1) & trail_mask)
			if (trail[trail_table[at] - 1].id == id) {
				t = &trail[trail_table[at] - 1];
				break;
			}
		if (!t)
			return NULL;
	}
	trail_next = t - trail + 1;
	if (trail_next + TRAIL_AHEAD < ntrail && trail[trail_next + TRAIL_AHEAD].cached < ncache)
		__builtin_prefetch(&cache[trail[trail_next + TRAIL_AHEAD].cached]);
	return t->content == content && t->cached < ncache ? in_time(&cache[t->cached], s) : NULL;
}

/* What makes an RRset's signature by a key, but for the times: the zone (the signer) and
 * the key, digested once per zone and key (signer_of); the owner (its key: the signature
 * covers it lowercased), once per RRset (owner_of); the type. */
static uint64_t signer_of(uint32_t zone, const struct signing_key *key)
{
	uint8_t wire[256];
	size_t len = name_key(zones.v[zone].origin, wire);
	uint64_t h = zb_hash(wire, len, 0x7369676e6572ull ^ (uint64_t)key->algorithm << 16 ^ key->tag);
	return zb_hash(key->rdata, key->len, h);
}

static uint64_t owner_of(const struct rrset *rs)
{
	uint8_t wire[256];
	return zb_hash(wire, name_key(rs->owner, wire), 0x6964656e74697479ull);
}

static uint64_t identity(uint64_t owner, uint64_t signer, uint16_t type)
{
	return mix64(owner ^ mix64(signer ^ type));
}

/* And what it signs of the RRset: its TTL and records as read, the names as spelled (a
 * spelling changed is a change here, though not to the signature). */
static uint64_t content_of(const struct rrset *rs)
{
	uint64_t h = zb_hash((const uint8_t *)&rs->ttl, sizeof rs->ttl, rs->count);
	uint8_t wire[256];
	for (uint32_t r = rs->first; r != NONE; r = rdatas.v[r].next) {
		const struct rdata *rd = &rdatas.v[r];
		h = zb_hash(rdata_raw.v + rd->raw, rd->raw_len, h ^ rd->raw_len);
		if (rd->name != NONE)
			h = zb_hash(wire, name_wire(rd->name, wire), h ^ 1);
		if (rd->name2 != NONE)
			h = zb_hash(wire, name_wire(rd->name2, wire), h ^ 2);
	}
	return h;
}

/* The RRSIG's RDATA up to its signature (RFC 4034 §3.1): its length. */
static size_t rrsig_fields(uint32_t zone, const struct rrset *set,
			   const struct signing_key *key, uint32_t inception,
			   uint32_t expiration, uint8_t *out)
{
	unsigned labels = N(set->owner)->nlabels - name_is_wildcard(set->owner);
	uint8_t fixed[RRSIG_FIXED] = {
		set->type >> 8, set->type & 0xFF, key->algorithm, labels,
		set->ttl >> 24, set->ttl >> 16, set->ttl >> 8, set->ttl,
		expiration >> 24, expiration >> 16, expiration >> 8, expiration,
		inception >> 24, inception >> 16, inception >> 8, inception,
		key->tag >> 8, key->tag & 0xFF,
	};
	memcpy(out, fixed, RRSIG_FIXED);
	return RRSIG_FIXED + name_key(zones.v[zone].origin, out + RRSIG_FIXED);
}

static int signs_with(const struct zone_signing *s, const struct signing_key *key, int apex_keys)
{
	if (!key->signs)
		return 0;
	int want_ksk = apex_keys;
	for (size_t k = 0; k < s->keys.n; k++) {
		const struct signing_key *other = &s->keys.v[k];
		if (other->signs && other->algorithm == key->algorithm && other->ksk == want_ksk)
			return key->ksk == want_ksk;
	}
	return 1;  /* no key of the wanted kind in its algorithm: it signs in their place */
}

static int apex_key_set(uint32_t zone, const struct rrset *set)
{
	return set->owner == zones.v[zone].origin &&
	       (set->type == T_DNSKEY || set->type == T_CDS || set->type == T_CDNSKEY);
}

struct pending {
	uint32_t set;
	uint32_t key;   /* in the zone's keys */
	uint32_t made;  /* in `made` */
	int asked;      /* the driver signs it; else `made` has it from the cache */
	int trusted;    /* from the cache by its trail: verified by the build that made it */
};
typedef VEC(struct pending) pending_list;

/* A zone given signed is not signed again (issue 17): its records would contradict the
 * chain and signatures the build makes. */
static void refuse_signed(uint32_t zone)
{
	const struct zone *z = &zones.v[zone];
	size_t found = 0;
	struct pos first = {0};
	for (size_t s = z->rrsets_begin; s < rrsets.n; s++) {
		const struct rrset *set = &rrsets.v[s];
		if (set->type != T_RRSIG && set->type != T_NSEC && set->type != T_NSEC3 &&
		    set->type != T_NSEC3PARAM)
			continue;
		if (found++ == 0)
			first = set_pos(set);
		if (found <= SHOWN_EACH)
			diagnose(zone, ERROR, set_pos(set), "%s %s: the zone is signed by the build (its "
				 "dnssec table), so it is given unsigned, without RRSIG, NSEC, NSEC3 or "
				 "NSEC3PARAM records", name_text(set->owner), type_name(set->type));
	}
	if (found > SHOWN_EACH)
		diagnose_rest(zone, ERROR, first, found, "records of a signed zone");
}

static FILE *open_or_fail(const char *path, const char *mode)
{
	FILE *f = fopen(path, mode);
	if (!f)
		fail("cannot open %s", path);
	return f;
}

static void put_u32(FILE *f, uint32_t x)  /* little-endian, as the driver reads it */
{
	uint8_t o[4] = {x, x >> 8, x >> 16, x >> 24};
	fwrite(o, 1, 4, f);
}

/* Each signable RRset's owner and content digests (identity's and trailed's) in
 * [begin, end), into sums[set - base]: they only read the records. */
struct sums_part {
	uint32_t zone;
	size_t begin, end, base;
	uint64_t (*sums)[2];
};

static void *sum_sets(void *arg)
{
	const struct sums_part *p = arg;
	name_t last = NONE;  /* a name's RRsets mostly follow one another */
	uint64_t owner = 0;
	for (size_t set = p->begin; set < p->end; set++) {
		const struct rrset *rs = &rrsets.v[set];
		if (!signable(p->zone, rs))
			continue;
		if (rs->owner != last)
			owner = owner_of(rs), last = rs->owner;
		p->sums[set - p->base][0] = owner;
		p->sums[set - p->base][1] = content_of(rs);
	}
	return NULL;
}

/* Hashing every RRset is most of `ask`: on two threads, ahead of it. */
static uint64_t (*sum_zone(uint32_t zone, size_t end))[2]
{
	size_t begin = zones.v[zone].rrsets_begin, mid = begin + (end - begin) / 2;
	uint64_t (*sums)[2] = xmalloc((end > begin ? end - begin : 1) * sizeof *sums);
	struct sums_part first = {zone, begin, mid, begin, sums}, second = first;
	second.begin = mid;
	second.end = end;
	struct beside helper;
	start_beside(&helper, sum_sets, &second);
	sum_sets(&first);
	join_beside(&helper);
	return sums;
}

/* What each signature signs, to the driver or from the cache; `pending` in RRset order. */
static size_t ask(uint32_t zone, const struct signer_files *f, pending_list *pending)
{
	const struct zone *z = &zones.v[zone];
	const struct zone_signing *s = z->sign;
	FILE *out = open_or_fail(f->requests, "wb");
	fwrite(REQUESTS_MAGIC, 1, 8, out);
	bytes_t data = {0}, keyed = {0};
	size_t asked = 0, end = rrsets.n;
	uint64_t *signers = xmalloc((s->keys.n ? s->keys.n : 1) * sizeof *signers);
	for (size_t k = 0; k < s->keys.n; k++)
		signers[k] = signer_of(zone, &s->keys.v[k]);
	uint64_t (*sums)[2] = sum_zone(zone, end);
	for (size_t set = z->rrsets_begin; set < end; set++) {
		const struct rrset *rs = &rrsets.v[set];
		if (!signable(zone, rs))
			continue;
		int apex_keys = apex_key_set(zone, rs);
		size_t fields = 0;
		uint64_t owner = sums[set - z->rrsets_begin][0];
		uint64_t content = sums[set - z->rrsets_begin][1];
		for (size_t k = 0; k < s->keys.n; k++) {
			const struct signing_key *key = &s->keys.v[k];
			if (!signs_with(s, key, apex_keys))
				continue;
			uint64_t id = identity(owner, signers[k], rs->type);
			const struct cached *known = trailed(id, content, s);
			if (known) {
				ntrusted++;
				struct pending p = {set, k, made.n, 0, 1};
				PUSH(made, ((struct made){known - cache, NONE, id, content}));
				PUSH(*pending, p);
				continue;
			}
			uint8_t rrsig[RRSIG_FIXED + 256];
			size_t len = rrsig_fields(zone, rs, key, s->inception, s->expiration, rrsig);
			if (fields == 0) {
				rrsig[len] = 0;  /* a signature's place, for signed_data */
				data.n = 0;
				fields = signed_data(rs, rrsig, len + 1, &data);
				if (fields != len)
					fail("cannot put %s %s in canonical form", name_text(rs->owner),
					     type_name(rs->type));
			} else {
				memcpy(data.v, rrsig, len);  /* another key: its algorithm and tag */
			}
			keyed.n = 0;
			bytes_put(&keyed, data.v, data.n);
			memset(keyed.v + TIMES_AT, 0, 8);
			bytes_put(&keyed, key->rdata, key->len);
			struct cached entry = {0};
			sha256(keyed.v, keyed.n, entry.digest);
			const struct cached *old = cached_for(entry.digest, s);
			struct pending p = {set, k, made.n, old == NULL, 0};
			if (old) {
				entry = *old;
			} else {
				entry.inception = s->inception;
				entry.expiration = s->expiration;
				put_u32(out, key->index);
				put_u32(out, data.n);
				fwrite(data.v, 1, data.n, out);
				asked++;
			}
			if (!old)
				PUSH(fresh, entry);
			PUSH(made, ((struct made){old ? old - cache : NONE, old ? NONE : fresh.n - 1,
						  id, content}));
			PUSH(*pending, p);
		}
	}
	if (fclose(out) != 0)
		fail("cannot write %s", f->requests);
	free(data.v);
	free(keyed.v);
	free(signers);
	free(sums);
	return asked;
}

void (*signing_driver)(const struct signer_files *f, size_t asked);

/* The driver's signatures, in the order asked, into `made`. */
static void receive(const struct signer_files *f, size_t asked, pending_list *pending)
{
	if (signing_driver) {
		signing_driver(f, asked);
	} else {
		hold_for_driver();
		fprintf(stderr, "sign %zu\n", asked);
		fflush(stderr);
		char line[32];
		if (!fgets(line, sizeof line, stdin) || strcmp(line, "signed\n") != 0)
			fail("the driver did not sign");
	}
	FILE *in = open_or_fail(f->signed_path, "rb");
	char magic[8];
	if (fread(magic, 1, 8, in) != 8 || memcmp(magic, SIGNED_MAGIC, 8) != 0)
		fail("%s: not the driver's signatures", f->signed_path);
	for (size_t i = 0; i < pending->n; i++) {
		if (!pending->v[i].asked)
			continue;
		struct cached *c = made_signature(&made.v[pending->v[i].made]);
		int len = fgetc(in);
		if (len <= 0 || len > MAX_SIGNATURE || fread(c->signature, 1, len, in) != (size_t)len)
			fail("%s: ends early, or a signature of a length no key makes",
			     f->signed_path);
		c->len = len;
	}
	fclose(in);
}

/* Each signature as an RRSIG record, and each RRSIG RRset linked to the RRset it covers. */
#define SIGNATURES_AHEAD 8
static void add_signatures(uint32_t zone, const pending_list *pending)
{
	const struct zone_signing *s = zones.v[zone].sign;
	for (size_t i = 0; i < pending->n; i++) {
		const struct pending *p = &pending->v[i];
		const struct cached *c = made_signature(&made.v[p->made]);
		if (i + SIGNATURES_AHEAD < pending->n) {  /* the cache is in digest order */
			const uint8_t *ahead = (const uint8_t *)made_signature(
				&made.v[pending->v[i + SIGNATURES_AHEAD].made]);
			__builtin_prefetch(ahead + SHA256_LEN);
			__builtin_prefetch(ahead + sizeof(struct cached) - 1);
		}
		const struct rrset *rs = &rrsets.v[p->set];
		uint8_t rrsig[RRSIG_FIXED + 256];
		size_t len = rrsig_fields(zone, rs, &s->keys.v[p->key], c->inception,
					  c->expiration, rrsig);
		struct rdata rd = {.raw = rdata_raw.n, .raw_len = len + c->len, .name = NONE,
				   .name2 = NONE, .next = NONE};
		bytes_put(&rdata_raw, rrsig, len);
		bytes_put(&rdata_raw, c->signature, c->len);
		name_t owner = rs->owner;
		uint16_t type = rs->type;
		size_t before = rdatas.n;
		if (rs->sigs == NONE) {
			add_first_signature(zone, p->set, rd, set_pos(rs));
		} else {  /* another key's: as any record (a key listed twice signs alike: dropped) */
			add_record(zone, owner, T_RRSIG, rs->ttl, rd, set_pos(rs));  /* rs may move */
			uint32_t view = type == T_NSEC3 ? HASHED_VIEW(zone) : zone;
			rrsets.v[p->set].sigs = rrset_covering(view, owner, T_RRSIG, type);
		}
		if (p->trusted && rdatas.n > before) {
			RESERVE(trusted, rdatas.n - trusted.n);
			memset(trusted.v + trusted.n, 0, rdatas.n - trusted.n);
			trusted.n = rdatas.n;
			trusted.v[rdatas.n - 1] = 1;
		}
	}
}

void sign_zone(uint32_t zone, const struct signer_files *f)
{
	size_t errors = diagnostics_errors();
	struct cache_read cache_in = {cache_loaded ? NULL : f->cache, NULL, 0};
	struct beside reader;
	start_beside(&reader, read_cache, &cache_in);
	refuse_signed(zone);
	if (diagnostics_errors() == errors)
		add_denial(zone);
	join_beside(&reader);
	if (diagnostics_errors() != errors) {
		huge_free(cache_in.v, cache_in.len);
		return;
	}
	if (!cache_loaded)
		load_cache(f->cache, &cache_in);
	pending_list pending = {0};
	size_t asked = ask(zone, f, &pending);
	if (asked > 0)
		receive(f, asked, &pending);
	add_signatures(zone, &pending);
	free(pending.v);
}

/* (digest, number made) ascending: the order of the cache. */
static int before_made(const uint8_t *a, uint32_t ia, const uint8_t *b, uint32_t ib)
{
	int c = memcmp(a, b, SHA256_LEN);
	return c < 0 || (c == 0 && ia < ib);
}

/* This build's cache: its signatures in digest order, equal digests once (the first made),
 * and its trail. Those taken from the earlier cache are in its order already: the earlier
 * cache is read through once, the entries this build took kept, merged with those the
 * driver made (sorted: a rebuild's few). Sorting all of them, and moving them, took a
 * second and more of a million names' rebuild. Only the driver's are looked up after
 * (signer_made): they alone are indexed, here; the file is written on a thread of its own
 * while the checks run (signer_written), from what neither changes. */
static uint32_t *taken_first;  /* per cache entry, its first taker in `made`, or NONE */
static uint32_t *fresh_order;  /* the driver's, in `made`, in digest order */
static size_t nfresh_order;
static struct beside writer;

static char *cache_out;  /* where it goes (the thread's own copy), or NULL: nowhere */

static void *write_cache(void *arg)
{
	(void)arg;
	const uint32_t *first = taken_first, *rest = fresh_order;
	size_t nrest = nfresh_order;
	FILE *out = NULL;
	const char *path = cache_out;
	if (!path || (out = fopen(path, "wb")) == NULL)
		return NULL;  /* a cache, no more */
	fwrite(CACHE_MAGIC, 1, 8, out);
	uint64_t unknown = 0;  /* written over at the end */
	fwrite(&unknown, sizeof unknown, 1, out);
	/* Each signature's place in the file, for the trail: by where it came from. */
	uint32_t *rest_at = xmalloc(made.n * sizeof *rest_at);  /* by number made */
	uint32_t *taken_at = taken_first;  /* in place: each is read before it is written */
	uint64_t written = 0;
	const uint8_t *last = NULL;
	for (size_t c = 0, r = 0;;) {
		while (c < ncache && first[c] == NONE)
			taken_at[c++] = NONE;
		if (c == ncache && r == nrest)
			break;
		int old = r == nrest || (c < ncache && before_made(cache[c].digest, first[c],
								   fresh_sorted[r].digest, rest[r]));
		const struct cached *e = old ? &cache[c] : &fresh_sorted[r];
		if (!last || memcmp(last, e->digest, SHA256_LEN) != 0) {
			fwrite(e, sizeof *e, 1, out);
			written++;
		}
		last = e->digest;
		if (old)
			taken_at[c++] = written - 1;
		else
			rest_at[rest[r++]] = written - 1;
	}
	struct trail *next = xmalloc(made.n * sizeof *next);
	for (size_t i = 0; i < made.n; i++) {
		uint32_t from = made.v[i].from;
		next[i] = (struct trail){made.v[i].id, made.v[i].content,
					 from != NONE ? taken_at[from] : rest_at[i], 0};
	}
	free(rest_at);
	static const uint8_t zeros[8];
	fwrite(zeros, 1, (8 - (8 + written * sizeof(struct cached)) % 8) % 8, out);
	uint64_t ntrail_next = made.n;
	fwrite(&ntrail_next, sizeof ntrail_next, 1, out);
	fwrite(next, sizeof *next, made.n, out);
	if (fflush(out) != 0 || pwrite(fileno(out), &written, sizeof written, 8) != 8 ||
	    ferror(out) | (fclose(out) != 0))
		remove(path);  /* a cache, no more */
	free(next);
	return NULL;
}

void signer_finish(const struct signer_files *f)
{
	if (made.n == 0)
		return;
	if (made.n > UINT32_MAX)
		unsupported("more than 2^32 signatures");
	uint32_t *first = xmalloc((ncache ? ncache : 1) * sizeof *first);
	for (size_t c = 0; c < ncache; c++)
		first[c] = NONE;
	uint32_t *rest = xmalloc(made.n * sizeof *rest);
	size_t nrest = 0;
	for (size_t i = 0; i < made.n; i++) {
		uint32_t from = made.v[i].from;
		if (from == NONE)
			rest[nrest++] = i;
		else if (first[from] == NONE)
			first[from] = i;
	}
	sort_made(rest, nrest);
	fresh_bytes = (nrest ? nrest : 1) * sizeof *fresh_sorted;
	fresh_sorted = huge_alloc(fresh_bytes);
	for (size_t r = 0; r < nrest; r++)
		fresh_sorted[r] = *made_signature(&made.v[rest[r]]);
	digest_index_of_records(&made_index, (const uint8_t *)fresh_sorted, nrest, SHA256_LEN,
				sizeof *fresh_sorted);
	taken_first = first;
	fresh_order = rest;
	nfresh_order = nrest;
	if (f->cache && asprintf(&cache_out, "%s.cache", f->signed_path) < 0)
		fail("out of memory");
	start_beside(&writer, write_cache, NULL);
	if (ntrusted)  /* a count: progress.py */
		phase_took("signatures by their trail", 0.0, ntrusted, "taken");
}

void signer_written(void)
{
	join_beside(&writer);
	memset(&writer, 0, sizeof writer);
	free(taken_first);
	free(fresh_order);
	free(cache_out);
	taken_first = fresh_order = NULL;
	cache_out = NULL;
	nfresh_order = 0;
}

int signer_made(const uint8_t *data, size_t len, const uint8_t *key, size_t key_len,
		const uint8_t *signature, size_t signature_len, bytes_t *scratch)
{
	if (fresh.n == 0 || len < TIMES_AT + 8)
		return 0;  /* a rebuild's signatures all from the cache: none to match */
	scratch->n = 0;
	bytes_put(scratch, data, len);
	memset(scratch->v + TIMES_AT, 0, 8);
	bytes_put(scratch, key, key_len);
	uint8_t digest[SHA256_LEN];
	sha256(scratch->v, scratch->n, digest);
	int equal;
	size_t rank = digest_rank(&made_index, digest, &equal);
	const struct cached *m = equal ? &fresh_sorted[rank - 1] : NULL;
	uint32_t expiration = (uint32_t)data[TIMES_AT] << 24 | data[TIMES_AT + 1] << 16 |
			      data[TIMES_AT + 2] << 8 | data[TIMES_AT + 3];
	uint32_t inception = (uint32_t)data[TIMES_AT + 4] << 24 | data[TIMES_AT + 5] << 16 |
			     data[TIMES_AT + 6] << 8 | data[TIMES_AT + 7];
	return m && m->expiration == expiration && m->inception == inception &&
	       m->len == signature_len && memcmp(m->signature, signature, signature_len) == 0;
}

int signer_trusted(uint32_t rdata)
{
	return rdata < trusted.n && trusted.v[rdata];
}

void signer_reset(void)
{
	signer_written();
	if (cache_map)
		munmap((void *)cache_map, cache_map_len);
	cache_map = NULL;
	cache_map_len = 0;
	searched = 0;
	trail = NULL;
	ntrail = trail_next = 0;
	free(trail_table);
	trail_table = NULL;
	trail_mask = 0;
	VEC_FREE(trusted);
	ntrusted = 0;
	cache = NULL;
	ncache = 0;
	digest_index_free(&cache_index);
	digest_index_free(&made_index);
	cache_loaded = 0;
	free(made.v);
	made.v = NULL;
	made.n = made.cap = 0;
	VEC_FREE(fresh);
	if (fresh_sorted)
		huge_free(fresh_sorted, fresh_bytes);
	fresh_sorted = NULL;
	fresh_bytes = 0;
}
