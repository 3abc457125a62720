/*
 * phash_slots.c - the core's perfect hash (compiler/core/layout/phash.c) over keys given one a
 * line in hex: prints `seed ngroups nslots max_pilot`, then each group's `nslots nbuckets`,
 * then each key's `group slot` (its slot in its group), in input order.
 * tests/test_phash.py links it with phash.c and util.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"

int main(void)
{
	bytes_t keys = {0};
	VEC(uint32_t) key_off = {0};
	char hex[1024];
	while (scanf("%1023s", hex) == 1) {
		PUSH(key_off, (uint32_t)keys.n);
		for (size_t i = 0; hex[2 * i] && hex[2 * i + 1]; i++) {
			unsigned v;
			sscanf(hex + 2 * i, "%2x", &v);
			uint8_t octet = v;
			bytes_put(&keys, &octet, 1);
		}
	}
	uint32_t n = key_off.n;
	PUSH(key_off, (uint32_t)keys.n);
	struct phash ph;
	build_phash(&ph, keys.v, key_off.v, n, NULL);
	unsigned max_pilot = 0;
	for (uint32_t b = 0; b < ph.nbuckets; b++)
		if (ph.pilots[b] > max_pilot)
			max_pilot = ph.pilots[b];
	printf("%llu %u %u %u\n", (unsigned long long)ph.seed, ph.ngroups, ph.nslots, max_pilot);
	uint32_t *group_of = calloc(n ? n : 1, sizeof *group_of);
	uint32_t *slot_of = calloc(n ? n : 1, sizeof *slot_of);
	for (uint32_t g = 0; g < ph.ngroups; g++) {
		const struct phash_group *pg = &ph.groups[g];
		printf("%u %u\n", pg->nslots, pg->nbuckets);
		for (uint32_t s = 0; s < pg->nslots; s++)
			if (ph.slots[pg->first_slot + s] != NONE) {
				group_of[ph.slots[pg->first_slot + s]] = g;
				slot_of[ph.slots[pg->first_slot + s]] = s;
			}
	}
	for (uint32_t i = 0; i < n; i++)
		printf("%u %u\n", group_of[i], slot_of[i]);
	return 0;
}
