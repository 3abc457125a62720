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
static uint32_t *chain_at;     /* per zone: its struct zb_chain in the region, or NONE */
/* Each NSEC3 entry's RRset and offset, by RRset: an answer's `also` (layout.c). */
struct entry_at {
	uint32_t rrset, at;
};
static VEC(struct entry_at) nsec3_entries;
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

/* nsec3_entries' order, for bsearch. */
static int by_rrset(const void *a, const void *b)
{
	uint32_t x = ((const struct entry_at *)a)->rrset, y = ((const struct entry_at *)b)->rrset;
	return (x > y) - (x < y);
}

/* One chain entry, as struct zb_denial: its header, pointers and octets. */
static void denial_entry(uint32_t set, bytes_t *out)
{
	static bytes_t octets;  /* one thread makes the region */
	static positions_t pointers;
	octets.n = pointers.n = 0;
	name_t apex = zones.v[N(rrsets.v[set].owner)->zone].origin;
	uint16_t n = put_records(&octets, &pointers, set, apex);
	if (rrsets.v[set].sigs != NONE)
		n += put_records(&octets, &pointers, rrsets.v[set].sigs, apex);
	struct zb_denial d = {.len = octets.n, .nrecords = n, .npointers = pointers.n};
	bytes_put(out, &d, sizeof d);
	bytes_put(out, pointers.v, 2u * pointers.n);
	bytes_put(out, octets.v, octets.n);
}

/* One chain entry in the region, 4-aligned; returns where. */
static uint32_t put_entry(uint32_t set)
{
	align_region(4);
	uint32_t at = here();
	denial_entry(set, &denial_region);
	return at;
}

/* A page's own directory (runtime/zonedata.h, struct zb_page_buckets): about a bucket an
 * entry over the span of its hashes, from those alone. */
static void put_page_buckets(uint32_t zone, uint32_t first, uint32_t count)
{
	uint64_t low = zb_get64(chain_hash(zone, first));
	uint64_t span = zb_get64(chain_hash(zone, first + count - 1)) - low;
	struct zb_page_buckets dir = {0};
	while ((span >> dir.shift) >= count)
		dir.shift++;
	dir.nbuckets = (uint32_t)(span >> dir.shift) + 1;
	bytes_put(&denial_region, &dir, sizeof dir);
	uint32_t i = 0;
	for (uint64_t b = 0; b < dir.nbuckets; b++) {
		while (i < count && (zb_get64(chain_hash(zone, first + i)) - low) >> dir.shift < b)
			i++;
		bytes_put(&denial_region, &i, 4);
	}
	bytes_put(&denial_region, &count, 4);
}

/* An NSEC3 chain's directory, page table and pages (runtime/zonedata.h, struct zb_chain),
 * after its header at `at`. */
static void put_pages(uint32_t zone, uint32_t at)
{
	size_t n = chain_length(zone);
	VEC(uint32_t) firsts = {0};  /* each page's first entry, then n */
	for (size_t i = 0; i < n; i++)
		if (i == 0 || nsec3_starts_page(chain_hash(zone, i)))
			PUSH(firsts, i);
	uint32_t npages = firsts.n;
	PUSH(firsts, n);
	memcpy(denial_region.v + at + offsetof(struct zb_chain, npages), &npages, 4);
	unsigned bits = 0;
	while (bits < 32 && (1ull << bits) < npages)
		bits++;
	denial_region.v[at + offsetof(struct zb_chain, dir_bits)] = bits;
	align_region(4);
	put_offset(at + offsetof(struct zb_chain, dir_off), here());
	uint32_t p = 0;
	for (uint64_t d = 0; d < 1ull << bits; d++) {
		while (p < npages &&
		       (bits ? zb_get64(chain_hash(zone, firsts.v[p])) >> (64 - bits) : 0) < d)
			p++;
		bytes_put(&denial_region, &p, 4);
	}
	bytes_put(&denial_region, &npages, 4);
	align_region(8);
	size_t table = here();
	put_offset(at + offsetof(struct zb_chain, pages_off), table);
	RESERVE(denial_region, sizeof(struct zb_chain_page) * (size_t)npages);
	denial_region.n += sizeof(struct zb_chain_page) * (size_t)npages;
	size_t since_let_go = 0;
	for (uint32_t k = 0; k < npages; k++) {
		uint32_t first = firsts.v[k], count = firsts.v[k + 1] - first;
		align_region(4);
		uint32_t page = here();
		struct zb_chain_page entry = {.off = page, .count = count};
		memcpy(entry.first, chain_hash(zone, first), sizeof entry.first);
		memcpy(denial_region.v + table + sizeof entry * k, &entry, sizeof entry);
		put_offset(table + sizeof entry * k + offsetof(struct zb_chain_page, off), page);
		put_page_buckets(zone, first, count);
		for (uint32_t i = 0; i < count; i++)
			bytes_put(&denial_region, chain_hash(zone, first + i), 20);
		size_t offsets = here();
		RESERVE(denial_region, 4 * (size_t)count);
		denial_region.n += 4 * (size_t)count;
		for (uint32_t i = 0; i < count; i++) {
			uint32_t set = chain_rrset(zone, first + i), entry = put_entry(set);
			uint32_t from_page = entry - page;
			memcpy(denial_region.v + offsets + 4 * i, &from_page, 4);
			PUSH(nsec3_entries, ((struct entry_at){set, entry}));
		}
		since_let_go += count;
		if (since_let_go >= LET_GO_EVERY) {
			let_go_written();
			since_let_go = 0;
		}
	}
	VEC_FREE(firsts);
}

