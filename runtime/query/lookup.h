/*
 * lookup.h - find the precompiled answer for a question (RFC 1034 §4.3.2, steps 2 and 3).
 */
#ifndef ZB_LOOKUP_H
#define ZB_LOOKUP_H

#include <string.h>

#include "hash.h"
#include "query/wire.h"
#include "zonedata.h"

/* The answer for a parsed question, or NULL when no served zone contains the name. ANY over
 * TCP gets every RRset (RFC 8482 §4.1 lets UDP get one). */
const struct zb_answer *zb_lookup(const struct zb_zoneset *zs, const struct zb_question *q,
				  int tcp);

/* Where a name with no node fell, with DO set: the closest encloser's DO twin, when it has
 * a denial, and where in the query name the next closer name starts (denial.h). */
struct zb_encloser {
	const struct zb_node *node;  /* NULL: the name has a node, or no denial applies */
	unsigned next_off;
	uint8_t hashed;              /* 1: `hash` holds the NSEC3 hash of the name to deny,
				      * taken with a batch's others (zb_hash_next_closer) */
	uint8_t hash[20];
};

/* The same with DO set (RFC 3225): the answers with DNSSEC (zb_zoneset.signed_nodes, 0 when
 * no zone is signed); `encloser` is set when the name's denial is to be added. */
const struct zb_answer *zb_lookup_signed(const struct zb_zoneset *zs,
					 const struct zb_question *q, int tcp,
					 struct zb_encloser *encloser);

/* zb_lookup and zb_lookup_signed for a name known to have no node (the batch's stages found
 * none): from its closest encloser straight away. */
const struct zb_answer *zb_lookup_below(const struct zb_zoneset *zs,
					const struct zb_question *q, int tcp);
const struct zb_answer *zb_lookup_below_signed(const struct zb_zoneset *zs,
					       const struct zb_question *q, int tcp,
					       struct zb_encloser *encloser);

/* Equal names of `len` octets, compared whole blocks at a time, zeros after each name
 * included: a compiled name starts a block of 16 octets and is zero-padded to a whole one
 * (compiler/core/layout/layout.c), and a query's lowercased name, or a suffix of it, is followed
 * by at least 16 zeros (zb_lower_hash). */
static inline int zb_same_name(const uint8_t *compiled, const uint8_t *name, size_t len)
{
	/* Every block compared, the verdicts and-ed: no branch but the loop's (len >= 1). */
#if defined(__SSE2__) && !defined(ZB_NO_SIMD)
	unsigned same = 0xffff;
	for (size_t i = 0; i < len; i += 16)
		same &= (unsigned)_mm_movemask_epi8(
			_mm_cmpeq_epi8(_mm_load_si128((const __m128i *)(compiled + i)),
				       _mm_loadu_si128((const __m128i *)(name + i))));
	return same == 0xffff;
#else
	uint64_t differ = 0;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t x, y;
		memcpy(&x, compiled + i, 8);
		memcpy(&y, name + i, 8);
		differ |= x ^ y;
	}
	return differ == 0;
#endif
}

/* The group of the perfect hash a name hashed to `hash` falls in (hash.h). */
static inline const struct zb_group *zb_group(const struct zb_zoneset *zs, uint64_t hash)
{
	return &zs->groups[zb_group_of(hash, zs->group_mask, zs->ngroups)];
}

static inline const uint16_t *zb_pilot(const struct zb_zoneset *zs, const struct zb_group *g,
				       uint64_t hash)
{
	const uint16_t *pilots = (const uint16_t *)(zs->data + g->nodes_off) - g->nbuckets;
	return &pilots[zb_bucket_of(hash, g->nbuckets)];
}

/* The node the perfect hash gives a name hashed to `hash`: the name's, if it has one. */
static inline const struct zb_node *zb_candidate(const struct zb_zoneset *zs, uint64_t hash)
{
	const struct zb_group *g = zb_group(zs, hash);
	uint32_t slot = zb_slot_of(hash, *zb_pilot(zs, g, hash), g->nslots);
	return (const struct zb_node *)(zs->data + g->nodes_off + (size_t)slot * zs->node_size);
}

