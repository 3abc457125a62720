/*
 * proofs.c - the denial of existence in a signed zone's answers (RFC 4035 §3.1.3, RFC 5155
 * §7.2): which NSEC or NSEC3 RRsets go in the authority section, each with its signatures.
 * A proof about a name the compiler knows is written whole; a proof about the query name
 * itself, when the query name has no node (a name that does not exist, a wildcard's match),
 * is left to the responder, which finds it by the name (runtime/query/denial.c): the response
 * says so (`dynamic_proof`) and which chain entries it holds already, not to repeat them.
 * An NSEC3 entry of the question's own zone is not written at all: the response names it
 * by its page and place (`keys`) and the responder copies it from the chain, stored once
 * (a name's entry would otherwise be in its NODATA, in the NXDOMAIN below it, in its
 * aliases' answers, each with its signatures).
 */
#include "bake.h"

#define HASH_LEN 20

/* Where this thread's reads of a chain are logged, if anywhere (proofs_log_to). */
static _Thread_local struct proof_log *logging;

void proofs_log_to(struct proof_log *log)
{
	logging = log;
}

void proofs_log_node(struct proof_log *log, uint32_t node)
{
	log->node = node;
	log->from = log->uses.n;
}

/* An NSEC3 entry read, and how (PROOF_*): once a node. A node's answers read a few entries,
 * each for every type: the few logged for it so far are looked through. */
static void log_read(uint32_t zone, uint32_t index, unsigned how)
{
	struct proof_log *l = logging;
	if (!l || chain_kind(zone) != T_NSEC3)
		return;
	uint64_t entry = proof_entry(chain_hash(zone, index)) | how;
	for (size_t k = l->from; k < l->uses.n; k++)
		if (l->uses.v[k].entry == entry)
			return;
	PUSH(l->uses, ((struct proof_use){entry, l->node}));
}

/* What the responder finds an NSEC3 entry by (runtime/zonedata.h, struct zb_entry_key):
 * its hash's first KEY_LEN octets. 0 where the chain cannot be keyed: two hashes share
 * their first 8 octets, which the responder finds an entry by. */
static int entry_key(uint32_t zone, uint32_t index, uint8_t key[KEY_LEN])
{
	if (!chain_keyed(zone))
		return 0;
	memcpy(key, chain_hash(zone, index), KEY_LEN);
	return 1;
}

static int keyed(const struct response *r, const uint8_t key[KEY_LEN])
{
	for (uint32_t k = 0; k < r->nkeys; k++)
		if (memcmp(r->keys[k], key, KEY_LEN) == 0)
			return 1;
	return 0;
}

/* A chain entry's RRset and signatures in the authority section, once: an NSEC3 entry of
 * the question's zone by its key, while there is room for one. */
static void add_chain(struct response *r, uint32_t zone, uint32_t index)
{
	uint8_t key[KEY_LEN];
	if (chain_kind(zone) == T_NSEC3 && zone == r->key_zone && entry_key(zone, index, key)) {
		if (keyed(r, key))
			return;
		if (r->nkeys < MAX_KEYS) {
			memcpy(r->keys[r->nkeys++], key, KEY_LEN);
			if (r->nproved < MAX_PROVED)
				r->proved[r->nproved++] = index;
			return;
		}
	}
	log_read(zone, index, PROOF_WHOLE);
	for (size_t i = 0; i < r->nproved; i++)
		if (r->proved[i] == index)
			return;
	if (r->nproved < MAX_PROVED)
		r->proved[r->nproved++] = index;
	uint32_t set = chain_rrset(zone, index);
	add_signed(r, &r->authority, rrsets.v[set].owner, set, NONE);
}

static uint32_t nsec3_for(uint32_t zone, const uint8_t *key, int *match)
{
	uint8_t hash[HASH_LEN];
	size_t len = 0;
	while (key[len])
		len += 1 + key[len];
	name_hash(zone, key, len + 1, hash);
	uint32_t index = nsec3_at_or_before(zone, hash, match);
	log_read(zone, index, *match ? 0 : PROOF_COVER);
	return index;
}

/* The chain entry at or covering a name (a lowercased wire name): its NSEC, or the NSEC3 of
 * its hash. */
static uint32_t entry_for(uint32_t zone, const uint8_t *key)
{
	int match;
	return chain_kind(zone) == T_NSEC ? nsec_at_or_before(zone, key)
					  : nsec3_for(zone, key, &match);
}

/* `*.` in front of a name, as a lowercased wire name. */
static void wildcard_key(name_t encloser, uint8_t *key)
{
	key[0] = 1;
	key[1] = '*';
	name_key(encloser, key + 2);
}

