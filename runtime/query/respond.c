/*
 * respond.c - the request handler: check the header, parse the question, look the answer up,
 * and copy it out. No record is encoded here: the response is the query's own header and
 * question, then a body the compiler serialized, with ID, flags and counts patched.
 */
#include "query/respond.h"

#include <string.h>

#include "query/chaos.h"
#include "query/denial.h"
#include "query/lookup.h"
#include "query/statkeys.h"
#include "query/wire.h"

#define ZB_COOKIE_OPTION_LEN (4 + ZB_COOKIE_LEN)

/* The options in a response's OPT record: NSID when asked for and configured (RFC 5001), the
 * cookie when the query had one (RFC 7873 §5.2). Out of line: few queries ask for either. */
static __attribute__((noinline)) void write_options(const struct zb_zoneset *zs,
						    const struct zb_edns *edns, uint8_t *option)
{
	if (edns->nsid) {
		zb_put16(option, ZB_EDNS_OPTION_NSID);
		zb_put16(option + 2, zs->identity_len);
		memcpy(option + 4, zs->identity, zs->identity_len);
		option += 4 + zs->identity_len;
	}
	if (edns->cookie_len) {
		zb_put16(option, ZB_EDNS_OPTION_COOKIE);
		zb_put16(option + 2, ZB_COOKIE_LEN);
		memcpy(option + 4, edns->cookie, ZB_COOKIE_LEN);
	}
}

/* The OPT record of a response (RFC 6891 §6.1), edns->opt_len octets: our payload size, the
 * upper bits of the RCODE, version 0, DO echoed (RFC 3225 §3), and the options. */
static size_t write_opt(const struct zb_zoneset *zs, const struct zb_edns *edns, unsigned rcode,
			uint8_t *at)
{
	at[0] = 0; /* the root */
	zb_put16(at + 1, ZB_TYPE_OPT);
	zb_put16(at + 3, zs->udp_size);
	at[5] = (uint8_t)(rcode >> 4);
	at[6] = 0;
	zb_put16(at + 7, edns->flags & ZB_OPT_FLAG_DO);
	zb_put16(at + 9, (uint16_t)(edns->opt_len - ZB_OPT_LEN));
	if (__builtin_expect(edns->opt_len != ZB_OPT_LEN, 0))
		write_options(zs, edns, at + ZB_OPT_LEN);
	return edns->opt_len;
}

/* A response with no records: the header, the question when it parsed, the OPT when the
 * query had a good one (RFC 6891 §7). */
