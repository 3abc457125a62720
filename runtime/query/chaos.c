/*
 * chaos.c - look up a CH-class question among the few names the compiler answered (see
 * compiler/core/main.c for what they are and why). Off the IN path: only a question whose class
 * is neither IN nor ANY comes here.
 */
#include "query/chaos.h"

#include <string.h>

const struct zb_answer *zb_chaos_lookup(const struct zb_zoneset *zs, const struct zb_question *q)
{
	if (q->qclass != ZB_CLASS_CH || (q->qtype != ZB_TYPE_TXT && q->qtype != ZB_TYPE_ANY))
		return NULL; /* other types at these names: REFUSED, as Knot and NSD */
	for (const struct zb_chaos_name *c = zs->chaos; c->name_len; c++)
		if (c->name_len == q->name_len && memcmp(c->name, q->lower, c->name_len) == 0)
			return zb_answer_at(zs, c->answer);
	return NULL;
}
