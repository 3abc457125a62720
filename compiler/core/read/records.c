/*
 * records.c - a zone's records handed over in wire form: what dnspython read of a zone file
 * the fast reader does not read (compiler/read/handover.py writes them). From here on such a
 * record is like any other: names interned, the record filed (zones.c). The other way, a
 * zone the build signed goes back in the same form, for `zonebake build --write-signed`.
 *
 * The file, little-endian: the octets `ZBREC1\0\0`, then entries, each a kind octet:
 *   'F' u16 length, that many octets: a file's name as messages give it; the files are
 *       numbered from 0 in the order given;
 *   'R' u16 file, u32 line, u16 type, u16 class, u32 TTL, u8 owner length, the owner
 *       (absolute, uncompressed wire format), u16 RDATA length, the RDATA (names in it
 *       uncompressed, RFC 3597 §4).
 * The driver made the file: anything malformed is a failure of ours, not the user's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"

struct cursor {
	const uint8_t *p, *end;
	const char *path;
};

static const uint8_t *take(struct cursor *c, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		fail("%s: records end early", c->path);
	const uint8_t *at = c->p;
	c->p += n;
	return at;
}

static uint16_t u16(struct cursor *c)
{
	const uint8_t *b = take(c, 2);
	return b[0] | b[1] << 8;
}

static uint32_t u32(struct cursor *c)
{
	const uint8_t *b = take(c, 4);
	return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
}

/* An uncompressed wire-format name at `wire` (of at most `len` octets); its length in *used. */
static name_t wire_name(const struct cursor *c, const uint8_t *wire, size_t len, size_t *used)
{
	size_t at = 0, labels = 0;
	while (at < len && wire[at] != 0) {
		if (wire[at] > 63 || ++labels > 127)
			fail("%s: a name that is not uncompressed wire format", c->path);
		at += 1 + wire[at];
	}
	if (at >= len || at + 1 > 255)
		fail("%s: a name that runs out", c->path);
	*used = at + 1;
	return name_from_wire(wire);
}

/* The RDATA into the core's form (struct rdata): the names the answers need as ids, the
 * rest as octets. */
static struct rdata rdata_of(const struct cursor *c, uint16_t type, const uint8_t *rdata,
			     size_t len)
{
	struct rdata rd = {.raw = rdata_raw.n, .name = NONE, .name2 = NONE, .next = NONE};
	size_t used = 0, more = 0;
	switch (type) {
	case T_NS:
	case T_CNAME:
	case T_PTR:
	case T_DNAME:
		rd.name = wire_name(c, rdata, len, &used);
		break;
	case T_MX:
	case T_SRV:
		used = type == T_MX ? 2 : 6;
		if (len < used)
			fail("%s: short %s data", c->path, type_name(type));
		bytes_put(&rdata_raw, rdata, used);
		rd.name = wire_name(c, rdata + used, len - used, &more);
		used += more;
		break;
	case T_SOA:
		rd.name = wire_name(c, rdata, len, &used);
		rd.name2 = wire_name(c, rdata + used, len - used, &more);
		used += more;
		if (len - used != 20)
			fail("%s: SOA data of the wrong length", c->path);
		bytes_put(&rdata_raw, rdata + used, 20);
		used += 20;
		break;
	case T_SVCB:
	case T_HTTPS:  /* RFC 9460 §2.2: the TargetName, for the additional section */
		if (len < 3)
			fail("%s: short %s data", c->path, type_name(type));
		rd.name = wire_name(c, rdata + 2, len - 2, &more);
		bytes_put(&rdata_raw, rdata, len);
		used = len;
		break;
	default:
		bytes_put(&rdata_raw, rdata, len);
		used = len;
	}
	if (used != len)
		fail("%s: %s data longer than its fields", c->path, type_name(type));
	rd.raw_len = rdata_raw.n - rd.raw;
	return rd;
}

void read_records(uint32_t zone, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail("cannot open %s", path);
	bytes_t text = {0};
	uint8_t block[1 << 16];
	for (size_t n; (n = fread(block, 1, sizeof block, f)) > 0;)
		bytes_put(&text, block, n);
	if (ferror(f))
		fail("cannot read %s", path);
	fclose(f);
	struct cursor c = {text.v, text.v + text.n, path};
	if (memcmp(take(&c, 8), "ZBREC1\0\0", 8) != 0)
		fail("%s: not a records file", path);
	VEC(uint32_t) local = {0};  /* the file's numbers of files, in `files` */
	while (c.p < c.end) {
		uint8_t kind = *take(&c, 1);
		if (kind == 'F') {
			uint16_t len = u16(&c);
			char *display = xmalloc(len + 1);
			memcpy(display, take(&c, len), len);
			display[len] = 0;
			PUSH(local, add_file(display));
			continue;
		}
		if (kind != 'R')
			fail("%s: an entry of unknown kind", path);
		uint16_t file = u16(&c);
		if (file >= local.n)
			fail("%s: a record of an unnamed file", path);
		struct pos pos = {local.v[file], u32(&c)};
		uint16_t type = u16(&c), class = u16(&c);
		uint32_t ttl = u32(&c);
		uint8_t owner_len = *take(&c, 1);
		size_t used;
		name_t owner = wire_name(&c, take(&c, owner_len), owner_len, &used);
		uint16_t rdlen = u16(&c);
		const uint8_t *rdata = take(&c, rdlen);
		if (class != CLASS_IN || used != owner_len)
			fail("%s: a record of class %u, or a malformed owner", path, class);
		add_record(zone, owner, type, ttl, rdata_of(&c, type, rdata, rdlen), pos);
	}
	free(local.v);
	free(text.v);
}

static void put_le(bytes_t *out, uint32_t x, size_t octets)
{
	for (size_t i = 0; i < octets; i++)
		bytes_put(out, (uint8_t[]){x >> (8 * i)}, 1);
}

void write_records(uint32_t zone, const char *path)
{
	const struct zone *z = &zones.v[zone];
	bytes_t out = {0}, rdata = {0};
	bytes_put(&out, "ZBREC1\0\0", 8);
	VEC(uint32_t) local = {0};  /* `files` numbers, by this file's */
	for (uint32_t s = z->rrsets_begin; s < z->rrsets_end; s++) {
		const struct rrset *set = &rrsets.v[s];
		uint32_t file = 0;
		while (file < local.n && local.v[file] != set_pos(set).file)
			file++;
		if (file == local.n) {
			PUSH(local, set_pos(set).file);
			size_t len = strlen(files.v[set_pos(set).file]);
			bytes_put(&out, "F", 1);
			put_le(&out, len, 2);
			bytes_put(&out, files.v[set_pos(set).file], len);
		}
		uint8_t owner[256];
		size_t owner_len = name_wire(set->owner, owner);
		for (uint32_t r = set->first; r != NONE; r = rdatas.v[r].next) {
			rdata.n = 0;
			rdata_wire(set->type, &rdatas.v[r], &rdata, 0);
			bytes_put(&out, "R", 1);
			put_le(&out, file, 2);
			put_le(&out, set_pos(set).line, 4);
			put_le(&out, set->type, 2);
			put_le(&out, CLASS_IN, 2);
			put_le(&out, set->ttl, 4);
			put_le(&out, owner_len, 1);
			bytes_put(&out, owner, owner_len);
			put_le(&out, rdata.n, 2);
			bytes_put(&out, rdata.v, rdata.n);
		}
	}
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(out.v, 1, out.n, f) != out.n || fclose(f) != 0)
		fail("cannot write %s", path);
	free(local.v);
	free(rdata.v);
	free(out.v);
}
