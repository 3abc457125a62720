/*
 * wire.c - parse the question section of a query (RFC 1035 §4.1.2), lowercasing the name
 * into a scratch buffer on the way so the lookup can hash and compare it byte for byte.
 */
#include "wire.h"

static inline uint8_t zb_lower(uint8_t c)
{
	return (uint8_t)(c - 'A') < 26 ? (uint8_t)(c + ('a' - 'A')) : c;
}

int zb_parse_question(const uint8_t *pkt, size_t len, struct zb_question *q)
{
	size_t off = ZB_HEADER_LEN;
	size_t name_len = 0;
	unsigned nlabels = 0;

	for (;;) {
		if (off >= len)
			return -1;
		uint8_t label = pkt[off];
		if (label == 0)
			break;
		if (label > 63) /* 0xC0 pointer, 0x40/0x80 extended or reserved label types */
			return -1;
		if (name_len + 1 + label + 1 > ZB_MAX_NAME || off + 1 + label >= len)
			return -1;
		q->label_off[nlabels++] = (uint8_t)name_len;
		q->lower[name_len] = label;
		for (unsigned i = 1; i <= label; i++)
			q->lower[name_len + i] = zb_lower(pkt[off + i]);
		name_len += 1 + (size_t)label;
		off += 1 + (size_t)label;
	}
	q->label_off[nlabels] = (uint8_t)name_len;
	q->lower[name_len++] = 0;
	off++;
	if (off + 4 > len)
		return -1;
	q->name_len = (uint16_t)name_len;
	q->nlabels = (uint8_t)nlabels;
	q->qtype = zb_get16(pkt + off);
	q->qclass = zb_get16(pkt + off + 2);
	q->end = (uint16_t)(off + 4);
	return 0;
}

/* Step over a name in a record; it may end in a compression pointer. */
static int skip_name(const uint8_t *pkt, size_t len, size_t *off)
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

	while (off < rdlength) {
		if (off + 4 > rdlength)
			return -1;
		uint16_t code = zb_get16(rdata + off);
		uint16_t optlen = zb_get16(rdata + off + 2);
		if (off + 4 + optlen > rdlength)
			return -1;
		if (code == ZB_EDNS_OPTION_NSID)
			edns->nsid = 1;
		off += 4 + (size_t)optlen; /* unknown options are ignored (RFC 6891 §6.1.2) */
	}
	return 0;
}

int zb_parse_additional(const uint8_t *pkt, size_t len, size_t off, unsigned count,
			struct zb_edns *edns)
{
	*edns = (struct zb_edns){ 0 };
	for (unsigned i = 0; i < count; i++) {
		size_t owner = off;
		if (skip_name(pkt, len, &off) != 0 || off + 10 > len)
			return -1;
		uint16_t type = zb_get16(pkt + off);
		uint16_t rdlength = zb_get16(pkt + off + 8);
		const uint8_t *rdata = pkt + off + 10;
		if (off + 10 + rdlength > len)
			return -1;
		if (type == ZB_TYPE_OPT) {
			if (edns->present || off != owner + 1 || pkt[owner] != 0)
				return -1;
			edns->present = 1;
			edns->udp_size = zb_get16(pkt + off + 2);
			edns->version = pkt[off + 5];
			edns->flags = zb_get16(pkt + off + 6);
			if (parse_opt(rdata, rdlength, edns) != 0)
				return -1;
		}
		off += 10 + (size_t)rdlength;
	}
	return off == len ? 0 : -1;
}
