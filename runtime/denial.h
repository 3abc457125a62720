/*
 * denial.h - with DNSSEC, the proof that a query name with no node does not exist: the one
 * part of an answer that depends on the name itself (RFC 4035 §3.1.3, RFC 5155 §7.2).
 */
#ifndef ZB_DENIAL_H
#define ZB_DENIAL_H

#include "wire.h"
#include "zonedata.h"

/*
 * The chain entries that deny the query name below `encloser` (a DO twin with a denial, a
 * suffix of the name; the next closer name starts at `next_off`), into `found`; returns how many (0 to 2). In an NSEC zone the
 * NSEC covering the name, found among the encloser's children by the label under it; in an
 * NSEC3 zone the NSEC3 covering the hash of the next closer name. Left out when the answer
 * holds it already; the answer's `also` entry comes first. `*apex_len` is the zone's apex's
 * wire length: the entries' owner names point to it in the question.
 */
unsigned zb_find_denials(const struct zb_zoneset *zs, const struct zb_question *q,
			 const struct zb_node *encloser, unsigned next_off,
			 const struct zb_answer_denial *use, const struct zb_denial *found[2],
			 unsigned *apex_len);

#endif
