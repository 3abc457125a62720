/*
 * fuzz_core.c - libFuzzer target around the whole compiler core (compiler/core): an input is
 * a small zone set (core_harness.h says how: zone files, parents and children, zones signed
 * at build time, options), compiled as `zonebake build` compiles it: read, checked, signed,
 * the tree, cuts and glue, CNAME and DNAME chains, wildcards, pre-signed RRSIG, NSEC and
 * NSEC3 records, every answer, the perfect hash, the layout. Every input ends in a blob or in
 * diagnostics. A blob must hold together: every offset of its nodes and type entries lies
 * inside it, and the responder (runtime/query/respond.c, as the server runs it) answers every
 * name of the set, names below each, and a set of types, with DO set and clear, over UDP and
 * TCP, with responses that decode whole (check_message). Built by tests/fuzz/run.sh with
 * -fsanitize=fuzzer,address,undefined.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_harness.h"
#include "hash.h"
#include "query/respond.h"
#include "query/wire.h"
#include "zonedata.h"

static uint8_t *load(const char *path, size_t size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size != size)
		abort();  /* the layout wrote other than it planned */
	uint8_t *data = malloc(size ? size : 1);  /* exactly its size: ASan sees past the end */
	for (size_t done = 0; done < size;) {
		ssize_t n = read(fd, data + done, size - done);
		if (n <= 0)
			abort();
		done += n;
	}
	close(fd);
	return data;
}

/* ---- a response, decoded strictly (RFC 1035 §4.1) ---- */

/* A name at `*at`: labels, and pointers only to earlier octets (RFC 1035 §4.1.4); its wire
 * length at most 255. The octets after it in `*at`. */
static void check_name(const uint8_t *m, size_t len, size_t *at)
{
	size_t p = *at, wire = 0, end = 0;
	int jumped = 0;
	for (;;) {
		if (p >= len)
			abort();
		uint8_t l = m[p];
		if ((l & 0xC0) == 0xC0) {
			if (p + 1 >= len)
				abort();
			size_t to = (size_t)(l & 0x3F) << 8 | m[p + 1];
			if (to >= p)
				abort();  /* forward or to itself: a loop could follow */
			if (!jumped)
				end = p + 2;
			jumped = 1;
			p = to;
			continue;
		}
		if (l & 0xC0)
			abort();  /* label types 0x40, 0x80: never written */
		wire += 1 + l;
		if (wire > 255 || p + 1 + l > len)
			abort();
		if (l == 0)
			break;
		p += 1 + l;
	}
	*at = jumped ? end : p + 1;
}

/* The names of the RDATA forms the core writes with names (RFC 1035 §3.3, RFC 2782, RFC
 * 4034, RFC 6672): each decodes, and the RDATA ends where its length says. */
static void check_rdata(const uint8_t *m, size_t len, uint16_t type, size_t at, size_t end)
{
	switch (type) {
	case 2 /* NS */: case 5 /* CNAME */: case 12 /* PTR */: case 39 /* DNAME */:
		check_name(m, end, &at);
		break;
	case 15 /* MX */:
		at += 2;
		check_name(m, end, &at);
		break;
	case 6 /* SOA */:
		check_name(m, end, &at);
		check_name(m, end, &at);
		at += 20;
		break;
	case 33 /* SRV */:
		at += 6;
		check_name(m, end, &at);
		break;
	default:
		return;
	}
	if (at != end || end > len)
		abort();
}

/* A whole message: its header's counts are its records, which end where the message ends;
 * an OPT record only in the additional section, once, owned by the root. */
