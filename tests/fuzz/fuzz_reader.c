/*
 * fuzz_reader.c - libFuzzer target around the compiler's zone-file reader (compiler/core:
 * zonefile.c's lexer, every RDATA form it reads, readzone.c, and the zone's checks in
 * zones.c): the input is a zone file of origin `example.`, which may $INCLUDE inc.zone
 * (core_harness.c). Every input ends in records, in diagnostics, or declined to dnspython;
 * records that come out must hold together (check_records). Built by tests/fuzz/run.sh with
 * -fsanitize=fuzzer,address,undefined: any out-of-bounds access, undefined behaviour, failure
 * of the core's own or broken invariant is a finding.
 */
#include <stdlib.h>

#include "core_harness.h"

/* Every name's parent is an earlier name, up to the root; lengths as RFC 1035 §3.1 allows. */
static void check_name(name_t id)
{
	if (id >= names.n)
		abort();
	const struct name *n = N(id);
	if (id == ROOT ? n->parent != NONE : n->parent >= id)
		abort();
	if (n->label_len > 63 || n->wire_len == 0 || (id != ROOT && n->wire_len != N(n->parent)->wire_len + 1 + n->label_len))
		abort();
}

/* Each RRset's records are a chain of `count` records whose octets lie in the arena, with the
 * sizes their types have; each name they hold is a name. */
static void check_records(void)
{
	for (name_t id = 0; id < names.n; id++)
		check_name(id);
	for (size_t s = 0; s < rrsets.n; s++) {
		const struct rrset *set = &rrsets.v[s];
		check_name(set->owner);
		uint32_t count = 0, last = NONE;
		for (uint32_t i = set->first; i != NONE; i = rdatas.v[i].next) {
			if (i >= rdatas.n || ++count > set->count)
				abort();
			const struct rdata *rd = &rdatas.v[i];
			if ((uint64_t)rd->raw + rd->raw_len > rdata_raw.n)
				abort();
			if ((set->type == T_A && rd->raw_len != 4) ||
			    (set->type == T_AAAA && rd->raw_len != 16))
				abort();
			if (rd->name != NONE)
				check_name(rd->name);
			if (rd->name2 != NONE)
				check_name(rd->name2);
			last = i;
		}
		if (count != set->count || last != set->last)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_set set = {.n = 1};
	strcpy(set.zones[0].origin, "example.");
	set.zones[0].text = data;
	set.zones[0].len = size;
	if (harness_read(&set) != FUZZ_DECLINED)
		check_records();
	harness_reset();
	return 0;
}
