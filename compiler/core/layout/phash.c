/*
 * phash.c - the perfect hash over the nodes' names, in groups that a change does not
 * reshuffle (runtime/hash.h says how the responder reads it).
 *
 * A name's hash picks its group by linear hashing (zb_group_of): one more group splits one
 * group in two and leaves the others as they were. Each group is a CHD-style perfect hash of
 * its own (one pilot per bucket of about four keys, buckets placed largest first, ties by
 * number, each the first pilot that sends its keys to free, distinct slots), and what it
 * comes to depends on the group's keys alone: a name added or removed re-places one group,
 * and the layout writes each group's nodes, answers and names in a region of its own
 * (layout.c), so that one change moves one region. Same keys, same result: seeds are tried
 * 0, 1, 2... for all groups at once, and another seed is needed only when two names hash
 * alike, which no pilot separates.
 *
 * Over an earlier build, a group whose keys are the ones it had then (a digest of their
 * hashes, in any order, the same as the earlier build's under the same seed) takes the
 * pilots and slot counts it had then instead of searching for them again: placing a group
 * depends on the hashes of its keys alone, so those are what the search would find. Its
 * keys' slots are worked out from them (and checked) only where the layout writes the
 * group again (phash_place): a build over an earlier one copies most regions as they were,
 * and working out a million keys' slots was the longest step of its hash.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "hash.h"

#define KEYS_PER_BUCKET 4
#define LOAD_FACTOR 0.97
#define MAX_PILOT 0xFFFF
#define ATTEMPTS 32
#define MAX_GROUP_SLOTS 0xFFFF  /* zb_group.nslots */

/* One group's keys (their hashes) placed into `nslots` slots: 0 when a bucket finds no pilot.
 * slots[] gets key numbers within the group, pilots[] a pilot per bucket. */
static int place_group(const uint64_t *hashes, uint32_t count, uint32_t nslots,
		       uint32_t nbuckets, uint32_t *slots, uint16_t *pilots, uint32_t *start,
		       uint32_t *members, uint32_t *order)
{
	memset(start, 0, (nbuckets + 1) * sizeof *start);
	for (uint32_t i = 0; i < count; i++)
		start[zb_bucket_of(hashes[i], nbuckets) + 1]++;
	uint32_t largest = 0;
	for (uint32_t b = 0; b < nbuckets; b++) {
		if (start[b + 1] > largest)
			largest = start[b + 1];
		start[b + 1] += start[b];
	}
	/* Buckets' members by key (a counting sort), `order` lent as the cursors. */
	memcpy(order, start, nbuckets * sizeof *order);
	for (uint32_t i = 0; i < count; i++)
		members[order[zb_bucket_of(hashes[i], nbuckets)]++] = i;
	uint32_t k = 0;
	for (uint32_t size = largest; size > 0; size--)
		for (uint32_t b = 0; b < nbuckets; b++)
			if (start[b + 1] - start[b] == size)
				order[k++] = b;
	memset(slots, 0xFF, nslots * sizeof *slots);
	memset(pilots, 0, nbuckets * sizeof *pilots);
	for (uint32_t o = 0; o < k; o++) {
		uint32_t b = order[o], first = start[b], n = start[b + 1] - first;
		uint32_t placed[64];
		if (n > 64)
			unsupported("a perfect hash bucket of %u keys", n);
		int found = 0;
		for (uint32_t pilot = 0; pilot <= MAX_PILOT && !found; pilot++) {
			uint32_t m = 0;
			for (; m < n; m++) {
				uint32_t s = zb_slot_of(hashes[members[first + m]], pilot, nslots);
				if (slots[s] != NONE)
					break;
				uint32_t j = 0;
				while (j < m && placed[j] != s)
					j++;
				if (j < m)
					break;
				placed[m] = s;
			}
			if (m == n) {
				found = 1;
				pilots[b] = pilot;
				for (m = 0; m < n; m++)
					slots[placed[m]] = members[first + m];
			}
		}
		if (!found)
			return 0;
	}
	return 1;
}

/* The pilots and slot count the earlier build found for a group of these keys: the slots
 * from them, or 0 where they do not place every key in a slot of its own. */
static int place_as_before(const uint64_t *hashes, uint32_t count, const struct phash_before *b,
			   uint32_t *slots, uint16_t *pilots)
{
	memset(slots, 0xFF, b->nslots * sizeof *slots);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t bucket = zb_bucket_of(hashes[i], b->nbuckets);
		uint16_t pilot;
		memcpy(&pilot, b->pilots + 2 * bucket, 2);  /* the blob's octets: little-endian */
		uint32_t slot = zb_slot_of(hashes[i], pilot, b->nslots);
		if (slots[slot] != NONE)
			return 0;
		slots[slot] = i;
	}
	for (uint32_t k = 0; k < b->nbuckets; k++)
		memcpy(&pilots[k], b->pilots + 2 * k, 2);
	return 1;
}

