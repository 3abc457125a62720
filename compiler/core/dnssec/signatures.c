/*
 * signatures.c - a signed zone's signatures, checked before anything ships: each
 * authoritative RRset signed by every algorithm of the apex DNSKEY set (RFC 4035 §2.2), each
 * RRSIG by the zone (its signer the apex) with a key the apex holds, and within its validity
 * period (RFC 4034 §3.1.5). Whether each signature verifies is the driver's to find, with
 * dnspython and `cryptography` on every processor (compiler/dnssec/signatures.py): it is
 * written out here, what it signs with it (canonical.c) and the keys it may be by.
 *
 * With --lenient, the findings that leave the zone verifiable are warnings and the zone is
 * served as written, as NSD, Knot and BIND serve it: a validator needs one signature it can
 * verify per RRset (RFC 6840 §5.11) and skips an RRSIG whose signer or key it does not have
 * (RFC 4035 §5.3.1). So an algorithm of the apex DNSKEY set missing from an RRset's
 * signatures, a signature by a key the apex does not hold or by another signer (never
 * written out to verify: no key here can), and one outside its validity period are warnings;
 * an RRset with no signature by the apex with a key it holds, a signature whose labels field
 * no name can match, and (compiler/dnssec/signatures.py) one that fails against a key the apex
 * holds stay errors: those make the zone bogus at every validator.
 *
 * The file, little-endian: `ZBSIG1\0\0`, then entries, each a kind octet:
 *   'F' u16 length, a file's name as messages give it (numbered from 0 in `files` order);
 *   'K' u32 zone, u16 key tag, u8 algorithm, u16 length, the DNSKEY's RDATA;
 *   'S' u32 zone, u32 file, u32 line, u16 key tag, u8 algorithm, u16 length, the RRSIG
 *       as messages name it (`OWNER RRSIG TYPE`), u16 length, the signature, u32 length, what it signs.
 * Only the signatures the cache does not hold are written: the cache is the sorted SHA-256
 * digests of signatures verified before (over what each signs, the signature and its keys),
 * and OUT.digests receives those of this build, for the driver to put in its place once every
 * signature written to OUT has verified.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bake.h"

int64_t *zone_expiry;

#define DNSKEY_ZONE 0x0100    /* RFC 4034 §2.1.1 */
#define DNSKEY_REVOKE 0x0080  /* RFC 5011 §3 */

struct key {
	uint16_t tag;
	uint8_t algorithm;
	const uint8_t *rdata;
	uint16_t len;
};

/* RFC 4034 Appendix B (algorithm 1's exception aside: RSAMD5 is not verified). */
uint16_t dnskey_tag(const uint8_t *p, size_t len)
{
	uint32_t ac = 0;
	for (size_t i = 0; i < len; i++)
		ac += i & 1 ? p[i] : (uint32_t)p[i] << 8;
	ac += ac >> 16 & 0xFFFF;
	return ac & 0xFFFF;
}