static void check_message(const uint8_t *m, size_t len, const uint8_t *query, size_t qlen)
{
	if (len < ZB_HEADER_LEN || memcmp(m, query, 2) != 0 || !(m[2] & 0x80))
		abort();
	size_t at = ZB_HEADER_LEN;
	unsigned counts[4];
	for (int k = 0; k < 4; k++)
		counts[k] = zb_get16(m + 4 + 2 * k);
	if (counts[0] > 1)
		abort();
	if (counts[0]) {
		size_t qend = ZB_HEADER_LEN;
		check_name(m, len, &at);
		check_name(query, qlen, &qend);
		/* The question goes back as it came, letter case included (RFC 1035 §7.3). */
		if (at + 4 > len || qend + 4 > qlen || at != qend ||
		    memcmp(m + ZB_HEADER_LEN, query + ZB_HEADER_LEN, at + 4 - ZB_HEADER_LEN) != 0)
			abort();
		at += 4;
	}
	int opts = 0;
	for (int section = 1; section < 4; section++)
		for (unsigned r = 0; r < counts[section]; r++) {
			size_t owner = at;
			check_name(m, len, &at);
			if (at + 10 > len)
				abort();
			uint16_t type = zb_get16(m + at), rdlen = zb_get16(m + at + 8);
			at += 10;
			if (at + rdlen > len)
				abort();
			if (type == ZB_TYPE_OPT && (section != 3 || opts++ || m[owner] != 0))
				abort();
			check_rdata(m, len, type, at, at + rdlen);
			at += rdlen;
		}
	if (at != len)
		abort();
}

/* ---- the blob ---- */

#define INSIDE(zs, off, len) ((uint64_t)(off) + (uint64_t)(len) <= (zs)->data_len)

static void check_answer(const struct zb_zoneset *zs, uint64_t off, int depth);

static int is_alias(const struct zb_answer *a)
{
	return a->dname_split && !a->dname_owner_len;
}

/* An alias's answer (zonedata.h, struct zb_answer_alias): its CNAME part and its target's
 * node in a group. */
static const struct zb_node *check_alias(const struct zb_zoneset *zs, uint64_t off,
					 const struct zb_answer *a, uint64_t *node_off)
{
	const struct zb_answer_alias *alias =
		(const struct zb_answer_alias *)(zs->data + off + a->overflow);
	if (!INSIDE(zs, off + a->overflow, sizeof *alias) || alias->group >= zs->ngroups ||
	    a->body_len != a->dname_split || alias->target_at >= a->body_len ||
	    alias->node % sizeof(struct zb_node) ||
	    alias->node >= (uint64_t)zs->groups[alias->group].nslots * zs->node_size)
		abort();
	*node_off = zs->groups[alias->group].nodes_off + (uint64_t)alias->node;
	const struct zb_node *n = (const struct zb_node *)(zs->data + *node_off);
	if (!INSIDE(zs, *node_off, sizeof *n) || n->default_answer == 0 ||
	    !INSIDE(zs, *node_off + n->types_off, 8u * n->ntypes))
		abort();
	return n;
}

/* What an alias's target answers where the alias's answer is composed with it: none that
 * the responder completes (an alias's, a DNAME synthesis's, one with a denial), and its
 * pointers in reach behind the CNAME part. */
static void check_composed(const struct zb_zoneset *zs, const struct zb_answer *a,
			   uint64_t target_off)
{
	check_answer(zs, target_off, 1);
	const struct zb_answer *target = (const struct zb_answer *)(zs->data + target_off);
	if (target->dname_split || target->denial ||
	    ZB_HEADER_LEN + 255 + 4 + a->body_len + target->body_len > 0x3FFF)
		abort();
}

static int has_type(const struct zb_zoneset *zs, uint64_t node_off, uint16_t qtype)
{
	const struct zb_node *n = (const struct zb_node *)(zs->data + node_off);
	for (uint32_t t = 0; t < n->ntypes; t++)
		if (((const struct zb_type_entry *)(zs->data + node_off + n->types_off))[t].qtype ==
		    qtype)
			return 1;
	return 0;
}

/* An answer of the node at `node_off`, for `qtype` (-1: its default, for every type it does
 * not list), and when it is an alias's, each target's answer it is composed with. */
static void check_node_answer(const struct zb_zoneset *zs, uint64_t node_off, uint64_t off,
			      int qtype)
{
	check_answer(zs, off, 0);
	const struct zb_answer *a = (const struct zb_answer *)(zs->data + off);
	if (!is_alias(a))
		return;
	uint64_t to;
	const struct zb_node *n = check_alias(zs, off, a, &to);
	const struct zb_type_entry *types =
		(const struct zb_type_entry *)(zs->data + to + n->types_off);
	uint64_t answer = to + n->default_answer;
	for (uint32_t t = 0; t < n->ntypes; t++) {
		uint64_t at = to + n->types_off + 8u * t + types[t].answer;
		if (qtype == types[t].qtype)
			answer = at;
		else if (qtype < 0 && !has_type(zs, node_off, types[t].qtype))
			check_composed(zs, a, at);
	}
	check_composed(zs, a, answer);
}

