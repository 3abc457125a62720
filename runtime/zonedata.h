/*
 * zonedata.h - the layout of a compiled zone set, as the compiler writes it into zonedata.c.
 *
 * Everything lives in one read-only byte blob (`data`): plain structs with fixed layouts,
 * little-endian, referenced by offsets into the blob. Nodes sit in the perfect hash's slot
 * order (a slot's node is nodes[slot]; an empty slot's node has name_len 0), and each answer's
 * record sits right before its body, so that a lookup touches few cache lines. Written once
 * for both sides: the compiler's core writes these very structs (compiler/core/layout.c
 * includes this file), and only the offsets of the tables reach zonedata.c, as numbers.
 */
#ifndef ZB_ZONEDATA_H
#define ZB_ZONEDATA_H

#include <stdint.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "zonebake's compiled data is little-endian; this target is not"
#endif

/* A name of the tree: an owner, an empty non-terminal or a zone apex. */
struct zb_node {
	uint32_t name_off;       /* lowercased wire-format name, in data */
	uint32_t types_off;      /* first of `ntypes` entries in `types`, sorted by qtype */
	uint32_t default_answer; /* answer (offset in data) for a qtype not in the list */
	uint32_t miss;           /* for a name below this node that is not in the tree */
	uint16_t ntypes;
	uint8_t name_len;
	uint8_t miss_kind;       /* enum zb_miss_kind: how to read `miss` */
};

enum zb_miss_kind {
	ZB_MISS_ANSWER = 0,   /* `miss` is an answer's offset in data (NXDOMAIN, referral...) */
	/* `miss` is the index of a node whose answers by type serve: the '*' child to
	 * synthesize from, or a node after the perfect hash's slots (its name_len 0) holding
	 * what a DNAME synthesis gives by type, the chain going on from the query name's image
	 * (RFC 6672 §3.3). */
	ZB_MISS_NODE = 1,
};

struct zb_type_entry {
	uint16_t qtype;          /* or ZB_KEY_ANY_OVER_TCP */
	uint16_t reserved;
	uint32_t answer;         /* offset in data */
};

/* The key of the answer to ANY over TCP: every RRset (over UDP, ANY gets one, RFC 8482).
 * QTYPE 0 itself never reaches the lookup: it is answered NOTIMP. */
#define ZB_KEY_ANY_OVER_TCP 0

/* A complete response after the question, serialized once by the compiler. */
struct zb_answer {
	uint8_t header[10];      /* response header bytes 2-11, network order, RD and CD clear */
	uint16_t body_len;
	uint16_t base_len;       /* wire length of the name the body was compiled against */
	uint16_t nfixups;
	uint16_t trunc_len;      /* body length without the optional additional records */
	uint16_t trunc_arcount;  /* ARCOUNT without them */
	uint32_t body_off;       /* the body, in data */
	uint32_t fixups_off;     /* `nfixups` uint16 body offsets of compression pointers, in data */
	/* DNAME synthesis (RFC 6672 §3.3), when dname_split is not 0: the query name's labels in
	 * front of the DNAME owner (dname_owner_len octets) go at body offset dname_split,
	 * completing the target of the synthesized CNAME; if there are more than
	 * dname_max_prefix octets of them the name would pass 255, and `overflow` answers. */
	uint16_t dname_split;
	uint8_t dname_owner_len;
	uint8_t dname_max_prefix;
	uint32_t overflow;       /* offset in data */
};

/* A CH-class name the server answers with a TXT record about itself (id.server and the like,
 * compiler/core/main.c). The table ends with a name_len of 0. */
struct zb_chaos_name {
	const uint8_t *name;     /* lowercased wire format */
	uint32_t name_len;
	uint32_t answer;         /* offset in data: the answer to TXT and ANY */
};

_Static_assert(sizeof(struct zb_node) == 20, "zb_node layout");
_Static_assert(sizeof(struct zb_type_entry) == 8, "zb_type_entry layout");
_Static_assert(sizeof(struct zb_answer) == 36, "zb_answer layout");

struct zb_zoneset {
	const uint8_t *data;
	const struct zb_node *nodes; /* one per perfect hash slot */
	const struct zb_type_entry *types;
	const uint16_t *pilots;  /* perfect hash: one per bucket */
	uint64_t seed;
	uint32_t nnodes;         /* = the perfect hash's slots */
	uint32_t nanswers;
	uint32_t nbuckets;
	uint32_t max_labels;     /* labels (root not counted) of the deepest node */
	const char *description; /* the zones, for start-up messages */
	/* From the [server] table of zonebake.toml. */
	const char *const *default_listen;
	uint32_t ndefault_listen;
	uint16_t udp_size;       /* EDNS payload size we advertise and cap responses to */
	uint16_t identity_len;
	const uint8_t *identity; /* NSID (RFC 5001), when identity_len is not 0 */
	const struct zb_chaos_name *chaos;
	uint32_t tcp_idle_timeout;     /* seconds */
	uint32_t tcp_max_connections;  /* per worker */
};

extern const struct zb_zoneset zb_zoneset;

static inline const struct zb_answer *zb_answer_at(const struct zb_zoneset *zs, uint32_t off)
{
	return (const struct zb_answer *)(zs->data + off);
}

#endif
