/*
 * denial.c - the query name's own denial, found by a search over tables the compiler sorted
 * (compiler/core/denialdata.c), then copied as the compiler wrote it.
 */
#include "denial.h"

#include <string.h>

#include "nsec3hash.h"

/* RFC 4034 §6.1, for two labels (length, then lowercased octets). */
static int label_cmp(const uint8_t *a, const uint8_t *b)
{
	int c = memcmp(a + 1, b + 1, a[0] < b[0] ? a[0] : b[0]);
	return c ? c : a[0] - b[0];
}

/* The entry covering a name whose label under the encloser is `label`: after the last child
 * that sorts before it, or before the first. The label never equals a child's: that child
 * would be a node, found by the lookup. */
static uint32_t nsec_index(const struct zb_zoneset *zs, const struct zb_children *table,
			   const uint8_t *label)
{
	const struct zb_child *child = (const struct zb_child *)(table + 1);
	uint32_t lo = 0, hi = table->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (label_cmp(zs->data + child[mid].label_off, label) < 0)
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

/* The NSEC3 covering the next closer name's hash: the last hash below it, or around the ring
 * the last of all (RFC 5155 §3.1.7). The bucket of its leading bits bounds the search. */
static uint32_t nsec3_index(const struct zb_zoneset *zs, const struct zb_chain *chain,
			    const uint8_t *name, size_t len)
{
	uint8_t hash[ZB_SHA1_LEN];
	zb_nsec3_hash(name, len, chain->salt, chain->salt_len, chain->iterations, hash);
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

unsigned zb_find_denials(const struct zb_zoneset *zs, const struct zb_question *q,
			 const struct zb_node *encloser, unsigned next_off,
			 const struct zb_answer_denial *use, const struct zb_denial *found[2],
			 unsigned *apex_len)
{
	const uint8_t *table = zs->data + encloser->name_off;
	/* The next closer name: the query name's, or below a DNAME its image's. */
	const uint8_t *next = q->lower + next_off;
	size_t next_len = q->name_len - next_off;
	uint8_t image[64 + 256];
	if (table[0] == ZB_DENIAL_IMAGE) {
		const struct zb_image_denial *to = (const struct zb_image_denial *)table;
		memcpy(image, next, 1u + next[0]);
		memcpy(image + 1 + next[0], to->target, to->target_len);
		next_len = 1u + next[0] + to->target_len;
		next = image;
		table = zs->data + to->table;
	}
	const struct zb_chain *chain;
	uint32_t index;
	unsigned n = 0;
	if (table[0] == ZB_DENIAL_NSEC) {
		const struct zb_children *children = (const struct zb_children *)table;
		chain = (const struct zb_chain *)(zs->data + children->chain);
		index = nsec_index(zs, children, next);
	} else {
		chain = (const struct zb_chain *)table;
		index = nsec3_index(zs, chain, next, next_len);
	}
	*apex_len = chain->apex_len;
	if (use->also)
		found[n++] = entry_at(zs, chain, use->also - 1);
	if (index + 1 != use->skip[0] && index + 1 != use->skip[1] && index + 1 != use->also)
		found[n++] = entry_at(zs, chain, index);
	return n;
}