/* A group's keys, by their hashes in any order: the state's (layout/reuse.c), which a
 * group's placement depends on alone. */
static uint64_t set_digest(const uint64_t *hashes, uint32_t count)
{
	uint64_t sum = mix64(count), all = 0;
	for (uint32_t i = 0; i < count; i++) {
		sum += mix64(hashes[i]);
		all ^= hashes[i];
	}
	return mix64(sum ^ mix64(all));
}

static uint32_t group_slots(uint32_t count)
{
	return count < 16 ? (count ? count : 1) : (uint32_t)((double)count / LOAD_FACTOR);
}

/* The slots a group of `count` keys may grow to when no pilots place them in fewer. */
static uint32_t most_slots(uint32_t count)
{
	return group_slots(count) + count / 4 + 4;
}

/* Every group placed with ph->seed's hashes, `given` (NULL: the keys'): 0 when one cannot
 * be. */
static int try_seed(struct phash *ph, const uint8_t *keys, const uint32_t *key_off,
		    const uint64_t *given, uint32_t n, phash_before_fn before)
{
	uint32_t ng = ph->ngroups;
	uint64_t *made = given ? NULL : xmalloc((n ? n : 1) * sizeof *made);
	const uint64_t *hashes = given ? given : made;
	const uint8_t **deferred = xcalloc(ng ? ng : 1, sizeof *deferred);
	uint32_t *gstart = xmalloc((ng + 1) * sizeof *gstart), *by_group = xmalloc((n ? n : 1) * 4);
	memset(gstart, 0, (ng + 1) * sizeof *gstart);
	for (uint32_t i = 0; i < n; i++) {
		if (made)
			made[i] = zb_hash(keys + key_off[i], key_off[i + 1] - key_off[i], ph->seed);
		gstart[zb_group_of(hashes[i], ph->group_mask, ng) + 1]++;
	}
	uint32_t largest = 0;
	for (uint32_t g = 0; g < ng; g++) {
		if (gstart[g + 1] > largest)
			largest = gstart[g + 1];
		gstart[g + 1] += gstart[g];
	}
	uint32_t room = most_slots(largest);
	if (room > MAX_GROUP_SLOTS)
		unsupported("a perfect hash group of %u names", largest);
	for (uint32_t i = 0; i < n; i++)  /* key index order within a group */
		by_group[gstart[zb_group_of(hashes[i], ph->group_mask, ng)]++] = i;
	for (uint32_t g = ng; g > 0; g--)
		gstart[g] = gstart[g - 1];
	gstart[0] = 0;

	uint64_t *gh = xmalloc(room * sizeof *gh);
	uint32_t *slots = xmalloc(room * sizeof *slots), *start = xmalloc((room + 1) * 4),
		 *members = xmalloc(room * 4), *order = xmalloc(room * 4);
	uint16_t *pilots = xmalloc(room * sizeof *pilots);
	VEC(uint32_t) all_slots = {0};
	VEC(uint16_t) all_pilots = {0};
	int ok = 1;
	for (uint32_t g = 0; g < ng && ok; g++) {
		uint32_t first = gstart[g], count = gstart[g + 1] - first;
		for (uint32_t i = 0; i < count; i++)
			gh[i] = hashes[by_group[first + i]];
		uint32_t nbuckets = count ? (count + KEYS_PER_BUCKET - 1) / KEYS_PER_BUCKET : 1;
		uint32_t nslots = group_slots(count);
		ph->digests[g] = set_digest(gh, count);
		struct phash_before b;
		if (before && before(g, ph->seed, ph->digests[g], &b) && b.nbuckets == nbuckets &&
		    b.nslots >= nslots && b.nslots <= most_slots(count)) {
			nslots = b.nslots;  /* its slots wait for phash_place */
			deferred[g] = b.pilots;
			memset(slots, 0xFF, nslots * sizeof *slots);
			memset(pilots, 0, nbuckets * sizeof *pilots);
		} else {
			/* A group that finds no pilots gets a slot more, a few times; then the
			 * seed fails. */
			while (!place_group(gh, count, nslots, nbuckets, slots, pilots, start,
					    members, order))
				if (++nslots > most_slots(count)) {
					ok = 0;
					break;
				}
		}
		if (!ok)
			break;
		ph->groups[g] = (struct phash_group){.first_slot = all_slots.n,
						     .first_bucket = all_pilots.n,
						     .nslots = nslots, .nbuckets = nbuckets};
		for (uint32_t s = 0; s < nslots; s++)
			PUSH(all_slots, slots[s] == NONE ? NONE : by_group[first + slots[s]]);
		for (uint32_t b = 0; b < nbuckets; b++)
			PUSH(all_pilots, pilots[b]);
	}
	free(gh);
	free(slots);
	free(start);
	free(members);
	free(order);
	free(pilots);
	if (!ok) {
		free(made);
		free(gstart);
		free(by_group);
		free(deferred);
		free(all_slots.v);
		free(all_pilots.v);
		return 0;
	}
	ph->slots = all_slots.v;
	ph->nslots = all_slots.n;
	ph->pilots = all_pilots.v;
	ph->nbuckets = all_pilots.n;
	ph->hashes = made ? made : (uint64_t *)given;  /* given: taken over */
	ph->members = by_group;
	ph->member_start = gstart;
	ph->deferred = deferred;
	return 1;
}

