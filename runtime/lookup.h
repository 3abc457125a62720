/*
 * lookup.h - find the precompiled answer for a question (RFC 1034 §4.3.2, steps 2 and 3).
 */
#ifndef ZB_LOOKUP_H
#define ZB_LOOKUP_H

#include "wire.h"
#include "zonedata.h"

/* The node whose lowercased wire name is exactly `name` (`hash` its zb_hash), or NULL.
 * `name` must be readable up to the next multiple of 8 octets. */
const struct zb_node *zb_find_node(const struct zb_zoneset *zs, const uint8_t *name, size_t len,
				   uint64_t hash);

/* The answer for a parsed question, or NULL when no served zone contains the name. ANY over
 * TCP gets every RRset (RFC 8482 §4.1 lets UDP get one). */
const struct zb_answer *zb_lookup(const struct zb_zoneset *zs, const struct zb_question *q,
				  int tcp);

#endif
