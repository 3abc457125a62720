/*
 * reuse.c - a build over an earlier build of the same set: the regions (layout.c) of the
 * groups a change does not reach are copied from the earlier zonedata.bin, and only the
 * others' answers are made and laid out. A region reads the same wherever it lies, so the
 * copy is the octets a full build writes there; the output is a full build's, byte for byte.
 *
 * What the earlier build was is in its state file (zonedata.state, written by every build
 * beside the data): a digest of everything but the records that decides the output (the
 * manifest's lines, the core's identity, each zone's types), the perfect hash's seed, per
 * group the digest of its keys, where its region lay, its size and how many answers it
 * holds, per name its state (changes.c), and per zone its SOA (its numbers, a digest of the
 * rest). A group is reused when the seed and the digest are the same, its keys are the same
 * (so are its slots: phash.c places a group from its keys alone), no name of it is reached
 * by a change (changes.c), and no alias of it names a target in a group whose slots moved
 * (struct zb_answer_alias names the target's node).
 * A zone's SOA serial is not in its apex's state (changes.c): where it alone changed, each
 * copied region gets the new serial written over the old in the SOA records its answers
 * hold (RFC 1035 §3.3.13: the serial is the rdata's first number after the two names).
 * In a signed zone the new serial comes with new signatures over the SOA, which every
 * negative answer holds too (RFC 4035 §3.1.3): each is written over the one by the same key
 * (the same algorithm, key tag, signer and length; RFC 4034 §3.1). A signed zone's regions
 * are copied while its denial region (its chain, layout/denialdata.c) is the earlier
 * build's octet for octet: what a copied region holds of the chain, and where, is then the
 * same (same_denial); where an NSEC3 chain changed (a name or a type come or gone), those
 * whose proofs read it as before (proofuse.c), unless a DNAME is in a signed zone (the
 * denials of its images are not among those reads). Anything else builds in full: an NSEC
 * chain changed, an SOA signed by other keys, an SOA otherwise changed (every negative
 * answer holds it), a state or a blob that do not match.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bake.h"
#include "hash.h"
#include "zonedata.h"

#define STATE_MAGIC "zbstateA"

struct state_head {
	char magic[8];
	uint64_t global, seed, blob_size, table_digest;
	uint64_t early;  /* `global` as the manifest left it, before the checks (reuse_early) */
	uint32_t ngroups, groups_off;
	uint64_t nnames;
	uint64_t content;  /* the names', groups' and zones' entries, digested in turn (a state
			    * cut or changed on its way is not read); in the file in that order */
	uint64_t nzones;
	uint64_t denial_len;  /* the denial region's octets (layout.c), at place_denial_region */
	uint64_t nproofs;     /* the reads of an NSEC3 chain (proofuse.c), after the zones */
};

/* A zone's SOA: its serial and the four numbers after it, as the answers hold them, the
 * rest of it, and in a signed zone its signatures (RFC 4034 §3.1): what each is, to tell
 * that a new one takes its place octet for octet, and their octets digested. */
#define MAX_SOA_SIGS 4
struct state_zone {
	uint64_t origin;      /* zb_hash of its origin's key (KEY_SEED) */
	uint64_t soa;         /* its SOA RRset but for the serial (changes.c); 0: no SOA */
	uint8_t numbers[20];  /* serial, refresh, retry, expire, minimum; zeros: no SOA */
	uint32_t nsigs;       /* its RRSIGs; NONE: more than MAX_SOA_SIGS */
	uint64_t sigs;        /* their rdata, digested; 0: none */
	uint64_t kinds[MAX_SOA_SIGS];  /* each: algorithm << 32 | key tag << 16 | length, ascending */
	uint64_t chain;       /* chain_checked */
	uint32_t chain_at;    /* its NSEC3 chain's struct zb_chain in the denial region, or NONE */
	uint32_t spare;
};

/* A new serial of a zone, written over the old where a copied region holds its SOA. */
struct serial_patch {
	uint8_t old[20];      /* the SOA's numbers in the earlier build */
	uint8_t serial[4];    /* this build's serial */
};

/* A new signature over a zone's SOA, written over the earlier one by the same key (its
 * algorithm and tag, its signer the zone) where a copied region holds that one. */
struct sig_patch {
	uint64_t kind;        /* as state_zone's */
	uint32_t at;          /* its rdata in sig_octets */
	uint8_t signer[256];  /* the zone's origin, lowercased, in wire form */
	uint32_t signer_len;
};

/* The answers of a region a rebuild may have to write into where it copies the region
 * (struct sites): those holding an SOA or a signature over one (struct body's holds_soa),
 * for a new serial; and the aliases (struct zb_answer_alias), which name their target's
 * node by its place in the perfect hash, for a target's group placed again. */
enum site_kind { SITE_SOA, SITE_ALIAS, SITE_KINDS };

struct state_group {
	uint64_t keys;        /* the digest of its keys */
	uint32_t at, size;    /* its region in the blob */
	uint32_t nanswers;    /* the answers its region holds */
	uint32_t nsites[SITE_KINDS];  /* of them, those of each kind (struct sites) */
	uint32_t spare;
};

static const char *new_state, *old_state, *old_blob;
static uint64_t old_blob_at, old_blob_len;
static uint64_t global = 0x7a6f6e6562616b65ull;  /* reuse_reset sets it again */
static uint64_t early;  /* `global` when the manifest is read (reuse_early) */

/* The earlier build, mapped: its state and its blob. */
static struct {
	const struct state_head *head;
	const struct state_group *groups;
	const struct name_state *names;  /* theirs have no `name` */
	const struct state_zone *zones;
	uint32_t *zone_order;  /* the zones' indices by origin: a set may have 10,000 */
	const struct state_proof *proofs;
	const uint32_t *sites;    /* the groups' sites, in turn, each group's by kind */
	uint64_t *site_first;     /* per group and kind, its first of them; then their count */
	size_t state_len, blob_len;
	const uint8_t *blob;
	uint64_t blob_at;  /* where it lies in its file */
	int blob_fd;
	int state_fd;  /* the state's, for names_copy */
} before = {.blob_fd = -1, .state_fd = -1};

