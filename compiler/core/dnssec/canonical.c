/*
 * canonical.c - what a signature signs (RFC 4034 §3.1.8.1): the RRSIG's own fields, then the
 * RRset it covers in canonical form (§6.2: names lowercased, uncompressed; the RRSIG's
 * original TTL) and canonical order (§6.3), its owner rebuilt as the wildcard it was
 * expanded from when the labels say so (§3.1.3).
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"

/* Lowercase the uncompressed name at `at` in place; the offset after it, or `len` when it
 * runs past the data (the record was checked when it was read: never, but never past). */
static size_t lower_name(uint8_t *p, size_t len, size_t at)
{
	while (at < len && p[at] != 0) {
		size_t end = at + 1 + p[at];
		for (size_t i = at + 1; i < end && i < len; i++)
			if (p[i] >= 'A' && p[i] <= 'Z')
				p[i] += 32;
		at = end;
	}
	return at < len ? at + 1 : len;
}

/* Record data kept as octets with names inside: the names RFC 4034 §6.2 lowercases, as
 * corrected by RFC 6840 §5.1 (not NSEC's next name, and HINFO has none). SVCB's TargetName
 * is not on the list (RFC 9460 §2.2). */
static void lower_raw_names(uint16_t type, uint8_t *p, size_t len)
{
	size_t at = 0;
	switch (type) {
	case 3: case 4: case 7: case 8: case 9:  /* MD MF MB MG MR */
	case 30:                                 /* NXT: the name, then a bitmap */
		lower_name(p, len, 0);
		return;
	case 14: case 17:                        /* MINFO RP: two names */
		lower_name(p, len, lower_name(p, len, 0));
		return;
	case 18: case 21: case 36:               /* AFSDB RT KX: a preference, a name */
		lower_name(p, len, 2);
		return;
	case 26:                                 /* PX: a preference, two names */
		lower_name(p, len, lower_name(p, len, 2));
		return;
	case 24: case T_RRSIG:                   /* SIG RRSIG: the signer after 18 octets */
		lower_name(p, len, 18);
		return;
	case T_NAPTR:                            /* order, preference, three strings, a name */
		at = 4;
		for (int i = 0; i < 3 && at < len; i++)
			at += 1 + p[at];
		lower_name(p, len, at);
		return;
	case 38:                                 /* A6: prefix length, suffix, prefix name */
		if (len > 0 && p[0] > 0 && p[0] <= 128)
			lower_name(p, len, 1 + (128 - p[0] + 7) / 8);
		return;
	}
}

void rdata_wire(uint16_t type, const struct rdata *rd, bytes_t *out, int canonical)
{
	const uint8_t *raw = rdata_raw.v + rd->raw;
	size_t (*name)(name_t, uint8_t *) = canonical ? name_key : name_wire;
	uint8_t wire[256];
	switch (type) {
	case T_NS:
	case T_CNAME:
	case T_PTR:
	case T_DNAME:
		bytes_put(out, wire, name(rd->name, wire));
		return;
	case T_MX:
	case T_SRV:
		bytes_put(out, raw, type == T_MX ? 2 : 6);
		bytes_put(out, wire, name(rd->name, wire));
		return;
	case T_SOA:
		bytes_put(out, wire, name(rd->name, wire));
		bytes_put(out, wire, name(rd->name2, wire));
		bytes_put(out, raw, 20);
		return;
	default:
		bytes_put(out, raw, rd->raw_len);
		if (canonical && rd->raw_len)  /* none: `out` may have no octets at all */
			lower_raw_names(type, out->v + out->n - rd->raw_len, rd->raw_len);
	}
}

/* The records' canonical RDATA, for sorting (RFC 4034 §6.3: as left-justified octet
 * strings, a prefix first). */
struct canonical_record {
	uint32_t at, len;
};

static _Thread_local const bytes_t *sorting;  /* signatures.c checks on two threads */

static int by_rdata(const void *x, const void *y)
{
	const struct canonical_record *a = x, *b = y;
	int c = memcmp(sorting->v + a->at, sorting->v + b->at, a->len < b->len ? a->len : b->len);
	return c ? c : (a->len > b->len) - (a->len < b->len);
}

size_t signed_data(const struct rrset *set, const uint8_t *rrsig, size_t rrsig_len,
		bytes_t *out)
{
	if (rrsig_len < 19)
		return 0;
	size_t start = out->n;
	bytes_put(out, rrsig, rrsig_len);
	size_t fields = lower_name(out->v + start, rrsig_len, 18);
	if (fields >= rrsig_len) {
		out->n = start;
		return 0;  /* no signature */
	}
	out->n = start + fields;
	/* The owner: the name as the labels field counts it, a wildcard when fewer. */
	uint8_t key[256], owner[258];
	size_t key_len = name_key(set->owner, key), owner_len = 0;
	unsigned labels = rrsig[3], have = N(set->owner)->nlabels;
	if (name_is_wildcard(set->owner))
		have--;
	if (labels > have) {
		out->n = start;
		return 0;
	}
	size_t at = 0;
	if (labels < have) {  /* expanded from the wildcard at its last `labels` labels */
		for (unsigned skip = N(set->owner)->nlabels - labels; skip > 0; skip--)
			at += 1 + key[at];
		owner[owner_len++] = 1;
		owner[owner_len++] = '*';
	}
	memcpy(owner + owner_len, key + at, key_len - at);
	owner_len += key_len - at;
	/* Each record's RDATA, sorted, duplicates once. */
	bytes_t rdata = {0};
	VEC(struct canonical_record) records = {0};
	for (uint32_t i = set->first; i != NONE; i = rdatas.v[i].next) {
		struct canonical_record r = {rdata.n, 0};
		rdata_wire(set->type, &rdatas.v[i], &rdata, 1);
		r.len = rdata.n - r.at;
		PUSH(records, r);
	}
	sorting = &rdata;
	qsort(records.v, records.n, sizeof *records.v, by_rdata);
	for (size_t i = 0; i < records.n; i++) {
		if (i > 0 && by_rdata(&records.v[i - 1], &records.v[i]) == 0)
			continue;
		bytes_put(out, owner, owner_len);
		bytes_u16(out, set->type);
		bytes_u16(out, CLASS_IN);
		bytes_put(out, rrsig + 4, 4);  /* the original TTL */
		bytes_u16(out, records.v[i].len);
		if (records.v[i].len)  /* all empty: `rdata` has no octets at all */
			bytes_put(out, rdata.v + records.v[i].at, records.v[i].len);
	}
	free(rdata.v);
	free(records.v);
	return fields;
}