static size_t error_response(const struct zb_zoneset *zs, const uint8_t *query,
			     const struct zb_question *q, const struct zb_edns *edns,
			     unsigned rcode, uint8_t *out, struct zb_query_facts *facts)
{
	uint16_t flags = zb_hdr_flags(query);
	size_t len = ZB_HEADER_LEN;

	*facts = (struct zb_query_facts){ .stat_key = zb_stat_key(q != NULL, q ? q->qtype : 0,
								  rcode),
					  .edns = edns && edns->present,
					  .cookie = edns ? edns->cookie_verdict : 0,
					  .rrl_key = ZB_RRL_KEY_ERROR };
	memcpy(out, query, 2); /* ID */
	/* Keep OPCODE and RD (RFC 1035 §4.1.1); AA, TC, RA, Z, AD clear; CD kept (RFC 6840). */
	zb_put16(out + 2, (uint16_t)(ZB_FLAG_QR | (flags & (0x7800u | ZB_FLAG_RD | ZB_FLAG_CD)) |
				     (rcode & 0xf)));
	memset(out + 4, 0, 8);
	if (q) {
		zb_put16(out + 4, 1);
		if (out != query)
			memcpy(out + ZB_HEADER_LEN, query + ZB_HEADER_LEN, q->end - ZB_HEADER_LEN);
		len = q->end;
	}
	if (edns && edns->present) {
		zb_put16(out + 10, 1);
		len += write_opt(zs, edns, rcode, out + len);
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

/* 32 octets copied through registers (a local array between would be stored too). */
static inline void copy_block(uint8_t *dst, const uint8_t *src)
{
#if defined(__SSE2__) && !defined(ZB_NO_SIMD)
	__m128i a = _mm_loadu_si128((const __m128i *)src);
	__m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
	_mm_storeu_si128((__m128i *)dst, a);
	_mm_storeu_si128((__m128i *)(dst + 16), b);
#else
	uint64_t w[4];
	memcpy(w, src, 32);
	memcpy(dst, w, 32);
#endif
}

/* Copy `len` octets of compiled data into a response. Up to 64 go in blocks of 32, up to 31
 * octets more than asked: the data holds at least 32 after every body (the names and their
 * zeros come last, compiler/core/layout/layout.c), and a response buffer (512 octets or more)
 * holds them after any question (271 at most) and 64 octets. */
static inline void copy_short(uint8_t *dst, const uint8_t *src, size_t len)
{
	if (__builtin_expect(len > 32, 0)) {
		if (len > 64) {
			memcpy(dst, src, len);
			return;
		}
		copy_block(dst + 32, src + 32);
	}
	copy_block(dst, src);
}

/* Shift every compression pointer of a copied body (the first `len` octets of it) by
 * `delta`, how much longer the query name is than the name the body was compiled against
 * (see compiler/core/layout/wire.c); those after a DNAME synthesis's `split` have moved
 * `insert` octets on. */
static inline __attribute__((always_inline)) void
shift_pointers(const struct zb_answer *answer, uint8_t *body,
	       size_t len, unsigned delta, size_t split, size_t insert)
{
	const uint16_t *fixup = (const uint16_t *)zb_from(answer, answer->fixups_off);
	unsigned n = answer->nfixups; /* read once: the stores below might alias it */
	if (len != answer->body_len) /* the last lie in records the truncation cut off */
		while (n && fixup[n - 1] >= len) /* little-endian, as zonedata.h requires */
			n--;
	for (unsigned i = 0; i < n; i++) {
		size_t pos = fixup[i] + (split && fixup[i] >= split ? insert : 0);
		zb_put16(body + pos, (uint16_t)(zb_get16(body + pos) + delta));
	}
}

/* A DNAME synthesis's body: the query name's labels in front of the DNAME owner go in at
 * dname_split, finishing the CNAME's target (RFC 6672). Out of line: few answers are. */
static __attribute__((noinline)) size_t
copy_synthesis(const struct zb_answer *answer,
	       const uint8_t *query, const struct zb_question *q, uint8_t *body, size_t body_len)
{
	const uint8_t *src = zb_answer_body(answer);
	size_t split = answer->dname_split, insert = q->name_len - answer->dname_owner_len;
	memcpy(body, src, split);
	memcpy(body + split, query + ZB_HEADER_LEN, insert);
	memcpy(body + split + insert, src + split, body_len - split);
	zb_put16(body + split - 2, (uint16_t)(insert + 2)); /* the CNAME's RDLENGTH */
	unsigned delta = q->name_len - answer->base_len;
	if (delta)
		shift_pointers(answer, body, body_len, delta, split, insert);
	return body_len + insert;
}

/* Copy the first `body_len` octets of an answer body behind the question, its compression
 * pointers shifted to the query name; a DNAME synthesis's with the query name's labels in
 * it. Returns the octets written. */
static size_t copy_body(const struct zb_answer *answer,
			const uint8_t *query, const struct zb_question *q, uint8_t *body,
			size_t body_len)
{
	if (__builtin_expect(answer->dname_split != 0, 0))
		return copy_synthesis(answer, query, q, body, body_len);
	copy_short(body, zb_answer_body(answer), body_len);
	unsigned delta = q->name_len - answer->base_len;
	if (delta)
		shift_pointers(answer, body, body_len, delta, 0, 0);
	return body_len;
}

/* Copy an answer body with the query name's denial (denial.h), `n` chain entries of `insert`
 * octets in all, at the end of its authority section: the body is copied as any, then what
 * follows that point moves up (nothing there is pointed to). Their owner names end in a
 * pointer to the zone's apex, a suffix of the query name. */
static size_t copy_with_denial(const struct zb_answer *answer,
			       const uint8_t *query, const struct zb_question *q, uint8_t *out,
			       size_t body_len, const struct zb_denial *const *denial, unsigned n,
			       size_t insert, unsigned apex_len)
{
	const struct zb_answer_denial *use =
		(const struct zb_answer_denial *)zb_from(answer, answer->denial);
	uint8_t *body = out + q->end;
	size_t written = copy_body(answer, query, q, body, body_len);
	size_t split = use->at + (written - body_len); /* past a DNAME's insertion */
	memmove(body + split + insert, body + split, written - split);
	uint16_t apex = (uint16_t)(0xC000 | (ZB_HEADER_LEN + q->name_len - apex_len));
	uint8_t *at = body + split;
	unsigned nrecords = 0;
	for (unsigned k = 0; k < n; k++) {
		const uint8_t *positions = (const uint8_t *)(denial[k] + 1);
		memcpy(at, positions + 2 * denial[k]->npointers, denial[k]->len);
		for (unsigned i = 0; i < denial[k]->npointers; i++) {
			uint16_t pos;
			memcpy(&pos, positions + 2 * i, 2);
			zb_put16(at + pos, apex);
		}
		at += denial[k]->len;
		nrecords += denial[k]->nrecords;
	}
	zb_put16(out + 8, (uint16_t)(zb_get16(out + 8) + nrecords)); /* NSCOUNT */
	return written + insert;
}

/* The response's records after the question, as many as fit in `room` (RFC 2181 §9), `insert`
 * octets of the query name going into a DNAME's synthesis; returns the response's length. */
static inline size_t copy_answer(const uint8_t *query,
				 const struct zb_question *q, const struct zb_answer *answer,
				 uint8_t *out, size_t room, size_t insert)
{
	size_t body_len = answer->body_len;
	if (q->end + body_len + insert <= room) {
		if (!insert && q->name_len == answer->base_len) { /* an exact match: a plain copy */
			copy_short(out + q->end, zb_answer_body(answer), body_len);
			return q->end + body_len;
		}
		return q->end + copy_body(answer, query, q, out + q->end, body_len);
	}
	if (q->end + answer->trunc_len + insert <= room) {
		/* RFC 2181 §9: the optional additional records go first. */
		zb_put16(out + 10, answer->trunc_arcount);
		return q->end + copy_body(answer, query, q, out + q->end, answer->trunc_len);
	}
	/* Answer, authority or required glue do not fit: the question alone, with TC. */
	out[2] |= ZB_FLAG_TC >> 8;
	memset(out + 6, 0, 6);
	return q->end;
}

/* An alias's composed response after the question (zonedata.h, struct zb_answer_alias):
 * the CNAME part, then the first `len` octets of the target's body behind it, each of their
 * compression pointers moved; the target's answer was made behind a question for its own
 * name, which the CNAME's target, written whole, now stands for. */
static void copy_alias(const struct zb_answer *answer, const struct zb_answer *target,
		       unsigned target_at, uint8_t *body, size_t body_start, size_t len)
{
	size_t split = answer->dname_split;
	memcpy(body, zb_answer_body(answer), split);
	uint8_t *tail = body + split;
	memcpy(tail, zb_answer_body(target), len);
	const uint16_t *fixup = (const uint16_t *)zb_from(target, target->fixups_off);
	unsigned own_start = ZB_HEADER_LEN + target->base_len + 4; /* its body, where it was made */
	for (unsigned i = 0; i < target->nfixups && fixup[i] < len; i++) { /* fixups ascend */
		uint8_t *at = tail + fixup[i];
		unsigned to = zb_get16(at) & 0x3FFF;
		to = to < own_start ? (unsigned)body_start + target_at + (to - ZB_HEADER_LEN)
				    : (unsigned)(body_start + split) + (to - own_start);
		zb_put16(at, (uint16_t)(0xC000 | to));
	}
}

/* copy_answer for an alias: as many of the composed records as fit in `room`; the optional
 * additional records are the target's. */
static size_t copy_alias_answer(const struct zb_question *q, const struct zb_answer *answer,
				const struct zb_answer *target, uint8_t *out, size_t room)
{
	const struct zb_answer_alias *alias =
		(const struct zb_answer_alias *)((const uint8_t *)answer + answer->overflow);
	size_t split = answer->dname_split, len = target->body_len;
	if (q->end + split + len > room) {
		len = target->trunc_len;
		zb_put16(out + 10, target->trunc_arcount); /* the CNAME part has none */
	}
	if (q->end + split + len > room) {
		out[2] |= ZB_FLAG_TC >> 8;
		memset(out + 6, 0, 6);
		return q->end;
	}
	copy_alias(answer, target, alias->target_at, out + q->end, q->end, len);
	return q->end + split + len;
}

/* The answer an alias's target has for the question (zonedata.h). */
static const struct zb_answer *alias_target(const struct zb_zoneset *zs,
					    const struct zb_question *q,
					    enum zb_transport transport,
					    const struct zb_answer *answer)
{
	const struct zb_answer_alias *alias =
		(const struct zb_answer_alias *)((const uint8_t *)answer + answer->overflow);
	const struct zb_node *node = (const struct zb_node *)(zs->data +
		zs->groups[alias->group].nodes_off + alias->node);
	return zb_answer_for_type(node, zb_lookup_key(q, transport == ZB_TCP));
}

/* copy_answer with the chain entries the answer names (its NSEC3 proofs, stored once in the
 * chain) and the query name's denial (RFC 4035 §3.1.3, RFC 5155 §7.2), unless the answer
 * holds it already: the denial is required (RFC 4035 §3.1.1), so only the optional
 * additional records may go to make room, and without them TC. Out of line: the answers
 * without DNSSEC never come here. */
static __attribute__((noinline)) size_t
respond_denied(const struct zb_zoneset *zs, const uint8_t *query, const struct zb_question *q,
	       const struct zb_answer *answer, const struct zb_encloser *encloser, uint8_t *out,
	       size_t room)
{
	const struct zb_denial *denial[ZB_MAX_DENIALS];
	unsigned apex_len;
	unsigned n = zb_find_denials(zs, q, encloser, answer, denial, &apex_len);
	size_t denied = 0, insert = answer->dname_split ? q->name_len - answer->dname_owner_len : 0;
	if (n == 0)
		return copy_answer(query, q, answer, out, room, insert);
	for (unsigned k = 0; k < n; k++)
		denied += denial[k]->len;
	size_t body_len = answer->body_len;
	if (q->end + body_len + insert + denied > room)
		body_len = answer->trunc_len;
	if (q->end + body_len + insert + denied > room) {
		out[2] |= ZB_FLAG_TC >> 8;
		memset(out + 6, 0, 6);
		return q->end;
	}
	if (body_len != answer->body_len)
		zb_put16(out + 10, answer->trunc_arcount);
	return q->end + copy_with_denial(answer, query, q, out, body_len, denial, n, denied,
					 apex_len);
}

/* The largest response this query may get (RFC 1035 §4.2.1, RFC 6891 §6.2.5). */
static size_t size_limit(const struct zb_zoneset *zs, const struct zb_edns *edns,
			 enum zb_transport transport)
{
	if (transport == ZB_TCP)
		return ZB_RESPONSE_MAX;
	if (!edns->present || edns->udp_size <= ZB_UDP_PLAIN_MAX)
		return ZB_UDP_PLAIN_MAX;
	return edns->udp_size < zs->udp_size ? edns->udp_size : zs->udp_size;
}

static size_t respond_alias(const struct zb_zoneset *zs, const uint8_t *query,
			    const struct zb_question *q, const struct zb_edns *edns,
			    enum zb_transport transport, const struct zb_answer *answer,
			    uint8_t *out, struct zb_query_facts *facts);

/* The response to a question whose answer is found (NULL: in no zone served): the header,
 * the question, the records that fit, the OPT. `encloser` is NULL but with DNSSEC, where the
 * query name's denial may go in; `target` NULL but for an alias's answer (respond_alias).
 * Written once, inlined into each caller, so that the plain one has nothing to test for
 * either. */
static inline __attribute__((always_inline)) size_t
respond_composed(const struct zb_zoneset *zs, const uint8_t *query,
		 const struct zb_question *q, const struct zb_edns *edns,
		 enum zb_transport transport, const struct zb_answer *answer,
		 const struct zb_answer *target, const struct zb_encloser *encloser,
		 uint8_t *out, struct zb_query_facts *facts)
{
	if (!answer)
		return error_response(zs, query, q, edns, ZB_RCODE_REFUSED, out, facts);
	size_t insert = 0;
	if (!target && answer->dname_split) {
		if (!answer->dname_owner_len)
			return respond_alias(zs, query, q, edns, transport, answer, out, facts);
		insert = q->name_len - answer->dname_owner_len;
		if (insert > answer->dname_max_prefix) {
			/* YXDOMAIN (RFC 6672 §2.2): an answer before or after this one */
			answer = (const struct zb_answer *)((const uint8_t *)answer + answer->overflow);
			insert = 0;
		}
	}

	/* Header: ID from the query, flags and counts from the answer, RD and CD copied (the
	 * answer has them clear), the first eight octets after the ID as one little-endian
	 * word. When answering in place (out == query) the question is already where it
	 * belongs. */
	uint64_t flags, counts;
	memcpy(&flags, query + 2, 8);
	memcpy(&counts, answer->header, 8);
	counts |= flags & (ZB_FLAG_RD >> 8 | (uint64_t)ZB_FLAG_CD << 8);
	if (out != query) {
		memcpy(out, query, 2);
		memcpy(out + ZB_HEADER_LEN, query + ZB_HEADER_LEN, q->end - ZB_HEADER_LEN);
	}
	memcpy(out + 2, &counts, 8);
	memcpy(out + 10, answer->header + 8, 2);
	if (target) /* the CNAME part's counts, and the target's records' */
		for (unsigned at = 6; at <= 10; at += 2)
			zb_put16(out + at, (uint16_t)(zb_get16(out + at) +
						      zb_get16(target->header + at - 2)));
	size_t opt = edns->opt_len;
	*facts = (struct zb_query_facts){
		.stat_key = zb_stat_key(1, q->qtype, answer->header[1] & 0xf),
		.edns = edns->present, .cookie = edns->cookie_verdict,
		.rrl_key = (uint32_t)((uintptr_t)answer - (uintptr_t)zs->data) };

	size_t room = size_limit(zs, edns, transport) - opt;
	size_t end;
	if (target)
		end = copy_alias_answer(q, answer, target, out, room);
	else if (encloser && answer->denial)
		end = respond_denied(zs, query, q, answer, encloser, out, room);
	else
		end = copy_answer(query, q, answer, out, room, insert);
	if (opt) {
		zb_put16(out + 10, (uint16_t)(zb_get16(out + 10) + 1));
		end += write_opt(zs, edns, 0, out + end);
	}
	return end;
}

static inline __attribute__((always_inline)) size_t
respond_with(const struct zb_zoneset *zs, const uint8_t *query, const struct zb_question *q,
	     const struct zb_edns *edns, enum zb_transport transport,
	     const struct zb_answer *answer, const struct zb_encloser *encloser, uint8_t *out,
	     struct zb_query_facts *facts)
{
	return respond_composed(zs, query, q, edns, transport, answer, NULL, encloser, out,
				facts);
}

/* An alias's answer: the CNAME part and its target's answer (zonedata.h). Out of line: most
 * answers are not. */
static __attribute__((noinline)) size_t
respond_alias(const struct zb_zoneset *zs, const uint8_t *query, const struct zb_question *q,
	      const struct zb_edns *edns, enum zb_transport transport,
	      const struct zb_answer *answer, uint8_t *out, struct zb_query_facts *facts)
{
	const struct zb_answer *target = alias_target(zs, q, transport, answer);
	return respond_composed(zs, query, q, edns, transport, answer, target, NULL, out, facts);
}

/* DO set: the answers with DNSSEC (RFC 4035 §3.1), where the zone set has them (a set
 * without signed zones has signed_nodes 0: the plain answers), for a name the batch's stages
 * did not find, or found no node for. */
static __attribute__((noinline)) size_t
respond_signed(const struct zb_zoneset *zs, const uint8_t *query, const struct zb_query *r,
	       enum zb_transport transport, uint8_t *out, struct zb_query_facts *facts)
{
	struct zb_encloser found = { 0 }; /* a name with a node has none */
	const struct zb_encloser *encloser = &found;
	const struct zb_answer *answer;
	int tcp = transport == ZB_TCP;
	if (r->verdict == ZB_VERDICT_BELOW_SIGNED) {
		answer = r->below;
		encloser = &r->encloser;
	} else if (r->missed) {
		answer = zb_lookup_below_signed(zs, &r->q, tcp, &found);
	} else {
		answer = zb_lookup_signed(zs, &r->q, tcp, &found);
	}
	return respond_with(zs, query, &r->q, &r->edns, transport, answer, encloser, out, facts);
}

/* DO set, a name the batch's stages found whose answer names NSEC3 entries to add
 * (zonedata.h, struct zb_answer_denial): a NODATA, a referral without DS. */
static __attribute__((noinline)) size_t
respond_keyed(const struct zb_zoneset *zs, const uint8_t *query, const struct zb_query *r,
	      enum zb_transport transport, const struct zb_answer *answer, uint8_t *out,
	      struct zb_query_facts *facts)
{
	const struct zb_encloser found = { 0 }; /* a name with a node has none */
	return respond_with(zs, query, &r->q, &r->edns, transport, answer, &found, out, facts);
}

/* The options a query's OPT record asked for. A COOKIE option is ignored without cookies
 * (RFC 7873 §5.2: as a server that knows none), else the cookie to return goes into `reply`
 * and edns->cookie points there. NSID is optional (RFC 5001 §2.3): it goes when configured
 * and when the question and the OPT with it fit in what the client takes, so that no
 * response, an error or a bare TC included, is larger (RFC 6891 §6.2.5). Sets edns->opt_len;
 * returns -1 when the COOKIE option is malformed (FORMERR, RFC 7873 §5.2.2). Written once,
 * inlined into the reading of a guessed query with a cookie, and called out of line by the
 * full read (take_options): most queries ask for neither. */
static inline __attribute__((always_inline)) int
take_options_inline(const struct zb_zoneset *zs, const struct zb_client *client,
		    struct zb_edns *edns, size_t question_end, enum zb_transport transport,
		    uint8_t reply[ZB_COOKIE_LEN])
{
	if (!client || !client->cookies)
		edns->cookie_len = edns->cookie_malformed = 0;
	if (edns->cookie_malformed) {
		edns->nsid = 0;
		return -1;
	}
	if (edns->cookie_len) {
		if (zb_cookie_fresh(client, edns->cookie, edns->cookie_len)) {
			memcpy(reply, edns->cookie, ZB_COOKIE_LEN);
			edns->cookie_verdict = ZB_COOKIE_VALID;
		} else {
			edns->cookie_verdict = (uint8_t)zb_cookie_answer(client, edns->cookie,
									 edns->cookie_len, reply);
		}
		edns->cookie = reply;
		edns->cookie_len = ZB_COOKIE_LEN;
		edns->opt_len += ZB_COOKIE_OPTION_LEN;
	}
	if (edns->nsid && zs->identity_len &&
	    question_end + edns->opt_len + 4 + zs->identity_len <=
		    size_limit(zs, edns, transport))
		edns->opt_len += 4 + zs->identity_len;
	else
		edns->nsid = 0;
	return 0;
}

static __attribute__((noinline)) int take_options(const struct zb_zoneset *zs,
						  const struct zb_client *client,
						  struct zb_edns *edns, size_t question_end,
						  enum zb_transport transport,
						  uint8_t reply[ZB_COOKIE_LEN])
{
	return take_options_inline(zs, client, edns, question_end, transport, reply);
}

/* A query answered by a response without records. */
static enum zb_verdict refuse(struct zb_query *r, unsigned rcode, int question)
{
	r->rcode = (uint8_t)rcode;
	r->question = (uint8_t)question;
	return r->verdict = ZB_VERDICT_ERROR;
}

/* read_query's checks of a query not taken on a guess: the question parsed, the other
 * sections and the OPT record checked. Returns 0, or ZB_VERDICT_ERROR with `r` refused. */
static inline __attribute__((always_inline)) int
read_in_full(const struct zb_zoneset *zs, const uint8_t *query, size_t len,
	     enum zb_transport transport, const struct zb_client *client, struct zb_query *r,
	     int plain, unsigned arcount)
{
	struct zb_question *q = &r->q;
	struct zb_edns *edns = &r->edns;

	if ((!plain && zb_hdr_qdcount(query) != 1) ||
	    zb_parse_question(query, len, zs->hash_key, q) != 0)
		return refuse(r, zb_hdr_opcode(query) != ZB_OPCODE_QUERY ? ZB_RCODE_NOTIMP
								  : ZB_RCODE_FORMERR, 0);
	/* A query carries no answer or authority records; the additional section holds at most
	 * one OPT, and nothing may follow it (Knot says FORMERR to the same). */
	if (!plain && (zb_hdr_ancount(query) || zb_hdr_nscount(query)))
		return refuse(r, ZB_RCODE_FORMERR, 1);
	if (arcount) {
		if (zb_parse_additional(query, len, q->end, arcount, edns) != 0) {
			*edns = (struct zb_edns){ 0 }; /* no OPT goes back in the FORMERR */
			return refuse(r, ZB_RCODE_FORMERR, 1);
		}
		edns->opt_len = edns->present ? ZB_OPT_LEN : 0;
		if (__builtin_expect(edns->nsid | edns->cookie_len | edns->cookie_malformed, 0) &&
		    take_options(zs, client, edns, q->end, transport, r->cookie) != 0)
			return refuse(r, ZB_RCODE_FORMERR, 1);
	} else if (q->end != len) {
		return refuse(r, ZB_RCODE_FORMERR, 1);
	}
	if (!plain && zb_hdr_opcode(query) != ZB_OPCODE_QUERY)
		return refuse(r, ZB_RCODE_NOTIMP, 1);
	if (edns->present && edns->version != 0)
		return refuse(r, ZB_RCODE_BADVERS, 1); /* RFC 6891 §6.1.3 */
	return 0;
}

/* read_query's reading of a plain query that ends in an OPT record with one COOKIE option,
 * `tail` octets after its name (zb_guess_cookie_tail), its question taken on a guess as the
 * other plain ones are, the option as read_in_full takes it. Returns 0, or ZB_VERDICT_ERROR
 * with `r` refused; a guess that does not fit has the query read in full. Out of line: the
 * other forms guessed have no options. */
static __attribute__((noinline)) int read_cookie_guess(const struct zb_zoneset *zs,
						       const uint8_t *query, size_t len,
						       size_t tail, enum zb_transport transport,
						       const struct zb_client *client,
						       struct zb_query *r)
{
	struct zb_question *q = &r->q;
	struct zb_edns *edns = &r->edns;
	if (zb_guess_question(query, len, tail, zs->hash_key, q) != 0)
		return read_in_full(zs, query, len, transport, client, r, 1, 1);
	zb_take_opt_fields(query + q->end + 1, edns);
	edns->opt_len = ZB_OPT_LEN;
	edns->cookie = query + q->end + ZB_OPT_LEN + 4;
	edns->cookie_len = (uint8_t)(tail - 4 - ZB_OPT_LEN - 4);
	if (take_options_inline(zs, client, edns, q->end, transport, r->cookie) != 0)
		return refuse(r, ZB_RCODE_FORMERR, 1);
	if (edns->version != 0)
		return refuse(r, ZB_RCODE_BADVERS, 1); /* RFC 6891 §6.1.3 */
	return 0;
}

/* Read a query into `r`: its header, question and OPT checked; returns r->verdict. With
 * `plain`, the caller has found the header plain (zb_plain_header), and the question is
 * taken on a guess at its name's length (zb_guess_question): the verdict holds only where
 * it is a lookup, and the name's labels are walked before a lookup that does not find it
 * whole relies on them. Written once, inlined into zb_respond and into the UDP batch's
 * loop. */
static inline __attribute__((always_inline)) enum zb_verdict
read_query(const struct zb_zoneset *zs, const uint8_t *query, size_t len,
	   enum zb_transport transport, const struct zb_client *client, struct zb_query *r,
	   int plain)
{
	struct zb_question *q = &r->q;
	struct zb_edns *edns = &r->edns;

	*edns = (struct zb_edns){ 0 };
	r->answer = NULL;
	r->missed = 0;
	if (!plain && (len < ZB_HEADER_LEN || (query[2] & (ZB_FLAG_QR >> 8))))
		return r->verdict = ZB_VERDICT_DROP;
	unsigned arcount = zb_hdr_arcount(query);
	size_t tail = plain && arcount <= 1 ? zb_guess_tail(query, len, arcount) : 0;
	if (tail && zb_guess_question(query, len, tail, zs->hash_key, q) == 0) {
		/* The guess took the question to the query's end, or to the OPT record without
		 * options that ends it. */
		if (arcount) {
			zb_take_opt_fields(query + q->end + 1, edns);
			edns->opt_len = ZB_OPT_LEN;
			if (edns->version != 0)
				return refuse(r, ZB_RCODE_BADVERS, 1); /* RFC 6891 §6.1.3 */
		}
	} else if (plain && arcount == 1 && (tail = zb_guess_cookie_tail(query, len)) != 0) {
		if (read_cookie_guess(zs, query, len, tail, transport, client, r) != 0)
			return ZB_VERDICT_ERROR;
	} else if (read_in_full(zs, query, len, transport, client, r, plain, arcount) != 0) {
		return ZB_VERDICT_ERROR;
	}
	/* Class ANY matches our class IN data (RFC 1035 §3.2.5; Knot and NSD answer it). Of the
	 * other classes, CH gets a few names about the server itself; the rest is REFUSED. */
	if (q->qclass != ZB_CLASS_IN && q->qclass != ZB_CLASS_ANY)
		return r->verdict = ZB_VERDICT_CHAOS;
	if (is_unimplemented_qtype(q->qtype))
		return refuse(r, ZB_RCODE_NOTIMP, 1);
	enum zb_verdict verdict = ZB_VERDICT_LOOKUP;
	uint32_t twin = 0;
	if (__builtin_expect(edns->flags & ZB_OPT_FLAG_DO, 0)) {
		verdict = ZB_VERDICT_LOOKUP_SIGNED;
		twin = zs->signed_nodes;
	}
	r->verdict = (uint8_t)verdict;
	r->twin = twin;
	zb_fetch_pilot(zs, q->hash); /* the lookup's first stage (look_up) */
	return verdict;
}

/* Write the response to a query read into `r`, `query` unchanged since, into `out` (which
 * may be `query`); returns its length, 0 for none. Inlined as read_query is. */
static inline __attribute__((always_inline)) size_t
write_response(const struct zb_zoneset *zs, const uint8_t *query, const struct zb_query *r,
	       uint8_t *out, enum zb_transport transport, struct zb_query_facts *facts)
{
	const struct zb_answer *answer = r->answer;

	/* Most queries are a name the batch's stages found: straight to the copy (with DO set,
	 * a name that has a node has no denial of its own to add, but maybe entries its answer
	 * names). */
	if (__builtin_expect(!answer, 0)) {
		switch (r->verdict) {
		case ZB_VERDICT_LOOKUP: /* not found by the stages, or not looked up by them */
			answer = r->missed ? zb_lookup_below(zs, &r->q, transport == ZB_TCP)
					   : zb_lookup(zs, &r->q, transport == ZB_TCP);
			break;
		case ZB_VERDICT_LOOKUP_SIGNED:
		case ZB_VERDICT_BELOW_SIGNED:
			return respond_signed(zs, query, r, transport, out, facts);
		case ZB_VERDICT_CHAOS:
			answer = zb_chaos_lookup(zs, &r->q);
			break;
		case ZB_VERDICT_ERROR:
			return error_response(zs, query, r->question ? &r->q : NULL, &r->edns,
					      r->rcode, out, facts);
		default:
			return 0;
		}
	} else if (__builtin_expect(r->twin && answer->denial, 0)) {
		return respond_keyed(zs, query, r, transport, answer, out, facts);
	}
	return respond_with(zs, query, &r->q, &r->edns, transport, answer, NULL, out, facts);
}

size_t zb_respond(const struct zb_zoneset *zs, const uint8_t *query, size_t len, uint8_t *out,
		  enum zb_transport transport, const struct zb_client *client,
		  struct zb_query_facts *facts)
{
	struct zb_query r;

	read_query(zs, query, len, transport, client, &r, 0);
	return write_response(zs, query, &r, out, transport, facts);
}

/* Look the answers of `n` queries read up (verdicts ZB_VERDICT_LOOKUP and
 * ZB_VERDICT_LOOKUP_SIGNED) in stages over all of them, so that their cache misses overlap,
 * and bring the answers into the caches: read_query prefetched each pilot; here each node,
 * then its name and type entries, then the answer, then its body where another answer's
 * holds it (zonedata.h). A stage's loop over the batch gives the prefetches of the one
 * before it time to come in. */
static inline void look_up(const struct zb_zoneset *zs, struct zb_query *const *queries,
			   unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		queries[i]->node = zb_fetch_node(zs, queries[i]->q.hash, queries[i]->twin);
	for (unsigned i = 0; i < n; i++)
		zb_fetch_entries(queries[i]->node, queries[i]->twin);
	for (unsigned i = 0; i < n; i++) {
		struct zb_query *r = queries[i];
		r->answer = zb_fetch_answer(&r->q, r->node, r->twin);
		r->missed = r->answer == NULL;
	}
	for (unsigned i = 0; i < n; i++)
		if (queries[i]->answer)
			__builtin_prefetch(zb_answer_body(queries[i]->answer));
}

/* A batch's query read in full: its header is not a plain query's, or its name was
 * guessed wrong. */
static __attribute__((noinline)) enum zb_verdict read_again(const struct zb_zoneset *zs,
							    struct zb_batch_query *b)
{
	return read_query(zs, b->packet, b->len, ZB_UDP, b->client, &b->query, 0);
}

/* A guessed name not found whole: its labels walked before a lookup strips them, and the
 * query read in full if they are not the name guessed (it is then looked up in full as it
 * is written). */
static inline int read_wrong_guess(const struct zb_zoneset *zs, struct zb_batch_query *b)
{
	if (b->query.missed && b->query.q.guessed && !zb_guess_holds(&b->query.q)) {
		read_again(zs, b);
		return 1;
	}
	return 0;
}

/* The `n` queries' with DO set whose names have no node, from the first: the closest
 * encloser of each found, and the NSEC3 hashes their denials need taken together, so that
 * names in an NSEC3 zone share the hashing (denial.h). Out of line: only signed zones'
 * misses come here. */
static __attribute__((noinline)) void look_below_signed(const struct zb_zoneset *zs,
							struct zb_batch_query *batch, unsigned n)
{
	struct zb_pending_hashes pending;
	pending.n = 0;
	for (unsigned i = 0; i < n; i++) {
		struct zb_query *r = &batch[i].query;
		if (!r->missed || !r->twin || r->verdict != ZB_VERDICT_LOOKUP_SIGNED ||
		    read_wrong_guess(zs, &batch[i]))
			continue;
		r->encloser.node = NULL; /* set, with the rest, where a denial applies */
		r->below = zb_lookup_below_signed(zs, &r->q, 0, &r->encloser);
		r->verdict = ZB_VERDICT_BELOW_SIGNED;
		r->missed = 0; /* its guess, if any, held */
		if (r->below && r->below->denial && r->encloser.node)
			zb_hash_next_closer(zs, &r->q, &r->encloser, &pending);
	}
	zb_hash_pending(&pending);
}

void zb_respond_batch(const struct zb_zoneset *zs, struct zb_batch_query *batch, unsigned n,
		      struct zb_query **scratch)
{
	unsigned lookups = 0;
	for (unsigned i = 0; i < n; i++) {
		struct zb_batch_query *b = &batch[i];
		if (!b->len) {
			b->query.verdict = ZB_VERDICT_DROP;
			b->query.answer = NULL;
			b->query.missed = 0;
			continue;
		}
		enum zb_verdict verdict;
		if (b->len >= ZB_HEADER_LEN && zb_plain_header(b->packet)) {
			verdict = read_query(zs, b->packet, b->len, ZB_UDP, b->client, &b->query, 1);
			if (verdict != ZB_VERDICT_LOOKUP && verdict != ZB_VERDICT_LOOKUP_SIGNED &&
			    b->query.q.guessed) /* the verdict was on a guess */
				verdict = read_again(zs, b);
		} else {
			verdict = read_again(zs, b);
		}
		if (verdict == ZB_VERDICT_LOOKUP || verdict == ZB_VERDICT_LOOKUP_SIGNED)
			scratch[lookups++] = &b->query;
	}
	look_up(zs, scratch, lookups);
	for (unsigned i = 0; i < n; i++) {
		struct zb_batch_query *b = &batch[i];
		/* A miss has no answer yet: most queries have one, and test nothing else. */
		if (__builtin_expect(!b->query.answer && b->query.missed, 0)) {
			/* The first with DO set in a set with signed zones: it and those after. */
			if (b->query.twin)
				look_below_signed(zs, b, n - i);
			read_wrong_guess(zs, b);
		}
		b->len = (uint16_t)write_response(zs, b->packet, &b->query, b->packet, ZB_UDP,
						  &b->facts);
	}
}
