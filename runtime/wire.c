/*
 * wire.c - parse the question section of a query (RFC 1035 §4.1.2), lowercasing the name
 * into a scratch buffer on the way so the lookup can hash and compare it byte for byte.
 */
#include "wire.h"

#include <string.h>

#include "hash.h"

/* ASCII letters of eight bytes at once made lowercase; other bytes, label lengths included
 * (never above 63), stay as they are. */
static inline uint64_t zb_lower8(uint64_t w)
{
	uint64_t low7 = w & 0x7f7f7f7f7f7f7f7full;
	uint64_t at_least_a = low7 + 0x3f3f3f3f3f3f3f3full; /* bit 7 set where byte >= 'A' */
	uint64_t above_z = low7 + 0x2525252525252525ull;    /* bit 7 set where byte > 'Z' */
	uint64_t upper = at_least_a & ~above_z & ~w & 0x8080808080808080ull;
	return w | (upper >> 2);
}

int zb_parse_question(const uint8_t *pkt, size_t len, uint64_t seed, struct zb_question *q)
{
	const uint8_t *name = pkt + ZB_HEADER_LEN, *p = name;
	/* The root label must lie within the packet and within 255 octets of the name's start:
	 * one bound checks both. */
	const uint8_t *limit = pkt + (len < ZB_HEADER_LEN + ZB_MAX_NAME ? len
								: ZB_HEADER_LEN + ZB_MAX_NAME);
	unsigned nlabels = 0;

	/* Walk the labels: each a plain length. */
	for (;;) {
		if (p >= limit)
			return -1;
		unsigned label = *p;
		if (label - 1 >= 63) { /* the root, or not a plain length: */
			if (label == 0)
				break;
			return -1; /* 0xC0 pointer, 0x40/0x80 extended or reserved label types */
		}
		q->label_off[nlabels++] = (uint8_t)(p - name);
		p += 1 + label;
	}
	size_t name_len = (size_t)(p - name) + 1;
	size_t end = (size_t)(p - pkt) + 5;
	if (end > len)
		return -1;
	q->label_off[nlabels] = (uint8_t)(name_len - 1);
	q->nlabels = (uint8_t)nlabels;
	q->name_len = (uint16_t)name_len;
	q->qtype = zb_get16(p + 1);
	q->qclass = zb_get16(p + 3);
	q->end = (uint16_t)end;

	/* Lowercase and hash a word at a time, straight from the packet (which has slack to
	 * read a word past its end: ZB_QUERY_SLACK); the last word is zero-padded. */
	uint64_t h = zb_hash_start(name_len, seed);
	uint64_t w;
	size_t i = 0;
	for (; i + 8 <= name_len; i += 8) {
		memcpy(&w, name + i, 8);
		w = zb_lower8(w);
		memcpy(q->lower + i, &w, 8);
		h = zb_hash_word(h, w);
	}
	if (i < name_len) {
		memcpy(&w, name + i, 8);
		w = zb_lower8(w & (~0ull >> (8 * (8 - (name_len - i)))));
		memcpy(q->lower + i, &w, 8);
		h = zb_hash_word(h, w);
	}
	q->hash = zb_fmix64(h);
	return 0;
}

int zb_skip_name(const uint8_t *pkt, size_t len, size_t *off)
{
	for (;;) {
		if (*off >= len)
			return -1;
		uint8_t label = pkt[*off];
		if (label == 0) {
			*off += 1;
			return 0;
		}
		if ((label & 0xC0) == 0xC0) {
			if (*off + 2 > len)
				return -1;
			*off += 2;
			return 0;
		}
		if (label > 63)
			return -1;
		*off += 1 + (size_t)label;
	}
}

static int parse_opt(const uint8_t *rdata, size_t rdlength, struct zb_edns *edns)
{
	size_t off = 0;

	while (off + 4 <= rdlength) {
		uint16_t code = zb_get16(rdata + off);
		size_t optlen = zb_get16(rdata + off + 2);
		const uint8_t *value = rdata + off + 4;
		off += 4 + optlen; /* unknown options are ignored (RFC 6891 §6.1.2) */
		if (off > rdlength)
			return -1;
		/* A client cookie alone, or with a server cookie of 8 to 32 octets (RFC 7873
		 * §4); the first COOKIE option counts. */
		if (code == ZB_EDNS_OPTION_COOKIE && !edns->cookie_len && !edns->cookie_malformed) {
			if (optlen == 8 || (optlen >= 16 && optlen <= 40)) {
				edns->cookie = value;
				edns->cookie_len = (uint8_t)optlen;
			} else {
				edns->cookie_malformed = 1;
			}
		} else if (code == ZB_EDNS_OPTION_NSID) {
			edns->nsid = 1;
		}
	}
	return off == rdlength ? 0 : -1;
}

/* The OPT record whose TYPE field is at `off`: the requestor's payload size, EDNS version,
 * flags and options (RFC 6891 §6.1.2-3). */
static int take_opt(const uint8_t *pkt, size_t off, uint16_t rdlength, struct zb_edns *edns)
{
	edns->present = 1;
	edns->udp_size = zb_get16(pkt + off + 2);
	edns->version = pkt[off + 5];
	edns->flags = zb_get16(pkt + off + 6);
	return rdlength ? parse_opt(pkt + off + 10, rdlength, edns) : 0;
}

int zb_parse_additional(const uint8_t *pkt, size_t len, size_t off, unsigned count,
			struct zb_edns *edns)
{
	*edns = (struct zb_edns){ 0 };
	/* Most queries: the OPT record alone, at the end. */
	if (count == 1 && off + 11 <= len && pkt[off] == 0 && zb_get16(pkt + off + 1) == ZB_TYPE_OPT) {
		uint16_t rdlength = zb_get16(pkt + off + 9);
		return off + 11 + rdlength == len ? take_opt(pkt, off + 1, rdlength, edns) : -1;
	}
	for (unsigned i = 0; i < count; i++) {
		size_t owner = off;
		if (zb_skip_name(pkt, len, &off) != 0 || off + 10 > len)
			return -1;
		uint16_t type = zb_get16(pkt + off);
		uint16_t rdlength = zb_get16(pkt + off + 8);
		if (off + 10 + rdlength > len)
			return -1;
		if (type == ZB_TYPE_OPT) {
			if (edns->present || off != owner + 1 || pkt[owner] != 0 ||
			    take_opt(pkt, off, rdlength, edns) != 0)
				return -1;
		}
		off += 10 + (size_t)rdlength;
	}
	return off == len ? 0 : -1;
}