static uint16_t u16_at(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static uint32_t u32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* A signature time in seconds since 1970: the 32-bit value nearest `now` (RFC 4034 §3.1.5,
 * serial number arithmetic). */
static int64_t absolute(uint32_t t, int64_t now)
{
	return now + (int32_t)(t - (uint32_t)now);
}

static const char *date(int64_t t)
{
	static char text[64];
	time_t tt = t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
	return text;
}

/* Each zone's tally of signature times, reported once per zone at its first instance. */
struct tally {
	size_t count;
	int64_t when;
	struct pos pos;
	name_t owner;
	uint16_t covers, tag;
};

static void note(struct tally *t, int64_t when, const struct rrset *sig, uint16_t tag,
		 int earliest)
{
	if (t->count++ == 0 || (earliest && when < t->when)) {
		t->when = when;
		t->pos = set_pos(sig);
		t->owner = sig->owner;
		t->covers = sig->covers;
		t->tag = tag;
	}
}

/* RRsets the zone signs: every one at its authoritative names but the NS of a cut and the
 * glue (RFC 4035 §2.2). */
int signable(uint32_t zone, const struct rrset *set)
{
	if (set->type == T_RRSIG || (set->type != T_NSEC3 && occluded(zone, set->owner)))
		return 0;
	if (set->type != T_NSEC3 && (flags_in(zone, set->owner) & NAME_CUT))
		return set->type == T_DS || set->type == T_NSEC;
	return 1;
}

struct zone_keys {
	VEC(struct key) keys;
	uint8_t algorithms[32];  /* a bit per algorithm of a zone key, not revoked */
};

static void collect_keys(uint32_t zone, struct zone_keys *k)
{
	uint32_t set = rrset_in(zone, zones.v[zone].origin, T_DNSKEY);
	if (set == NONE)
		return;
	for (uint32_t i = rrsets.v[set].first; i != NONE; i = rdatas.v[i].next) {
		const uint8_t *p = rdata_raw.v + rdatas.v[i].raw;
		uint16_t len = rdatas.v[i].raw_len;
		if (len < 4 || p[2] != 3 || !(u16_at(p) & DNSKEY_ZONE))
			continue;  /* not a DNSSEC zone key (RFC 4034 §2.1.1-2) */
		struct key key = {dnskey_tag(p, len), p[3], p, len};
		PUSH(k->keys, key);
		if (!(u16_at(p) & DNSKEY_REVOKE))
			k->algorithms[p[3] / 8] |= 1 << (p[3] % 8);
	}
}

static int has_algorithm(const uint8_t *bits, unsigned algorithm)
{
	return bits[algorithm / 8] >> (algorithm % 8) & 1;
}

/* The verified digests of the cache, sorted, mapped (tens of megabytes for a large signed
 * set: reading them into memory of its own took a fifth of a second of a million names'
 * rebuild); and this build's. */
static const uint8_t *cached;
static size_t ncached, cached_len;
static struct digest_index cached_index;
static VEC(uint8_t) digests;

static void load_cache(const char *path)
{
	cached = map_file(path, &cached_len, 1, NULL);
	ncached = cached ? cached_len / SHA256_LEN : 0;
	digest_index_build(&cached_index, cached, ncached, SHA256_LEN);
}

static void release_cache(void)
{
	if (cached)
		munmap((void *)cached, cached_len);
	cached = NULL;
	ncached = cached_len = 0;
	digest_index_free(&cached_index);
}

/* This build's digests (`n`, sorted) written to PATH; with `merged`, the cache's as well, once
 * each: the signatures taken by their trail were not digested here, and the next build may
 * need them (a full one). Written as they are merged: the two are tens of megabytes. */
static void write_digests(const char *path, const uint8_t *mine, size_t n, int merged)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		fail("cannot write %s", path);
	size_t a = 0, b = 0, na = merged ? ncached : 0;
	const uint8_t *last = NULL;
	while (a < na || b < n) {
		const uint8_t *x = a < na ? cached + a * SHA256_LEN : NULL;
		const uint8_t *y = b < n ? mine + b * SHA256_LEN : NULL;
		int order = !x ? 1 : !y ? -1 : memcmp(x, y, SHA256_LEN);
		const uint8_t *take = order <= 0 ? x : y;
		a += order <= 0;
		b += order >= 0;
		if (!last || memcmp(last, take, SHA256_LEN) != 0)
			fwrite(take, SHA256_LEN, 1, f);
		last = take;
	}
	if (ferror(f) || fclose(f) != 0)
		fail("cannot write %s", path);
}

static int is_cached(const uint8_t digest[SHA256_LEN])
{
	int equal;
	digest_rank(&cached_index, digest, &equal);
	return equal;
}

static void put16(FILE *f, uint16_t x)
{
	uint8_t o[2] = {x & 0xFF, x >> 8};
	fwrite(o, 1, 2, f);
}

static void put32(FILE *f, uint32_t x)
{
	uint8_t o[4] = {x & 0xFF, x >> 8 & 0xFF, x >> 16 & 0xFF, x >> 24};
	fwrite(o, 1, 4, f);
}

/* A signature whose cache key is made, waiting for its lookup: the cache's digests are tens
 * of megabytes, and a lookup two cache misses (the index, then the digest), so each is
 * fetched while the next signatures are hashed. What the verifier needs goes with it. */
#define IN_FLIGHT 8
struct looked_up {
	uint8_t digest[SHA256_LEN];
	const struct rrset *sig;
	const uint8_t *signature;
	uint16_t signature_len, tag;
	uint8_t algorithm;
	size_t signed_len;
	bytes_t data;  /* what it signs, signed_len octets, and more; not made yet while
			* signed_len is 0 (below) */
	uint32_t covered, rdata;  /* to make it when it goes out to verify */
	int made;      /* this build's signer made it, of these very octets (below) */
};

