/*
 * wire.h - DNS message format: header accessors and the question parser (RFC 1035 §4.1).
 *
 * Nothing here reads a byte of a packet without first checking it is there.
 */
#ifndef ZB_WIRE_H
#define ZB_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define ZB_HEADER_LEN 12
#define ZB_MAX_NAME 255   /* octets of a wire-format name, root label included */
#define ZB_MAX_LABELS 127 /* labels of a name, root not counted */
#define ZB_UDP_PLAIN_MAX 512 /* response size without EDNS (RFC 1035 §4.2.1) */

/* Header flag bits, in the 16-bit word at offset 2. */
#define ZB_FLAG_QR 0x8000u
#define ZB_FLAG_AA 0x0400u
#define ZB_FLAG_TC 0x0200u
#define ZB_FLAG_RD 0x0100u
#define ZB_FLAG_CD 0x0010u

enum zb_opcode { ZB_OPCODE_QUERY = 0 };
enum zb_rcode {
	ZB_RCODE_NOERROR = 0,
	ZB_RCODE_FORMERR = 1,
	ZB_RCODE_NXDOMAIN = 3,
	ZB_RCODE_NOTIMP = 4,
	ZB_RCODE_REFUSED = 5,
	ZB_RCODE_BADVERS = 16, /* extended: the upper 8 bits go in the OPT record (RFC 6891) */
};
enum { ZB_CLASS_IN = 1, ZB_CLASS_CH = 3, ZB_CLASS_ANY = 255 };
enum {
	ZB_TYPE_TXT = 16,
	ZB_TYPE_OPT = 41,
	ZB_TYPE_IXFR = 251,
	ZB_TYPE_AXFR = 252,
	ZB_TYPE_MAILB = 253,
	ZB_TYPE_MAILA = 254,
	ZB_TYPE_ANY = 255,
};

static inline uint16_t zb_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Eight octets as a big-endian number. */
static inline uint64_t zb_get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static inline void zb_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The header accessors take a pointer to at least ZB_HEADER_LEN bytes. */
static inline uint16_t zb_hdr_flags(const uint8_t *h) { return zb_get16(h + 2); }
static inline unsigned zb_hdr_opcode(const uint8_t *h) { return (h[2] >> 3) & 0xf; }
static inline uint16_t zb_hdr_qdcount(const uint8_t *h) { return zb_get16(h + 4); }
static inline uint16_t zb_hdr_ancount(const uint8_t *h) { return zb_get16(h + 6); }
static inline uint16_t zb_hdr_nscount(const uint8_t *h) { return zb_get16(h + 8); }
static inline uint16_t zb_hdr_arcount(const uint8_t *h) { return zb_get16(h + 10); }

/* A parsed question: where it is in the packet, and its name lowercased for the lookup. */
struct zb_question {
	uint16_t qtype;
	uint16_t qclass;
	uint16_t name_len;              /* wire length of QNAME, root label included */
	uint16_t end;                   /* offset just past QCLASS */
	uint8_t nlabels;                /* labels of QNAME, root not counted */
	uint8_t label_off[ZB_MAX_LABELS + 1]; /* offset of each label in the name; [nlabels]: root */
	uint64_t hash;                  /* zb_hash of `lower` (hash.h), computed while parsing */
	/* QNAME, ASCII letters lowercased (RFC 4343), zero-padded to a whole word */
	uint8_t lower[ZB_MAX_NAME + 1 + 8] __attribute__((aligned(8)));
};

/* A query buffer must be readable this far past the query's end: the name is read a word at
 * a time, and its last word may reach past the question. */
#define ZB_QUERY_SLACK 8

/*
 * Parse the question that starts at offset 12 of a packet of `len` bytes, and hash its
 * lowercased name with `seed`. Returns 0, or -1 when it is malformed: runs past the end, a
 * label type other than a plain length (a compression pointer has nothing to point back to
 * in a question), or a name over 255 octets.
 */
int zb_parse_question(const uint8_t *pkt, size_t len, uint64_t seed, struct zb_question *q);

/* Step over the name at *off in a message of `len` octets; it may end in a compression
 * pointer. Returns 0, or -1 when it runs past the end or has a label of another type
 * (RFC 6891 §5). */
int zb_skip_name(const uint8_t *pkt, size_t len, size_t *off);

/* EDNS(0) (RFC 6891) as the query asked for it. */
#define ZB_EDNS_OPTION_NSID 3 /* RFC 5001 */
#define ZB_EDNS_OPTION_COOKIE 10 /* RFC 7873 */
#define ZB_OPT_FLAG_DO 0x8000u /* RFC 3225 */

struct zb_edns {
	uint8_t present;
	uint8_t version;
	uint8_t nsid;       /* the NSID option was in the query */
	uint16_t flags;     /* DO and the rest of the OPT TTL's low 16 bits */
	uint16_t udp_size;  /* the requestor's payload size, as sent */
	uint8_t cookie_len; /* the first COOKIE option's length; 0: none */
	uint8_t cookie_malformed; /* a COOKIE option of a length RFC 7873 §5.2.2 forbids */
	const uint8_t *cookie;    /* its octets, in the query; then the responder's reply */
	uint8_t cookie_verdict;   /* the responder's: enum zb_cookie_verdict */
	uint16_t opt_len;         /* the responder's: the length of the OPT record it returns */
};

/*
 * Parse the additional section, which starts at `off`, and check nothing follows it. Records
 * other than OPT are skipped. Returns 0, or -1 (FORMERR) when a record runs past the end,
 * there is more than one OPT, an OPT's owner is not the root (RFC 6891 §6.1.2), its options
 * run past its RDATA, or bytes trail the last record.
 */
int zb_parse_additional(const uint8_t *pkt, size_t len, size_t off, unsigned count,
			struct zb_edns *edns);

#endif
