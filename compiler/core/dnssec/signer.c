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
 * matched, by the build that made the cache: signatures.c does not look it up again.
 *
 * The cache, in the driver's cache directory (native byte order: it is this machine's):
 * `ZBSCH2\0\0`, u64 the entries, the struct cached entries sorted by digest, u64 the trail's
 * entries, the struct trail entries. One file: the trail always names the cache it was
 * written with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A signature of this build, and whether the driver made it now (else it came from the
 * cache, and is verified as any other unless verified before). */
struct made {
	struct cached c;
	int fresh;
	uint64_t id, content;  /* for the next build's trail */
};

/* Millions of signatures each, looked up at random by digest: on huge pages (util.c), where
 * 4 KiB pages made every lookup a TLB miss besides a cache miss. */
static bytes_t cache_file;  /* the cache as read */
static struct cached *cache;
static size_t ncache;
static struct digest_index cache_index;
static int cache_loaded;
static VEC(struct made) made;  /* this build's signatures: the next build's cache */
static size_t made_fresh;  /* of them, those the driver made */
static size_t made_huge;  /* made.v's octets once on huge pages (signer_finish), else 0 */
static struct digest_index made_index;  /* once sorted (signer_finish) */
static const struct trail *trail;  /* the cache's, and its table by id */
static size_t ntrail;
static uint32_t *trail_table;      /* index + 1; 0 empty */
static size_t trail_mask;
static VEC(uint8_t) trusted;       /* per record: an RRSIG taken by its trail */

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

static void load_cache(const char *path)
{
	cache_loaded = 1;
	FILE *f = path ? fopen(path, "rb") : NULL;
	if (!f)
		return;
	char magic[8];
	if (fread(magic, 1, 8, f) == 8 && memcmp(magic, CACHE_MAGIC, 8) == 0) {
		uint8_t block[1 << 16];
		reserve_huge((void **)&cache_file.v, &cache_file.cap);
		for (size_t n; (n = fread(block, 1, sizeof block, f)) > 0;)
			bytes_put(&cache_file, block, n);
		/* A torn file: the entries it holds whole, and no trail. */
		uint64_t n = cache_file.n >= 8 ? read_u64(cache_file.v) : 0;
		size_t whole = cache_file.n >= 8 ? (cache_file.n - 8) / sizeof *cache : 0;
		cache = (struct cached *)(cache_file.v + 8);
		ncache = n < whole ? n : whole;
		size_t at = (8 + ncache * sizeof *cache + 7) & ~(size_t)7;  /* the trail's u64s */
		if (ncache == n && cache_file.n >= at && cache_file.n - at >= 8) {
			uint64_t t = read_u64(cache_file.v + at);
			if (t <= (cache_file.n - at - 8) / sizeof *trail) {
				trail = (const struct trail *)(cache_file.v + at + 8);
				ntrail = t;
				index_trail();
			}
		}
	}
	fclose(f);
	/* Millions of signatures, looked up each by its digest: a binary search over them
	 * took more than a second of the build. */
	digest_index_of_records(&cache_index, (const uint8_t *)cache, ncache, SHA256_LEN,
				sizeof *cache);
}

/* Where each of this build's signatures goes in digest order, ties in the order made: their
 * digests' first 8 octets and their number (big-endian), 12 octets each, sorted as digests
 * are (digestindex.c), then a run of equal first octets by the whole digest, by insertion
 * (SHA-256: never, in practice). Sorting the signatures themselves (qsort) moved millions of
 * records of 112 octets through a merge buffer as large as them all; these keys are a
 * tenth of that, and the signatures move once, onto huge pages. */
#define ORDER_KEY 12
static uint32_t *made_order(void)
{
	if (made.n > UINT32_MAX)
		unsupported("more than 2^32 signatures");
	uint8_t *keys = xmalloc((made.n ? made.n : 1) * ORDER_KEY);
	for (size_t i = 0; i < made.n; i++) {
		uint8_t *k = keys + i * ORDER_KEY;
		memcpy(k, made.v[i].c.digest, 8);
		k[8] = i >> 24, k[9] = i >> 16, k[10] = i >> 8, k[11] = i;
	}
	digests_sort(keys, made.n, ORDER_KEY);
	uint32_t *order = xmalloc((made.n ? made.n : 1) * sizeof *order);
	for (size_t i = 0; i < made.n; i++) {
		const uint8_t *k = keys + i * ORDER_KEY;
		order[i] = (uint32_t)k[8] << 24 | k[9] << 16 | k[10] << 8 | k[11];
	}
	for (size_t a = 0, b; a < made.n; a = b) {
		for (b = a + 1; b < made.n && !memcmp(keys + a * ORDER_KEY, keys + b * ORDER_KEY, 8);
		     b++)
			;
		for (size_t i = a + 1; i < b; i++)
			for (size_t j = i; j > a && memcmp(made.v[order[j - 1]].c.digest,
							   made.v[order[j]].c.digest, SHA256_LEN) > 0;
			     j--) {
				uint32_t t = order[j];
				order[j] = order[j - 1];
				order[j - 1] = t;
			}
	}
	free(keys);
	return order;
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
	int equal;
	size_t rank = ncache == 0 ? 0 : digest_rank(&cache_index, digest, &equal);
	if (rank == 0 || !equal)
		return NULL;
	return in_time(&cache[rank - 1], s);
}

