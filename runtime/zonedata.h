/*
 * zonedata.h - the layout of a compiled zone set, as the compiler writes it into zonedata.c.
 *
 * Everything lives in one read-only byte blob (`data`): plain structs with fixed layouts,
 * little-endian. The perfect hash is cut in groups (hash.h), each with a region of its own:
 * its pilots, its nodes in slot order (an empty slot's node has name_len 0; with a signed
 * zone each node's DO twin right after it), the nodes of answers for names below a node,
 * their type entries, their answers (each answer's record right before its body, so that a
 * lookup touches few cache lines) and their names. Inside a region, offsets count from the
 * octet where they are written (a node's fields from the node, and so on): a region reads
 * the same wherever it lies, and a change of the zone moves one region's octets, not the
 * others' (compiler/core/layout/layout.c). Written once
 * for both sides: the compiler's core writes these very structs (compiler/core/layout/layout.c
 * includes this file). The numbers the responder starts from (where the tables are, the
 * hash's seed, the zones' serials) are the data's first octets, struct zb_head: zonedata.c
 * holds the configuration alone, so that the server can be compiled and linked before the
 * data is laid out, and the same link serves the next build of the set.
 */
#ifndef ZB_ZONEDATA_H
#define ZB_ZONEDATA_H

#include <stdint.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "zonebake's compiled data is little-endian; this target is not"
#endif

/* The data's first 64 octets (zb_zoneset_open, runtime/query/zoneset.c). */
struct zb_head {
	uint64_t data_len;
	uint64_t seed;           /* of the perfect hash (hash.h) */
	uint32_t groups_off;     /* its `ngroups` struct zb_group, in data */
	uint32_t ngroups;
	uint32_t group_mask;     /* zb_group_mask(ngroups) */
	uint32_t nanswers;       /* distinct answers */
	uint32_t max_labels;     /* labels (root not counted) of the deepest node */
	uint32_t signed_nodes;   /* a node's DO twin is node[signed_nodes]: 1, or 0 when none */
	uint32_t zones_off;      /* `nzones` struct zb_zone_numbers, in data, in the set's order */
	uint32_t nzones;
	uint32_t chaos_off;      /* `nchaos` uint32, in data: each CH name's answer, in the order
				  * of zonedata.c's names (struct zb_chaos_name) */
	uint32_t nchaos;
	uint8_t reserved[8];
};

/* A zone's numbers, which a change of the zone changes (struct zb_zone_info has the rest). */
struct zb_zone_numbers {
	uint32_t serial;
	uint32_t reserved;
	int64_t expires;
};

/* A name of the tree: an owner, an empty non-terminal or a zone apex. */
struct zb_node {
	/* Lowercased wire-format name, from the node: 16-aligned, zeros after it to the end of
	 * its last 16 octets. A DO twin holds its denial here instead (below). */
	uint32_t name_off;
	uint32_t types_off;      /* first of `ntypes` type entries, from the node: by qtype */
	uint32_t default_answer; /* answer (from the node) for a qtype not in the list */
	uint32_t miss;           /* for a name below this node that is not in the tree */
	uint16_t ntypes;
	uint8_t name_len;
	uint8_t miss_kind;       /* enum zb_miss_kind: how to read `miss` */
};

enum zb_miss_kind {
	ZB_MISS_ANSWER = 0,   /* `miss` is an answer's offset from the node (NXDOMAIN, referral...) */
	/* `miss` is the offset from the node of a node after the group's slots (its name_len
	 * 0), whose answers by type serve: a copy of the '*' child's to synthesize from, or what
	 * a DNAME synthesis gives by type, the chain going on from the query name's image
	 * (RFC 6672 §3.3). For a DO twin, that node's twin. */
	ZB_MISS_NODE = 1,
};

struct zb_type_entry {
	uint16_t qtype;          /* or ZB_KEY_ANY_OVER_TCP */
	uint16_t reserved;
	uint32_t answer;         /* offset from the entry */
};

/* A group of the perfect hash (hash.h): where its nodes are; its `nbuckets` uint16 pilots
 * end right before them. */