/* An answer's record, its body, fixups, overflow answer and denial, inside the blob. Its
 * offsets count from the answer (zonedata.h). */
static void check_answer(const struct zb_zoneset *zs, uint64_t off, int depth)
{
	if (off == 0 || !INSIDE(zs, off, sizeof(struct zb_answer)) || off % 4)
		abort();
	const struct zb_answer *a = (const struct zb_answer *)(zs->data + off);
	if (!INSIDE(zs, off + a->body_off, a->body_len) ||
	    !INSIDE(zs, off + a->fixups_off, 2u * a->nfixups) ||
	    a->trunc_len > a->body_len || (a->dname_split && a->dname_split > a->body_len) ||
	    (a->denial && !INSIDE(zs, off + a->denial, sizeof(struct zb_answer_denial))))
		abort();
	if (a->denial) {  /* the entries it names: its own owner labels, NSEC3 entries */
		const struct zb_answer_denial *d =
			(const struct zb_answer_denial *)(zs->data + off + a->denial);
		if ((d->also && !INSIDE(zs, d->also, sizeof(struct zb_denial))) || d->at > a->body_len ||
		    d->nkeys > ZB_MAX_KEYS ||
		    !INSIDE(zs, off + a->denial + sizeof *d,
			    sizeof(struct zb_entry_key) * d->nkeys) ||
		    (d->nkeys && (!INSIDE(zs, d->chain, sizeof(struct zb_chain)) ||
				  ((const struct zb_chain *)(zs->data + d->chain))->kind !=
					  ZB_DENIAL_NSEC3)))
			abort();
	}
	if (a->dname_split && a->dname_owner_len && depth == 0)
		check_answer(zs, off + (int64_t)a->overflow, 1);
}

/* A node at `off` and what it points to: name, type entries, answers, the node of answers
 * for names below it (`depth` 1: such a node, which has no miss of its own). */
static void check_node(const struct zb_zoneset *zs, uint64_t off, int twin, int depth)
{
	if (!INSIDE(zs, off, sizeof(struct zb_node)))
		abort();
	const struct zb_node *n = (const struct zb_node *)(zs->data + off);
	if (n->default_answer == 0)
		return;  /* an empty slot, or a twin's half of a node of answers it does not need */
	if ((!twin && !INSIDE(zs, off + n->name_off, n->name_len)) ||
	    !INSIDE(zs, off + n->types_off, 8u * n->ntypes))
		abort();
	check_node_answer(zs, off, off + n->default_answer, -1);
	for (uint32_t t = 0; t < n->ntypes; t++) {
		uint64_t e = off + n->types_off + 8u * t;
		const struct zb_type_entry *entry = (const struct zb_type_entry *)(zs->data + e);
		check_node_answer(zs, off, e + entry->answer, entry->qtype);
	}
	if (depth == 1 || (n->miss_kind == ZB_MISS_ANSWER && n->miss == 0 && n->name_len == 0))
		;  /* a node of answers by type (layout.c): no miss of its own */
	else if (n->miss_kind == ZB_MISS_ANSWER)
		check_answer(zs, off + n->miss, 0);
	else if (n->miss_kind != ZB_MISS_NODE)
		abort();
	else
		check_node(zs, off + n->miss, twin, 1);
}

/* Every group's slots and their DO twins: their offsets inside the blob. */
static void check_offsets(const struct zb_zoneset *zs)
{
	for (uint32_t g = 0; g < zs->ngroups; g++) {
		const struct zb_group *group = &zs->groups[g];
		if (!INSIDE(zs, group->nodes_off - 2u * group->nbuckets, 2u * group->nbuckets))
			abort();
		for (uint32_t s = 0; s < group->nslots; s++)
			for (uint32_t twin = 0; twin <= zs->signed_nodes; twin++)
				check_node(zs, group->nodes_off + (uint64_t)s * zs->node_size +
						       twin * sizeof(struct zb_node), twin, 0);
	}
}

