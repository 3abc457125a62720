/*
 * wire.c - step over names, parse a query's additional section and its OPT record
 * (RFC 6891). The question's parser is in wire.h, inlined into the request handler.
 */
#include "query/wire.h"

#include <string.h>

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
	zb_take_opt_fields(pkt + off, edns);
	return rdlength ? parse_opt(pkt + off + 10, rdlength, edns) : 0;
}

int zb_parse_additional(const uint8_t *pkt, size_t len, size_t off, unsigned count,
			struct zb_edns *edns)
{
	*edns = (struct zb_edns){ 0 };
	/* Most queries: the OPT record alone, at the end. */
	if (count == 1 && off + ZB_OPT_LEN <= len && pkt[off] == 0 &&
	    zb_get16(pkt + off + 1) == ZB_TYPE_OPT) {
		uint16_t rdlength = zb_get16(pkt + off + 9);
		return off + ZB_OPT_LEN + rdlength == len ? take_opt(pkt, off + 1, rdlength, edns) : -1;
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