/* The signature the trail has for an RRset of this identity and content, in time. The
 * trail is in the order the earlier build signed, which is this build's wherever the zone
 * did not change: the next entry is tried first, and the cache entries a few ahead are
 * fetched meanwhile (the cache is in digest order: each is a cache miss). */
#define TRAIL_AHEAD 16
static size_t trail_next;

static const struct cached *trailed(uint64_t id, uint64_t content, const struct zone_signing *s)
{
	if (!trail_table)
		return NULL;
	const struct trail *t = NULL;
	if (trail_next < ntrail && trail[trail_next].id == id) {
		t = &trail[trail_next];
	} else {
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

/* What makes an RRset's signature by a key, but for the times: the zone (the signer), the
 * owner (its key: the signature covers it lowercased), the type, the key. */
static uint64_t identity(uint32_t zone, const struct rrset *rs, const struct signing_key *key)
{
	uint8_t wire[256];
	size_t len = name_key(rs->owner, wire);
	uint64_t h = zb_hash(wire, len, 0x6964656e74697479ull);
	len = name_key(zones.v[zone].origin, wire);
	h = zb_hash(wire, len, h ^ (uint64_t)rs->type << 32);
	return zb_hash(key->rdata, key->len, h ^ (uint64_t)key->algorithm << 16 ^ key->tag);
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
			first = set->pos;
		if (found <= SHOWN_EACH)
			diagnose(zone, ERROR, set->pos, "%s %s: the zone is signed by the build (its "
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

/* What each signature signs, to the driver or from the cache; `pending` in RRset order. */
static size_t ask(uint32_t zone, const struct signer_files *f, pending_list *pending)
{
	const struct zone *z = &zones.v[zone];
	const struct zone_signing *s = z->sign;
	FILE *out = open_or_fail(f->requests, "wb");
	fwrite(REQUESTS_MAGIC, 1, 8, out);
	bytes_t data = {0}, keyed = {0};
	size_t asked = 0, end = rrsets.n;
	for (size_t set = z->rrsets_begin; set < end; set++) {
		const struct rrset *rs = &rrsets.v[set];
		if (!signable(zone, rs))
			continue;
		int apex_keys = apex_key_set(zone, rs);
		size_t fields = 0;
		uint64_t content = 0;
		int have_content = 0;
		for (size_t k = 0; k < s->keys.n; k++) {
			const struct signing_key *key = &s->keys.v[k];
			if (!signs_with(s, key, apex_keys))
				continue;
			if (!have_content) {
				content = content_of(rs);
				have_content = 1;
			}
			uint64_t id = identity(zone, rs, key);
			const struct cached *known = trailed(id, content, s);
			if (known) {
				struct pending p = {set, k, made.n, 0, 1};
				PUSH(made, ((struct made){*known, 0, id, content}));
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
			PUSH(made, ((struct made){entry, old == NULL, id, content}));
			made_fresh += old == NULL;
			PUSH(*pending, p);
		}
	}
	if (fclose(out) != 0)
		fail("cannot write %s", f->requests);
	free(data.v);
	free(keyed.v);
	return asked;
}

void (*signing_driver)(const struct signer_files *f, size_t asked);

/* The driver's signatures, in the order asked, into `made`. */
static void receive(const struct signer_files *f, size_t asked, pending_list *pending)
{
	if (signing_driver) {
		signing_driver(f, asked);
	} else {
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
		struct cached *c = &made.v[pending->v[i].made].c;
		int len = fgetc(in);
		if (len <= 0 || len > MAX_SIGNATURE || fread(c->signature, 1, len, in) != (size_t)len)
			fail("%s: ends early, or a signature of a length no key makes",
			     f->signed_path);
		c->len = len;
	}
	fclose(in);
}

/* Each signature as an RRSIG record, and each RRSIG RRset linked to the RRset it covers. */
static void add_signatures(uint32_t zone, const pending_list *pending)
{
	const struct zone_signing *s = zones.v[zone].sign;
	for (size_t i = 0; i < pending->n; i++) {
		const struct pending *p = &pending->v[i];
		const struct cached *c = &made.v[p->made].c;
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
		add_record(zone, owner, T_RRSIG, rs->ttl, rd, rs->pos);  /* rs may move */
		if (p->trusted && rdatas.n > before) {
			while (trusted.n < rdatas.n)
				PUSH(trusted, 0);
			trusted.v[rdatas.n - 1] = 1;
		}
		uint32_t view = type == T_NSEC3 ? HASHED_VIEW(zone) : zone;
		rrsets.v[p->set].sigs = rrset_covering(view, owner, T_RRSIG, type);
	}
}

void sign_zone(uint32_t zone, const struct signer_files *f)
{
	size_t errors = diagnostics_errors();
	refuse_signed(zone);
	if (diagnostics_errors() == errors)
		add_denial(zone);
	if (diagnostics_errors() != errors)
		return;
	if (!cache_loaded)
		load_cache(f->cache);
	pending_list pending = {0};
	size_t asked = ask(zone, f, &pending);
	if (asked > 0)
		receive(f, asked, &pending);
	add_signatures(zone, &pending);
	free(pending.v);
}

void signer_finish(const struct signer_files *f)
{
	if (made.n == 0)
		return;
	/* In digest order (for signer_made too), onto huge pages as they move. */
	size_t bytes = made.n * sizeof *made.v;
	struct made *moved = huge_alloc(bytes);
	uint32_t *order = made_order();
	for (size_t i = 0; i < made.n; i++)
		moved[i] = made.v[order[i]];
	/* Each signature's place in the cache as written (equal digests written once), for
	 * the trail. */
	uint32_t *at = xmalloc((made.n ? made.n : 1) * sizeof *at);
	uint64_t written = 0;
	for (size_t i = 0; i < made.n; i++) {
		if (i > 0 && memcmp(moved[i - 1].c.digest, moved[i].c.digest, SHA256_LEN) == 0)
			at[order[i]] = at[order[i - 1]];
		else
			at[order[i]] = written++;
	}
	struct trail *next = xmalloc((made.n ? made.n : 1) * sizeof *next);
	for (size_t i = 0; i < made.n; i++)
		next[i] = (struct trail){made.v[i].id, made.v[i].content, at[i], 0};
	free(at);
	free(order);
	free(made.v);
	made.v = moved;
	made.cap = made.n;
	made_huge = bytes;
	digest_index_of_records(&made_index, (const uint8_t *)made.v, made.n, SHA256_LEN,
				sizeof *made.v);
	if (!f->cache) {
		free(next);
		return;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s.cache", f->signed_path);
	FILE *out = open_or_fail(path, "wb");
	fwrite(CACHE_MAGIC, 1, 8, out);
	fwrite(&written, sizeof written, 1, out);
	for (size_t i = 0; i < made.n; i++)
		if (i == 0 || memcmp(made.v[i - 1].c.digest, made.v[i].c.digest, SHA256_LEN) != 0)
			fwrite(&made.v[i].c, sizeof made.v[i].c, 1, out);
	static const uint8_t zeros[8];
	fwrite(zeros, 1, (8 - (8 + written * sizeof(struct cached)) % 8) % 8, out);
	uint64_t ntrail_next = made.n;
	fwrite(&ntrail_next, sizeof ntrail_next, 1, out);
	fwrite(next, sizeof *next, made.n, out);
	free(next);
	if (ferror(out) | (fclose(out) != 0))
		remove(path);  /* a cache, no more */
}

int signer_made(const uint8_t *data, size_t len, const uint8_t *key, size_t key_len,
		const uint8_t *signature, size_t signature_len, bytes_t *scratch)
{
	if (made_fresh == 0 || len < TIMES_AT + 8)
		return 0;  /* a rebuild's signatures all from the cache: none to match */
	scratch->n = 0;
	bytes_put(scratch, data, len);
	memset(scratch->v + TIMES_AT, 0, 8);
	bytes_put(scratch, key, key_len);
	uint8_t digest[SHA256_LEN];
	sha256(scratch->v, scratch->n, digest);
	int equal;
	size_t rank = digest_rank(&made_index, digest, &equal);
	const struct made *m = equal ? &made.v[rank - 1] : NULL;
	uint32_t expiration = (uint32_t)data[TIMES_AT] << 24 | data[TIMES_AT + 1] << 16 |
			      data[TIMES_AT + 2] << 8 | data[TIMES_AT + 3];
	uint32_t inception = (uint32_t)data[TIMES_AT + 4] << 24 | data[TIMES_AT + 5] << 16 |
			     data[TIMES_AT + 6] << 8 | data[TIMES_AT + 7];
	return m && m->fresh && m->c.expiration == expiration && m->c.inception == inception &&
	       m->c.len == signature_len && memcmp(m->c.signature, signature, signature_len) == 0;
}

int signer_trusted(uint32_t rdata)
{
	return rdata < trusted.n && trusted.v[rdata];
}

void signer_reset(void)
{
	bytes_release(&cache_file);
	trail = NULL;
	ntrail = trail_next = 0;
	free(trail_table);
	trail_table = NULL;
	trail_mask = 0;
	VEC_FREE(trusted);
	cache = NULL;
	ncache = 0;
	digest_index_free(&cache_index);
	digest_index_free(&made_index);
	cache_loaded = 0;
	if (made_huge)
		huge_free(made.v, made_huge);
	else
		free(made.v);
	made.v = NULL;
	made.n = made.cap = made_huge = made_fresh = 0;
}
