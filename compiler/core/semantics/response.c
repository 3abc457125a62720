/*
 * response.c - a response being built: its sections, each a list of RRsets with their owners
 * and TTLs, and under DNSSEC each RRset's signatures behind it (RFC 4035 §3.1.1). resolve.c
 * fills the sections, proofs.c adds the denial proofs to the authority section; both put
 * RRsets in with add_signed, so neither calls the other back.
 */
#include "bake.h"

void add_signed(struct response *r, entries_t *section, name_t owner, uint32_t rrset,
		uint32_t ttl)
{
	struct entry e = {owner, rrset, ttl == NONE ? rrsets.v[rrset].ttl : ttl};
	PUSH(*section, e);
	uint32_t sigs = rrsets.v[rrset].sigs;
	if (r->dnssec && sigs != NONE) {
		struct entry s = {owner, sigs, ttl == NONE ? rrsets.v[sigs].ttl : ttl};
		PUSH(*section, s);
	}
}

void add_with_signatures(entries_t *section, name_t owner, uint32_t rrset)
{
	struct entry e = {owner, rrset, rrsets.v[rrset].ttl};
	PUSH(*section, e);
	uint32_t sigs = rrsets.v[rrset].sigs;
	if (sigs != NONE) {
		struct entry s = {owner, sigs, rrsets.v[sigs].ttl};
		PUSH(*section, s);
	}
}