/* The ancestor of `name` one label below `encloser`: the next closer name (RFC 5155 §1.3). */
static name_t next_closer(name_t name, name_t encloser)
{
	while (N(name)->parent != encloser)
		name = N(name)->parent;
	return name;
}

/* RFC 5155 §7.2.1: the NSEC3 matching the closest encloser and, for the next closer name,
 * the one covering it (unless it is left to the responder: next NONE). */
static void closest_encloser_proof(struct response *r, uint32_t zone, name_t encloser,
				   name_t next)
{
	uint8_t key[256];
	int match;
	name_key(encloser, key);
	add_chain(r, zone, nsec3_for(zone, key, &match));
	if (next != NONE) {
		name_key(next, key);
		add_chain(r, zone, nsec3_for(zone, key, &match));
	}
}

/* No NSEC3 matches `name` (an opt-out zone's insecure delegation or an empty non-terminal
 * above only such): the closest provable encloser proof (RFC 5155 §7.2.4, §7.2.7). */
static void nsec3_match_or_provable(struct response *r, uint32_t zone, name_t name)
{
	uint8_t key[256];
	int match;
	name_key(name, key);
	uint32_t index = nsec3_for(zone, key, &match);
	if (match) {
		add_chain(r, zone, index);
		return;
	}
	for (name_t above = N(name)->parent; above != NONE; above = N(above)->parent) {
		name_key(above, key);
		nsec3_for(zone, key, &match);
		if (match || above == zones.v[zone].origin) {
			closest_encloser_proof(r, zone, above, next_closer(name, above));
			return;
		}
	}
}

/* NODATA at a name of the zone, an empty non-terminal too; DS at a cut, or a referral
 * without DS (RFC 4035 §3.1.3.1, §3.1.4.1; RFC 5155 §7.2.3, §7.2.4, §7.2.7). */
void prove_nodata(struct response *r, uint32_t zone, name_t name)
{
	uint8_t key[256];
	name_key(name, key);
	if (chain_kind(zone) == T_NSEC)
		add_chain(r, zone, entry_for(zone, key));
	else if (chain_kind(zone) == T_NSEC3)
		nsec3_match_or_provable(r, zone, name);
}

/* NXDOMAIN for `name` below `encloser`, its closest encloser; `name` NONE for the query name
 * (RFC 4035 §3.1.3.2, RFC 5155 §7.2.2). */
void prove_nxdomain(struct response *r, uint32_t zone, name_t name, name_t encloser)
{
	uint8_t key[256];
	uint16_t kind = chain_kind(zone);
	if (kind == 0)
		return;
	if (kind == T_NSEC3)
		closest_encloser_proof(r, zone, encloser,
				       name == NONE ? NONE : next_closer(name, encloser));
	if (kind == T_NSEC && name != NONE) {
		name_key(name, key);
		add_chain(r, zone, entry_for(zone, key));
	}
	wildcard_key(encloser, key);
	add_chain(r, zone, entry_for(zone, key));
	r->dynamic_proof = name == NONE;
}

/* An answer from the wildcard `wildcard` for `name` (NONE: the query name): the name itself
 * does not exist (RFC 4035 §3.1.3.3, RFC 5155 §7.2.6); for NODATA, nor does the type at the
 * wildcard (RFC 4035 §3.1.3.4, RFC 5155 §7.2.5). */
void prove_wildcard(struct response *r, uint32_t zone, name_t name, name_t wildcard,
		    int nodata)
{
	uint8_t key[256];
	int match;
	uint16_t kind = chain_kind(zone);
	name_t encloser = N(wildcard)->parent;
	if (kind == 0)
		return;
	if (kind == T_NSEC3 && nodata && name != NONE)
		closest_encloser_proof(r, zone, encloser, NONE);
	if (kind == T_NSEC3 && nodata && name == NONE) {
		/* Only an expansion needs the closest encloser: the wildcard asked for by its own
		 * name ('*' literally) is a plain NODATA (RFC 5155 §7.2.3), so the responder adds
		 * it with the next closer name's. */
		name_key(encloser, key);
		uint32_t index = nsec3_for(zone, key, &match);
		log_read(zone, index, PROOF_ALSO);
		r->proof_also = chain_rrset(zone, index) + 1;
	}
	if (name != NONE) {
		name_key(kind == T_NSEC ? name : next_closer(name, encloser), key);
		add_chain(r, zone, entry_for(zone, key));
	}
	if (nodata) {
		name_key(wildcard, key);
		add_chain(r, zone, entry_for(zone, key));
	}
	r->dynamic_proof = name == NONE;
}
