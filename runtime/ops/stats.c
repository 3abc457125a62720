/*
 * stats.c - sum the workers' counters and format them: a JSON object and the Prometheus text
 * exposition format 0.0.4. Not on the query path: it may format; it never allocates, so any
 * thread can call it with a buffer of its own.
 */
#include "ops/stats.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/wire.h"
#include "server/server.h"
#include "zonedata.h"

static const char *const transport_names[] = { "udp", "tcp" };
static const char *const rcode_names[ZB_STAT_NRCODES] = {
	"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "NOTAUTH",
	"BADVERS", "other",
};
static const char *const qtype_names[ZB_STAT_NQTYPES] = {
	"A", "NS", "CNAME", "SOA", "PTR", "MX", "TXT", "AAAA", "SRV", "DS", "DNSKEY", "HTTPS",
	"SVCB", "CAA", "ANY", "other",
};
static const char *const close_names[ZB_CLOSE_NREASONS] = { "other", "idle", "capped" };

/* One counter or array of counters of struct zb_stats, as both formats name it. */
struct zb_stat_group {
	const char *key;      /* JSON key */
	const char *metric;   /* Prometheus metric name */
	const char *label;    /* Prometheus label of an array's elements; NULL: a single counter */
	const char *help;
	size_t offset;
	unsigned n;
	const char *const *names; /* the label values, and the JSON keys of the elements */
};

#define ZB_GROUP(key, metric, label, help, field, names)                                   \
	{ key, metric, label, help, offsetof(struct zb_stats, field),                       \
	  sizeof(((struct zb_stats *)0)->field) / sizeof(uint64_t), names }

static const struct zb_stat_group groups[] = {
	ZB_GROUP("queries", "zonebake_queries_total", "transport",
		 "DNS messages received, by transport.", queries, transport_names),
	ZB_GROUP("responses", "zonebake_responses_total", "rcode",
		 "Responses sent, by RCODE.", responses, rcode_names),
	ZB_GROUP("qtypes", "zonebake_query_types_total", "qtype",
		 "Queries whose question could be read, by QTYPE.", qtypes, qtype_names),
	ZB_GROUP("truncated", "zonebake_truncated_total", NULL,
		 "Responses sent with TC set.", truncated, NULL),
	ZB_GROUP("dropped", "zonebake_dropped_total", NULL,
		 "Messages given no response: shorter than a header, a response, over 2048 "
		 "octets over UDP.", dropped, NULL),
	ZB_GROUP("edns", "zonebake_edns_queries_total", NULL,
		 "Queries with a good EDNS OPT record.", edns, NULL),
	ZB_GROUP("tcp_accepted", "zonebake_tcp_accepted_total", NULL,
		 "TCP connections accepted.", tcp_accepted, NULL),
	ZB_GROUP("tcp_closed", "zonebake_tcp_closed_total", "reason",
		 "TCP connections closed: idle too long, made way for a new one at a cap, or "
		 "otherwise.", tcp_closed, close_names),
	ZB_GROUP("rrl_dropped", "zonebake_rrl_dropped_total", NULL,
		 "UDP responses rate limiting kept back.", rrl_dropped, NULL),
	ZB_GROUP("rrl_slipped", "zonebake_rrl_slipped_total", NULL,
		 "UDP responses rate limiting sent truncated, or as BADCOOKIE, instead.",
		 rrl_slipped, NULL),
	ZB_GROUP("xdp_queries", "zonebake_xdp_queries_total", NULL,
		 "DNS messages received over AF_XDP, of those counted as received over UDP.",
		 xdp_queries, NULL),
};

#define ZB_NGROUPS (sizeof(groups) / sizeof(groups[0]))

static const uint64_t *group_values(const struct zb_stats *s, const struct zb_stat_group *g)
{
	return (const uint64_t *)((const char *)s + g->offset);
}

/* A buffer filled snprintf-style: `len` counts everything formatted, fitting or not. */
struct zb_text {
	char *buf;
	size_t cap;
	size_t len;
};