struct zb_group {
	uint32_t nodes_off;      /* in data */
	uint16_t nslots;
	uint16_t nbuckets;
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
	/* The body, from the answer: right after it, or inside another answer's body of the
	 * region that holds the same octets (compiler/core/layout/sharing.c), before or after. */
	int32_t body_off;
	uint32_t fixups_off;     /* `nfixups` uint16 body offsets of compression pointers, in
				  * ascending order, from the answer (2-aligned) */
	/* DNAME synthesis (RFC 6672 §3.3), when dname_split is not 0: the query name's labels in
	 * front of the DNAME owner (dname_owner_len octets) go at body offset dname_split,
	 * completing the target of the synthesized CNAME; if there are more than
	 * dname_max_prefix octets of them the name would pass 255, and `overflow` answers.
	 * With dname_owner_len 0 (no owner is that short) the answer is an alias's instead: its
	 * body, dname_split octets, is a CNAME RRset (and its signatures) to a name of the zone,
	 * and the target's own answer to the question's type follows it, found at run time
	 * (struct zb_answer_alias, at `overflow`). */
	uint16_t dname_split;
	uint8_t dname_owner_len;
	uint8_t dname_max_prefix;
	int32_t overflow;        /* offset from the answer, either way */
	/* With DNSSEC, an answer for a query name that has no node (NXDOMAIN, a wildcard's)
	 * also proves that the name does not exist, which depends on the name; and an answer
	 * with NSEC3 entries of its zone names them rather than holding them: offset from the
	 * answer of a struct zb_answer_denial saying where those go and which, or 0. */
	uint32_t denial;
};

struct zb_answer_denial {
	uint16_t at;             /* body offset: the end of the authority section */
	/* NSEC3 entries of the zone's chain (`chain`) that go in too, named by `nkeys` struct
	 * zb_entry_key after this struct. An entry is stored once, in the chain, not in every
	 * answer that holds it. */
	uint8_t nkeys;
	/* 1: the query name's own denial goes in too, found by the name (runtime/query/
	 * denial.c); 0: the answer's keyed entries only (a NODATA, a referral without DS). */
	uint8_t by_name;
	/* The chain entries the body holds already, 0: none. NSEC: the entry's index + 1.
	 * NSEC3: the body offset + 1 of its owner's first label, written there whole (a hash
	 * names one entry): a reference that no other entry's coming or going moves. */
	uint32_t skip[2];
	/* NSEC3: an entry to add with the name's, its offset in data, or 0 (the closest
	 * encloser's, for a query for a wildcard's own name). */
	uint32_t also;
	uint32_t chain;          /* with nkeys: the struct zb_chain, in data */
};

/*
 * An alias's answer (RFC 1034 §4.3.2 step 3a: the CNAME, then the lookup goes on at its
 * target) composed by the responder: the CNAME part the answer holds, then the answer the
 * target's node has for the question's type, as that node's own question would get it; its
 * compression pointers moved (those to its question's name point at the CNAME's target,
 * written whole `target_at` octets into the body; those into its body, behind the CNAME
 * part) and its counts added to the answer's. The compiler composes only where that is the
 * response the zone gives (compiler/core/semantics/aliases.c): the target in the zone, with
 * no CNAME of its own, its answer without a denial the responder completes. The target's
 * records are stored once, at the target, not again behind every name that aliases it.
 */
struct zb_answer_alias {
	uint32_t group;          /* the target's group of the perfect hash */
	uint32_t node;           /* its node (the DO twin, for an answer with DNSSEC), octets
				  * from the group's nodes_off */
	uint16_t target_at;      /* body offset of the CNAME's target */
	uint16_t reserved;
};

/* An NSEC3 entry as an answer names it: by the first 12 octets of its own hash, found by
 * the first 8 in the page and bucket they fall in (the compiler keys a chain only where no
 * two hashes share those 8 octets, or writes the entries whole). No other hash coming or
 * going renames it, so a name added or removed leaves the answers that name other entries
 * as they were. */
struct zb_entry_key {
	uint8_t hash[12];
};

/* The most entries an answer adds: its keys, and the query name's own and `also`. */
#define ZB_MAX_KEYS 6
#define ZB_MAX_DENIALS (ZB_MAX_KEYS + 2)

/*
 * DNSSEC denial of existence (RFC 4035 §3.1.3, RFC 5155 §7.2) for names that have no node.
 * A node's DO twin (zb_zoneset.signed_nodes) has, in place of a name, the offset in data
 * (not from the node: these tables are not in the groups' regions) of what finds the proof for a name below it: a struct zb_children in an NSEC zone, the zone's
 * struct zb_chain in an NSEC3 zone, a struct zb_image_denial at a DNAME, or 0.
 */
