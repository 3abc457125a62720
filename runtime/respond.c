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

/* Query types no zone data answers: zone transfers (zonebake has none; AXFR over UDP is
 * NOTIMP in Knot too), the obsolete mail meta-types (RFC 1035 §3.2.3; NOTIMP as NSD), and
 * type 0 (reserved, RFC 6895 §3.1; NOTIMP as Knot). */
static int is_unimplemented_qtype(uint16_t qtype)
{
	return qtype == 0 || (qtype >= ZB_TYPE_IXFR && qtype <= ZB_TYPE_MAILA);
}

/* Copy an answer body behind the question. For a DNAME synthesis the query name's labels in
 * front of the DNAME owner go in at dname_split, finishing the CNAME's target (RFC 6672).
 * Then every compression pointer is shifted by how much longer the query name is than the
 * name the body was compiled against (see compiler/wire.py). Returns the bytes written. */
static size_t copy_body(const struct zb_zoneset *zs, const struct zb_answer *answer,
			const uint8_t *query, const struct zb_question *q, uint8_t *body,
			size_t body_len)
{
	const uint8_t *src = zs->data + answer->body_off;
	unsigned delta = q->name_len - answer->base_len;
	size_t split = answer->dname_split, insert = 0;

	if (split) {
		insert = q->name_len - answer->dname_owner_len;
		memcpy(body, src, split);
		memcpy(body + split, query + ZB_HEADER_LEN, insert);
		memcpy(body + split + insert, src + split, body_len - split);
		zb_put16(body + split - 2, (uint16_t)(insert + 2)); /* the CNAME's RDLENGTH */
	} else {
		memcpy(body, src, body_len);
	}
	if (delta) {
		const uint8_t *fixup = zs->data + answer->fixups_off;
		for (unsigned i = 0; i < answer->nfixups; i++) {
			uint16_t at;
			memcpy(&at, fixup + 2 * i, 2); /* little-endian, as zonedata.h requires */
			if (at >= body_len)
				break; /* the rest lies in records the truncation cut off */
			size_t pos = at + (split && at >= split ? insert : 0);
			zb_put16(body + pos, (uint16_t)(zb_get16(body + pos) + delta));
		}
	}
	return body_len + insert;
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
	/* Class ANY matches our class IN data (RFC 1035 §3.2.5; Knot and NSD answer it). */
	if (q.qclass != ZB_CLASS_IN && q.qclass != ZB_CLASS_ANY)
		return error_response(query, &q, ZB_RCODE_REFUSED, out);
	if (is_unimplemented_qtype(q.qtype))
		return error_response(query, &q, ZB_RCODE_NOTIMP, out);

	const struct zb_answer *answer = zb_lookup(zs, &q);
	if (!answer)
		return error_response(query, &q, ZB_RCODE_REFUSED, out);
	size_t insert = 0;
	if (answer->dname_split) {
		insert = q.name_len - answer->dname_owner_len;
		if (insert > answer->dname_max_prefix) {
			answer = &zs->answers[answer->overflow]; /* YXDOMAIN (RFC 6672 §2.2) */
			insert = 0;
		}
	}

	/* Header: ID from the query, flags and counts from the answer, RD and CD copied. */
	memcpy(out, query, 2);
	memcpy(out + 2, answer->header, 10);
	out[2] |= query[2] & (ZB_FLAG_RD >> 8);
	out[3] |= query[3] & ZB_FLAG_CD;
	memcpy(out + ZB_HEADER_LEN, query + ZB_HEADER_LEN, q.end - ZB_HEADER_LEN);

	size_t body_len = answer->body_len;
	if (q.end + body_len + insert > limit) {
		/* RFC 2181 §9: drop the optional additional records first; if what remains still
		 * does not fit, send the question alone with TC set. */
		body_len = answer->trunc_len;
		if (q.end + body_len + insert > limit) {
			out[2] |= ZB_FLAG_TC >> 8;
			memset(out + 6, 0, 6);
			return q.end;
		}
		zb_put16(out + 10, answer->trunc_arcount);
	}
	return q.end + copy_body(zs, answer, query, &q, out + q.end, body_len);
}