/* What a second thread works out ahead for each RRSIG record of a zone (by its place among
 * them, in RRset order): its cache key, and whether this build's signer made it. The octets
 * it signs are made again only for the few that go out to verify. A record with anything to
 * say about it (state 0) is worked out by the main pass, which says it. */
struct ahead {
	uint8_t digest[SHA256_LEN];
	uint32_t rdata;   /* the record's, as the main pass checks */
	uint16_t fields;  /* the RRSIG's RDATA before its signature */
	uint8_t state;    /* 0, AHEAD_READY, or AHEAD_MADE */
};
#define AHEAD_READY 1
#define AHEAD_MADE 2
#define AHEAD_TRUSTED 3  /* taken from the signing cache by its trail (signer.c) */

/* Signatures not looked up (AHEAD_TRUSTED): their digests stay in the cache this build
 * writes, which then holds the earlier cache's as well as its own. */
static size_t trusted_seen;

struct zone_check {
	uint32_t zone;
	struct zone_keys keys;
	uint8_t origin_key[256];  /* the apex, lowercased: every signer's name */
	size_t origin_len;
	int lenient;
	enum severity passable;  /* of what leaves the zone verifiable: WARNING under --lenient */
	struct tally expired, early, soon;
	size_t unsigned_sets, bogus_sets, strangers, keyless;
	bytes_t data;  /* scratch */
	struct looked_up ring[IN_FLIGHT];
	size_t pushed, done;  /* counts: ring[i % IN_FLIGHT] */
	FILE *out;
	size_t written, made, zone_made;
	bytes_t scratch;
	struct ahead *ahead;  /* the zone's, or NULL */
	size_t ordinal;       /* the next RRSIG record's place among the zone's */
};

/* The oldest in flight: out to verify unless the cache holds it. */
static void look_up(struct zone_check *c)
{
	struct looked_up *l = &c->ring[c->done++ % IN_FLIGHT];
	if (is_cached(l->digest))
		return;
	if (l->made) {
		c->made++;
		return;
	}
	if (l->signed_len == 0) {
		const struct rdata *rd = &rdatas.v[l->rdata];
		l->data.n = 0;
		signed_data(&rrsets.v[l->covered], rdata_raw.v + rd->raw, rd->raw_len, &l->data);
		l->signed_len = l->data.n;
	}
	char label[300];
	int label_len = snprintf(label, sizeof label, "%s RRSIG %s", name_text(l->sig->owner),
				 type_name(l->sig->covers));
	FILE *out = c->out;
	fputc('S', out);
	put32(out, c->zone);
	put32(out, set_pos(l->sig).file);
	put32(out, set_pos(l->sig).line);
	put16(out, l->tag);
	fputc(l->algorithm, out);
	put16(out, label_len);
	fwrite(label, 1, label_len, out);
	put16(out, l->signature_len);
	fwrite(l->signature, 1, l->signature_len, out);
	put32(out, l->signed_len);
	fwrite(l->data.v, 1, l->signed_len, out);
	c->written++;
}

/* A key made: its index entry fetched now, its digest halfway through the ring, and the
 * oldest looked up once the ring is full. */
static void push_lookup(struct zone_check *c, struct looked_up *l)
{
	digest_index_prefetch(&cached_index, l->digest, 0);
	if (c->pushed - c->done >= IN_FLIGHT / 2) {
		const struct looked_up *half = &c->ring[(c->pushed - IN_FLIGHT / 2) % IN_FLIGHT];
		digest_index_prefetch(&cached_index, half->digest, 1);
	}
	c->pushed++;
	if (c->pushed - c->done == IN_FLIGHT)
		look_up(c);
}

static void look_up_all(struct zone_check *c)
{
	while (c->done < c->pushed)
		look_up(c);
}

/* What --lenient adds to a warning that would otherwise be an error. */
static const char *lenient_note(const struct zone_check *c, const char *note)
{
	return c->lenient ? note : "";
}

#define SKIPPED_NOTE "; served unverified: validators skip it"

/* A key of the apex a validator uses: not revoked (RFC 5011 §2.1). */
static int holds_key(const struct zone_check *c, uint16_t tag, uint8_t algorithm)
{
	for (size_t k = 0; k < c->keys.keys.n; k++) {
		const struct key *key = &c->keys.keys.v[k];
		if (key->tag == tag && key->algorithm == algorithm &&
		    !(u16_at(key->rdata) & DNSKEY_REVOKE))
			return 1;
	}
	return 0;
}

