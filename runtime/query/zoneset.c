/*
 * zoneset.c - the data's head into zb_zoneset (zonedata.h). The layout's numbers travel with
 * the data rather than in zonedata.c, so that the server's compile and link need only the
 * configuration: a build links while its core lays the data out, and a rebuild of the same
 * set links nothing new.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hash.h"
#include "query/zoneset.h"

/* Give the kernel ADVICE (madvise) for the pages that hold DATA's LEN octets. */
static void advise(const uint8_t *data, uint64_t len, int advice)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = (uintptr_t)data & ~(page - 1);
	madvise((void *)from, (uintptr_t)data + len - from, advice);
}

void zb_zoneset_read_around(const struct zb_zoneset *zs)
{
	advise(zs->data, zs->data_len, MADV_NORMAL);
}

int zb_zoneset_open(struct zb_zoneset *zs, char *err, size_t err_len)
{
	const struct zb_head *h = (const struct zb_head *)zs->data;
	advise(zs->data, sizeof *h, MADV_RANDOM); /* its page alone, whatever the data's size */
	uint32_t nchaos = 0;

	while (zs->chaos[nchaos].name_len)
		nchaos++;
	uint64_t zones_end = (uint64_t)h->zones_off + (uint64_t)h->nzones * sizeof(struct zb_zone_numbers);
	uint64_t chaos_end = (uint64_t)h->chaos_off + (uint64_t)h->nchaos * sizeof(uint32_t);
	uint64_t groups_end = (uint64_t)h->groups_off + (uint64_t)h->ngroups * sizeof(struct zb_group);
	if (h->data_len < sizeof *h || h->nzones != zs->nzones || h->nchaos != nchaos ||
	    zones_end > h->data_len || chaos_end > h->data_len || groups_end > h->data_len ||
	    h->signed_nodes > 1) {
		snprintf(err, err_len, "the data does not belong to this server's zone set "
			 "(%u zones and %u CH names in its head, %u and %u compiled in)",
			 (unsigned)h->nzones, (unsigned)h->nchaos, (unsigned)zs->nzones,
			 (unsigned)nchaos);
		return -1;
	}
	zs->data_len = h->data_len;
	advise(zs->data, zs->data_len, zb_zoneset_reads_pages_alone(zs) ? MADV_RANDOM : MADV_NORMAL);
	zs->groups = (const struct zb_group *)(zs->data + h->groups_off);
	zs->seed = h->seed;
	zs->hash_key = ZB_HASH_KEY(h->seed);
	zs->ngroups = h->ngroups;
	zs->group_mask = h->group_mask;
	zs->node_size = sizeof(struct zb_node) * (1 + h->signed_nodes);
	zs->nanswers = h->nanswers;
	zs->max_labels = h->max_labels;
	zs->signed_nodes = h->signed_nodes;
	const struct zb_zone_numbers *numbers =
		(const struct zb_zone_numbers *)(zs->data + h->zones_off);
	for (uint32_t z = 0; z < zs->nzones; z++) {
		zs->zones[z].serial = numbers[z].serial;
		zs->zones[z].expires = numbers[z].expires;
	}
	const uint32_t *answers = (const uint32_t *)(zs->data + h->chaos_off);
	for (uint32_t c = 0; c < nchaos; c++)
		zs->chaos[c].answer = answers[c];
	return 0;
}
