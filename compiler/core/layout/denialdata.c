/*
 * denialdata.c - the denial region of the blob (runtime/zonedata.h: struct zb_chain,
 * zb_children, zb_denial): every signed zone's chain entries as the responder copies them,
 * and for each node below which a name can be missing, what finds the entry for it. Made
 * before the records are let go, at offsets within the region; the layout moves it into
 * place (denial_relocate).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "query/wire.h"
#include "zonedata.h"

bytes_t denial_region;
uint32_t *denial_of_node;     /* per node: offset in the region, or NONE */
static VEC(uint32_t) relocs;  /* where the region holds offsets of its own */
typedef VEC(uint16_t) positions_t;

static uint32_t here(void)
{
	return denial_region.n;
}

/* The region holds a copy of every chain record with its signatures (200 MiB for a million
 * NSEC3 names), made while the records and the answers' tables are all there: in a file as
 * the answers' octets are (spill.c), what is written is let go from memory as it goes. */
#define LET_GO_EVERY 65536  /* chain entries */

static void let_go_written(void)
{
	spill_let_go(&denial_region, 0, denial_region.n);
}

static void align_region(size_t to)
{
	static const uint8_t zero;
	while (denial_region.n % to)
		bytes_put(&denial_region, &zero, 1);
}

/* An offset within the region, at `at`, to be moved with it. */
static void put_offset(size_t at, uint32_t value)
{
	memcpy(denial_region.v + at, &value, 4);
	PUSH(relocs, at);
}

/* An owner name below `apex`: its labels above the apex, then the pointer to the apex in
 * the question (the responder writes it); its position among `pointers`. */
static void put_owner(bytes_t *out, positions_t *pointers, name_t owner, name_t apex)
{
	for (name_t s = owner; s != apex; s = N(s)->parent) {
		uint8_t len = N(s)->label_len;
		bytes_put(out, &len, 1);
		bytes_put(out, name_label(s), len);
	}
	PUSH(*pointers, out->n);
	bytes_u16(out, 0xC000 | 12);
}

static uint16_t put_records(bytes_t *out, positions_t *pointers, uint32_t set, name_t apex)
{
	const struct rrset *s = &rrsets.v[set];
	uint16_t n = 0;
	for (uint32_t i = s->first; i != NONE; i = rdatas.v[i].next, n++) {
		const struct rdata *rd = &rdatas.v[i];
		put_owner(out, pointers, s->owner, apex);
		bytes_u16(out, s->type);
		bytes_u16(out, CLASS_IN);
		bytes_u32(out, s->ttl);
		bytes_u16(out, rd->raw_len);  /* NSEC, NSEC3, RRSIG: their data whole, uncompressed */
		bytes_put(out, rdata_raw.v + rd->raw, rd->raw_len);
	}
	return n;
}

/* One chain entry: the RRset and its signatures. */
static uint32_t put_entry(uint32_t set, name_t apex)
{
	static bytes_t octets;
	static positions_t pointers;
	octets.n = pointers.n = 0;
	uint16_t n = put_records(&octets, &pointers, set, apex);
	if (rrsets.v[set].sigs != NONE)
		n += put_records(&octets, &pointers, rrsets.v[set].sigs, apex);
	align_region(4);
	uint32_t at = here();
	struct zb_denial d = {.len = octets.n, .nrecords = n, .npointers = pointers.n};
	bytes_put(&denial_region, &d, sizeof d);
	bytes_put(&denial_region, pointers.v, 2u * pointers.n);
	bytes_put(&denial_region, octets.v, octets.n);
	return at;
}

/* An NSEC3 chain's bucket directory (runtime/zonedata.h, struct zb_chain): as many buckets
 * as the next power of two at or above the number of hashes. */
static void put_buckets(uint32_t zone, uint32_t chain)
{
	uint32_t n = chain_length(zone);
	unsigned bits = 0;
	while (bits < 32 && (1ull << bits) < n)
		bits++;
	denial_region.v[chain + offsetof(struct zb_chain, bucket_bits)] = bits;
	align_region(4);
	put_offset(chain + offsetof(struct zb_chain, buckets_off), here());
	uint32_t i = 0;
	for (uint64_t b = 0; b < 1ull << bits; b++) {
		while (i < n && (bits ? zb_get64(chain_hash(zone, i)) >> (64 - bits) : 0) < b)
			i++;
		bytes_put(&denial_region, &i, 4);
	}
	bytes_put(&denial_region, &n, 4);
}