enum zb_denial_kind { ZB_DENIAL_NSEC = 1, ZB_DENIAL_NSEC3 = 3, ZB_DENIAL_IMAGE = 4 };

/*
 * A zone's NSEC or NSEC3 RRsets, each ready to copy. An NSEC chain is in canonical order,
 * `entries_off` giving each entry's offset. An NSEC3 chain is in hash order, cut into pages
 * where the content says (a page starts at each hash whose last octet is below
 * ZB_NSEC3_PAGE_CUT), each page with a directory of its
 * own: one hash coming or going changes its page and the page table's offsets, not every
 * later entry's place or number.
 */
struct zb_chain {
	uint8_t kind;            /* ZB_DENIAL_NSEC3, or ZB_DENIAL_NSEC */
	uint8_t apex_len;        /* the zone's apex, in wire form */
	uint8_t salt_len;
	uint8_t dir_bits;        /* NSEC3: the hashes' leading bits that index `dir_off` */
	uint16_t iterations;
	uint16_t reserved;
	uint32_t count;          /* entries */
	uint32_t entries_off;    /* NSEC: `count` uint32 offsets of struct zb_denial in data */
	uint32_t pages_off;      /* NSEC3: `npages` struct zb_chain_page, in hash order */
	/* NSEC3: 2^dir_bits + 1 uint32, the number of pages whose first hash's leading bits are
	 * below each value, then npages: pages are about as many, so a slot holds one or two. */
	uint32_t dir_off;
	uint32_t npages;
	uint8_t salt[256];
};

#define ZB_NSEC3_PAGE_CUT 2     /* of 256: a page of 128 entries on average */

/* A page of an NSEC3 chain, at `off` in data: a struct zb_page_buckets, its nbuckets + 1
 * uint32, `count` hashes of 20 octets ascending, then `count` uint32 offsets of their
 * struct zb_denial from the page's start. */
struct zb_chain_page {
	uint8_t first[8];        /* its first hash's first 8 octets */
	uint32_t off;
	uint32_t count;
};

/* A page's own directory: the hashes' first 8 octets less its first hash's, shifted right by
 * `shift` (the last bucket taking what is beyond), index the first entry at or above each
 * bucket's start, then `count`. From the page's hashes alone, a bucket holds one or two. */
struct zb_page_buckets {
	uint8_t shift;
	uint8_t reserved[3];
	uint32_t nbuckets;
};

/* An NSEC zone's node: its children that hold NSEC RRsets at or below them, in canonical
 * order (RFC 4034 §6.1), and the chain entry that covers a name sorting after each one's
 * subtree, `count` struct zb_child after it. */
struct zb_children {
	uint8_t kind;            /* ZB_DENIAL_NSEC */
	uint8_t reserved[3];
	uint32_t chain;          /* the zone's struct zb_chain */
	uint32_t count;
	uint32_t before;         /* the entry covering a name before the first child */
};

struct zb_child {
	uint32_t label_off;      /* its label in data: length, then lowercased octets */
	uint32_t after;
};

/* A DNAME owner's node, or a node below it whose image exists: a query name below it is
 * rewritten under the target (RFC 6672 §3.3), and the image is denied as a name below the
 * node's image (`target`: the DNAME's target, for the owner), by the query name's label under
 * the node: `table` is that image's zb_children or zb_chain. */
struct zb_image_denial {
	uint8_t kind;            /* ZB_DENIAL_IMAGE */
	uint8_t target_len;
	uint8_t reserved[2];
	uint32_t table;
	uint8_t target[256];     /* lowercased wire form */
};

/* One chain entry: its RRset and signatures, `len` octets, after `npointers` uint16 offsets
 * among them where a pointer to the zone's apex in the question goes (owner names end so). */
struct zb_denial {
	uint16_t len;
	uint16_t nrecords;
	uint16_t npointers;
	uint16_t reserved;
};

/* A CH-class name the server answers with a TXT record about itself (id.server and the like,
 * compiler/core/main.c). The table ends with a name_len of 0. */
struct zb_chaos_name {
	const uint8_t *name;     /* lowercased wire format */
	uint32_t name_len;
	uint32_t answer;         /* offset in data: the answer to TXT and ANY (struct zb_head) */
};