/* An RRSIG a validator can check: signed by the apex with a key its DNSKEY set holds (RFC
 * 4035 §5.3.1). The signer's name follows the 18 octets of fixed fields, uncompressed. */
static int by_apex_key(const struct zone_check *c, const uint8_t *p, size_t len)
{
	if (len < 18 + c->origin_len || !wire_is_key(p + 18, c->origin_key, c->origin_len))
		return 0;
	return holds_key(c, u16_at(p + 16), p[2]);
}

/*
 * A signature this build made (signer.c) is checked without verifying it again: the octets
 * it signs, made again here from the records the zone serves, must be those the signer
 * signed, and the signature the one it got, by a key the driver matched to its DNSKEY when
 * it loaded it (compiler/dnssec/keys.py). What verifying would add is the signer's own
 * arithmetic, which is checked apart (compiler/dnssec/signing.py): each algorithm's known
 * answer and each key's signature verified with its DNSKEY before anything is signed, and
 * each zone's first VERIFY_FIRST signatures (every one of a small zone) and one in
 * 256 / VERIFY_SAMPLE of the rest, chosen by its digest, verified all the same by the driver
 * with `cryptography`, another implementation than libsodium, which signs Ed25519. A signer
 * that goes wrong for every signature, or for more than a few, fails the build. Signatures
 * from the signing cache or from the zone file are verified, all of them.
 */
#define VERIFY_FIRST 64
#define VERIFY_SAMPLE 1

/* A signature taken by its trail (signer.c) is not looked up again, but for a sample as
 * the driver's: the zone's first VERIFY_FIRST and one in 256 / VERIFY_SAMPLE of the rest,
 * chosen by their place. Those are looked up in the verification cache, where they are if
 * the trail named the signature it should; a trail gone wrong sends them to verify, and
 * they fail the build. */
static int trail_sampled(size_t ordinal)
{
	return ordinal < VERIFY_FIRST || (mix64(ordinal) & 255) < VERIFY_SAMPLE;
}

static int made_here(const struct zone_check *c, const bytes_t *data, size_t signed_len,
		     uint16_t tag, uint8_t algorithm, const uint8_t *signature,
		     size_t signature_len, bytes_t *scratch)
{
	for (size_t k = 0; k < c->keys.keys.n; k++) {
		const struct key *key = &c->keys.keys.v[k];
		if (key->tag == tag && key->algorithm == algorithm &&
		    signer_made(data->v, signed_len, key->rdata, key->len, signature,
				signature_len, scratch))
			return 1;
	}
	return 0;
}

/* The signer in what an RRSIG signs (lowercased there, after its 18 octets of fixed fields)
 * is the zone's apex (RFC 4035 §5.3.1). */
static int signer_is_apex(const struct zone_check *c, const bytes_t *data, size_t fields)
{
	return fields - 18 == c->origin_len &&
	       memcmp(data->v + 18, c->origin_key, c->origin_len) == 0;
}

/* After what it signs, what the verifier needs of a signature besides it: its key tag and
 * algorithm, then each apex key it may be by (the digest covers them, the verifier tries
 * each). How many keys. */
static size_t put_candidates(const struct zone_check *c, bytes_t *data, uint16_t tag,
			     uint8_t algorithm)
{
	uint8_t header[3] = {tag >> 8, tag & 0xFF, algorithm};
	size_t candidates = 0;
	bytes_put(data, header, 3);
	for (size_t k = 0; k < c->keys.keys.n; k++) {
		const struct key *key = &c->keys.keys.v[k];
		if (key->tag == tag && key->algorithm == algorithm) {
			bytes_u16(data, key->len);
			bytes_put(data, key->rdata, key->len);
			candidates++;
		}
	}
	return candidates;
}

/* The ahead pass over the RRSIG RRsets [begin, end) of a zone, their first record the
 * `ordinal`-th (state 0 where anything is to be said: the main pass says it). */
struct ahead_part {
	const struct zone_check *c;
	uint32_t begin, end;
	size_t ordinal;
};

