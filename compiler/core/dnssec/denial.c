/*
 * denial.c - a signed zone's denial of existence, as the answers need it: its NSEC RRsets in
 * canonical order (RFC 4034 §6.1) or its NSEC3 RRsets in hash order (RFC 5155 §3), and the
 * searches over them: the NSEC at or before a name, the NSEC3 matching or covering a name's
 * hash. A chain index names one RRset of the chain, here, in the answers and in the layout.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "query/nsec3hash.h"
#include "zonedata.h"

struct chain {
	uint16_t kind;          /* T_NSEC, T_NSEC3, or 0: the zone has no denial chain */
	VEC(uint32_t) sets;     /* its NSEC or NSEC3 RRsets in chain order */
	bytes_t keys;           /* NSEC: the owners' lowercased wire names, at key_off */
	VEC(uint32_t) key_off;
	uint8_t *hashes;        /* NSEC3: ZB_SHA1_LEN octets per RRset, ascending */
	/* NSEC3: whether no two hashes share their first 8 octets, by which the responder finds
	 * an entry an answer names (runtime/zonedata.h, struct zb_entry_key). */
	int keyed;
	struct digest_index index;  /* ...and where each is */
	uint16_t iterations;
	uint8_t salt_len, salt[255];
};

static struct chain *chains;  /* per zone */

/* The offsets of a wire name's labels, root not counted; their number. */
static size_t label_offsets(const uint8_t *name, uint8_t *at)
{
	size_t n = 0, i = 0;
	while (name[i]) {
		at[n++] = i;
		i += 1 + name[i];
	}
	return n;
}

/* RFC 4034 §6.1: labels compared from the root down, each as a string of lowercased octets,
 * a label that is a prefix of another first; a name that is a suffix of another first. */
int canonical_cmp(const uint8_t *a, const uint8_t *b)
{
	uint8_t ao[128], bo[128];
	size_t na = label_offsets(a, ao), nb = label_offsets(b, bo);
	while (na && nb) {
		const uint8_t *x = a + ao[--na], *y = b + bo[--nb];
		int c = memcmp(x + 1, y + 1, x[0] < y[0] ? x[0] : y[0]);
		if (c || x[0] != y[0])
			return c ? c : x[0] - y[0];
	}
	return (int)na - (int)nb;
}

static const struct chain *sorting;

static const uint8_t *key_at(const struct chain *c, uint32_t index)
{
	return c->keys.v + c->key_off.v[index];
}

static int by_owner(const void *x, const void *y)
{
	return canonical_cmp(key_at(sorting, *(const uint32_t *)x),
			     key_at(sorting, *(const uint32_t *)y));
}

static const uint8_t *hash_at(const struct chain *c, uint32_t index)
{
	return c->hashes + (size_t)index * ZB_SHA1_LEN;
}

static int by_hash(const void *x, const void *y)
{
	return memcmp(hash_at(sorting, *(const uint32_t *)x), hash_at(sorting, *(const uint32_t *)y),
		      ZB_SHA1_LEN);
}

/* Base32 with the extended hex alphabet (RFC 4648 §7), either case: an NSEC3 owner's first
 * label, the hash. 0 when it is not 32 such characters. */
static int unbase32hex(const uint8_t *label, size_t len, uint8_t out[ZB_SHA1_LEN])
{
	if (len != 32)
		return 0;
	uint64_t bits = 0;
	size_t nbits = 0, n = 0;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = label[i] | 0x20, v;
		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'v')
			v = c - 'a' + 10;
		else
			return 0;
		bits = bits << 5 | v;
		nbits += 5;
		if (nbits >= 8) {
			out[n++] = bits >> (nbits - 8);
			nbits -= 8;
		}
	}
	return n == ZB_SHA1_LEN;
}

