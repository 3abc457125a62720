/*
 * lookup.c - the RFC 1034 §4.3.2 algorithm, with every decision made by the compiler.
 *
 * The query name is looked up whole in the perfect hash. On a hit, the node's answer for the
 * query type is the response (an exact match, NODATA, or whatever the compiler decided the
 * node gives). On a miss, leftmost labels are stripped until a node is found: that node is
 * the closest encloser, and its precompiled `miss` says what a name below it that does not
 * exist gets (NXDOMAIN, RFC 1034 §4.3.2 step 3c). A name with no node above it is in no
 * served zone.
 */
#include "lookup.h"

#include <string.h>

#include "hash.h"

/* Equal names, compared a word at a time: the compiled data and the query's scratch copy
 * both leave room to read up to the next multiple of 8. */
static inline int same_name(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i = 0;
	uint64_t x, y;

	for (; i + 8 <= len; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return 0;
	}
	if (i == len)
		return 1;
	memcpy(&x, a + i, 8);
	memcpy(&y, b + i, 8);
	return ((x ^ y) & (~0ull >> (8 * (8 - (len - i))))) == 0;
}

/* The node whose lowercased wire name is exactly `name` (`hash` its zb_hash), or NULL.
 * `name` must be readable up to the next multiple of 8 octets. */
static inline const struct zb_node *zb_find_node(const struct zb_zoneset *zs, const uint8_t *name,
						 size_t len, uint64_t hash)
{
	uint16_t pilot = zs->pilots[zb_bucket_of(hash, zs->nbuckets)];
	const struct zb_node *node = &zs->nodes[zb_slot_of(hash, pilot, zs->nnodes)];

	/* An empty slot's node has name_len 0, which no name has. */
	if (node->name_len != len || !same_name(zs->data + node->name_off, name, len))
		return NULL;
	return node;
}

static const struct zb_answer *answer_for_type(const struct zb_zoneset *zs,
					       const struct zb_node *node, uint16_t key)
{
	const struct zb_type_entry *entry = &zs->types[node->types_off];

	for (unsigned i = 0; i < node->ntypes; i++)
		if (entry[i].qtype == key)
			return zb_answer_at(zs, entry[i].answer);
	return zb_answer_at(zs, node->default_answer);
}

static const struct zb_answer *answer_for_miss(const struct zb_zoneset *zs,
					       const struct zb_node *encloser, uint16_t qtype)
{
	if (encloser->miss_kind == ZB_MISS_NODE)
		return answer_for_type(zs, &zs->nodes[encloser->miss], qtype);
	return zb_answer_at(zs, encloser->miss);
}

/* No node has the name: strip leftmost labels until one does, the closest encloser, and take
 * its answer for names below it. With DO set (`twin` not 0), its DO twin's, and where that has
 * a denial, the encloser for it. Written once, inlined into a plain and a signed version, so
 * that the plain one does no more than it did before DNSSEC. */
static inline __attribute__((always_inline)) const struct zb_answer *
below(const struct zb_zoneset *zs, const struct zb_question *q, uint16_t key, uint32_t twin,
      struct zb_encloser *encloser)
{
	/* No node has more than max_labels labels: skip straight to suffixes that short. */
	unsigned first = 1;
	if (q->nlabels > zs->max_labels)
		first = q->nlabels - zs->max_labels;
	for (unsigned strip = first; strip <= q->nlabels; strip++) { /* down to the root zone */
		unsigned off = q->label_off[strip];
		size_t len = q->name_len - off;
		const struct zb_node *node =
			zb_find_node(zs, q->lower + off, len, zb_hash(q->lower + off, len, zs->seed));
		if (node) {
			node += twin;
			if (encloser && node->name_off && twin)
				*encloser = (struct zb_encloser){node, strip};
			return answer_for_miss(zs, node, key);
		}
	}
	return NULL;
}

/* Kept out of line: exact matches never come here. */
static __attribute__((noinline)) const struct zb_answer *
lookup_below(const struct zb_zoneset *zs, const struct zb_question *q, uint16_t key)
{
	return below(zs, q, key, 0, NULL);
}

static __attribute__((noinline)) const struct zb_answer *
lookup_below_signed(const struct zb_zoneset *zs, const struct zb_question *q, uint16_t key,
		    struct zb_encloser *encloser)
{
	return below(zs, q, key, zs->signed_nodes, encloser);
}

static inline uint16_t key_of(const struct zb_question *q, int tcp)
{
	return tcp && q->qtype == ZB_TYPE_ANY ? ZB_KEY_ANY_OVER_TCP : q->qtype;
}

const struct zb_answer *zb_lookup(const struct zb_zoneset *zs, const struct zb_question *q,
				  int tcp)
{
	uint16_t key = key_of(q, tcp);
	const struct zb_node *node = zb_find_node(zs, q->lower, q->name_len, q->hash);

	return node ? answer_for_type(zs, node, key) : lookup_below(zs, q, key);
}

const struct zb_answer *zb_lookup_signed(const struct zb_zoneset *zs,
					 const struct zb_question *q, int tcp,
					 struct zb_encloser *encloser)
{
	uint16_t key = key_of(q, tcp);
	const struct zb_node *node = zb_find_node(zs, q->lower, q->name_len, q->hash);

	return node ? answer_for_type(zs, node + zs->signed_nodes, key)
		    : lookup_below_signed(zs, q, key, encloser);
}
