/*
 * aliases.c - an alias's answers composed by the responder rather than stored whole.
 *
 * A name that owns a CNAME answers a question for most types with the CNAME, then what its
 * target answers (RFC 1034 §4.3.2 step 3a, RFC 2181 §10.1.1). The target's RRsets and their
 * signatures were written again behind every name that aliases it, once for each type asked
 * for, with DNSSEC and without: in a hosting zone where every host has a www alias, a third
 * of a signed server's octets. An alias's answer now holds the CNAME part alone, and the
 * responder appends the answer the target's node has for the question's type
 * (runtime/zonedata.h, struct zb_answer_alias); one body serves every type.
 *
 * Composed only where the result is the response resolve.c gives for the name: the same
 * records in the same sections, the target's answer made behind a question for its own
 * name (so that the responder can point its owners at the CNAME's target instead). That
 * holds when the target is a node of the same zone with no CNAME of its own, when its answer
 * has no denial the responder completes (the query name's own, or entries named by key:
 * they are written into the body's middle, which the composition does not know), and when
 * the composed message keeps every pointer in range.
 */
#include "bake.h"

static int same_entries(const entries_t *a, size_t from, const entries_t *b)
{
	if (a->n - from != b->n)
		return 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct entry *x = &a->v[from + i], *y = &b->v[i];
		if (x->owner != y->owner || x->rrset != y->rrset || x->ttl != y->ttl)
			return 0;
	}
	return 1;
}

static int completed_by_responder(const struct response *r)
{
	return r->dname_rrset != NONE || r->dynamic_proof || r->nkeys;
}

uint32_t compose_alias(struct wire *w, struct body_table *t, const struct response *r,
		       struct response *scratch, uint32_t zone, name_t name, uint16_t qtype,
		       int minimal)
{
	if (r->answer.n == 0 || completed_by_responder(r))
		return NONE;
	const struct entry *first = &r->answer.v[0];
	const struct rrset *cname = &rrsets.v[first->rrset];
	if (first->owner != name || cname->type != T_CNAME)
		return NONE;
	size_t part = 1 + (r->answer.n > 1 && r->answer.v[1].rrset == cname->sigs &&
			   r->answer.v[1].owner == name);
	name_t target = rdatas.v[cname->first].name;
	/* A node of the zone (an empty non-terminal is one too), whose answers are its own: not
	 * a wildcard's, which are made for any name it matches (their owners are the question). */
	if (target == name || N(target)->zone != zone || !(N(target)->flags & NAME_EXISTS) ||
	    under_cut(target) || name_is_wildcard(target) || rrset_at(target, T_CNAME) != NONE)
		return NONE;
	scratch->dnssec = r->dnssec;
	resolve(scratch, zone, target, target, qtype, minimal, 0);
	if (completed_by_responder(scratch) || scratch->rcode != r->rcode ||
	    !same_entries(&r->answer, part, &scratch->answer) ||
	    !same_entries(&r->authority, 0, &scratch->authority) ||
	    !same_entries(&r->additional, 0, &scratch->additional) ||
	    !same_entries(&r->optional, 0, &scratch->optional))
		return NONE;
	return serialize_alias(w, t, r, part, name, target,
			       serialized_length(w, scratch, target));
}