/* The chain order of a permutation, applied to the RRsets, and their keys or hashes. */
static void reorder(struct chain *c, uint32_t *order, size_t width)
{
	size_t n = c->sets.n;
	uint32_t *sets = xmalloc(n * sizeof *sets);
	for (size_t i = 0; i < n; i++)
		sets[i] = c->sets.v[order[i]];
	memcpy(c->sets.v, sets, n * sizeof *sets);
	free(sets);
	if (width) {
		uint8_t *hashes = xmalloc(n * width);
		for (size_t i = 0; i < n; i++)
			memcpy(hashes + i * width, hash_at(c, order[i]), width);
		free(c->hashes);
		c->hashes = hashes;
	} else {
		uint32_t *offs = xmalloc(n * sizeof *offs);
		for (size_t i = 0; i < n; i++)
			offs[i] = c->key_off.v[order[i]];
		memcpy(c->key_off.v, offs, n * sizeof *offs);
		free(offs);
	}
}

/* NSEC3 parameters (RFC 5155 §3.2): from the apex's NSEC3PARAM, or the first NSEC3. */
static void nsec3_parameters(uint32_t zone, struct chain *c)
{
	const struct zone *z = &zones.v[zone];
	uint32_t param = rrset_in(zone, z->origin, T_NSEC3PARAM);
	uint32_t from = param != NONE ? param : c->sets.v[0];
	const struct rdata *rd = &rdatas.v[rrsets.v[from].first];
	const uint8_t *raw = rdata_raw.v + rd->raw;
	c->iterations = raw[2] << 8 | raw[3];
	c->salt_len = raw[4];
	memcpy(c->salt, raw + 5, c->salt_len);
	if (raw[0] != 1)
		diagnose(zone, ERROR, rrset_pos.v[from], "NSEC3 hash algorithm %u: only SHA-1 (1) "
			 "is defined (RFC 5155 §11)", raw[0]);
}

int nsec3_starts_page(const uint8_t *hash)
{
	return hash[ZB_SHA1_LEN - 1] < ZB_NSEC3_PAGE_CUT;
}

/* Whether the first 8 octets of each hash tell it from every other (ascending: from its
 * neighbours). */
static int keys_told_apart(const struct chain *c)
{
	for (size_t i = 1; i < c->sets.n; i++)
		if (memcmp(hash_at(c, i - 1), hash_at(c, i), 8) == 0)
			return 0;
	return 1;
}

static void build_nsec3(uint32_t zone, struct chain *c)
{
	nsec3_parameters(zone, c);
	size_t n = c->sets.n;
	c->hashes = xmalloc(n * ZB_SHA1_LEN);
	for (size_t i = 0; i < n; i++) {
		const struct rrset *set = &rrsets.v[c->sets.v[i]];
		const struct name *owner = N(set->owner);
		if (owner->parent != zones.v[zone].origin ||
		    !unbase32hex(name_label(set->owner), owner->label_len,
				 c->hashes + i * ZB_SHA1_LEN))
			diagnose(zone, ERROR, set_pos(set), "NSEC3 at %s: its owner must be a hash in "
				 "base32hex right below the apex (RFC 5155 §3)", name_text(set->owner));
		const uint8_t *raw = rdata_raw.v + rdatas.v[set->first].raw;
		if (raw[2] << 8 != (c->iterations & 0xFF00) || raw[3] != (c->iterations & 0xFF) ||
		    raw[4] != c->salt_len || memcmp(raw + 5, c->salt, c->salt_len) != 0)
			diagnose(zone, ERROR, set_pos(set), "NSEC3 at %s: its iterations or salt differ "
				 "from the zone's NSEC3PARAM (RFC 5155 §7.1)", name_text(set->owner));
	}
	/* A chain the build made is in hash order already (chainmake.c): sorted again, a
	 * million entries would take a tenth of a second. */
	size_t in_order = 1;
	while (in_order < n && memcmp(hash_at(c, in_order - 1), hash_at(c, in_order),
				      ZB_SHA1_LEN) <= 0)
		in_order++;
	if (in_order < n) {
		uint32_t *order = xmalloc(n * sizeof *order);
		for (size_t i = 0; i < n; i++)
			order[i] = i;
		sorting = c;
		qsort(order, n, sizeof *order, by_hash);
		reorder(c, order, ZB_SHA1_LEN);
		free(order);
	}
	digest_index_build(&c->index, c->hashes, n, ZB_SHA1_LEN);
	c->keyed = keys_told_apart(c);
	for (size_t i = 1; i < n; i++)
		if (memcmp(hash_at(c, i - 1), hash_at(c, i), ZB_SHA1_LEN) == 0)
			diagnose(zone, ERROR, rrset_pos.v[c->sets.v[i]], "NSEC3 at %s: a second "
				 "NSEC3 with this hash", name_text(rrsets.v[c->sets.v[i]].owner));
}

