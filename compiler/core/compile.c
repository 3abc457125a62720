/*
 * compile.c - the compile of a zone set once its zones are listed (main.c lists them from the
 * manifest): each zone read, checked and signed, then the tree, the denial chains and their
 * checks, every answer, the perfect hash and the plan of the layout, which write_layout then
 * writes. And, for a caller that compiles more than once in one process (tests/fuzz), the
 * memory of a compile given back, however far it went.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"

static size_t chain_links(void)
{
	size_t links = 0;
	for (uint32_t z = 0; z < zones.n; z++)
		links += chain_length(z);
	return links;
}

static void *check_chains_aside(void *seconds)
{
	double start = clock_seconds();
	diagnostics_aside(1);
	check_chains();
	diagnostics_aside(0);
	*(double *)seconds = clock_seconds() - start;
	return NULL;
}

/* The chains are checked on a thread of their own while this one checks the signatures:
 * both only read the records, and the signatures' cache keys (a SHA-256 of each signed
 * RRset) take the longer. Their diagnostics come out as if one ran after the other. */
static void check_chains_and_signatures(const struct signature_check *signatures)
{
	size_t mark = diagnostics_mark(), to_verify, in_cache;
	double chains_took;
	struct beside chains;
	start_beside(&chains, check_chains_aside, &chains_took);
	check_signatures(signatures, &to_verify, &in_cache);
	join_beside(&chains);
	diagnostics_put_back(mark);
	phase_took("chains (beside the signatures)", chains_took, chain_links(), "records");
	/* The driver verifies them while the answers are made. */
	if (diagnostics_errors() == 0 && !core_quiet) {
		fprintf(stderr, "signatures %zu %zu\n", to_verify, in_cache);
		fflush(stderr);
	}
}

/* The hash keys of the nodes `need` says (NULL: every node), each its lowercased wire-format
 * name at key_off; the others' empty. */
static void make_keys(struct compiled *job, const uint8_t *need)
{
	job->keys.n = 0;
	job->key_off = xrealloc(job->key_off, (nodes.n + 1) * sizeof *job->key_off);
	for (size_t i = 0; i < nodes.n; i++) {
		job->key_off[i] = job->keys.n;
		if (need && !need[i])
			continue;
		RESERVE(job->keys, 256);
		job->keys.n += name_key(nodes.v[i], job->keys.v + job->keys.n);
	}
	job->key_off[nodes.n] = job->keys.n;
	job->keys_made = 1;
}

/* The perfect hash over the nodes' names. Over an image (image.c) it is made from the hashes
 * the image keeps: the keys are made after, only for the groups the layout writes. */
static void *hash_names(void *arg)
{
	struct compiled *job = arg;
	uint64_t *hashes = job->node_hashes;
	job->node_hashes = NULL;  /* taken over */
	if (hashes)
		hashes = xrealloc(hashes, (nodes.n ? nodes.n : 1) * sizeof *hashes);
	for (size_t i = job->gathered; i < nodes.n; i++) {
		name_t id = nodes.v[i];
		if (N(id)->nlabels > job->max_labels)
			job->max_labels = N(id)->nlabels;
		if (hashes)
			hashes[i] = node_hash(id);
	}
	int made = hashes && build_phash_hashed(&job->ph, hashes, nodes.n, reuse_phash_before);
	if (!made) {
		free(hashes);
		make_keys(job, NULL);
		build_phash(&job->ph, job->keys.v, job->key_off, nodes.n,
			    reuse_has_earlier() ? reuse_phash_before : NULL);
	}
	return NULL;
}

/* The keys the layout reads: those of the nodes in the groups it writes. */
static void keys_laid_out(struct compiled *c)
{
	if (c->keys_made)
		return;
	uint8_t *need = xcalloc(nodes.n ? nodes.n : 1, 1);
	for (uint32_t g = 0; g < c->ph.ngroups; g++) {
		const uint8_t *octets;
		uint32_t answers;
		const struct phash_group *pg = &c->ph.groups[g];
		if (reused_region(g, &octets, &answers) != NONE)
			continue;
		for (uint32_t s = 0; s < pg->nslots; s++)
			if (c->ph.slots[pg->first_slot + s] != NONE)
				need[c->ph.slots[pg->first_slot + s]] = 1;
	}
	make_keys(c, need);
	free(need);
}

