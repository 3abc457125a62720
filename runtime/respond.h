/*
 * respond.h - turn one query into one response: the request handler, free of I/O.
 */
#ifndef ZB_RESPOND_H
#define ZB_RESPOND_H

#include <stddef.h>
#include <stdint.h>

#include "cookies.h"
#include "wire.h"
#include "zonedata.h"

/* Room a response buffer needs: the largest DNS message. */
#define ZB_RESPONSE_MAX 65535

enum zb_transport { ZB_UDP, ZB_TCP };

/* What zb_respond found out about a query that its response does not say plainly, for the
 * statistics (stats.h). Set whenever it returns a response. */
struct zb_query_facts { /* no padding: every bit is a member's, set with the rest */
	uint32_t rrl_key;     /* the answer given (rate limiting, rrl.h): ZB_RRL_KEY_ERROR for
			       * every error response */
	uint16_t qtype;       /* when `question` is 1 */
	uint8_t rcode;        /* the response's, extended bits included (BADVERS is 16) */
	uint8_t question : 1; /* the question could be read, and is in the response */
	uint8_t edns : 1;     /* the query had a good OPT record: the response ends in one */
	uint8_t cookie : 2;   /* enum zb_cookie_verdict */
	uint8_t unused : 4;
};

#define ZB_RRL_KEY_ERROR 0xffffffffu

/* What reading a query decided: how it is answered. */
enum zb_verdict {
	ZB_VERDICT_DROP = 0,        /* no response at all */
	ZB_VERDICT_ERROR,           /* a response without records, `rcode` */
	ZB_VERDICT_LOOKUP,          /* the zone data's answer, DO clear */
	ZB_VERDICT_LOOKUP_SIGNED,   /* the zone data's answer with DNSSEC (DO set, RFC 3225) */
	ZB_VERDICT_CHAOS,           /* class CH: a name about the server itself */
};

/* A query read (zb_read_query), until its response is written (zb_write_response): the two
 * halves of zb_respond, apart so that the UDP path can look a whole batch up between them. */
struct zb_query {
	struct zb_question q;
	struct zb_edns edns;
	uint8_t verdict;        /* enum zb_verdict */
	uint8_t rcode;          /* ZB_VERDICT_ERROR: the response's, extended bits included */
	uint8_t question;       /* ZB_VERDICT_ERROR: the question parsed and goes back */
	uint32_t twin;          /* the offset of the nodes its answers come from (zb_lookup_signed) */
	uint8_t cookie[ZB_COOKIE_LEN]; /* the cookie that goes back (edns.cookie points here) */
	/* The answer zb_prefetch_answers found for a name with a node; NULL: none yet, and
	 * zb_write_response looks it up. */
	const struct zb_answer *answer;
};

/*
 * Write the response to `query` (in a buffer readable ZB_QUERY_SLACK bytes past `len`) into
 * `out` (ZB_RESPONSE_MAX bytes for TCP; for UDP, the larger of the zone set's udp_size and
 * 1024); `out` may be `query` itself, to answer in place. Over UDP it is no longer
 * than 512 octets, or with EDNS the requestor's size within [512, the server's]; what does not
 * fit is cut (RFC 2181 §9). A COOKIE option from `client` gets a cookie back (RFC 7873;
 * `client` may be NULL: no cookies). `facts` says what it was. Returns its length, or 0 when
 * the query gets no response at all (shorter than a header, or itself a response: RFC 1035
 * §4.1.1).
 */
size_t zb_respond(const struct zb_zoneset *zs, const uint8_t *query, size_t len, uint8_t *out,
		  enum zb_transport transport, const struct zb_client *client,
		  struct zb_query_facts *facts);

/* zb_respond in two halves, with the same arguments: reading the query into `r` (returns
 * r->verdict), and writing its response from `r`, with `query` unchanged in between. */
enum zb_verdict zb_read_query(const struct zb_zoneset *zs, const uint8_t *query, size_t len,
			      enum zb_transport transport, const struct zb_client *client,
			      struct zb_query *r);
size_t zb_write_response(const struct zb_zoneset *zs, const uint8_t *query,
			 const struct zb_query *r, uint8_t *out, enum zb_transport transport,
			 struct zb_query_facts *facts);

/* Look the answers of `n` queries up (their verdicts ZB_VERDICT_LOOKUP or
 * ZB_VERDICT_LOOKUP_SIGNED) in stages over all of them, so that their cache misses overlap,
 * and bring the answers into the caches: a batch's, between zb_read_query and
 * zb_write_response. */
void zb_prefetch_answers(const struct zb_zoneset *zs, struct zb_query *const *queries,
			 unsigned n, enum zb_transport transport);

#endif