_Static_assert(sizeof(struct zb_head) == 64, "zb_head layout");
_Static_assert(sizeof(struct zb_zone_numbers) == 16, "zb_zone_numbers layout");
_Static_assert(sizeof(struct zb_node) == 20, "zb_node layout");
_Static_assert(sizeof(struct zb_type_entry) == 8, "zb_type_entry layout");
_Static_assert(sizeof(struct zb_group) == 8, "zb_group layout");
_Static_assert(sizeof(struct zb_answer) == 40, "zb_answer layout");
_Static_assert(sizeof(struct zb_chain) == 284, "zb_chain layout");
_Static_assert(sizeof(struct zb_chain_page) == 16, "zb_chain_page layout");
_Static_assert(sizeof(struct zb_page_buckets) == 8, "zb_page_buckets layout");
_Static_assert(sizeof(struct zb_children) == 16, "zb_children layout");
_Static_assert(sizeof(struct zb_answer_denial) == 20, "zb_answer_denial layout");
_Static_assert(sizeof(struct zb_entry_key) == 12, "zb_entry_key layout");
_Static_assert(sizeof(struct zb_answer_alias) == 12, "zb_answer_alias layout");

/* A zone of the set, the serial of the SOA it was built from, and for a signed zone the
 * earliest expiration of its signatures: what re-signing (zonebake follow, re-sign) and a
 * fleet's convergence are judged by. */
struct zb_zone_info {
	const char *origin;
	uint32_t serial;  /* this and `expires` from the data (struct zb_zone_numbers) */
	int64_t expires;  /* seconds since 1970; 0: not signed */
};

/* The zone set: zonedata.c gives the data and the configuration, zb_zoneset_open the rest,
 * from the data's head, before anything reads it. */
struct zb_zoneset {
	const uint8_t *data;
	uint64_t data_len;
	const struct zb_group *groups; /* the perfect hash's (hash.h) */
	uint64_t seed;
	uint64_t hash_key;       /* ZB_HASH_KEY(seed) (hash.h), which the responder hashes with */
	uint32_t ngroups;
	uint32_t group_mask;     /* zb_group_mask(ngroups) */
	uint32_t node_size;      /* a slot's octets: its node, and its DO twin when one is signed */
	uint32_t nanswers;       /* distinct answers */
	uint32_t max_labels;     /* labels (root not counted) of the deepest node */
	uint32_t signed_nodes;   /* a node's DO twin is node[signed_nodes]: 1, or 0 when none */
	struct zb_zone_info *zones;
	uint32_t nzones;
	const char *version;     /* zonebake's, which built it */
	const char *description; /* the zones, for start-up messages */
	/* From the [server] table of zonebake.toml. */
	const char *const *default_listen;
	uint32_t ndefault_listen;
	const char *default_user;     /* --user, --control, --metrics when not given; NULL: none */
	const char *default_control;
	const char *default_metrics;
	uint32_t default_threads;     /* 0: one worker per CPU */
	const char *const *default_xdp; /* --xdp IFACE[@PORT] when not given */
	uint32_t ndefault_xdp;
	uint32_t xdp_optional;        /* --xdp-optional when not given */
	uint16_t udp_size;       /* EDNS payload size we advertise and cap responses to */
	uint16_t identity_len;
	const uint8_t *identity; /* NSID (RFC 5001), when identity_len is not 0 */
	struct zb_chaos_name *chaos;
	uint32_t tcp_idle_timeout;     /* seconds */
	uint32_t tcp_max_connections;  /* per worker */
	uint32_t tcp_max_connections_per_source; /* per worker, from one client address */
	uint32_t rrl_responses_per_second;       /* 0: no rate limiting */
	uint32_t rrl_slip;
	uint32_t rrl_ipv4_prefix;
	uint32_t rrl_ipv6_prefix;
	uint32_t cookie_secret_len;              /* 16, or 0: random at start-up */
	uint8_t cookie_secret[16];
};

extern struct zb_zoneset zb_zoneset;

static inline const struct zb_answer *zb_answer_at(const struct zb_zoneset *zs, uint32_t off)
{
	return (const struct zb_answer *)(zs->data + off);
}

static inline const uint8_t *zb_answer_body(const struct zb_answer *answer)
{
	return (const uint8_t *)answer + answer->body_off;
}

/* What an offset written at `from` points to (zonedata.h: offsets in a region count from
 * where they are written). */
static inline const void *zb_from(const void *from, uint32_t off)
{
	return (const uint8_t *)from + off;
}

#endif
