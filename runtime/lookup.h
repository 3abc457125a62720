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

#endif
