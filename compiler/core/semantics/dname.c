/*
 * dname.c - what a DNAME makes of the names below its owner (RFC 6672), decided before the
 * answers, while names can still be interned:
 *
 * - image nodes: a query for X.owner is rewritten to X.target
 *   (§3.3) and followed there; where X.target exists in the zone the whole answer is known
 *   in advance, so X.owner gets a node of its own;
 * - for every name below an owner that an answer may follow (a node, a CNAME or other
 *   target, an image), its image under the target and the CNAME that leads there, which
 *   resolve.c writes; the images of images too, as a chain of DNAMEs goes on.
 */
#include <stdlib.h>
#include <string.h>

#include "bake.h"

static VEC(struct dname_image) images;  /* sorted by name */
static VEC(struct dname_image) by_image;  /* the same, by image: made on first use */

/* The DNAME owner strictly above `name` in its zone, or NONE. */
static name_t owner_above(name_t name)
{
	uint32_t zone = N(name)->zone;
	if (zone == NONE)
		return NONE;
	for (name_t n = name; !(N(n)->flags & NAME_ORIGIN);) {
		n = N(n)->parent;
		if ((N(n)->flags & NAME_DNAME) && N(n)->zone == zone)
			return n;
	}
	return NONE;
}

static name_t dname_target(name_t owner)
{
	return rdatas.v[rrsets.v[rrset_at(owner, T_DNAME)].first].name;
}

/* `name` (below `from`) moved to below `to`, or NONE when it would pass 255 octets. */
static name_t moved(name_t name, name_t from, name_t to)
{
	if (N(name)->wire_len - N(from)->wire_len + N(to)->wire_len > 255)
		return NONE;
	name_t labels[128];
	size_t n = 0;
	for (name_t s = name; s != from; s = N(s)->parent)
		labels[n++] = s;
	name_t out = to;
	while (n-- > 0) {
		uint8_t label[63];  /* name_child may move the labels it reads from */
		size_t len = N(labels[n])->label_len;
		memcpy(label, name_label(labels[n]), len);
		out = name_child(out, label, len);
	}
	return out;
}

/* Every existing name strictly below the target of a DNAME whose target is in its
 * zone and not below it gets a node at its image under the owner. */
static void add_image_nodes(void)
{
	size_t existing = names.n;
	for (name_t owner = 1; owner < existing; owner++) {
		if (!(N(owner)->flags & NAME_DNAME))
			continue;
		name_t target = dname_target(owner);
		if (!in_zone(N(owner)->zone, target) || name_is_below_or_at(target, owner))
			continue;
		for (name_t name = 1; name < existing; name++) {
			if (!(N(name)->flags & NAME_EXISTS) || name == target ||
			    !name_is_below_or_at(name, target))
				continue;
			name_t image = moved(name, target, owner);
			if (image != NONE && !(N(image)->flags & NAME_EXISTS)) {
				N(image)->flags |= NAME_EXISTS;
				PUSH(nodes, image);
			}
		}
	}
}

static int by_name(const void *a, const void *b)
{
	name_t x = ((const struct dname_image *)a)->name;
	name_t y = ((const struct dname_image *)b)->name;
	return (x > y) - (x < y);
}

/* The CNAME from a name to its image: TTL the DNAME's (RFC 6672 §3.3). */
static uint32_t synthesized_cname(name_t owner, name_t image)
{
	struct rdata rd = {.raw = rdata_raw.n, .name = image, .name2 = NONE, .next = NONE};
	PUSH(rdatas, rd);
	struct rrset set = {.owner = owner, .type = T_CNAME,
			    .ttl = rrsets.v[rrset_at(owner_above(owner), T_DNAME)].ttl,
			    .first = rdatas.n - 1, .last = rdatas.n - 1, .count = 1, .next = NONE,
			    .sigs = NONE};  /* never signed (RFC 6672 §5.3) */
	return push_rrset(set, (struct pos){0, 0});
}

void add_dname_images(void)
{
	int any = 0;
	for (size_t z = 0; z < zones.n && !any; z++)
		any = types_has(&zones.v[z].types, T_DNAME);
	if (!any)
		return;
	add_image_nodes();
	/* A chain of DNAMEs is followed at most MAX_CHAIN times in an answer (resolve.c). */
	size_t done = 1;
	for (int round = 0; round < 8 && done < names.n; round++) {
		size_t end = names.n;
		for (name_t name = done; name < end; name++) {
			name_t owner = owner_above(name);
			if (owner == NONE)
				continue;
			name_t image = moved(name, owner, dname_target(owner));
			struct dname_image d = {name, image, NONE};
			if (image != NONE)
				d.cname = synthesized_cname(name, image);
			PUSH(images, d);
		}
		done = end;
	}
	if (images.n > 1)
		qsort(images.v, images.n, sizeof *images.v, by_name);
}

/* The image of a name below a DNAME owner, made by add_dname_images. */
const struct dname_image *dname_image(name_t name)
{
	struct dname_image key = {.name = name};
	const struct dname_image *found = images.n == 0 ? NULL :
		bsearch(&key, images.v, images.n, sizeof *images.v, by_name);
	if (!found)
		fail("no DNAME image of %s", name_text(name));
	return found;
}

static int by_image_name(const void *a, const void *b)
{
	name_t x = ((const struct dname_image *)a)->image;
	name_t y = ((const struct dname_image *)b)->image;
	return (x > y) - (x < y);
}

/* For the reach of a change (changes.c): the names whose answers follow a DNAME to IMAGE
 * (those dname_image gives it for), *n of them from *first. Such an answer holds the DNAME,
 * the CNAME it synthesizes and what the lookup finds from the image on (RFC 6672 §3.3):
 * where that changes, the reach comes to the image (its own state, or a cut, a wildcard or
 * a DNAME made above it), and from there to these names. */
void dname_readers(name_t image, const struct dname_image **first, size_t *n)
{
	*first = NULL;
	*n = 0;
	if (!images.n)
		return;
	if (!by_image.n) {
		RESERVE(by_image, images.n);
		memcpy(by_image.v, images.v, images.n * sizeof *images.v);
		by_image.n = images.n;
		qsort(by_image.v, by_image.n, sizeof *by_image.v, by_image_name);
	}
	size_t lo = 0, hi = by_image.n;
	while (lo < hi) {  /* the first at or after IMAGE */
		size_t mid = lo + (hi - lo) / 2;
		if (by_image.v[mid].image < image)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = by_image.v + lo;
	while (lo + *n < by_image.n && by_image.v[lo + *n].image == image)
		(*n)++;
}

void dname_reset(void)
{
	VEC_FREE(images);
	VEC_FREE(by_image);
}