/* Beside the names' states, for a build that keeps them: the perfect hash, its groups' digests
 * for the state, (`prepare`) what a change's reach follows, and (`denial`) the denial region,
 * which reads only the records and the chains: a build over an earlier one compares it
 * before the answers (layout/reuse.c), a full build holds it after them. Made here, it
 * takes no time of its own: at a million names signed it takes about as long as the
 * states. */
static void *hash_names_and_prepare(void *arg)
{
	struct compiled *job = arg;
	hash_names(job);
	reuse_group_digests(&job->ph);
	if (job->prepare)
		changes_prepare();
	if (job->denial)
		build_denial_region();
	return NULL;
}

/* The slots of the groups the layout writes (phash.c's phash_place): those it does not copy
 * from the earlier build. */
static void place_laid_out(struct compiled *c)
{
	for (uint32_t g = 0; g < c->ph.ngroups; g++) {
		const uint8_t *octets;
		uint32_t answers;
		if (reused_region(g, &octets, &answers) == NONE)
			phash_place(&c->ph, g);
	}
}

/* Over an earlier build (layout/reuse.c), the perfect hash made: the answers of the groups
 * a change reaches only. */
static int compile_over_earlier(const struct compile_options *o, struct chaos *chaos,
				size_t nchaos, struct compiled *c)
{
	size_t reached;
	uint32_t reused;
	uint8_t *make = reuse_plan(&c->ph, &reached, &reused);
	place_laid_out(c);
	phase("changes", reached, "names");  /* what the change reaches */
	phase_took("regions reused", 0, reused, "regions");  /* a count: progress.py */
	build_answers(o->minimal, make);
	free(make);
	print_diagnostics();
	if (diagnostics_errors() > 0)
		return EXIT_ERRORS;
	merge_answers();
	keys_laid_out(c);
	plan_layout(&c->ph, c->key_off, chaos, nchaos, &c->info);
	return 0;
}

int compile_set(const struct compile_options *o, struct chaos *chaos, size_t nchaos,
		struct compiled *c)
{
	assign_zones();
	reuse_early();
	size_t read = 0;  /* records, up to the last phase's end */
	for (size_t z = 0; z < zones.n; z++) {
		size_t errors = diagnostics_errors();
		zones.v[z].rrsets_begin = rrsets.n;
		reading_zone = z;
		image_before_read(z);
		if (zones.v[z].records)
			read_records(z, zones.v[z].records);
		else if (!image_read_zone(z))
			read_zone_file(z);
		reading_zone = NONE;
		zones.v[z].rrsets_end = rrsets.n;
		check_zone(z, o->lenient);
		/* Its last good copy, as read and before any signing (compiler/keepgoing.py). */
		if (zones.v[z].keep_records && diagnostics_errors() == errors)
			write_records(z, zones.v[z].keep_records);
		if (zones.v[z].soa != NONE) {
			/* The SOA's numbers follow its two names, the serial first (RFC 1035
			 * §3.3.13): for --version, status and /metrics. */
			const uint8_t *soa = rdata_raw.v + rdatas.v[rrsets.v[zones.v[z].soa].first].raw;
			zones.v[z].serial = (uint32_t)soa[0] << 24 | soa[1] << 16 | soa[2] << 8 | soa[3];
		}
		/* A zone with errors is not signed: signing reads what its checks refuse (its
		 * SOA, for one). */
		if (zones.v[z].sign && diagnostics_errors() == errors) {
			if (!o->signer.requests)
				fail("manifest: a zone to sign, but no `signing` files");
			size_t before = rdatas.n;
			phase("read", before - read - image_left_over(), "records");
			sign_zone(z, &o->signer);
			zones.v[z].rrsets_end = rrsets.n;
			phase("sign", rdatas.n - before, "records");
			if (zones.v[z].sign->write_to && diagnostics_errors() == 0) {
				size_t written = write_signed_text(z, zones.v[z].sign->write_to);
				phase("signed zone written", written, "records");
			}
			read = rdatas.n;
		}
	}
	signer_finish(&o->signer);
	if (rdatas.n > read || read == 0)
		phase("read", rdatas.n - read - (read ? 0 : image_left_over()), "records");
	if (diagnostics_errors() > 0) {
		signer_written();
		print_diagnostics();
		return EXIT_ERRORS;
	}
	/* No nodes below a cut: the cut's referral answers for every name there. Over an image,
	 * each node's hash as the image keeps it is gathered here too, while its name is at
	 * hand, for the hash beside the names' states (hash_names). The nodes are written only
	 * from the first left out on: over an image they are its pages until written. */
	size_t ncached, kept = 0;
	const uint64_t *cached = reuse_has_earlier() ? image_name_hashes(&ncached) : NULL;
	uint64_t *node_hashes = cached ? xmalloc((nodes.n ? nodes.n : 1) * sizeof *node_hashes)
				       : NULL;
	unsigned max_labels = 0;
	for (size_t i = 0; i < nodes.n; i++) {
		name_t id = nodes.v[i];
		if (under_cut(id))
			continue;
		if (node_hashes)
			node_hashes[kept] = id < ncached && cached[id] ? cached[id] : node_hash(id);
		if (N(id)->nlabels > max_labels)
			max_labels = N(id)->nlabels;
		if (kept != i)
			nodes.v[kept] = id;
		kept++;
	}
	nodes.n = kept;
	add_dname_images();
	names_seal();
	build_chains();
	if (diagnostics_errors() == 0) {
		if (o->signatures.out) {
			struct signature_check signatures = o->signatures;
			signatures.lenient = o->lenient;
			check_chains_and_signatures(&signatures);
		} else {
			check_chains();
			phase("chains", chain_links(), "records");
		}
	}
	signer_written();
	if (chains_kept())  /* a count: progress.py */
		phase_took("chains as checked before", 0.0, chains_kept(), "kept");
	if (diagnostics_errors() > 0) {
		free(node_hashes);
		print_diagnostics();
		return EXIT_ERRORS;
	}

