/*
 * respond.h - turn one query into one response: the request handler, free of I/O.
 */
#ifndef ZB_RESPOND_H
#define ZB_RESPOND_H

#include <stddef.h>
#include <stdint.h>

#include "zonedata.h"

/* Room a response buffer needs: the largest DNS message. */
#define ZB_RESPONSE_MAX 65535

/*
 * Write the response to `query` into `out` (ZB_RESPONSE_MAX bytes), no longer than `limit`
 * octets (setting TC when the answer does not fit). Returns its length, or 0 when the query
 * gets no response at all (shorter than a header, or itself a response: RFC 1035 §4.1.1).
 */
size_t zb_respond(const struct zb_zoneset *zs, const uint8_t *query, size_t len, uint8_t *out,
		  size_t limit);

#endif
