/*
 * denial.c - the query name's own denial, found by a search over tables the compiler sorted
 * (compiler/core/layout/denialdata.c), then copied as the compiler wrote it.
 */
#include "query/denial.h"

#include <string.h>

#include "query/nsec3hash.h"

/* A label's first eight octets, zeros after its end, as a number that compares as they do
 * in canonical order (RFC 4034 §6.1): where two differ, the first octet that differs is
 * either in both, or past the end of one (a zero there, something else in the other: the
 * shorter sorts first, as it does). The octets read past a short label are there to read:
 * the compiled data ends in 32 zeros (compiler/core/layout/layout.c), a query's lowercased name
 * is followed by 16 (zb_lower_hash), a DNAME's image is in a buffer of 320. */
static inline uint64_t label_prefix(const uint8_t *label)
{
	uint64_t word;
	memcpy(&word, label + 1, sizeof word);
	if (label[0] < 8)
		word &= ~(~(uint64_t)0 << (8 * label[0]));  /* a little-endian host (zonedata.h) */
	return __builtin_bswap64(word);
}

/* Whether label `a` sorts before label `b` (length, then lowercased octets; RFC 4034 §6.1)
 * when their prefixes (label_prefix) are equal. */
static int label_before(const uint8_t *a, const uint8_t *b)
{
	int c = memcmp(a + 1, b + 1, a[0] < b[0] ? a[0] : b[0]);
	return c ? c < 0 : a[0] < b[0];
}

/* The entry covering a name whose label under the encloser is `label`: after the last child
 * that sorts before it, or before the first. The label never equals a child's: that child
 * would be a node, found by the lookup. Most comparisons end at the prefixes, the label's
 * taken once. */
static uint32_t nsec_index(const struct zb_zoneset *zs, const struct zb_children *table,
			   const uint8_t *label)
{
	const struct zb_child *child = (const struct zb_child *)(table + 1);
	uint64_t key = label_prefix(label);
	uint32_t lo = 0, hi = table->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint8_t *at = zs->data + child[mid].label_off;
		uint64_t word = label_prefix(at);
		if (word != key ? word < key : label_before(at, label))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? child[lo - 1].after : table->before;
}

/* A hash's first eight octets as a number that compares as they do: most comparisons of
 * the search end there, without a call to memcmp. */
static inline uint64_t first_octets(const uint8_t *hash)
{
	uint64_t word;
	memcpy(&word, hash, sizeof word);
	return __builtin_bswap64(word);  /* a little-endian host (zonedata.h) */
}

/* The NSEC3 covering a hash: the last hash below it, or around the ring the last of all
 * (RFC 5155 §3.1.7). The bucket of its leading bits bounds the search. */