/* This build's: per group, the digest of its keys, whether it is reused; the layout's. */
static uint64_t *group_keys;
static uint8_t *reused;
static uint32_t ngroups;
static const struct phash *build_hash;  /* this build's perfect hash */
static const uint32_t *layout_at, *layout_size, *layout_answers;

void reuse_files(const char *state_out, const char *state_in, const char *blob_in,
		 uint64_t blob_at, uint64_t blob_len)
{
	new_state = state_out;
	old_state = *state_in ? state_in : NULL;
	old_blob = *blob_in ? blob_in : NULL;
	old_blob_at = blob_at;
	old_blob_len = blob_len;
}

int reuse_wanted(void)
{
	return new_state != NULL;
}

int reuse_has_earlier(void)
{
	return old_state != NULL && old_blob != NULL;
}

void reuse_decides(const void *data, size_t len)
{
	global = zb_hash(data, len, global);
}

static uint64_t table_digest(const uint8_t *blob, uint32_t groups_off, uint32_t n)
{
	return zb_hash(blob + groups_off, (size_t)n * sizeof(struct zb_group), 0x7461626c65);
}

/* The names' states as written, a chunk at a time (write_names: each chunk's `name` made 0),
 * digested in turn. */
#define NAMES_CHUNK 2048

static uint64_t names_digest(const struct name_state *names, size_t n, uint64_t seed)
{
	return bulk_digest(names, n * sizeof *names, seed);
}

static uint64_t all_names_digest(const struct name_state *names, size_t n)
{
	uint64_t digest = 0;
	for (size_t at = 0; at < n; at += NAMES_CHUNK)
		digest = names_digest(names + at, n - at < NAMES_CHUNK ? n - at : NAMES_CHUNK, digest);
	return digest;
}

/* A state's names (their digest, `names`), groups, zones, proofs' reads and sites, digested
 * in turn. */
static uint64_t content_digest(uint64_t names, const struct state_group *groups, size_t ngroups,
			       const struct state_zone *zones, size_t nzones,
			       const struct state_proof *proofs, size_t nproofs,
			       const uint32_t *sites, size_t nsites)
{
	uint64_t content = bulk_digest(groups, ngroups * sizeof *groups, names);
	content = bulk_digest(zones, nzones * sizeof *zones, content);
	if (nproofs)
		content = bulk_digest(proofs, nproofs * sizeof *proofs, content);
	return nsites ? bulk_digest(sites, nsites * sizeof *sites, content) : content;
}

static int by_origin(const void *a, const void *b)
{
	uint64_t x = before.zones[*(const uint32_t *)a].origin;
	uint64_t y = before.zones[*(const uint32_t *)b].origin;
	return (x > y) - (x < y);
}

/* The earlier build's state and blob mapped and whole, made by this core from this
 * manifest: 1, or 0. */
static int map_check(void)
{
	if (!old_state || !old_blob)
		return 0;
	before.head = map_file(old_state, &before.state_len, 0, &before.state_fd);
	before.blob_len = old_blob_len;  /* 0: the whole file */
	before.blob = map_range(old_blob, old_blob_at, &before.blob_len, 0, &before.blob_fd);
	before.blob_at = old_blob_at;
	const struct state_head *h = before.head;
	if (!h || !before.blob || before.state_len < sizeof *h ||
	    memcmp(h->magic, STATE_MAGIC, 8) != 0 || h->early != early ||
	    h->nnames > before.state_len / sizeof(struct name_state) ||
	    h->blob_size != before.blob_len ||
	    h->nzones > before.state_len / sizeof(struct state_zone) ||
	    h->ngroups > before.state_len / sizeof(struct state_group) ||
	    h->nproofs > before.state_len / sizeof(struct state_proof) ||
	    before.state_len < sizeof *h + h->ngroups * sizeof(struct state_group) +
			       h->nnames * sizeof(struct name_state) +
			       h->nzones * sizeof(struct state_zone) +
			       h->nproofs * sizeof(struct state_proof) ||
	    h->groups_off + (uint64_t)h->ngroups * sizeof(struct zb_group) > before.blob_len ||
	    h->denial_len > before.blob_len ||
	    table_digest(before.blob, h->groups_off, h->ngroups) != h->table_digest)
		return 0;
	before.names = (const void *)(h + 1);
	before.groups = (const void *)(before.names + h->nnames);
	before.zones = (const void *)(before.groups + h->ngroups);
	before.proofs = (const void *)(before.zones + h->nzones);
	before.sites = (const void *)(before.proofs + h->nproofs);
	size_t nlists = (size_t)h->ngroups * SITE_KINDS;
	uint64_t *first = before.site_first = xmalloc((nlists + 1) * sizeof *first);
	first[0] = 0;
	for (size_t l = 0; l < nlists; l++)
		first[l + 1] = first[l] + before.groups[l / SITE_KINDS].nsites[l % SITE_KINDS];
	size_t nsites = first[nlists];
	if (nsites * sizeof *before.sites !=
	    before.state_len - (size_t)((const uint8_t *)before.sites - (const uint8_t *)h) ||
	    content_digest(all_names_digest(before.names, h->nnames), before.groups, h->ngroups,
			   before.zones, h->nzones, before.proofs, h->nproofs, before.sites,
			   nsites) != h->content)
		return 0;
	for (uint32_t g = 0; g < h->ngroups; g++) {  /* every region it names lies in the blob */
		if ((uint64_t)before.groups[g].at + before.groups[g].size > before.blob_len)
			return 0;
		for (uint64_t k = first[g * SITE_KINDS]; k < first[(g + 1) * SITE_KINDS]; k++)
			if (before.sites[k] >= before.groups[g].size)
				return 0;
	}
	before.zone_order = xmalloc((h->nzones ? h->nzones : 1) * sizeof *before.zone_order);
	for (uint32_t z = 0; z < h->nzones; z++)
		before.zone_order[z] = z;
	qsort(before.zone_order, h->nzones, sizeof *before.zone_order, by_origin);
	return 1;
}

