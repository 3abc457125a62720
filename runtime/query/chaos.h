/*
 * chaos.h - the CH-class questions a server answers about itself: id.server, hostname.bind,
 * version.bind, version.server, TXT (or ANY), with answers the compiler wrote.
 */
#ifndef ZB_CHAOS_H
#define ZB_CHAOS_H

#include "query/wire.h"
#include "zonedata.h"

/* The answer to a question of class CH, or NULL when it gets REFUSED: another class, name or
 * type, or a name whose text is not configured. */
const struct zb_answer *zb_chaos_lookup(const struct zb_zoneset *zs, const struct zb_question *q);

#endif