static void *work_ahead(void *arg)
{
	const struct ahead_part *part = arg;
	const struct zone_check *c = part->c;
	uint32_t zone = c->zone;
	bytes_t data = {0}, scratch = {0};
	size_t ordinal = part->ordinal;
	for (uint32_t s = part->begin; s < part->end; s++) {
		const struct rrset *sig = &rrsets.v[s];
		if (sig->type != T_RRSIG)
			continue;
		uint32_t view = sig->covers == T_NSEC3 ? HASHED_VIEW(zone) : zone;
		uint32_t covered = NONE;
		int found = 0;  /* `covered` looked up: not for a set taken by its trail */
		for (uint32_t i = sig->first; i != NONE; i = rdatas.v[i].next, ordinal++) {
			struct ahead *a = &c->ahead[ordinal];
			if (signer_trusted(i) && !trail_sampled(ordinal)) {
				a->rdata = i;
				a->state = AHEAD_TRUSTED;
				continue;
			}
			if (!found++)
				covered = rrset_covering(view, sig->owner, sig->covers, 0);
			const uint8_t *p = rdata_raw.v + rdatas.v[i].raw;
			size_t len = rdatas.v[i].raw_len;
			data.n = 0;
			size_t fields = covered == NONE ? 0 :
					signed_data(&rrsets.v[covered], p, len, &data);
			uint16_t tag = u16_at(p + 16);
			if (fields == 0 || !signer_is_apex(c, &data, fields))
				continue;
			size_t signed_len = data.n;
			if (put_candidates(c, &data, tag, p[2]) == 0)
				continue;
			bytes_put(&data, p + fields, len - fields);
			sha256(data.v, data.n, a->digest);
			a->rdata = i;
			a->fields = fields;
			a->state = zones.v[zone].sign && made_here(c, &data, signed_len, tag, p[2],
								   p + fields, len - fields,
								   &scratch) ? AHEAD_MADE : AHEAD_READY;
		}
	}
	free(data.v);
	free(scratch.v);
	return NULL;
}

/* Each RRSIG record's cache key worked out ahead, on two threads, for the main pass to take
 * in order (a million names hold millions of them: the SHA-256 and the lookup of each were
 * most of the check). */
static void look_ahead(struct zone_check *c)
{
	const struct zone *z = &zones.v[c->zone];
	size_t total = 0;
	for (uint32_t s = z->rrsets_begin; s < z->rrsets_end; s++)
		if (rrsets.v[s].type == T_RRSIG)
			total += rrsets.v[s].count;
	c->ahead = xcalloc(total ? total : 1, sizeof *c->ahead);
	c->ordinal = 0;
	struct ahead_part first = {c, z->rrsets_begin, z->rrsets_begin, 0}, second = first;
	for (; first.end < z->rrsets_end && second.ordinal < total / 2; first.end++)
		if (rrsets.v[first.end].type == T_RRSIG)
			second.ordinal += rrsets.v[first.end].count;
	second.begin = first.end;
	second.end = z->rrsets_end;
	struct beside helper;
	start_beside(&helper, work_ahead, &second);
	work_ahead(&first);
	join_beside(&helper);
}

/* An RRSIG's times: the zone's earliest expiry, and those out of their validity or near its
 * end, counted for report_times. */
static void note_times(struct zone_check *c, const struct signature_check *o,
		       const struct rrset *sig, const uint8_t *p, uint16_t tag)
{
	int64_t expiration = absolute(u32_at(p + 8), o->now);
	int64_t inception = absolute(u32_at(p + 12), o->now);
	if (zone_expiry[c->zone] == 0 || expiration < zone_expiry[c->zone])
		zone_expiry[c->zone] = expiration;
	if (expiration < o->now)
		note(&c->expired, expiration, sig, tag, 1);
	else if (inception > o->now)
		note(&c->early, inception, sig, tag, 1);
	else if (expiration < o->now + o->warning)
		note(&c->soon, expiration, sig, tag, 1);
}

/* A signature with its cache key, on its way to the lookup: matched to its signing (`made`)
 * unless among the zone's first made or the sample, else verified unless cached. With
 * `signed_len`, c->data holds what it signs, and goes with it; without (0), that is made
 * only if it goes out to verify. */