	/* The perfect hash needs only the names: it is made beside the names' states when the
	 * build keeps them (a build over this one needs both before the answers), else beside
	 * the merge, which has one thread: so that both cores work. */
	int keeps_state = reuse_wanted(), over_earlier = 0;
	struct beside hasher;
	memset(c, 0, sizeof *c);
	c->node_hashes = node_hashes;
	c->max_labels = max_labels;
	c->gathered = kept;
	if (keeps_state) {
		size_t nchanged;
		const name_t *changed = image_changed_names(reuse_earlier_content(), &nchanged);
		/* States made again for a few names only take this thread a moment: it makes
		 * what the reach follows too, and the hash has the other to itself. */
		c->prepare = reuse_has_earlier() && !changed;
		c->denial = any_chain();
		start_beside(&hasher, hash_names_and_prepare, c);
		over_earlier = reuse_prepare(changed, nchanged);
		if (reuse_has_earlier() && changed)
			changes_prepare();
		phase("states", name_states.n, "names");
		join_beside(&hasher);
		phase("perfect hash", nodes.n, "names");
	}
	if (over_earlier)
		return compile_over_earlier(o, chaos, nchaos, c);
	build_answers(o->minimal, NULL);
	print_diagnostics();  /* the warnings, and any answer too large for a message */
	if (diagnostics_errors() > 0)
		return EXIT_ERRORS;
	if (keeps_state) {
		merge_answers();
	} else {
		start_beside(&hasher, hash_names, c);
		merge_answers();
		join_beside(&hasher);
		phase("perfect hash", nodes.n, "names");
	}
	place_laid_out(c);
	if (!c->keys_made)
		make_keys(c, NULL);
	plan_layout(&c->ph, c->key_off, chaos, nchaos, &c->info);
	return 0;
}

void compiled_free(struct compiled *c)
{
	free(c->keys.v);
	free(c->key_off);
	phash_free(&c->ph);
	free(c->node_hashes);
	memset(c, 0, sizeof *c);
}

void core_reset(void)
{
	reuse_reset();  /* first: its thread may still be writing the names' states */
	reading_reset();
	chains_reset(zones.n);
	chains_checked_reset();
	zones_reset();
	names_reset();
	views_reset();
	dname_reset();
	denial_region_reset();
	answers_reset();
	bodies_reset();
	signatures_reset();
	signer_reset();
	changes_reset();
	image_reset();
	spill_reset();
	diagnostics_reset();
	reading_zone = NONE;
}