static inline const uint8_t *zb_node_name(const struct zb_node *node)
{
	return zb_from(node, node->name_off);
}

/* The node whose lowercased wire name is exactly `name` (`hash` its zb_hash), or NULL.
 * `name` is followed by 16 zeros (zb_same_name). */
static inline const struct zb_node *zb_find_node(const struct zb_zoneset *zs, const uint8_t *name,
						 size_t len, uint64_t hash)
{
	const struct zb_node *node = zb_candidate(zs, hash);

	/* An empty slot's node has name_len 0, which no name has. */
	if (node->name_len != len || !zb_same_name(zb_node_name(node), name, len))
		return NULL;
	return node;
}

static inline const struct zb_type_entry *zb_types(const struct zb_node *node)
{
	return zb_from(node, node->types_off);
}

static inline const struct zb_answer *zb_answer_for_type(const struct zb_node *node, uint16_t key)
{
	const struct zb_type_entry *entry = zb_types(node);
	const struct zb_type_entry *end = entry + node->ntypes;

	for (; entry != end; entry++)
		if (entry->qtype == key)
			return zb_from(entry, entry->answer);
	return zb_from(node, node->default_answer);
}

static inline uint16_t zb_lookup_key(const struct zb_question *q, int tcp)
{
	return tcp && q->qtype == ZB_TYPE_ANY ? ZB_KEY_ANY_OVER_TCP : q->qtype;
}

/*
 * The lookup of a batch of questions in stages (respond.c, look_up): each stage reads what
 * the one before brought into the caches and prefetches what the next one reads (pilot,
 * then node, then name and type entries, then the answer), so that one question's cache
 * misses overlap the others'. A million names have half a megabyte of pilots, two octets a
 * bucket, spread over their groups' regions: more than a core's own caches hold. The table
 * of groups, 8 octets a group of about 256 names, is read at once.
 * `twin`: the offset of the nodes the answers come from (DO set: the DO twins). The last
 * stage finds the answer of a name that has a node, as zb_lookup would; for one that has
 * none, zb_lookup_below goes on from there, the cache misses of its closest encloser not
 * overlapped (prefetching them too made no difference that showed).
 */
static inline void zb_fetch_pilot(const struct zb_zoneset *zs, uint64_t hash)
{
	__builtin_prefetch(zb_pilot(zs, zb_group(zs, hash), hash));
}

static inline const struct zb_node *zb_fetch_node(const struct zb_zoneset *zs, uint64_t hash,
						  uint32_t twin)
{
	const struct zb_node *node = zb_candidate(zs, hash);
	/* 20 octets: a node may straddle two cache lines. */
	__builtin_prefetch(node);
	__builtin_prefetch((const uint8_t *)(node + 1) - 1);
	if (twin) {
		__builtin_prefetch(node + twin);
		__builtin_prefetch((const uint8_t *)(node + twin + 1) - 1);
	}
	return node;
}

static inline void zb_fetch_entries(const struct zb_node *node,
				    uint32_t twin)
{
	__builtin_prefetch(zb_node_name(node));
	__builtin_prefetch(zb_types(node + twin));
}

/* The answer's stage: the answer over UDP (ANY gets one RRset) when the name has a node; else
 * NULL, and zb_lookup_below goes on from the closest encloser. */
static inline const struct zb_answer *zb_fetch_answer(const struct zb_question *q,
						      const struct zb_node *node, uint32_t twin)
{
	if (node->name_len != q->name_len ||
	    !zb_same_name(zb_node_name(node), q->lower, q->name_len))
		return NULL;
	const struct zb_answer *answer = zb_answer_for_type(node + twin, zb_lookup_key(q, 0));
	/* The answer's record, then its body right after it (zonedata.h); a body that another
	 * answer's holds comes in at the batch's next stage (respond.c: look_up). */
	__builtin_prefetch(answer);
	__builtin_prefetch((const uint8_t *)answer + 64);
	return answer;
}

#endif