static void push_signature(struct zone_check *c, const struct rrset *sig, uint32_t covered,
			   uint32_t rdata, size_t fields, const uint8_t digest[SHA256_LEN],
			   int made, size_t signed_len)
{
	const uint8_t *p = rdata_raw.v + rdatas.v[rdata].raw;
	struct looked_up *l = &c->ring[c->pushed % IN_FLIGHT];
	memcpy(l->digest, digest, SHA256_LEN);
	l->made = made && c->zone_made++ >= VERIFY_FIRST && l->digest[0] >= VERIFY_SAMPLE;
	RESERVE(digests, SHA256_LEN);
	memcpy(digests.v + digests.n, l->digest, SHA256_LEN);
	digests.n += SHA256_LEN;
	l->sig = sig;
	l->signature = p + fields;
	l->signature_len = rdatas.v[rdata].raw_len - fields;
	l->tag = u16_at(p + 16);
	l->algorithm = p[2];
	l->covered = covered;
	l->rdata = rdata;
	l->signed_len = signed_len;
	if (signed_len) {
		bytes_t swap = l->data;  /* the scratch goes with it; its old buffer is the next */
		l->data = c->data;
		c->data = swap;
	}
	push_lookup(c, l);
}

/* Each RRSIG of one RRset: from the zone, by a key it holds, in time; and out to verify. */
static void check_rrsig_set(struct zone_check *c, const struct signature_check *o, uint32_t s)
{
	const struct rrset *sig = &rrsets.v[s];
	uint32_t zone = c->zone;
	name_t origin = zones.v[zone].origin;
	uint32_t view = sig->covers == T_NSEC3 ? HASHED_VIEW(zone) : zone;
	uint32_t covered = NONE, seen = 0;
	int found = 0;  /* `covered` looked up: not for a set taken by its trail */
	for (uint32_t i = sig->first; i != NONE; i = rdatas.v[i].next, seen++) {
		const uint8_t *p = rdata_raw.v + rdatas.v[i].raw;
		size_t len = rdatas.v[i].raw_len;
		uint16_t tag = u16_at(p + 16);
		const struct ahead *a = &c->ahead[c->ordinal++];
		/* (The signer signed what it covers: there is one.) */
		if (a->state == AHEAD_TRUSTED && a->rdata == i) {
			note_times(c, o, sig, p, tag);
			trusted_seen++;
			continue;
		}
		if (!found++)
			covered = rrset_covering(view, sig->owner, sig->covers, 0);
		if (covered == NONE) {
			c->ordinal += sig->count - seen - 1;
			return;  /* a warning already (zones.c) */
		}
		if (a->state && a->rdata == i) {
			note_times(c, o, sig, p, tag);
			push_signature(c, sig, covered, i, a->fields, a->digest,
				       a->state == AHEAD_MADE, 0);
			continue;
		}
		c->data.n = 0;
		size_t fields = signed_data(&rrsets.v[covered], p, len, &c->data);
		if (fields == 0) {
			diagnose(zone, ERROR, set_pos(sig), "%s RRSIG %s (key %u): its labels field %u "
				 "exceeds the owner's labels (RFC 4035 §5.3.1)", name_text(sig->owner),
				 type_name(sig->covers), tag, p[3]);
			continue;
		}
		if (!signer_is_apex(c, &c->data, fields)) {
			if (c->strangers++ < SHOWN_EACH)
				diagnose(zone, c->passable, set_pos(sig), "%s RRSIG %s (key %u): the "
					 "signer is not the zone's apex %s (RFC 4035 §5.3.1)%s",
					 name_text(sig->owner), type_name(sig->covers), tag,
					 name_text(origin), lenient_note(c, SKIPPED_NOTE));
			continue;
		}
		note_times(c, o, sig, p, tag);
		size_t signed_len = c->data.n;
		if (put_candidates(c, &c->data, tag, p[2]) == 0) {
			/* nothing here can verify it: not written out */
			if (c->keyless++ < SHOWN_EACH)
				diagnose(zone, c->passable, set_pos(sig), "%s RRSIG %s: no DNSKEY at the "
					 "apex has key tag %u and algorithm %u (RFC 4035 §5.3.1)%s",
					 name_text(sig->owner), type_name(sig->covers), tag, p[2],
					 lenient_note(c, SKIPPED_NOTE));
			continue;
		}
		bytes_put(&c->data, p + fields, len - fields);  /* the signature */
		uint8_t digest[SHA256_LEN];
		sha256(c->data.v, c->data.n, digest);
		int made = zones.v[zone].sign && made_here(c, &c->data, signed_len, tag, p[2],
							   p + fields, len - fields, &c->scratch);
		push_signature(c, sig, covered, i, fields, digest, made, signed_len);
	}
}

