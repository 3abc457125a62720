/*
 * answers.c - compiler/answers.py for the baker's subset: for every node, the body for each
 * query type whose answer differs from the node's default, the default, and the answer for a
 * name below it that has no node.
 */
#include "bake.h"

__typeof__(node_answers) node_answers;
__typeof__(typed) typed;

static struct response response;

/* A wildcard's answers are written for any name it matches, against its parent; queried
 * literally ('*.x') the same answers are right (RFC 4592 §2.2.1). */
static uint32_t answer(uint32_t zone, name_t name, name_t base, uint16_t qtype, int minimal)
{
	int every_rrset = qtype == QTYPE_ANY_OVER_TCP;
	resolve(&response, zone, name_is_wildcard(name) ? NONE : name, base,
		every_rrset ? T_ANY : qtype, minimal, every_rrset);
	return serialize(&response, base);
}

/* The types of a node that can answer other than the default, ascending (answers.py's
 * `qtypes`, sorted). */
static size_t qtypes_of(name_t name, uint16_t *out)
{
	const struct name *n = N(name);
	name_t cut;
	if (node_location(name, &cut)) {
		/* One referral answers every type, but DS at the cut itself (RFC 4035 §3.1.4.1). */
		if (cut != name || name_is_wildcard(name))
			return 0;
		out[0] = T_DS;
		return 1;
	}
	uint32_t types = 0;  /* by type_bit() */
	for (uint32_t s = n->rrsets; s != NONE; s = rrsets.v[s].next)
		types |= 1u << type_bit(rrsets.v[s].type);
	if (types & (1u << type_bit(T_CNAME)))  /* chains reach anything */
		types |= zones.v[n->zone].types | 1u << type_bit(T_DS);
	size_t k = 0;
	out[k++] = QTYPE_ANY_OVER_TCP;
	for (int bit = 0; bit < NTYPES; bit++)
		if (types & (1u << bit))
			out[k++] = type_of_bit[bit];
	out[k++] = T_ANY;
	for (size_t i = k - 1; i > 0 && out[i] < out[i - 1]; i--) {  /* ANY into its place */
		uint16_t t = out[i];
		out[i] = out[i - 1];
		out[i - 1] = t;
	}
	return k;
}

void build_answers(int minimal)
{
	RESERVE(node_answers, nodes.n);
	for (size_t i = 0; i < nodes.n; i++) {
		name_t name = nodes.v[i];
		name_t base = name_is_wildcard(name) ? N(name)->parent : name;
		uint32_t zone = N(name)->zone;
		uint16_t qtypes[16];
		size_t nq = qtypes_of(name, qtypes);
		struct node_answers na = {.types = typed.n, .miss_body = NONE};
		na.default_body = answer(zone, name, base, UNUSED_QTYPE, minimal);
		for (size_t q = 0; q < nq; q++) {
			uint32_t body = answer(zone, name, base, qtypes[q], minimal);
			if (body != na.default_body) {
				struct typed_body t = {qtypes[q], body};
				PUSH(typed, t);
			}
		}
		na.ntypes = typed.n - na.types;
		na.miss_wildcard = miss_wildcard(name);
		if (na.miss_wildcard == NONE) {
			resolve(&response, zone, NONE, name, UNUSED_QTYPE, minimal, 0);
			na.miss_body = serialize(&response, name);
		}
		node_answers.v[node_answers.n++] = na;
	}
}