static void build_nsec(struct chain *c)
{
	size_t n = c->sets.n;
	for (size_t i = 0; i < n; i++) {
		PUSH(c->key_off, c->keys.n);
		RESERVE(c->keys, 256);
		c->keys.n += name_key(rrsets.v[c->sets.v[i]].owner, c->keys.v + c->keys.n);
	}
	uint32_t *order = xmalloc((n ? n : 1) * sizeof *order);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	sorting = c;
	qsort(order, n, sizeof *order, by_owner);
	reorder(c, order, 0);
	free(order);
}

void build_chains(void)
{
	chains = xcalloc(zones.n ? zones.n : 1, sizeof *chains);
	for (uint32_t zone = 0; zone < zones.n; zone++) {
		struct zone *z = &zones.v[zone];
		struct chain *c = &chains[zone];
		uint32_t first_nsec3 = NONE;
		/* A zone without either type has no chain: no walk of its RRsets (3 million at
		 * a million names, 4 ms). */
		if (!types_has(&z->types, T_NSEC) && !types_has(&z->types, T_NSEC3))
			continue;
		for (size_t s = z->rrsets_begin; s < z->rrsets_end; s++) {
			uint16_t type = rrsets.v[s].type;
			if (type == T_NSEC3 && first_nsec3 == NONE)
				first_nsec3 = s;
			if (type == T_NSEC || type == T_NSEC3)
				PUSH(c->sets, s);
			if (type == T_NSEC && !in_zone(zone, rrsets.v[s].owner))
				c->sets.n--;
		}
		if (c->sets.n == 0)
			continue;
		c->kind = first_nsec3 != NONE ? T_NSEC3 : T_NSEC;
		size_t kept = 0;
		for (size_t i = 0; i < c->sets.n; i++)
			if (rrsets.v[c->sets.v[i]].type == c->kind)
				c->sets.v[kept++] = c->sets.v[i];
		if (kept != c->sets.n)
			diagnose(zone, ERROR, rrset_pos.v[first_nsec3], "the zone %s holds both NSEC "
				 "and NSEC3 records; a zone is denied by one chain (RFC 5155 §7.1)",
				 name_text(z->origin));
		c->sets.n = kept;
		if (c->kind == T_NSEC3)
			build_nsec3(zone, c);
		else
			build_nsec(c);
	}
}

uint16_t chain_kind(uint32_t zone)
{
	return chains[zone].kind;
}

int any_chain(void)
{
	for (uint32_t z = 0; z < zones.n; z++)
		if (chains[z].kind)
			return 1;
	return 0;
}

size_t chain_length(uint32_t zone)
{
	return chains[zone].sets.n;
}

uint32_t chain_rrset(uint32_t zone, uint32_t index)
{
	return chains[zone].sets.v[index];
}

void chain_parameters(uint32_t zone, uint16_t *iterations, const uint8_t **salt,
		      uint8_t *salt_len)
{
	*iterations = chains[zone].iterations;
	*salt = chains[zone].salt;
	*salt_len = chains[zone].salt_len;
}

