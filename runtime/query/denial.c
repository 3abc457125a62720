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

/* Whether hash `a` sorts before hash `b`, `a`'s first octets given as first_octets'. */
static inline int hash_before(uint64_t a_word, const uint8_t *a, const uint8_t *b)
{
	uint64_t b_word = first_octets(b);
	return a_word != b_word ? a_word < b_word : memcmp(a + 8, b + 8, ZB_SHA1_LEN - 8) < 0;
}

/* A page's hashes: after its directory (struct zb_page_buckets) and the directory's
 * bucket starts. */
static inline const uint8_t *page_hashes(const uint8_t *start)
{
	const struct zb_page_buckets *dir = (const struct zb_page_buckets *)start;
	return start + sizeof *dir + 4 * ((size_t)dir->nbuckets + 1);
}

/* The pages the chain's directory lists for a hash's first octets as a number (one or
 * two): [slot[0], slot[1]) of its page table. */
static inline void directory_slot(const struct zb_zoneset *zs, const struct zb_chain *chain,
				  uint64_t key, uint32_t slot[2])
{
	memcpy(slot, zs->data + chain->dir_off +
	       4 * (chain->dir_bits ? key >> (64 - chain->dir_bits) : 0), 2 * sizeof *slot);
}

/* A page's entry by its place: after the page's hashes, the offsets of its entries. */
static inline const struct zb_denial *page_entry(const uint8_t *start, uint32_t count,
						 uint32_t index)
{
	uint32_t entry;
	memcpy(&entry, page_hashes(start) + (size_t)count * ZB_SHA1_LEN + 4 * (size_t)index, 4);
	return (const struct zb_denial *)(start + entry);
}

/* The entries of a page (at `start`) among which hashes whose first octets are `key` lie:
 * [bucket[0], bucket[1]), the page's bucket of them (struct zb_page_buckets), the last
 * bucket taking what is beyond. */
static inline void page_bucket(const uint8_t *start, const struct zb_chain_page *page,
			       uint64_t key, uint32_t bucket[2])
{
	const struct zb_page_buckets *dir = (const struct zb_page_buckets *)start;
	uint64_t from = (key - first_octets(page->first)) >> dir->shift;
	memcpy(bucket, start + sizeof *dir +
	       4 * (from < dir->nbuckets ? from : dir->nbuckets - 1), 2 * sizeof *bucket);
}

/* The NSEC3 covering a hash: the last hash below it, or around the ring the last of all
 * (RFC 5155 §3.1.7). The directory slot of its leading bits gives the pages to look at (one
 * or two), the page table which page, a search in the page which entry. */
