/*
 * core_harness.h - the compiler's core (compiler/core) run in process, once an input, for
 * the libFuzzer targets fuzz_reader.c and fuzz_core.c.
 */
#ifndef CORE_HARNESS_H
#define CORE_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "bake.h"

#define FUZZ_MAX_ZONES 4

struct fuzz_zone {
	char origin[256];       /* text, ending in a dot */
	const uint8_t *text;    /* the zone file's octets */
	size_t len;
	uint16_t sign;          /* 0, or signed at build time with T_NSEC or T_NSEC3 */
	int opt_out;
};

struct fuzz_set {
	struct fuzz_zone zones[FUZZ_MAX_ZONES];
	size_t n;
	int lenient, minimal;
};

/* How a run ended: the zones compiled, or refused with diagnostics (a zone's error), or
 * declined (the fast reader hands the zone to dnspython; a set beyond the core). */
enum fuzz_outcome { FUZZ_COMPILED, FUZZ_REFUSED, FUZZ_DECLINED };

/* libFuzzer's, once before the first run: the directory the zone files go to, the core
 * made quiet. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * An input as a zone set. Lines `; zone ORIGIN [nsec|nsec3|nsec3-opt-out]` (comments to the
 * zone files themselves) start a zone, signed at build time when a chain is named; the
 * octets before the first are a zone of origin `example.`. A line `; set lenient` or
 * `; set minimal` anywhere sets the build's options.
 */
void harness_parse(const uint8_t *data, size_t size, struct fuzz_set *set);

/* The zone files read and checked, no further; the records stay until harness_reset. */
enum fuzz_outcome harness_read(const struct fuzz_set *set);

/* The whole compile, into `blob` (a path harness_init chose): on FUZZ_COMPILED `c` holds
 * the layout's numbers, and the names and zones stay until harness_reset. */
enum fuzz_outcome harness_compile(const struct fuzz_set *set, struct compiled *c,
				  const char **blob);

/* Every stage's memory given back. */
void harness_reset(void);

#endif