/* Each authoritative RRset has a signature by every algorithm of the zone's keys (RFC 4035
 * §2.2). A validator needs only one it can verify (RFC 6840 §5.11): under --lenient a missing
 * algorithm is a warning, but an RRset with no signature by the apex with a key it holds is
 * bogus at every validator, and stays an error. */
static void check_coverage(struct zone_check *c, uint32_t s)
{
	const struct rrset *set = &rrsets.v[s];
	uint8_t by[32] = {0};
	size_t verifiable = 0;
	if (set->sigs != NONE)
		for (uint32_t i = rrsets.v[set->sigs].first; i != NONE; i = rdatas.v[i].next) {
			const uint8_t *p = rdata_raw.v + rdatas.v[i].raw;
			if (rdatas.v[i].raw_len > 2)
				by[p[2] / 8] |= 1 << (p[2] % 8);
			if (c->lenient)
				verifiable += by_apex_key(c, p, rdatas.v[i].raw_len);
		}
	if (c->lenient && verifiable == 0) {
		if (c->bogus_sets++ < SHOWN_EACH)
			diagnose(c->zone, ERROR, set_pos(set), "%s %s has no RRSIG by a key of the apex "
				 "DNSKEY set, so validators find it bogus (RFC 4035 §2.2, §5.3.1)",
				 name_text(set->owner), type_name(set->type));
		return;
	}
	/* Nearly every RRset has them all: told 32 octets at once, not by each of 256
	 * algorithms (which would be most of the signature check's own time). */
	uint8_t missing = 0;
	for (size_t i = 0; i < sizeof by; i++)
		missing |= c->keys.algorithms[i] & ~by[i];
	for (unsigned a = 0; missing && a < 256; a++) {
		if (!has_algorithm(c->keys.algorithms, a) || has_algorithm(by, a))
			continue;
		if (c->unsigned_sets++ < SHOWN_EACH)
			diagnose(c->zone, c->passable, set_pos(set), "%s %s has no RRSIG by algorithm %u, "
				 "which the apex DNSKEY set holds (RFC 4035 §2.2)%s",
				 name_text(set->owner), type_name(set->type), a,
				 lenient_note(c, "; validators need only one (RFC 6840 §5.11)"));
		return;
	}
}

/* Signatures outside their validity period: validators reject them (RFC 4035 §5.3.1), but
 * until the zone is re-signed the peers serve them, and under --lenient so does zonebake,
 * its earliest expiry logged and exported as any signed zone's (main.c). */
static void report_times(const struct zone_check *c, const struct signature_check *o)
{
	const char *served = lenient_note(c, "; served as the file has them");
	const struct tally *t = &c->expired;
	if (t->count)
		diagnose(c->zone, c->passable, t->pos, "%s RRSIG %s (key %u) expired on %s; %zu "
			 "signatures of the zone have expired (RFC 4035 §5.3.1)%s",
			 name_text(t->owner), type_name(t->covers), t->tag, date(t->when), t->count,
			 served);
	t = &c->early;
	if (t->count)
		diagnose(c->zone, c->passable, t->pos, "%s RRSIG %s (key %u) is not valid until %s; "
			 "%zu signatures of the zone are not valid yet (RFC 4035 §5.3.1)%s",
			 name_text(t->owner), type_name(t->covers), t->tag, date(t->when), t->count,
			 served);
	t = &c->soon;
	if (t->count)
		diagnose(c->zone, WARNING, t->pos, "%s RRSIG %s (key %u) expires on %s, within the "
			 "signature-warning of %u days; %zu signatures of the zone expire within it",
			 name_text(t->owner), type_name(t->covers), t->tag, date(t->when),
			 o->warning / 86400, t->count);
	const struct zone *z = &zones.v[c->zone];
	struct pos pos = rrset_pos.v[z->soa != NONE ? z->soa : z->rrsets_begin];
	diagnose_rest(c->zone, c->passable, pos, c->unsigned_sets, "RRsets without a signature by "
		      "each algorithm");
	diagnose_rest(c->zone, ERROR, pos, c->bogus_sets, "RRsets without a signature by a key "
		      "of the apex");
	diagnose_rest(c->zone, c->passable, pos, c->strangers, "signatures by a signer other than "
		      "the apex");
	diagnose_rest(c->zone, c->passable, pos, c->keyless, "signatures by a key the apex does "
		      "not hold");
}

