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
