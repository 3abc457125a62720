/*
 * lookup.h - find the precompiled answer for a question (RFC 1034 §4.3.2, steps 2 and 3).
 */
#ifndef ZB_LOOKUP_H
#define ZB_LOOKUP_H

#include "wire.h"
#include "zonedata.h"

/* The answer for a parsed question, or NULL when no served zone contains the name. ANY over
 * TCP gets every RRset (RFC 8482 §4.1 lets UDP get one). */
const struct zb_answer *zb_lookup(const struct zb_zoneset *zs, const struct zb_question *q,
				  int tcp);

/* Where a name with no node fell, with DO set: the closest encloser's DO twin, when it has
 * a denial, and how many labels were stripped to reach it (denial.h). */
struct zb_encloser {
	const struct zb_node *node;  /* NULL: the name has a node, or no denial applies */
	unsigned strip;
};

/* The same with DO set (RFC 3225): the answers with DNSSEC (zb_zoneset.signed_nodes, 0 when
 * no zone is signed); `encloser` is set when the name's denial is to be added. */
const struct zb_answer *zb_lookup_signed(const struct zb_zoneset *zs,
					 const struct zb_question *q, int tcp,
					 struct zb_encloser *encloser);

#endif