static void check_zone_signatures(struct zone_check *c, const struct signature_check *o)
{
	FILE *out = c->out;
	uint32_t zone = c->zone;
	const struct zone *z = &zones.v[zone];
	if (!types_has(&z->types, T_RRSIG))
		return;  /* unsigned */
	collect_keys(zone, &c->keys);
	c->origin_len = name_key(z->origin, c->origin_key);
	if (c->keys.keys.n == 0) {
		uint32_t first = z->rrsets_begin;
		while (rrsets.v[first].type != T_RRSIG)
			first++;
		diagnose(zone, ERROR, rrset_pos.v[first], "the zone %s holds RRSIG records, but "
			 "its apex has no DNSKEY zone key (RFC 4035 §2.1)", name_text(z->origin));
		return;
	}
	for (size_t k = 0; k < c->keys.keys.n; k++) {
		const struct key *key = &c->keys.keys.v[k];
		fputc('K', out);
		put32(out, zone);
		put16(out, key->tag);
		fputc(key->algorithm, out);
		put16(out, key->len);
		fwrite(key->rdata, 1, key->len, out);
	}
	look_ahead(c);
	for (size_t s = z->rrsets_begin; s < z->rrsets_end; s++) {
		if (rrsets.v[s].type == T_RRSIG)
			check_rrsig_set(c, o, s);
		else if (signable(zone, &rrsets.v[s]))
			check_coverage(c, s);
	}
	look_up_all(c);
	free(c->ahead);
	c->ahead = NULL;
	report_times(c, o);
}

void check_signatures(const struct signature_check *o, size_t *to_verify, size_t *in_cache)
{
	zone_expiry = xcalloc(zones.n ? zones.n : 1, sizeof *zone_expiry);
	/* The cache is tens of megabytes for a large signed set: a set without a signature
	 * does not read it (nor, writing no digests, does it replace it). */
	int any_signed = 0;
	for (uint32_t zone = 0; zone < zones.n; zone++)
		any_signed |= types_has(&zones.v[zone].types, T_RRSIG);
	load_cache(any_signed ? o->cache : NULL);
	FILE *out = fopen(o->out, "wb");
	if (!out)
		fail("cannot write %s", o->out);
	fwrite("ZBSIG1\0\0", 1, 8, out);
	for (size_t i = 0; i < files.n; i++) {
		size_t len = strlen(files.v[i]);
		fputc('F', out);
		put16(out, len);
		fwrite(files.v[i], 1, len, out);
	}
	struct zone_check c = {.out = out, .lenient = o->lenient,
			       .passable = o->lenient ? WARNING : ERROR};
	for (uint32_t zone = 0; zone < zones.n; zone++) {
		c.zone = zone;
		c.keys.keys.n = 0;
		memset(c.keys.algorithms, 0, sizeof c.keys.algorithms);
		memset(&c.expired, 0, sizeof c.expired);
		memset(&c.early, 0, sizeof c.early);
		memset(&c.soon, 0, sizeof c.soon);
		c.unsigned_sets = c.bogus_sets = c.strangers = c.keyless = c.zone_made = 0;
		check_zone_signatures(&c, o);
	}
	free(c.keys.keys.v);
	free(c.data.v);
	free(c.scratch.v);
	for (size_t i = 0; i < IN_FLIGHT; i++)
		free(c.ring[i].data.v);
	if (fclose(out) != 0)
		fail("cannot write %s", o->out);
	size_t total = digests.n / SHA256_LEN;
	if (total > 0)
		digests_sort(digests.v, total, SHA256_LEN);
	size_t own = total;
	if (own > 0 || (trusted_seen > 0 && ncached > 0)) {
		char next[4096];
		snprintf(next, sizeof next, "%s.digests", o->out);
		write_digests(next, digests.v, own, trusted_seen > 0);
	}
	VEC_FREE(digests);
	trusted_seen = 0;
	release_cache();
	*to_verify = c.written;
	*in_cache = own - c.written - c.made;
	phase("signatures", own, "signatures");
	if (c.made)
		phase_took("signatures matched to their signing", 0.0, c.made, "signatures");
}

void signatures_reset(void)
{
	free(zone_expiry);
	zone_expiry = NULL;
}
