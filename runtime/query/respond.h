/*
 * respond.h - turn one query into one response: the request handler, free of I/O.
 */
#ifndef ZB_RESPOND_H
#define ZB_RESPOND_H

#include <stddef.h>
#include <stdint.h>

#include "query/cookies.h"
#include "query/lookup.h"
#include "query/wire.h"
#include "zonedata.h"

/* Room a response buffer needs: the largest DNS message. */
#define ZB_RESPONSE_MAX 65535

enum zb_transport { ZB_UDP, ZB_TCP };

/* What zb_respond found out about a query that its response does not say plainly, for the
 * statistics (stats.h) and rate limiting (rrl.h). Set whenever it returns a response. */
struct zb_query_facts { /* no padding: every octet is a member's, set with the rest */
	uint32_t rrl_key;     /* the answer given (rate limiting, rrl.h): ZB_RRL_KEY_ERROR for
			       * every error response */
	uint16_t stat_key;    /* its query type and RCODE, extended bits included (statkeys.h) */
	uint8_t edns;         /* 1: the query had a good OPT record: the response ends in one */
	uint8_t cookie;       /* enum zb_cookie_verdict */
};

#define ZB_RRL_KEY_ERROR 0xffffffffu

/* What reading a query decided: how it is answered. */
enum zb_verdict {
	ZB_VERDICT_DROP = 0,        /* no response at all */
	ZB_VERDICT_ERROR,           /* a response without records, `rcode` */
	ZB_VERDICT_LOOKUP,          /* the zone data's answer, DO clear */
	ZB_VERDICT_LOOKUP_SIGNED,   /* the zone data's answer with DNSSEC (DO set, RFC 3225) */
	ZB_VERDICT_BELOW_SIGNED,    /* the same for a name with no node, its answer `below` and
				     * its closest encloser found by a batch's stages */
	ZB_VERDICT_CHAOS,           /* class CH: a name about the server itself */
};

/* A query read, until its response is written: the two halves of zb_respond, apart so that
 * a UDP batch's answers are looked up together between them (zb_respond_batch). */
struct zb_query {
	struct zb_question q;
	struct zb_edns edns;
	uint8_t verdict;        /* enum zb_verdict */
	uint8_t rcode;          /* ZB_VERDICT_ERROR: the response's, extended bits included */
	uint8_t question;       /* ZB_VERDICT_ERROR: the question parsed and goes back */
	uint32_t twin;          /* the offset of the nodes its answers come from (zb_lookup_signed) */
	const struct zb_node *node; /* the perfect hash's node for the name: its, if it has one */
	uint8_t cookie[ZB_COOKIE_LEN]; /* the cookie that goes back (edns.cookie points here) */
	/* The answer the batch's stages found for a name with a node; NULL: none, and the
	 * response's writing looks it up, from the closest encloser when `missed`. */
	const struct zb_answer *answer;
	uint8_t missed;         /* the stages found the name has no node */
	const struct zb_answer *below;    /* ZB_VERDICT_BELOW_SIGNED: the answer, NULL if none */
	struct zb_encloser encloser;      /* ZB_VERDICT_BELOW_SIGNED: where its denial is found */
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

/* One query of a UDP batch, answered in place. */
struct zb_batch_query {
	uint8_t *packet;        /* the query, then its response; ZB_QUERY_SLACK octets of slack,
				 * room for the larger of the zone set's udp_size and 1024 */
	const struct zb_client *client;
	uint16_t len;           /* the query's length (0: dropped unread), then the response's
				 * (0: none) */
	struct zb_query_facts facts; /* when a response is written */
	struct zb_query query;  /* the query read, between the passes */
};

/* zb_respond over UDP for `n` queries at once, in passes: every query read, every answer
 * looked up at once (in stages, so that their cache misses overlap), every response
 * written. `scratch` holds `n` pointers. */
void zb_respond_batch(const struct zb_zoneset *zs, struct zb_batch_query *batch, unsigned n,
		      struct zb_query **scratch);

#endif
