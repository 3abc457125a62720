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
#include "query/lookup.h"

static const struct zb_answer *answer_for_miss(const struct zb_node *encloser, uint16_t qtype)
{
	if (encloser->miss_kind == ZB_MISS_NODE)
		return zb_answer_for_type(zb_from(encloser, encloser->miss), qtype);
	return zb_from(encloser, encloser->miss);
}

/* No node has the name: strip leftmost labels until one does, the closest encloser, and take
 * its answer for names below it. With DO set (`twin` not 0), its DO twin's, and where that has
 * a denial, the encloser for it. Written once, inlined into a plain and a signed version, so
 * that the plain one does no more than it did before DNSSEC. */
static inline __attribute__((always_inline)) const struct zb_answer *
below(const struct zb_zoneset *zs, const struct zb_question *q, uint16_t key, uint32_t twin,
      struct zb_encloser *encloser)
{
	/* Where the labels start: kept by the check of a guessed name (zb_guess_holds), else
	 * found here. */
	uint8_t found[ZB_MAX_LABELS + 1];
	const uint8_t *label_off = q->label_off;
	unsigned nlabels = q->nlabels;
	if (!q->walked) {
		nlabels = zb_label_offsets(q->lower, found);
		label_off = found;
	}
	/* No node has more than max_labels labels: skip straight to suffixes that short. */
	unsigned first = 1;
	if (nlabels > zs->max_labels)
		first = nlabels - zs->max_labels;
	for (unsigned strip = first; strip <= nlabels; strip++) { /* down to the root zone */
		unsigned off = label_off[strip];
		size_t len = q->name_len - off;
		const struct zb_node *node =
			zb_find_node(zs, q->lower + off, len,
				     zb_hash_padded(q->lower + off, len, zs->hash_key));
		if (node) {
			node += twin;
			if (encloser && node->name_off && twin)
				*encloser = (struct zb_encloser){ .node = node,
								  .next_off = label_off[strip - 1] };
			return answer_for_miss(node, key);
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

const struct zb_answer *zb_lookup_below(const struct zb_zoneset *zs,
					const struct zb_question *q, int tcp)
{
	return lookup_below(zs, q, zb_lookup_key(q, tcp));
}

const struct zb_answer *zb_lookup_below_signed(const struct zb_zoneset *zs,
					       const struct zb_question *q, int tcp,
					       struct zb_encloser *encloser)
{
	return lookup_below_signed(zs, q, zb_lookup_key(q, tcp), encloser);
}

const struct zb_answer *zb_lookup(const struct zb_zoneset *zs, const struct zb_question *q,
				  int tcp)
{
	uint16_t key = zb_lookup_key(q, tcp);
	const struct zb_node *node = zb_find_node(zs, q->lower, q->name_len, q->hash);

	return node ? zb_answer_for_type(node, key) : lookup_below(zs, q, key);
}

const struct zb_answer *zb_lookup_signed(const struct zb_zoneset *zs,
					 const struct zb_question *q, int tcp,
					 struct zb_encloser *encloser)
{
	uint16_t key = zb_lookup_key(q, tcp);
	const struct zb_node *node = zb_find_node(zs, q->lower, q->name_len, q->hash);

	return node ? zb_answer_for_type(node + zs->signed_nodes, key)
		    : lookup_below_signed(zs, q, key, encloser);
}