/* The earlier build's entry of the zone of ORIGIN (origin_digest), or NULL. */
static const struct state_zone *earlier_zone(uint64_t origin)
{
	size_t lo = 0, hi = before.head->nzones;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at = before.zones[before.zone_order[mid]].origin;
		if (at == origin)
			return &before.zones[before.zone_order[mid]];
		if (at < origin)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* map_check's answer, worked out once on a thread of its own from reuse_early on: digesting
 * a million names' states takes 9 ms, which the image's reading, needing none of it, runs
 * beside. Whatever reads it or `before` waits for that thread first (checked), on whichever
 * thread it runs (check_chains runs on one of its own). */
static int mapped = -1;
static struct beside checking;
static pthread_mutex_t checking_lock = PTHREAD_MUTEX_INITIALIZER;

static void *map_before(void *unused)
{
	(void)unused;
	mapped = map_check();
	return NULL;
}

static int checked(void)
{
	pthread_mutex_lock(&checking_lock);
	join_beside(&checking);
	pthread_mutex_unlock(&checking_lock);
	return mapped;
}

/* ...and made with this build's settings: 1, or 0 (a full build). */
static int load_before(void)
{
	return checked() == 1 && before.head->global == global;
}

/* The earlier build's sites of a kind in group g's region (struct sites). */
static const uint32_t *earlier_sites(uint32_t g, enum site_kind kind, size_t *n)
{
	size_t l = (size_t)g * SITE_KINDS + kind;
	*n = before.site_first[l + 1] - before.site_first[l];
	return before.sites + before.site_first[l];
}

static uint64_t origin_digest(uint32_t z)
{
	uint8_t key[256];
	return zb_hash(key, name_key(zones.v[z].origin, key), KEY_SEED);
}

uint64_t reuse_early_digest(void)
{
	return early;
}

static uint64_t written_content;  /* write_state's */

uint64_t reuse_earlier_content(void)
{
	return checked() == 1 ? before.head->content : 0;
}

uint64_t reuse_state_written(void)
{
	return written_content;
}

void reuse_early(void)
{
	early = global;
	start_beside(&checking, map_before, NULL);
}

uint32_t reuse_earlier_chain_at(uint32_t zone)
{
	const struct state_zone *was = checked() == 1 ? earlier_zone(origin_digest(zone)) : NULL;
	return was ? was->chain_at : NONE;
}

uint64_t reuse_earlier_chain(uint32_t zone)
{
	if (checked() != 1)
		return 0;
	const struct state_zone *was = earlier_zone(origin_digest(zone));
	return was ? was->chain : 0;
}

/* This build's zones' entries, taken before the records are let go (after the answers). */
static struct state_zone *zone_entries;

/* An RRSIG's rdata (RFC 4034 §3.1: type covered, algorithm, labels, original TTL,
 * expiration, inception, key tag, then the signer's name, uncompressed): what it is. */
#define SIG_SIGNER 18
static uint64_t sig_kind(const uint8_t *rdata, size_t len)
{
	return (uint64_t)rdata[2] << 32 | (uint64_t)(rdata[16] << 8 | rdata[17]) << 16 | len;
}

static struct state_zone this_zone(uint32_t z)
{
	struct state_zone sz = {0};
	sz.chain_at = NONE;  /* known once the denial region is made: write_state */
	sz.origin = origin_digest(z);
	sz.chain = chain_checked(z);
	sz.soa = soa_state(z);
	if (zones.v[z].soa == NONE)
		return sz;
	const struct rrset *soa = &rrsets.v[zones.v[z].soa];
	const struct rdata *rd = &rdatas.v[soa->first];
	if (rd->raw_len == sizeof sz.numbers)
		memcpy(sz.numbers, rdata_raw.v + rd->raw, sizeof sz.numbers);
	for (uint32_t r = soa->sigs == NONE ? NONE : rrsets.v[soa->sigs].first; r != NONE;
	     r = rdatas.v[r].next) {
		const uint8_t *raw = rdata_raw.v + rdatas.v[r].raw;
		size_t len = rdatas.v[r].raw_len;
		sz.sigs = mix64(sz.sigs ^ zb_hash(raw, len, 0x736f61736967)) | 1;
		if (sz.nsigs == NONE || sz.nsigs == MAX_SOA_SIGS || len <= SIG_SIGNER) {
			sz.nsigs = NONE;
			continue;
		}
		uint64_t kind = sig_kind(raw, len);
		uint32_t at = sz.nsigs++;
		for (; at > 0 && sz.kinds[at - 1] > kind; at--)
			sz.kinds[at] = sz.kinds[at - 1];
		sz.kinds[at] = kind;
	}
	return sz;
}

/* The names' states written into the new state file beside the rest of the build, as soon
 * as they are made: tens of megabytes at a million names, whose new pages in the page cache
 * took up to 60 ms to come by at the end of a rebuild here. The head, the groups and the
 * zones follow once the layout is done (write_state). */
static struct {
	struct beside thread;
	int fd, failed;
	uint64_t digest;
} names_out = {.fd = -1};

static void *write_names(void *arg)
{
	(void)arg;
	struct name_state chunk[NAMES_CHUNK];
	uint64_t at = sizeof(struct state_head), digest = 0;
	for (size_t i = 0; i < name_states.n && !names_out.failed; i += NAMES_CHUNK) {
		size_t n = name_states.n - i < NAMES_CHUNK ? name_states.n - i : NAMES_CHUNK;
		memcpy(chunk, name_states.v + i, n * sizeof *chunk);
		/* This build's number for each name: nothing to the next. */
		for (size_t k = 0; k < n; k++)
			chunk[k].name = 0;
		digest = names_digest(chunk, n, digest);
		names_out.failed = put_at(names_out.fd, chunk, n * sizeof *chunk, at) != 0;
		at += n * sizeof *chunk;
	}
	names_out.digest = digest;
	return NULL;
}

static void start_writing_names(void)
{
	if (!new_state)
		return;
	names_out.fd = open(new_state, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (names_out.fd < 0)
		fail("cannot create %s", new_state);
	names_out.failed = 0;
	start_beside(&names_out.thread, write_names, NULL);
}

/* Once the names' states are written (or given up): their file, or -1. */
static int names_written(void)
{
	if (names_out.fd >= 0)
		join_beside(&names_out.thread);
	return names_out.fd;
}

/* The earlier state's names in a mapping of their own, copied on write, of the file that
 * was checked (its descriptor kept): what patch_name_states patches in place where this
 * build's names are the earlier build's. None where it cannot be mapped. */
static struct states_copy names_copy(void)
{
	size_t page = sysconf(_SC_PAGESIZE);
	uint64_t at = (const uint8_t *)before.names - (const uint8_t *)before.head;
	uint64_t from = at / page * page;
	struct states_copy c = {.len = at - from + before.head->nnames * sizeof *before.names};
	c.base = before.state_fd >= 0 && before.head->nnames ?
		mmap(NULL, c.len, PROT_READ | PROT_WRITE, MAP_PRIVATE, before.state_fd, (off_t)from) :
		MAP_FAILED;
	if (c.base == MAP_FAILED)
		return (struct states_copy){0};
	c.v = (void *)((uint8_t *)c.base + (at - from));
	return c;
}

/* A signed zone of the set has a DNAME (reuse_prepare). */
static int signed_dname;

int reuse_prepare(const name_t *changed, size_t nchanged)
{
	int unique = changed ? patch_name_states(before.names, before.head->nnames, changed,
						 nchanged, names_copy())
			     : compute_name_states();
	free(zone_entries);
	zone_entries = xmalloc((zones.n ? zones.n : 1) * sizeof *zone_entries);
	signed_dname = 0;
	for (uint32_t z = 0; z < zones.n; z++) {
		zone_entries[z] = this_zone(z);
		struct zone *zone = &zones.v[z];
		uint32_t settings[3] = {z, zone->unused_qtype, chain_kind(z) || zone->sign};
		reuse_decides(settings, sizeof settings);
		reuse_decides(zone->types.v, zone->types.n * sizeof *zone->types.v);
		/* A DNAME's images (dname.c) answer with what lies below its target, through
		 * CNAMEs no zone file holds: changes_reach follows them. In a signed zone their
		 * denials are the responder's, from its denial region's image entries
		 * (denialdata.c), which proofuse.c does not follow: regions are copied only
		 * while the region is the earlier one (reuse_plan). */
		signed_dname |= types_has(&zone->types, T_DNAME) && settings[2];
	}
	start_writing_names();
	return unique && load_before();
}

/* Per group, its keys' digest (phash.c's, under its seed): the state's. */
void reuse_group_digests(const struct phash *ph)
{
	build_hash = ph;
	ngroups = ph->ngroups;
	free(group_keys);
	group_keys = xmalloc((ngroups ? ngroups : 1) * sizeof *group_keys);
	memcpy(group_keys, ph->digests, ngroups * sizeof *group_keys);
}

/* Group g's entry in the earlier blob's table of groups. */
static const struct zb_group *group_before(uint32_t g)
{
	return (const void *)(before.blob + before.head->groups_off + (size_t)g *
			      sizeof(struct zb_group));
}

/* For phash.c, on the thread beside the names' states (what it reads was mapped and checked
 * before it started: compile.c asks reuse_earlier_content first): group g as the earlier
 * build placed it, from its table and its region's pilots, where its seed and its keys'
 * digest were these. */
int reuse_phash_before(uint32_t g, uint64_t seed, uint64_t digest, struct phash_before *out)
{
	if (mapped != 1 || seed != before.head->seed || g >= before.head->ngroups ||
	    before.groups[g].keys != digest)
		return 0;
	struct zb_group e;
	memcpy(&e, before.blob + before.head->groups_off + (size_t)g * sizeof e, sizeof e);
	uint64_t pilots = 2ull * e.nbuckets;  /* they end where the nodes begin (layout.c) */
	if (e.nslots == 0 || e.nodes_off > before.blob_len || pilots > e.nodes_off)
		return 0;
	*out = (struct phash_before){.nslots = e.nslots, .nbuckets = e.nbuckets,
				     .pilots = before.blob + e.nodes_off - pilots};
	return 1;
}

static VEC(struct serial_patch) patches;
/* Per zone: 1 where its new serial is not patched in, its SOA numbers held by another zone
 * before or now: what holds its SOA is laid out again. */
static uint8_t *soa_relaid;
static VEC(struct sig_patch) sig_patches;
static bytes_t sig_octets;
static uint32_t runs;  /* nodes a slot: 2 when a zone is signed, each with its DO twin */

/* A signed zone's new signatures over its SOA, to patch in: 0 where they cannot take the
 * old ones' places one for one (another key, another length, a key tag twice). */
static int plan_signatures(uint32_t z, const struct state_zone *was,
			   const struct state_zone *now)
{
	if (was->nsigs != now->nsigs || now->nsigs == NONE ||
	    memcmp(was->kinds, now->kinds, sizeof now->kinds) != 0)
		return 0;
	for (uint32_t k = 1; k < now->nsigs; k++)
		if (now->kinds[k] == now->kinds[k - 1])
			return 0;
	const struct rrset *soa = &rrsets.v[zones.v[z].soa];
	for (uint32_t r = rrsets.v[soa->sigs].first; r != NONE; r = rdatas.v[r].next) {
		struct sig_patch p = {.at = sig_octets.n};
		const struct rdata *rd = &rdatas.v[r];
		p.kind = sig_kind(rdata_raw.v + rd->raw, rd->raw_len);
		p.signer_len = name_key(zones.v[z].origin, p.signer);
		bytes_put(&sig_octets, rdata_raw.v + rd->raw, rd->raw_len);
		PUSH(sig_patches, p);
	}
	return 1;
}

/* The SOA numbers of a set's zones, sorted: told apart among thousands of zones without
 * comparing each pair. */
struct numbers {
	uint8_t n[20];
};

static int by_numbers(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct numbers));
}