/* A chain's header (struct zb_chain), its pages or entries to follow (put_chain). */
static uint32_t put_chain_head(uint32_t zone)
{
	const struct zone *z = &zones.v[zone];
	align_region(8);
	uint32_t at = here();
	struct zb_chain c = {.kind = chain_kind(zone) == T_NSEC3 ? ZB_DENIAL_NSEC3 : ZB_DENIAL_NSEC,
			     .apex_len = N(z->origin)->wire_len, .count = chain_length(zone)};
	const uint8_t *salt;
	chain_parameters(zone, &c.iterations, &salt, &c.salt_len);
	memcpy(c.salt, salt, c.salt_len);
	bytes_put(&denial_region, &c, sizeof c);
	return at;
}

/* The chain whose header is at `at`: an NSEC3 chain's pages, an NSEC chain's entries. */
static void put_chain(uint32_t zone, uint32_t at)
{
	size_t n = chain_length(zone);
	if (chain_kind(zone) == T_NSEC3) {
		put_pages(zone, at);
		return;
	}
	size_t entries = here();
	RESERVE(denial_region, 4 * n);
	denial_region.n += 4 * n;
	put_offset(at + offsetof(struct zb_chain, entries_off), entries);
	for (size_t i = 0; i < n; i++) {
		put_offset(entries + 4 * i, put_entry(chain_rrset(zone, i)));
		if (i % LET_GO_EVERY == LET_GO_EVERY - 1)
			let_go_written();
	}
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

static int built;  /* a build over an earlier one makes it early (reuse.c) */

void build_denial_region(void)
{
	if (built)
		return;
	built = 1;
	if (!denial_region.v)
		reserve_spilled(&denial_region);
	denial_of_node = xmalloc((nodes.n ? nodes.n : 1) * sizeof *denial_of_node);
	chain_at = xmalloc((zones.n ? zones.n : 1) * sizeof *chain_at);
	bytes_put(&denial_region, "zbdenial", 8);  /* offset 0 stays "none" */
	/* The chains' headers first, each zone's where it was while the set's zones with a
	 * chain are the same: the nodes and answers that name it stay as they were when another
	 * zone's chain grows (a build over an earlier one copies them: proofuse.c). */
	for (uint32_t zone = 0; zone < zones.n; zone++)
		chain_at[zone] = chain_kind(zone) ? put_chain_head(zone) : NONE;
	for (uint32_t zone = 0; zone < zones.n; zone++)
		if (chain_at[zone] != NONE)
			put_chain(zone, chain_at[zone]);
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
	put_images();
	if (nsec3_entries.n)  /* none: v is NULL, which qsort may not take */
		qsort(nsec3_entries.v, nsec3_entries.n, sizeof *nsec3_entries.v, by_rrset);
	align_region(8);
	let_go_written();
}

uint32_t denial_entry_at(uint32_t rrset)
{
	struct entry_at key = {rrset, 0};
	const struct entry_at *found = nsec3_entries.n == 0 ? NULL :
		bsearch(&key, nsec3_entries.v, nsec3_entries.n, sizeof key, by_rrset);
	if (!found)
		fail("internal error: an answer adds an NSEC3 RRset the chain lacks");
	return found ? found->at : 0;
}

uint32_t denial_chain_at(uint32_t zone)
{
	if (!chain_at || zone >= zones.n || chain_at[zone] == NONE)
		fail("internal error: an answer names NSEC3 entries of a zone without a chain");
	return chain_at[zone];
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
	built = 0;
	bytes_release(&denial_region);
	free(denial_of_node);
	denial_of_node = NULL;
	free(chain_at);
	chain_at = NULL;
	VEC_FREE(relocs);
	VEC_FREE(nsec3_entries);
}
