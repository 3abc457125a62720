/*
 * respond.h - turn one query into one response: the request handler, free of I/O.
 */
#ifndef ZB_RESPOND_H
#define ZB_RESPOND_H

#include <stddef.h>
#include <stdint.h>

#include "cookies.h"
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

#endif