static uint32_t nsec3_index(const struct zb_zoneset *zs, const struct zb_chain *chain,
			    const uint8_t hash[ZB_SHA1_LEN])
{
	const uint8_t *hashes = zs->data + chain->hashes_off;
	uint64_t key = first_octets(hash);
	uint32_t bucket[2];
	memcpy(bucket, zs->data + chain->buckets_off +
	       4 * (chain->bucket_bits ? key >> (64 - chain->bucket_bits) : 0), sizeof bucket);
	uint32_t lo = bucket[0], hi = bucket[1];
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint8_t *at = hashes + (size_t)mid * ZB_SHA1_LEN;
		uint64_t word = first_octets(at);
		if (word != key ? word < key : memcmp(at + 8, hash + 8, ZB_SHA1_LEN - 8) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : chain->count - 1;
}

static const struct zb_denial *entry_at(const struct zb_zoneset *zs,
					const struct zb_chain *chain, uint32_t index)
{
	uint32_t entry;
	memcpy(&entry, zs->data + chain->entries_off + 4 * (size_t)index, 4);
	return (const struct zb_denial *)(zs->data + entry);
}

/* The name to deny below `encloser` and the table it is denied in (a struct zb_children or
 * zb_chain): the next closer name, or below a DNAME its image under the target, written
 * into `image`. */
static inline __attribute__((always_inline)) const uint8_t *
denied_name(const struct zb_zoneset *zs, const struct zb_question *q,
	    const struct zb_encloser *encloser, uint8_t image[64 + 256], const uint8_t **next,
	    size_t *next_len)
{
	const uint8_t *table = zs->data + encloser->node->name_off;
	*next = q->lower + encloser->next_off;
	*next_len = q->name_len - encloser->next_off;
	if (table[0] == ZB_DENIAL_IMAGE) {
		const struct zb_image_denial *to = (const struct zb_image_denial *)table;
		size_t label = 1u + (*next)[0];
		memcpy(image, *next, label);
		memcpy(image + label, to->target, to->target_len);
		*next_len = label + to->target_len;
		*next = image;
		table = zs->data + to->table;
	}
	return table;
}

unsigned zb_find_denials(const struct zb_zoneset *zs, const struct zb_question *q,
			 const struct zb_encloser *encloser, const struct zb_answer_denial *use,
			 const struct zb_denial *found[2], unsigned *apex_len)
{
	uint8_t image[64 + 256];
	const uint8_t *next;
	size_t next_len;
	const uint8_t *table = denied_name(zs, q, encloser, image, &next, &next_len);
	const struct zb_chain *chain;
	uint32_t index;
	unsigned n = 0;
	if (table[0] == ZB_DENIAL_NSEC) {
		const struct zb_children *children = (const struct zb_children *)table;
		chain = (const struct zb_chain *)(zs->data + children->chain);
		index = nsec_index(zs, children, next);
	} else {
		chain = (const struct zb_chain *)table;
		uint8_t hash[ZB_SHA1_LEN];
		if (!encloser->hashed)
			zb_nsec3_hash(next, next_len, chain->salt, chain->salt_len,
				      chain->iterations, hash);
		index = nsec3_index(zs, chain, encloser->hashed ? encloser->hash : hash);
	}
	*apex_len = chain->apex_len;
	if (use->also)
		found[n++] = entry_at(zs, chain, use->also - 1);
	if (index + 1 != use->skip[0] && index + 1 != use->skip[1] && index + 1 != use->also)
		found[n++] = entry_at(zs, chain, index);
	return n;
}

void zb_hash_pending(struct zb_pending_hashes *pending)
{
	uint8_t digests[ZB_SHA1_LANES_MAX][ZB_SHA1_LEN];
	if (pending->n == 0)
		return;
	zb_sha1_blocks(pending->blocks, pending->n, digests);
	for (unsigned j = 0; j < pending->n; j++) {
		const struct zb_chain *chain = pending->chain[j];
		memcpy(pending->to[j]->hash, digests[j], ZB_SHA1_LEN);
		zb_nsec3_iterate(pending->to[j]->hash, chain->salt, chain->salt_len,
				 chain->iterations);
		pending->to[j]->hashed = 1;
	}
	pending->n = 0;
}

void zb_hash_next_closer(const struct zb_zoneset *zs, const struct zb_question *q,
			 struct zb_encloser *encloser, struct zb_pending_hashes *pending)
{
	uint8_t image[64 + 256];
	const uint8_t *next;
	size_t next_len;
	const uint8_t *table = denied_name(zs, q, encloser, image, &next, &next_len);
	if (table[0] != ZB_DENIAL_NSEC3)
		return;
	const struct zb_chain *chain = (const struct zb_chain *)table;
	unsigned lanes = zb_sha1_lanes();
	if (lanes == 1 || next_len + chain->salt_len > ZB_SHA1_ONE_BLOCK) {
		zb_nsec3_hash(next, next_len, chain->salt, chain->salt_len, chain->iterations,
			      encloser->hash);
		encloser->hashed = 1;
		return;
	}
	unsigned j = pending->n++;
	zb_sha1_pad_one(pending->blocks[j], next, next_len, chain->salt, chain->salt_len);
	pending->to[j] = encloser;
	pending->chain[j] = chain;
	if (pending->n == lanes)
		zb_hash_pending(pending);
}