static uint32_t put_chain(uint32_t zone)
{
	const struct zone *z = &zones.v[zone];
	size_t n = chain_length(zone);
	align_region(8);
	uint32_t at = here();
	struct zb_chain c = {.kind = chain_kind(zone) == T_NSEC3 ? ZB_DENIAL_NSEC3 : ZB_DENIAL_NSEC,
			     .apex_len = N(z->origin)->wire_len, .count = n};
	const uint8_t *salt;
	chain_parameters(zone, &c.iterations, &salt, &c.salt_len);
	memcpy(c.salt, salt, c.salt_len);
	bytes_put(&denial_region, &c, sizeof c);
	size_t entries = here();
	RESERVE(denial_region, 4 * n);
	denial_region.n += 4 * n;
	put_offset(at + offsetof(struct zb_chain, entries_off), entries);
	if (c.kind == ZB_DENIAL_NSEC3) {
		put_offset(at + offsetof(struct zb_chain, hashes_off), here());
		for (size_t i = 0; i < n; i++)
			bytes_put(&denial_region, chain_hash(zone, i), 20);
		put_buckets(zone, at);
	}
	for (size_t i = 0; i < n; i++) {
		put_offset(entries + 4 * i, put_entry(chain_rrset(zone, i), z->origin));
		if (i % LET_GO_EVERY == LET_GO_EVERY - 1)
			let_go_written();
	}
	return at;
}

static uint32_t put_children(uint32_t zone, name_t name, uint32_t chain, struct child_gaps *g)
{
	nsec_children(zone, name, g);
	align_region(4);
	uint32_t at = here();
	struct zb_children c = {.kind = ZB_DENIAL_NSEC, .count = g->n, .before = g->before};
	bytes_put(&denial_region, &c, sizeof c);
	put_offset(at + offsetof(struct zb_children, chain), chain);
	size_t children = here(), labels = children + sizeof(struct zb_child) * g->n;
	for (size_t k = 0; k < g->n; k++) {
		struct zb_child child = {.after = g->v[k].after};
		bytes_put(&denial_region, &child, sizeof child);
		put_offset(children + sizeof child * k, labels + g->v[k].label);
	}
	bytes_put(&denial_region, g->labels.v, g->labels.n);
	return at;
}

/* Names below a cut get its referral, below a DNAME its synthesis: no denial. */
static int may_deny_below(name_t name)
{
	return !(N(name)->flags & (NAME_CUT | NAME_DNAME));
}

/* At each node of a signed zone below which a name is rewritten by a DNAME to an image that
 * the responder denies (miss_image: the DNAME owner itself when its target exists, or a node
 * below it whose image exists): the image's denial, found below that image
 * (runtime/zonedata.h, struct zb_image_denial). */
static void put_images(void)
{
	uint32_t *node_of = xmalloc((names.n ? names.n : 1) * sizeof *node_of);
	memset(node_of, 0xFF, names.n * sizeof *node_of);
	for (size_t i = 0; i < nodes.n; i++)
		node_of[nodes.v[i]] = i;
	for (size_t i = 0; i < nodes.n; i++) {
		name_t name = nodes.v[i];
		uint32_t zone = N(name)->zone;
		if (!chain_kind(zone) || !types_has(&zones.v[zone].types, T_DNAME))
			continue;
		name_t image = miss_image(name);
		uint32_t at = image == NONE ? NONE : node_of[image];
		if (at == NONE || N(image)->zone != zone || denial_of_node[at] == NONE)
			continue;
		align_region(4);
		denial_of_node[i] = here();
		struct zb_image_denial denial = {.kind = ZB_DENIAL_IMAGE};
		denial.target_len = name_key(image, denial.target);
		bytes_put(&denial_region, &denial, sizeof denial);
		put_offset(denial_of_node[i] + offsetof(struct zb_image_denial, table),
			   denial_of_node[at]);
	}
	free(node_of);
}

void build_denial_region(void)
{
	if (!denial_region.v)
		reserve_spilled(&denial_region);
	denial_of_node = xmalloc((nodes.n ? nodes.n : 1) * sizeof *denial_of_node);
	uint32_t *chain_at = xmalloc((zones.n ? zones.n : 1) * sizeof *chain_at);
	bytes_put(&denial_region, "zbdenial", 8);  /* offset 0 stays "none" */
	for (uint32_t zone = 0; zone < zones.n; zone++)
		chain_at[zone] = chain_kind(zone) ? put_chain(zone) : NONE;
	struct child_gaps gaps = {0};
	for (size_t i = 0; i < nodes.n; i++) {
		name_t name = nodes.v[i];
		uint32_t zone = N(name)->zone;
		denial_of_node[i] = NONE;
		if (chain_at[zone] == NONE || !may_deny_below(name))
			continue;
		denial_of_node[i] = chain_kind(zone) == T_NSEC3
			? chain_at[zone] : put_children(zone, name, chain_at[zone], &gaps);
	}
	free(gaps.v);
	free(gaps.labels.v);
	free(chain_at);
	put_images();
	align_region(8);
	let_go_written();
}

/* The region placed at `base` in the blob: its offsets made absolute. */
void denial_relocate(uint32_t base)
{
	for (size_t k = 0; k < relocs.n; k++) {
		uint32_t value;
		memcpy(&value, denial_region.v + relocs.v[k], 4);
		value += base;
		memcpy(denial_region.v + relocs.v[k], &value, 4);
	}
	free(relocs.v);
	relocs.v = NULL;
	relocs.n = relocs.cap = 0;
}

void denial_region_reset(void)
{
	bytes_release(&denial_region);
	free(denial_of_node);
	denial_of_node = NULL;
	VEC_FREE(relocs);
}