static const struct zb_denial *nsec3_entry(const struct zb_zoneset *zs,
					   const struct zb_chain *chain,
					   const uint8_t hash[ZB_SHA1_LEN])
{
	const struct zb_chain_page *pages =
		(const struct zb_chain_page *)(zs->data + chain->pages_off);
	uint64_t key = first_octets(hash);
	uint32_t slot[2];
	directory_slot(zs, chain, key, slot);
	/* Pages up to slot[0] start below the slot's range; count those of the slot's that
	 * start below the hash too. */
	uint32_t below = slot[0];
	while (below < slot[1]) {
		const struct zb_chain_page *page = &pages[below];
		uint64_t word = first_octets(page->first);
		if (word > key ||
		    (word == key && !hash_before(word, page_hashes(zs->data + page->off), hash)))
			break;
		below++;
	}
	const struct zb_chain_page *page = &pages[below ? below - 1 : chain->npages - 1];
	const uint8_t *start = zs->data + page->off;
	const uint8_t *hashes = page_hashes(start);
	/* The last hash below it in the page (below none: the last entry of all): the page's
	 * bucket of it bounds the search. */
	uint32_t lo = page->count, hi = page->count;
	if (below) {
		uint32_t bucket[2];
		page_bucket(start, page, key, bucket);
		lo = bucket[0];
		hi = bucket[1];
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			const uint8_t *at = hashes + (size_t)mid * ZB_SHA1_LEN;
			if (hash_before(first_octets(at), at, hash))
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return page_entry(start, page->count, lo - 1);
}

static const struct zb_denial *nsec_entry(const struct zb_zoneset *zs,
					  const struct zb_chain *chain, uint32_t index)
{
	uint32_t entry;
	memcpy(&entry, zs->data + chain->entries_off + 4 * (size_t)index, 4);
	return (const struct zb_denial *)(zs->data + entry);
}

/* An entry's owner name (its first record's): its labels, then a pointer. */
static inline const uint8_t *entry_owner(const struct zb_denial *entry)
{
	return (const uint8_t *)(entry + 1) + 2 * entry->npointers;
}

/* Whether two NSEC3 owner labels (length, then the hash in Base32) are one: one entry.
 * Labels of different hashes differ in their first octets but once in a trillion times. */
static inline int same_label(const uint8_t *a, const uint8_t *b)
{
	uint64_t x, y;
	if (a[0] < 7 || a[0] != b[0])
		return a[0] == b[0] && memcmp(a + 1, b + 1, a[0]) == 0;
	memcpy(&x, a, sizeof x);
	memcpy(&y, b, sizeof y);
	return x == y && memcmp(a + 8, b + 8, a[0] - 7u) == 0;
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

/* The entry a key names (zonedata.h, struct zb_entry_key): the one whose hash's first 8
 * octets are the key's (the compiler keys a chain only where no two hashes share them),
 * in the last page starting at or below them, among the entries of their bucket there;
 * NULL where there is none (the compiler names none such). */
static const struct zb_denial *keyed_entry(const struct zb_zoneset *zs,
					   const struct zb_chain *chain,
					   const struct zb_entry_key *key)
{
	const struct zb_chain_page *pages =
		(const struct zb_chain_page *)(zs->data + chain->pages_off);
	uint64_t word = first_octets(key->hash);
	uint32_t slot[2];
	directory_slot(zs, chain, word, slot);
	uint32_t p = slot[0];
	while (p < slot[1] && first_octets(pages[p].first) <= word)
		p++;
	if (p == 0)
		return NULL;
	const struct zb_chain_page *page = &pages[p - 1];
	const uint8_t *start = zs->data + page->off;
	const uint8_t *hashes = page_hashes(start);
	uint32_t bucket[2];
	page_bucket(start, page, word, bucket);
	for (uint32_t i = bucket[0]; i < bucket[1]; i++)
		if (first_octets(hashes + (size_t)i * ZB_SHA1_LEN) == word)
			return page_entry(start, page->count, i);
	return NULL;
}

/* The entries an answer names by their keys (zonedata.h, struct zb_answer_denial), into
 * `found`; returns how many. */
static unsigned keyed_entries(const struct zb_zoneset *zs, const struct zb_answer_denial *use,
			      const struct zb_denial **found)
{
	const struct zb_chain *chain = (const struct zb_chain *)(zs->data + use->chain);
	const struct zb_entry_key *key = (const struct zb_entry_key *)(use + 1);
	unsigned n = 0;
	for (unsigned k = 0; k < use->nkeys; k++)
		if ((found[n] = keyed_entry(zs, chain, &key[k])) != NULL)
			n++;
	return n;
}

static int among(const struct zb_denial *entry, const struct zb_denial *const *found,
		 unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		if (found[k] == entry)
			return 1;
	return 0;
}

unsigned zb_find_denials(const struct zb_zoneset *zs, const struct zb_question *q,
			 const struct zb_encloser *encloser, const struct zb_answer *answer,
			 const struct zb_denial *found[ZB_MAX_DENIALS], unsigned *apex_len)
{
	const struct zb_answer_denial *use =
		(const struct zb_answer_denial *)zb_from(answer, answer->denial);
	unsigned n = 0;
	if (use->nkeys) {
		n = keyed_entries(zs, use, found);
		*apex_len = ((const struct zb_chain *)(zs->data + use->chain))->apex_len;
	}
	if (!encloser->node || !use->by_name)
		return n;  /* nothing about the name itself: it has a node, or the answer says */
	uint8_t image[64 + 256];
	const uint8_t *next;
	size_t next_len;
	const uint8_t *table = denied_name(zs, q, encloser, image, &next, &next_len);
	if (table[0] == ZB_DENIAL_NSEC) {
		const struct zb_children *children = (const struct zb_children *)table;
		const struct zb_chain *chain = (const struct zb_chain *)(zs->data + children->chain);
		uint32_t index = nsec_index(zs, children, next);
		*apex_len = chain->apex_len;
		if (index + 1 != use->skip[0] && index + 1 != use->skip[1])
			found[n++] = nsec_entry(zs, chain, index);
		return n;
	}
	const struct zb_chain *chain = (const struct zb_chain *)table;
	uint8_t hash[ZB_SHA1_LEN];
	if (!encloser->hashed)
		zb_nsec3_hash(next, next_len, chain->salt, chain->salt_len, chain->iterations, hash);
	const struct zb_denial *entry = nsec3_entry(zs, chain, encloser->hashed ? encloser->hash
										 : hash);
	const uint8_t *owner = entry_owner(entry);
	const uint8_t *body = zb_answer_body(answer);
	*apex_len = chain->apex_len;
	const struct zb_denial *also = NULL;
	if (use->also && !among(also = (const struct zb_denial *)(zs->data + use->also), found, n))
		found[n++] = also;
	for (unsigned k = 0; k < 2; k++)
		if (use->skip[k] && same_label(owner, body + use->skip[k] - 1))
			return n;
	if (!among(entry, found, n) && (!also || !same_label(owner, entry_owner(also))))
		found[n++] = entry;
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
