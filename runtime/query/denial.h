/*
 * denial.h - with DNSSEC, the proof that a query name with no node does not exist: the one
 * part of an answer that depends on the name itself (RFC 4035 §3.1.3, RFC 5155 §7.2).
 */
#ifndef ZB_DENIAL_H
#define ZB_DENIAL_H

#include "query/lookup.h"
#include "query/nsec3hash.h"  /* ZB_SHA1_LANES_MAX */
#include "query/wire.h"
#include "zonedata.h"

/*
 * The chain entries an answer adds to its authority section, into `found`; returns how
 * many. First the NSEC3 entries it names by their keys (its struct zb_answer_denial); then,
 * for a query name with no node (encloser->node: a DO twin with a denial, a suffix of the
 * name), those that deny the name: in an NSEC zone the NSEC covering it, found among the
 * encloser's children by the label under it; in an NSEC3 zone the answer's `also` entry and
 * the NSEC3 covering the hash of the next closer name (taken here unless
 * encloser->hashed), each left out when the answer holds or names it already. `*apex_len`
 * is the zone's apex's wire length: the entries' owner names point to it in the question.
 */
unsigned zb_find_denials(const struct zb_zoneset *zs, const struct zb_question *q,
			 const struct zb_encloser *encloser, const struct zb_answer *answer,
			 const struct zb_denial *found[ZB_MAX_DENIALS], unsigned *apex_len);

/* The one-block NSEC3 hashes a batch has yet to take, `lanes` at a time. */
struct zb_pending_hashes {
	unsigned n;
	uint8_t blocks[ZB_SHA1_LANES_MAX][64];
	struct zb_encloser *to[ZB_SHA1_LANES_MAX];
	const struct zb_chain *chain[ZB_SHA1_LANES_MAX];
};

/*
 * For a UDP batch, before its responses are written: the NSEC3 hash that the denial of a
 * name below `encloser` needs, into encloser->hash. Without the SHA extensions, names of one
 * block wait in `pending` to be hashed together (zb_sha1_x4, zb_sha1_x8), a full set at once;
 * zb_hash_pending takes the rest. Nothing for a name in an NSEC zone.
 */
void zb_hash_next_closer(const struct zb_zoneset *zs, const struct zb_question *q,
			 struct zb_encloser *encloser, struct zb_pending_hashes *pending);
void zb_hash_pending(struct zb_pending_hashes *pending);

#endif
