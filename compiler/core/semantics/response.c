/*
 * response.c - a response being built: its sections, each a list of RRsets with their owners
 * and TTLs, and under DNSSEC each RRset's signatures behind it (RFC 4035 §3.1.1). resolve.c
 * fills the sections, proofs.c adds the denial proofs to the authority section; both put
 * RRsets in with add_signed, so neither calls the other back.
 */
#include "bake.h"

/* An RRset at `ttl` (NONE: its own), and when `signed_too` its signatures behind it. */
static void add_entries(entries_t *section, name_t owner, uint32_t rrset, uint32_t ttl,
			int signed_too)
{
	struct entry e = {owner, rrset, ttl == NONE ? rrsets.v[rrset].ttl : ttl};
	PUSH(*section, e);
	uint32_t sigs = rrsets.v[rrset].sigs;
	if (signed_too && sigs != NONE) {
		struct entry s = {owner, sigs, ttl == NONE ? rrsets.v[sigs].ttl : ttl};
		PUSH(*section, s);
	}
}

void add_signed(struct response *r, entries_t *section, name_t owner, uint32_t rrset,
		uint32_t ttl)
{
	add_entries(section, owner, rrset, ttl, r->dnssec);
}

void add_with_signatures(entries_t *section, name_t owner, uint32_t rrset)
{
	add_entries(section, owner, rrset, NONE, 1);
}
