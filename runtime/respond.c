/*
 * respond.c - the request handler: check the header, parse the question, look the answer up,
 * and copy it out. No record is encoded here: the response is the query's own header and
 * question, then a body the compiler serialized, with ID, flags and counts patched.
 */
#include "respond.h"

#include <string.h>

#include "lookup.h"
#include "wire.h"

/* A response with no records: the header, and the question when it could be parsed. */
static size_t error_response(const uint8_t *query, const struct zb_question *q, unsigned rcode,
			     uint8_t *out)
{
	uint16_t flags = zb_hdr_flags(query);
	size_t len = ZB_HEADER_LEN;

	memcpy(out, query, 2); /* ID */
	/* Keep OPCODE and RD (RFC 1035 §4.1.1); AA, TC, RA, Z, AD clear; CD kept (RFC 6840). */
	zb_put16(out + 2, (uint16_t)(ZB_FLAG_QR | (flags & (0x7800u | ZB_FLAG_RD | ZB_FLAG_CD)) |
				     rcode));
	memset(out + 4, 0, 8);
	if (q) {
		zb_put16(out + 4, 1);
		memcpy(out + ZB_HEADER_LEN, query + ZB_HEADER_LEN, q->end - ZB_HEADER_LEN);
		len = q->end;
	}
	return len;
}

/* Shift every compression pointer in a body compiled for a shorter name (see wire.py). */
static void apply_fixups(const struct zb_zoneset *zs, const struct zb_answer *answer,
			 uint8_t *body, size_t body_len, unsigned delta)
{
	const uint8_t *fixup = zs->data + answer->fixups_off;

	for (unsigned i = 0; i < answer->nfixups; i++) {
		uint16_t at;
		memcpy(&at, fixup + 2 * i, 2); /* little-endian, as zonedata.h requires */
		if (at + 2u > body_len)
			break; /* the rest lies in records the truncation cut off */
		zb_put16(body + at, (uint16_t)(zb_get16(body + at) + delta));
	}
}

size_t zb_respond(const struct zb_zoneset *zs, const uint8_t *query, size_t len, uint8_t *out,
		  size_t limit)
{
	struct zb_question q;

	if (len < ZB_HEADER_LEN || (zb_hdr_flags(query) & ZB_FLAG_QR))
		return 0;
	int parsed = zb_hdr_qdcount(query) == 1 && zb_parse_question(query, len, &q) == 0;
	if (zb_hdr_opcode(query) != ZB_OPCODE_QUERY)
		return error_response(query, parsed ? &q : NULL, ZB_RCODE_NOTIMP, out);
	if (!parsed)
		return error_response(query, NULL, ZB_RCODE_FORMERR, out);
	if (q.qclass != ZB_CLASS_IN)
		return error_response(query, &q, ZB_RCODE_REFUSED, out);

	const struct zb_answer *answer = zb_lookup(zs, &q);
	if (!answer)
		return error_response(query, &q, ZB_RCODE_REFUSED, out);

	/* Header: ID from the query, flags and counts from the answer, RD and CD copied. */
	memcpy(out, query, 2);
	memcpy(out + 2, answer->header, 10);
	out[2] |= query[2] & (ZB_FLAG_RD >> 8);
	out[3] |= query[3] & ZB_FLAG_CD;
	memcpy(out + ZB_HEADER_LEN, query + ZB_HEADER_LEN, q.end - ZB_HEADER_LEN);

	size_t body_len = answer->body_len;
	if (q.end + body_len > limit) {
		/* RFC 2181 §9: drop the optional additional records first; if what remains still
		 * does not fit, send the question alone with TC set. */
		body_len = answer->trunc_len;
		if (q.end + body_len > limit) {
			out[2] |= ZB_FLAG_TC >> 8;
			memset(out + 6, 0, 6);
			return q.end;
		}
		zb_put16(out + 10, answer->trunc_arcount);
	}
	uint8_t *body = out + q.end;
	memcpy(body, zs->data + answer->body_off, body_len);
	if (q.name_len != answer->base_len)
		apply_fixups(zs, answer, body, body_len, q.name_len - answer->base_len);
	return q.end + body_len;
}