void phash_place(struct phash *ph, uint32_t g)
{
	if (!ph->deferred || !ph->deferred[g])
		return;
	const struct phash_group *pg = &ph->groups[g];
	uint32_t first = ph->member_start[g], count = ph->member_start[g + 1] - first;
	uint64_t *gh = xmalloc((count ? count : 1) * sizeof *gh);
	uint32_t *slots = xmalloc(pg->nslots * sizeof *slots);
	for (uint32_t i = 0; i < count; i++)
		gh[i] = ph->hashes[ph->members[first + i]];
	struct phash_before b = {pg->nslots, pg->nbuckets, ph->deferred[g]};
	/* The same keys the earlier build placed with these pilots: they place them again,
	 * unless its data changed on the disk since (its state's digest does not cover them). */
	if (!place_as_before(gh, count, &b, slots, ph->pilots + pg->first_bucket))
		fail("the earlier build's perfect hash no longer places group %u's names "
		     "(its data changed since it was written): build into an empty directory", g);
	for (uint32_t s = 0; s < pg->nslots; s++)
		ph->slots[pg->first_slot + s] = slots[s] == NONE ? NONE : ph->members[first + slots[s]];
	ph->deferred[g] = NULL;
	free(gh);
	free(slots);
}

void phash_free(struct phash *ph)
{
	free(ph->pilots);
	free(ph->slots);
	free(ph->digests);
	free(ph->groups);
	free(ph->hashes);
	free(ph->members);
	free(ph->member_start);
	free(ph->deferred);
	memset(ph, 0, sizeof *ph);
}

static void phash_init(struct phash *ph, uint32_t n)
{
	memset(ph, 0, sizeof *ph);
	ph->ngroups = n ? (n + PHASH_KEYS_PER_GROUP - 1) / PHASH_KEYS_PER_GROUP : 1;
	ph->group_mask = zb_group_mask(ph->ngroups);
	ph->groups = xmalloc(ph->ngroups * sizeof *ph->groups);
	ph->digests = xmalloc(ph->ngroups * sizeof *ph->digests);
}

/* Over n distinct keys: key i is keys[key_off[i] .. key_off[i + 1]). */
void build_phash(struct phash *ph, const uint8_t *keys, const uint32_t *key_off, uint32_t n,
		 phash_before_fn before)
{
	phash_init(ph, n);
	for (ph->seed = 0; ph->seed < ATTEMPTS; ph->seed++)
		if (try_seed(ph, keys, key_off, NULL, n, before))
			return;
	unsupported("no perfect hash in %d seeds", ATTEMPTS);
}

int build_phash_hashed(struct phash *ph, uint64_t *hashes, uint32_t n,
		       phash_before_fn before)
{
	phash_init(ph, n);
	if (try_seed(ph, NULL, NULL, hashes, n, before))
		return 1;
	free(ph->groups);
	free(ph->digests);
	memset(ph, 0, sizeof *ph);
	return 0;
}

/* Where a key of this hash goes: its group, and its slot there. */
static uint32_t slot_of_hash(const struct phash *ph, uint64_t h, uint32_t *group)
{
	const struct phash_group *pg = &ph->groups[*group = zb_group_of(h, ph->group_mask,
									  ph->ngroups)];
	uint32_t bucket = zb_bucket_of(h, pg->nbuckets);
	uint16_t pilot = ph->pilots[pg->first_bucket + bucket];
	if (ph->deferred && ph->deferred[*group])
		memcpy(&pilot, ph->deferred[*group] + 2 * bucket, 2);  /* little-endian */
	return zb_slot_of(h, pilot, pg->nslots);
}

uint32_t phash_slot(const struct phash *ph, const uint8_t *key, size_t len, uint32_t *group)
{
	return slot_of_hash(ph, zb_hash(key, len, ph->seed), group);
}

void phash_key_place(const struct phash *ph, uint32_t key, uint32_t *group, uint32_t *slot)
{
	*slot = slot_of_hash(ph, ph->hashes[key], group);
}