static __attribute__((format(printf, 2, 3))) void put(struct zb_text *t, const char *fmt, ...)
{
	size_t room = t->len < t->cap ? t->cap - t->len : 0;
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(room ? t->buf + t->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n;
}

/* Each counter is read with a relaxed atomic load: its writer is another thread. The keyed
 * responses are folded into their RCODE's and query type's counters. */
static void load(struct zb_stats *into, const struct zb_stats *from, int add)
{
	uint64_t *to = (uint64_t *)into;
	const uint64_t *src = (const uint64_t *)from;
	for (size_t i = 0; i < offsetof(struct zb_stats, keyed) / sizeof(uint64_t); i++)
		to[i] = (add ? to[i] : 0) + __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	for (unsigned key = 0; key < ZB_STAT_KEYS; key++) {
		uint64_t n = __atomic_load_n(&from->keyed[key], __ATOMIC_RELAXED);
		unsigned qtype = key / ZB_STAT_RCODE_TABLE, rcode = key % ZB_STAT_RCODE_TABLE;
		into->responses[zb_stat_rcode_slot[rcode]] += n;
		if (qtype < ZB_STAT_NQTYPES)
			into->qtypes[qtype] += n;
	}
}

void zb_stats_sum(const struct zb_server *server, struct zb_stats *total)
{
	load(total, &server->carried, 0);
	for (unsigned w = 0; w < server->nworkers; w++)
		load(total, &server->workers[w].stats, 1);
}

uint64_t zb_stats_handled(const struct zb_server *server)
{
	uint64_t n = 0;
	for (unsigned w = 0; w < server->nworkers; w++) {
		const struct zb_stats *s = &server->workers[w].stats;
		n += __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);
		for (unsigned key = 0; key < ZB_STAT_KEYS; key++)
			n += __atomic_load_n(&s->keyed[key], __ATOMIC_RELAXED);
	}
	return n;
}

size_t zb_stats_totals(const struct zb_server *server, char *buf, size_t cap)
{
	struct zb_text t = { buf, cap, 0 };
	struct zb_stats s;

	zb_stats_sum(server, &s);
	put(&t, "ok %zu", (size_t)ZB_STAT_COUNTERS);
	for (size_t i = 0; i < ZB_STAT_COUNTERS; i++)
		put(&t, " %llu", (unsigned long long)((const uint64_t *)&s)[i]);
	put(&t, " %llu\n", (unsigned long long)__atomic_load_n(&server->swaps, __ATOMIC_RELAXED));
	return t.len;
}

int zb_stats_carry(struct zb_server *server, const char *line)
{
	uint64_t values[ZB_STAT_COUNTERS + 1];
	char *end;
	if (strncmp(line, "ok ", 3) != 0 || strtoull(line + 3, &end, 10) != ZB_STAT_COUNTERS)
		return -1;
	for (size_t i = 0; i <= ZB_STAT_COUNTERS; i++) {
		const char *at = end;
		if (*at != ' ')
			return -1;
		values[i] = strtoull(at + 1, &end, 10);
		if (end == at + 1)
			return -1;
	}
	if (*end != 0)
		return -1;
	/* Readers load these with relaxed atomics, from other threads, as they are written. */
	for (size_t i = 0; i < ZB_STAT_COUNTERS; i++)
		__atomic_store_n(&((uint64_t *)&server->carried)[i], values[i], __ATOMIC_RELAXED);
	__atomic_store_n(&server->swaps, values[ZB_STAT_COUNTERS], __ATOMIC_RELAXED);
	return 0;
}

static void json_counters(struct zb_text *t, const struct zb_stats *s)
{
	for (size_t i = 0; i < ZB_NGROUPS; i++) {
		const struct zb_stat_group *g = &groups[i];
		const uint64_t *v = group_values(s, g);
		put(t, "%s\"%s\":", i ? "," : "", g->key);
		if (!g->names) {
			put(t, "%llu", (unsigned long long)v[0]);
			continue;
		}
		for (unsigned j = 0; j < g->n; j++)
			put(t, "%s\"%s\":%llu", j ? "," : "{", g->names[j], (unsigned long long)v[j]);
		put(t, "}");
	}
}