static size_t make_query(uint8_t *q, const uint8_t *prefix, size_t prefix_len,
			 const uint8_t *name, size_t name_len, uint16_t qtype, int edns, int dnssec)
{
	static const uint8_t header[] = {0x5a, 0x17, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
	size_t n = 0;
	memcpy(q, header, sizeof header);
	n += sizeof header;
	if (prefix_len + name_len > 255)
		return 0;
	memcpy(q + n, prefix, prefix_len);
	n += prefix_len;
	memcpy(q + n, name, name_len);
	n += name_len;
	zb_put16(q + n, qtype);
	zb_put16(q + n + 2, 1);  /* IN */
	n += 4;
	if (edns) {
		static const uint8_t opt[] = {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0};
		memcpy(q + n, opt, sizeof opt);
		if (dnssec)
			q[n + 7] = 0x80;  /* DO (RFC 3225) */
		n += sizeof opt;
		q[11] = 1;
	}
	return n;
}

static void ask(const struct zb_zoneset *zs, const uint8_t *q, size_t n)
{
	static uint8_t query[512 + ZB_QUERY_SLACK], out[ZB_RESPONSE_MAX];
	struct zb_query_facts facts;
	memcpy(query, q, n);
	memset(query + n, 0x5A, ZB_QUERY_SLACK);
	size_t len = zb_respond(zs, query, n, out, ZB_TCP, NULL, &facts);
	check_message(out, len, q, n);
	len = zb_respond(zs, query, n, out, ZB_UDP, NULL, &facts);
	check_message(out, len, q, n);
	if (len > 4096)
		abort();
}

/* Every node of the set, a name below it and one further below, each for a set of types,
 * with and without EDNS, DO set and clear. */
static void ask_everything(const struct zb_zoneset *zs)
{
	static const uint16_t qtypes[] = {1, 2, 5, 6, 15, 16, 28, 33, 39, 43, 46, 47, 48, 50,
					  255, 65280};
	static const struct { const char *p; size_t len; } prefixes[] = {
		{"", 0}, {"\2zz", 3}, {"\1a\2zz", 5}, {"\1*", 2}};
	uint8_t name[256], q[512];
	for (size_t i = 0; i < nodes.n; i++) {
		size_t name_len = name_wire(nodes.v[i], name);
		for (size_t p = 0; p < sizeof prefixes / sizeof *prefixes; p++)
			for (size_t t = 0; t < sizeof qtypes / sizeof *qtypes; t++) {
				if (p > 0 && t % 4)
					continue;  /* below a name, a few types do */
				for (int edns = 0; edns < 3; edns++) {
					size_t n = make_query(q, (const uint8_t *)prefixes[p].p,
							      prefixes[p].len, name, name_len,
							      qtypes[t], edns > 0, edns == 2);
					if (n)
						ask(zs, q, n);
				}
			}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_set set;
	struct compiled c;
	const char *blob;
	harness_parse(data, size, &set);
	if (harness_compile(&set, &c, &blob) == FUZZ_COMPILED) {
		uint8_t *bytes = load(blob, c.info.size);
		static const struct zb_chaos_name no_chaos[1];
		struct zb_zoneset zs = {
			.data = bytes, .data_len = c.info.size,
			.groups = (const struct zb_group *)(bytes + c.info.groups_off),
			.seed = c.ph.seed, .hash_key = ZB_HASH_KEY(c.ph.seed),
			.ngroups = c.info.ngroups, .group_mask = c.info.group_mask,
			.node_size = sizeof(struct zb_node) * (1 + c.info.signed_nodes),
			.nanswers = c.info.nanswers, .max_labels = c.max_labels,
			.signed_nodes = c.info.signed_nodes, .udp_size = 1232, .chaos = no_chaos,
		};
		check_offsets(&zs);
		ask_everything(&zs);
		free(bytes);
	}
	compiled_free(&c);
	harness_reset();
	return 0;
}