static struct numbers *sorted_numbers(const struct state_zone *v, size_t n)
{
	struct numbers *s = xmalloc((n ? n : 1) * sizeof *s);
	for (size_t i = 0; i < n; i++)
		memcpy(s[i].n, v[i].numbers, sizeof s[i].n);
	qsort(s, n, sizeof *s, by_numbers);
	return s;
}

/* Whether `key` is the numbers of more than one of the `n` sorted. */
static int held_twice(const struct numbers *s, size_t n, const uint8_t *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (memcmp(s[mid].n, key, sizeof s[mid].n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1 < n && !memcmp(s[lo + 1].n, key, sizeof s[lo].n);
}

/* The zones whose serial alone changed at their apex (their names' states leave it out):
 * their new serial, to patch in, and in a signed zone its SOA's new signatures; 0 where
 * those cannot take the old ones' places (a full build). A serial is patched only where the
 * old numbers are one zone's, or a body holding another zone's alike would be patched too,
 * and the new ones too, or the two zones' bodies are alike now, which a region shares
 * (sharing.c) where the copy holds both apart (a hoster's zones made from one template, at
 * one serial). Else, and where the SOA changed otherwise (every negative answer holds it),
 * the zone is in soa_relaid: each group holding its SOA is laid out again (reuse_plan). */
static int plan_serials(void)
{
	patches.n = sig_patches.n = sig_octets.n = 0;
	free(soa_relaid);
	soa_relaid = xcalloc(zones.n ? zones.n : 1, 1);
	struct numbers *old_sorted = NULL, *new_sorted = NULL;  /* once a serial changed */
	int ok = 1;
	for (uint32_t z = 0; ok && z < zones.n; z++) {
		struct state_zone now = zone_entries[z];
		const struct state_zone *was = earlier_zone(now.origin);
		if (!was)
			continue;
		if (was->soa != now.soa) {
			/* Its timers, names or TTL (in the digest: alike past here): every answer
			 * holding the SOA is made again. */
			soa_relaid[z] = 1;
		} else if (was->sigs != now.sigs && !plan_signatures(z, was, &now)) {
			ok = 0;
		} else if (memcmp(was->numbers, now.numbers, 4)) {
			if (!old_sorted) {
				old_sorted = sorted_numbers(before.zones, before.head->nzones);
				new_sorted = sorted_numbers(zone_entries, zones.n);
			}
			struct serial_patch p;
			memcpy(p.old, was->numbers, sizeof p.old);
			memcpy(p.serial, now.numbers, sizeof p.serial);
			if (held_twice(old_sorted, before.head->nzones, was->numbers) ||
			    held_twice(new_sorted, zones.n, now.numbers))
				soa_relaid[z] = 1;
			else
				PUSH(patches, p);
		}
	}
	free(old_sorted);
	free(new_sorted);
	return ok;
}

/* Whether the denial region is the earlier build's, octet for octet: then so is every
 * proof a copied region holds (an NSEC3 entry's key or its offset; an NSEC record whole)
 * and the place of the tables after it. It is made ahead of the answers, which would make
 * it the same: beside the names' states (compile.c), else here; *base: where it goes. */
static int same_denial(uint32_t *base)
{
	*base = 0;
	if (!any_chain())
		return before.head->denial_len == 0;
	build_denial_region();
	uint64_t at = *base = place_denial_region(), n = denial_region.n;
	return n == before.head->denial_len && at + n <= before.blob_len &&
	       memcmp(before.blob + at, denial_region.v, n) == 0;
}

/* Where a chain changed (a name or a type come or gone, an entry signed again): per group,
 * whether a proof its region holds reads otherwise now (proofuse.c); NULL where that cannot
 * be told, an NSEC chain's, or a chain gone or placed elsewhere: a full build. */
static uint8_t *changed_denial(uint32_t base)
{
	if (!base)
		return NULL;
	return proofs_unstable(before.proofs, before.head->nproofs, before.blob, before.blob_len,
			       before.head->denial_len, base, ngroups);
}

/* ---- a new serial, and new signatures over an SOA, into a copied region ---- */

struct region_patch {
	uint64_t from, to;  /* the region in the earlier blob */
	uint8_t *dest;      /* where it lies now */
};

/* An RRSIG over an SOA, its rdata from `at` to `end` in a body: the new signature by the same
 * key over the same zone's SOA in its place. */
static void patch_signature(const struct region_patch *rp, int64_t body, const uint8_t *b,
			    size_t at, size_t end)
{
	size_t len = end - at;
	if (len <= SIG_SIGNER || (b[at] << 8 | b[at + 1]) != T_SOA)
		return;
	uint64_t kind = sig_kind(b + at, len);
	size_t signer_end = body_name_end(b, end, at + SIG_SIGNER);
	for (size_t p = 0; signer_end && p < sig_patches.n; p++) {
		const struct sig_patch *s = &sig_patches.v[p];
		if (s->kind == kind && signer_end - (at + SIG_SIGNER) == s->signer_len &&
		    wire_is_key(b + at + SIG_SIGNER, s->signer, s->signer_len))
			memcpy(rp->dest + (body - rp->from) + at, sig_octets.v + s->at, len);
	}
}

/* Each SOA among an answer's records whose numbers a patch names gets the new serial, each
 * signature over one the new signature. */
static void patch_answer(const struct region_patch *rp, uint64_t answer)
{
	if (answer < rp->from || answer + sizeof(struct zb_answer) > rp->to)
		return;
	const struct zb_answer *a = (const void *)(before.blob + answer);
	int64_t body = (int64_t)answer + a->body_off;
	if (body < (int64_t)rp->from || (uint64_t)body + a->body_len > rp->to)
		return;
	const uint8_t *b = before.blob + body;
	size_t len = a->body_len;
	for (size_t at = 0, end; (end = body_record_end(b, len, at)) != 0; at = end) {
		size_t fixed = body_name_end(b, len, at);  /* TYPE: the record ends past it */
		uint16_t type = b[fixed] << 8 | b[fixed + 1];
		if (type == T_RRSIG && sig_patches.n)
			patch_signature(rp, body, b, fixed + 10, end);
		if (type != T_SOA)
			continue;
		size_t numbers = body_name_end(b, end, fixed + 10);  /* MNAME, RNAME */
		numbers = numbers ? body_name_end(b, end, numbers) : 0;
		for (size_t p = 0; numbers && numbers + 20 == end && p < patches.n; p++)
			if (!memcmp(b + numbers, patches.v[p].old, 20))
				memcpy(rp->dest + (body - rp->from) + numbers, patches.v[p].serial, 4);
	}
}

/* ---- aliases whose target was placed again ---- */

/* An alias (struct zb_answer_alias) of a copied region names its target's node by its group
 * and its place there; where the target's group was placed again, both as this build has
 * them are written over the earlier ones: what a full build writes, the region otherwise the
 * same. */
struct alias_patch {
	uint64_t at;             /* the struct zb_answer_alias in the earlier blob */
	uint32_t group, node;
};
static VEC(struct alias_patch) alias_patches;  /* by group, each group's by `at` */
static uint32_t *alias_first;  /* per group, its first in alias_patches; then the count */

/* Where this build puts the node an earlier build's alias named (its group, and its node's
 * octets from the group's nodes_off): 1 and *group, *node, or 0 where that is not a slot's
 * node whose name this build's hash holds. */
static int placed_again(const struct phash *ph, uint32_t og, uint32_t onode, uint32_t *group,
			uint32_t *node)
{
	uint32_t node_size = sizeof(struct zb_node) * runs, twin = onode % node_size;
	if (og >= before.head->ngroups || twin % sizeof(struct zb_node))
		return 0;
	const struct zb_group *e = group_before(og);
	uint64_t at = e->nodes_off + (uint64_t)(onode - twin);
	if ((onode - twin) / node_size >= e->nslots || at + sizeof(struct zb_node) > before.blob_len)
		return 0;
	const struct zb_node *n = (const void *)(before.blob + at);
	if (!n->name_len || at + n->name_off + n->name_len > before.blob_len)
		return 0;
	const uint8_t *name = before.blob + at + n->name_off;
	uint32_t slot = phash_slot(ph, name, n->name_len, group);
	uint32_t i = ph->slots[ph->groups[*group].first_slot + slot];
	uint8_t key[256];
	if (i == NONE || name_key(nodes.v[i], key) != n->name_len ||
	    memcmp(key, name, n->name_len) != 0)
		return 0;
	*node = slot * node_size + twin;
	return 1;
}

struct alias_walk {
	const struct phash *ph;
	const uint8_t *moved;  /* per group of this build: placed again (reuse_plan) */
	uint64_t from, to;  /* the region in the earlier blob */
	size_t first;       /* its first in alias_patches */
	int ok;
};

static void alias_of_answer(struct alias_walk *w, uint64_t answer)
{
	if (!w->ok || answer < w->from || answer + sizeof(struct zb_answer) > w->to)
		return;
	const struct zb_answer *a = (const void *)(before.blob + answer);
	if (!a->dname_split || a->dname_owner_len)
		return;  /* not an alias's */
	uint64_t at = answer + (int64_t)a->overflow;
	if (at < w->from || at + sizeof(struct zb_answer_alias) > w->to) {
		w->ok = 0;
		return;
	}
	for (size_t k = w->first; k < alias_patches.n; k++)
		if (alias_patches.v[k].at == at)
			return;  /* another type's answer is the same */
	const struct zb_answer_alias *alias = (const void *)(before.blob + at);
	if (alias->group < w->ph->ngroups && !w->moved[alias->group])
		return;  /* its target's group has the same keys, so the same slots (phash.c) */
	struct alias_patch patch = {.at = at};
	if (!placed_again(w->ph, alias->group, alias->node, &patch.group, &patch.node))
		w->ok = 0;
	else if (patch.group != alias->group || patch.node != alias->node)
		PUSH(alias_patches, patch);
}

/* Group g's aliases to be written again, after those of the groups before it: 1, or 0 where
 * one cannot be (its target is not a slot's node of this build's hash). */
static int plan_alias_patches(const struct phash *ph, const uint8_t *moved, uint32_t g)
{
	struct alias_walk w = {ph, moved, before.groups[g].at,
			       (uint64_t)before.groups[g].at + before.groups[g].size,
			       alias_patches.n, 1};
	size_t n;
	const uint32_t *site = earlier_sites(g, SITE_ALIAS, &n);
	for (size_t k = 0; k < n; k++)
		alias_of_answer(&w, w.from + site[k]);
	if (!w.ok)
		alias_patches.n = w.first;
	return w.ok;
}

void reuse_patch(uint32_t g, uint8_t *dest)
{
	uint64_t from = before.groups[g].at;
	for (uint32_t k = alias_first ? alias_first[g] : 0;
	     alias_first && k < alias_first[g + 1]; k++) {
		const struct alias_patch *p = &alias_patches.v[k];
		struct zb_answer_alias *alias = (void *)(dest + (p->at - from));
		alias->group = p->group;
		alias->node = p->node;
	}
	if (!patches.n && !sig_patches.n)
		return;
	struct region_patch rp = {from, from + before.groups[g].size, dest};
	size_t n;
	const uint32_t *site = earlier_sites(g, SITE_SOA, &n);
	for (size_t k = 0; k < n; k++)
		patch_answer(&rp, from + site[k]);
}

static int aliases(name_t owner, name_t target)
{
	for (uint32_t z = 0; z < zones.n; z++) {
		if (!in_zone(z, owner))
			continue;
		uint32_t cname = rrset_in(z, owner, T_CNAME);
		if (cname != NONE && rdatas.v[rrsets.v[cname].first].name == target)
			return 1;
	}
	return 0;
}

uint8_t *reuse_plan(const struct phash *ph, size_t *reached_names, uint32_t *groups_reused)
{
	*reached_names = 0;
	*groups_reused = 0;
	runs = any_chain() ? 2 : 1;
	uint32_t base;
	uint8_t *unstable = NULL;
	if (ph->seed != before.head->seed || !plan_serials() ||
	    (!same_denial(&base) && (signed_dname || !(unstable = changed_denial(base)))))
		return NULL;
	uint8_t *reached = changes_reach(before.names, before.head->nnames, reached_names);
	int any_relaid = memchr(soa_relaid, 1, zones.n ? zones.n : 1) != NULL;
	uint32_t *group_of = xmalloc((names.n ? names.n : 1) * sizeof *group_of);
	memset(group_of, 0xFF, (names.n ? names.n : 1) * sizeof *group_of);
	reused = xmalloc(ngroups ? ngroups : 1);
	uint8_t *moved = xmalloc(ngroups ? ngroups : 1);
	for (uint32_t g = 0; g < ngroups; g++) {
		moved[g] = g >= before.head->ngroups || before.groups[g].keys != group_keys[g];
		reused[g] = !moved[g] && !(unstable && unstable[g]);
		/* Its keys, by the groups the hash put them in: a group's slots may not be worked
		 * out yet (phash.c's phash_place). */
		for (uint32_t k = ph->member_start[g]; k < ph->member_start[g + 1]; k++) {
			uint32_t i = ph->members[k];
			name_t name = nodes.v[i];
			group_of[name] = g;
			if (reached[name])
				reused[g] = 0;
			if (!any_relaid)  /* the name's own entry: a random read of megabytes */
				continue;
			uint32_t zone = N(name)->zone;
			if (zone < zones.n && soa_relaid[zone])
				reused[g] = 0;
			/* A served child's apex answers DS from its parent (answers.c's parent_ds):
			 * its negative answers hold the parent's SOA. */
			uint32_t parent = delegating_zone(name);
			if (parent != NONE && soa_relaid[parent])
				reused[g] = 0;
		}
	}
	/* An alias names its target's node by its slot: where the target's group was placed
	 * again (phash.c moves most of its keys then), each copied region with an alias of a
	 * name of it gets the target's new place written in (reuse_patch), or is laid out
	 * again where that cannot be. */
	uint8_t *retarget = xcalloc(ngroups ? ngroups : 1, 1);
	for (uint32_t g = 0; g < ngroups; g++) {
		const struct phash_group *pg = &ph->groups[g];
		for (uint32_t s = 0; moved[g] && s < pg->nslots; s++) {
			uint32_t i = ph->slots[pg->first_slot + s];
			const uint32_t *k, *end;
			if (i == NONE)
				continue;
			for (int part = 0; part < 2; part++)
				for (names_named_by(nodes.v[i], part, &k, &end); k < end; k++)
					if (group_of[*k] != NONE && aliases(*k, nodes.v[i]))
						retarget[group_of[*k]] = 1;
		}
	}
	alias_first = xcalloc(ngroups + 1, sizeof *alias_first);
	for (uint32_t g = 0; g < ngroups; g++) {
		alias_first[g] = alias_patches.n;
		if (reused[g] && retarget[g] && !plan_alias_patches(ph, moved, g))
			reused[g] = 0;
	}
	alias_first[ngroups] = alias_patches.n;
	free(retarget);
	/* Answers are made for the nodes of the groups laid out, and for every wildcard: a
	 * node below which a wildcard answers holds a copy of its answers (layout.c). */
	uint8_t *make = xmalloc(nodes.n ? nodes.n : 1);
	for (uint32_t i = 0; i < nodes.n; i++) {
		uint32_t g = group_of[nodes.v[i]];
		make[i] = g == NONE || !reused[g] || name_is_wildcard(nodes.v[i]);
	}
	for (uint32_t g = 0; g < ngroups; g++)
		*groups_reused += reused[g];

	free(group_of);
	free(moved);
	free(reached);
	free(unstable);
	return make;
}

uint32_t reused_region(uint32_t g, const uint8_t **octets, uint32_t *nanswers)
{
	if (!reused || !reused[g])
		return NONE;
	*octets = before.blob + before.groups[g].at;
	*nanswers = before.groups[g].nanswers;
	return before.groups[g].size;
}

int reused_file(uint32_t g, int *fd, int64_t *at)
{
	if (!reused || !reused[g] || before.blob_fd < 0)
		return 0;
	*fd = before.blob_fd;
	*at = before.blob_at + before.groups[g].at;
	return 1;
}

/* Per group of this build and kind of site, the answers of its region of that kind, each's
 * offset from the region's start: the earlier build's for a region copied, for one laid out
 * those reuse_site was told. A rebuild patches these instead of reading every answer of
 * every region it copies: an SOA is in a few answers of each region, and walking them all
 * took a tenth of a second at a million names; a group placed again is named by the aliases
 * of a few names in each of dozens of regions. */
struct sites {
	uint32_t *v;
	size_t n, cap;
};
static struct sites (*layout_sites)[SITE_KINDS];
static uint32_t nlayout_sites;  /* layout_sites' groups */

static void free_layout_sites(void)
{
	for (uint32_t g = 0; layout_sites && g < nlayout_sites; g++)
		for (int k = 0; k < SITE_KINDS; k++)
			free(layout_sites[g][k].v);
	free(layout_sites);
	layout_sites = NULL;
	nlayout_sites = 0;
}

void reuse_layout(const uint32_t *at, const uint32_t *size, const uint32_t *nanswers,
		  uint32_t groups)
{
	layout_at = at;
	layout_size = size;
	layout_answers = nanswers;
	free_layout_sites();
	layout_sites = xcalloc(groups ? groups : 1, sizeof *layout_sites);
	nlayout_sites = groups;
}

void reuse_site(uint32_t g, uint32_t at, const struct body *b)
{
	if (b->holds_soa)
		PUSH(layout_sites[g][SITE_SOA], at);
	if (body_is_alias(b))
		PUSH(layout_sites[g][SITE_ALIAS], at);
}

/* Group g's sites of a kind as this build's state has them. */
static const uint32_t *sites_of(uint32_t g, enum site_kind kind, size_t *n)
{
	if (reused && reused[g])
		return earlier_sites(g, kind, n);
	*n = g < nlayout_sites ? layout_sites[g][kind].n : 0;
	return g < nlayout_sites ? layout_sites[g][kind].v : NULL;
}

void write_state(const uint8_t *blob, uint64_t blob_len, uint32_t groups_off, uint64_t seed)
{
	if (!new_state)
		return;
	struct state_head h = {.global = global, .early = early, .seed = seed,
			       .blob_size = blob_len, .table_digest = table_digest(blob, groups_off, ngroups),
			       .ngroups = ngroups, .groups_off = groups_off,
			       .nnames = name_states.n, .denial_len = denial_region.n};
	memcpy(h.magic, STATE_MAGIC, 8);
	struct state_group *groups = xcalloc(ngroups ? ngroups : 1, sizeof *groups);
	VEC(uint32_t) sites = {0};
	for (uint32_t g = 0; g < ngroups; g++) {
		groups[g] = (struct state_group){.keys = group_keys[g], .at = layout_at[g],
						 .size = layout_size[g],
						 .nanswers = layout_answers[g]};
		for (int kind = 0; kind < SITE_KINDS; kind++) {
			size_t n;
			const uint32_t *v = sites_of(g, kind, &n);
			groups[g].nsites[kind] = n;
			RESERVE(sites, n);
			if (n)
				memcpy(sites.v + sites.n, v, n * sizeof *v);
			sites.n += n;
		}
	}
	int fd = names_written();
	if (fd < 0 || names_out.failed)
		fail("cannot write %s", new_state);
	h.nzones = zones.n;
	for (uint32_t z = 0; z < zones.n; z++)
		zone_entries[z].chain_at = chain_kind(z) == T_NSEC3 ? denial_chain_at(z) : NONE;
	/* The proofs' reads: the earlier build's of the regions copied, this build's of the
	 * others. */
	size_t nproofs = 0;
	struct state_proof *proofs = !proofs_logged() ? NULL :
		proofs_for_state(reused ? before.proofs : NULL, reused ? before.head->nproofs : 0,
				 reused, ngroups, build_hash, &nproofs);
	h.nproofs = nproofs;
	h.content = content_digest(names_out.digest, groups, ngroups, zone_entries, zones.n,
				   proofs, nproofs, sites.v, sites.n);
	uint64_t at = sizeof h + name_states.n * sizeof *name_states.v;
	uint64_t proofs_at = at + ngroups * sizeof *groups + zones.n * sizeof *zone_entries;
	uint64_t sites_at = proofs_at + nproofs * sizeof *proofs;
	if (put_at(fd, groups, ngroups * sizeof *groups, at) != 0 ||
	    put_at(fd, zone_entries, zones.n * sizeof *zone_entries,
		   at + ngroups * sizeof *groups) != 0 ||
	    put_at(fd, proofs, nproofs * sizeof *proofs, proofs_at) != 0 ||
	    put_at(fd, sites.v, sites.n * sizeof *sites.v, sites_at) != 0 ||
	    put_at(fd, &h, sizeof h, 0) != 0 || close(fd) != 0)
		fail("cannot write %s", new_state);
	names_out.fd = -1;
	free(groups);
	free(proofs);
	VEC_FREE(sites);
	written_content = h.content;
}

void reuse_reset(void)
{
	checked();
	if (names_written() >= 0)
		close(names_out.fd);
	names_out.fd = -1;
	if (before.head)
		munmap((void *)before.head, before.state_len);
	if (before.blob)
		munmap((void *)before.blob, before.blob_len);
	if (before.blob_fd >= 0)
		close(before.blob_fd);
	if (before.state_fd >= 0)
		close(before.state_fd);
	free(before.site_first);
	free(before.zone_order);
	memset(&before, 0, sizeof before);
	before.blob_fd = before.state_fd = -1;
	free_layout_sites();
	free(group_keys);
	free(reused);
	proofs_reset();
	build_hash = NULL;
	VEC_FREE(patches);
	free(soa_relaid);
	soa_relaid = NULL;
	VEC_FREE(sig_patches);
	VEC_FREE(alias_patches);
	free(alias_first);
	alias_first = NULL;
	bytes_release(&sig_octets);
	free(zone_entries);
	zone_entries = NULL;
	group_keys = NULL;
	written_content = 0;
	reused = NULL;
	new_state = old_state = old_blob = NULL;
	old_blob_at = old_blob_len = 0;
	global = 0x7a6f6e6562616b65ull;
	early = 0;
	mapped = -1;
}