size_t zb_stats_json(const struct zb_server *server, char *buf, size_t cap)
{
	struct zb_text t = { buf, cap, 0 };
	struct zb_stats s;

	zb_stats_sum(server, &s);
	put(&t, "{");
	json_counters(&t, &s);
	put(&t, ",\"swaps\":%llu,\"workers\":[",
	    (unsigned long long)__atomic_load_n(&server->swaps, __ATOMIC_RELAXED));
	for (unsigned w = 0; w < server->nworkers; w++) {
		load(&s, &server->workers[w].stats, 0);
		put(&t, "%s{", w ? "," : "");
		json_counters(&t, &s);
		put(&t, "}");
	}
	put(&t, "]}\n");
	return t.len;
}

/* A label value: backslash and double quote escaped (the exposition format); zone names
 * hold no newline. */
static void put_label(struct zb_text *t, const char *value)
{
	for (; *value; value++)
		put(t, *value == '\\' || *value == '"' ? "\\%c" : "%c", *value);
}

/* Per signed zone, when its first signature expires. */
static void signature_expiry(struct zb_text *t)
{
	int described = 0;
	for (uint32_t i = 0; i < zb_zoneset.nzones; i++) {
		if (!zb_zoneset.zones[i].expires)
			continue;
		if (!described++)
			put(t, "# HELP zonebake_zone_signatures_expire_timestamp_seconds When the "
			       "zone's first signature expires.\n# TYPE "
			       "zonebake_zone_signatures_expire_timestamp_seconds gauge\n");
		put(t, "zonebake_zone_signatures_expire_timestamp_seconds{zone=\"");
		put_label(t, zb_zoneset.zones[i].origin);
		put(t, "\"} %lld\n", (long long)zb_zoneset.zones[i].expires);
	}
}

/* Which build serves, and each zone's serial: a fleet's convergence in one query per node. */
static void zones_served(struct zb_text *t)
{
	put(t, "# HELP zonebake_build_info The zonebake version that built this server.\n"
	       "# TYPE zonebake_build_info gauge\nzonebake_build_info{version=\"");
	put_label(t, zb_zoneset.version);
	put(t, "\"} 1\n# HELP zonebake_zone_serial The SOA serial of the zone served.\n"
	       "# TYPE zonebake_zone_serial gauge\n");
	for (uint32_t i = 0; i < zb_zoneset.nzones; i++) {
		put(t, "zonebake_zone_serial{zone=\"");
		put_label(t, zb_zoneset.zones[i].origin);
		put(t, "\"} %u\n", (unsigned)zb_zoneset.zones[i].serial);
	}
}

size_t zb_stats_prometheus(const struct zb_server *server, char *buf, size_t cap)
{
	struct zb_text t = { buf, cap, 0 };
	struct zb_stats s;

	zb_stats_sum(server, &s);
	for (size_t i = 0; i < ZB_NGROUPS; i++) {
		const struct zb_stat_group *g = &groups[i];
		const uint64_t *v = group_values(&s, g);
		put(&t, "# HELP %s %s\n# TYPE %s counter\n", g->metric, g->help, g->metric);
		if (!g->label)
			put(&t, "%s %llu\n", g->metric, (unsigned long long)v[0]);
		for (unsigned j = 0; g->label && j < g->n; j++)
			put(&t, "%s{%s=\"%s\"} %llu\n", g->metric, g->label, g->names[j],
			    (unsigned long long)v[j]);
	}
	put(&t, "# HELP zonebake_swaps_total Binary swaps this server has taken part in.\n"
		"# TYPE zonebake_swaps_total counter\nzonebake_swaps_total %llu\n",
	    (unsigned long long)__atomic_load_n(&server->swaps, __ATOMIC_RELAXED));
	put(&t, "# HELP zonebake_workers Workers serving queries.\n"
		"# TYPE zonebake_workers gauge\nzonebake_workers %u\n", server->nworkers);
	signature_expiry(&t);
	zones_served(&t);
	return t.len;
}