const uint8_t *chain_hash(uint32_t zone, uint32_t index)
{
	return hash_at(&chains[zone], index);
}

int chain_keyed(uint32_t zone)
{
	return chains[zone].keyed;
}

/* The NSEC whose owner is the last at or before `key` (a lowercased wire name) in canonical
 * order: at the name, or covering it (RFC 4035 §3.1.3.2). The apex comes first, so every name
 * of the zone has one. */
uint32_t nsec_at_or_before(uint32_t zone, const uint8_t *key)
{
	const struct chain *c = &chains[zone];
	size_t lo = 0, hi = c->sets.n;  /* the answer is the last index below hi */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (canonical_cmp(key_at(c, mid), key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : c->sets.n - 1;
}

/* The NSEC3 whose hash is the last at or before `hash`, wrapping to the last of all when
 * every hash is greater (RFC 5155 §3.1.7: the chain is a ring); `*match` says whether equal. */
uint32_t nsec3_at_or_before(uint32_t zone, const uint8_t hash[ZB_SHA1_LEN], int *match)
{
	const struct chain *c = &chains[zone];
	size_t at_or_before = digest_rank(&c->index, hash, match);
	return at_or_before ? at_or_before - 1 : c->sets.n - 1;
}

void name_hash(uint32_t zone, const uint8_t *key, size_t len, uint8_t out[ZB_SHA1_LEN])
{
	const struct chain *c = &chains[zone];
	zb_nsec3_hash(key, len, c->salt, c->salt_len, c->iterations, out);
}

/* For a name of an NSEC zone, the children in canonical order that have NSEC RRsets at or
 * below them, each with the chain index of the NSEC that covers a name sorting after its
 * subtree and before the next child's: where the name that does not exist below `encloser`
 * falls, by its label under the encloser (runtime/query/denial.c). `before` covers a name
 * sorting before every child. Labels are lowercased, length first. */
void nsec_children(uint32_t zone, name_t encloser, struct child_gaps *out)
{
	const struct chain *c = &chains[zone];
	uint8_t key[256];
	size_t key_len = name_key(encloser, key);
	out->n = 0;
	out->labels.n = 0;
	out->before = nsec_at_or_before(zone, key);
	size_t depth = N(encloser)->nlabels;
	/* The encloser's subtree follows it (or its NSEC, when it owns one) in the chain. */
	for (size_t i = out->before + 1; i < c->sets.n; i++) {
		const uint8_t *owner = key_at(c, i);
		uint8_t at[128];
		size_t n = label_offsets(owner, at);
		if (n <= depth)
			break;  /* past the encloser's subtree */
		size_t owner_len = at[n - 1] + 1 + owner[at[n - 1]] + 1;
		size_t suffix = depth ? at[n - depth] : owner_len - 1;  /* where the encloser starts */
		if (suffix != owner_len - key_len ||
		    memcmp(owner + owner_len - key_len, key, key_len) != 0)
			break;
		const uint8_t *label = owner + at[n - depth - 1];
		if (out->n > 0) {
			const uint8_t *last = out->labels.v + out->v[out->n - 1].label;
			if (last[0] == label[0] && memcmp(last + 1, label + 1, label[0]) == 0) {
				out->v[out->n - 1].after = i;
				continue;
			}
		}
		struct child_gap g = {.label = out->labels.n, .after = i};
		PUSH(*out, g);
		bytes_put(&out->labels, label, 1 + label[0]);
	}
}

void chains_reset(size_t nzones)
{
	for (size_t zone = 0; chains && zone < nzones; zone++) {
		struct chain *c = &chains[zone];
		free(c->sets.v);
		free(c->keys.v);
		free(c->key_off.v);
		free(c->hashes);
		digest_index_free(&c->index);
	}
	free(chains);
	chains = NULL;
}
