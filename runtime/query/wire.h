/*
 * wire.h - DNS message format: header accessors and the question parser (RFC 1035 §4.1).
 *
 * Nothing here reads a byte of a packet without first checking it is there.
 */
#ifndef ZB_WIRE_H
#define ZB_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hash.h"

#if defined(__SSE2__) && !defined(ZB_NO_SIMD)
#include <emmintrin.h>
#endif

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

/* Whether a header (ZB_HEADER_LEN octets) is a plain query's (RFC 1035 §4.1.1): QR clear,
 * OPCODE QUERY, one question, no answer or authority records; its other flags and ARCOUNT
 * as they may be. One comparison of octets 2 to 9, as a little-endian word. */
static inline int zb_plain_header(const uint8_t *h)
{
	const uint64_t mask = 0xffffffffffff00f8ull; /* QR and OPCODE; the three counts */
	const uint64_t plain = 0x0000000001000000ull; /* QDCOUNT 1 */
	uint64_t w;
	memcpy(&w, h + 2, 8);
	return (w & mask) == plain;
}

/* EDNS(0) (RFC 6891). */
#define ZB_OPT_LEN 11 /* an OPT record with no options: owner, TYPE, CLASS, TTL, RDLENGTH */
#define ZB_EDNS_OPTION_NSID 3 /* RFC 5001 */
#define ZB_EDNS_OPTION_COOKIE 10 /* RFC 7873 */
#define ZB_OPT_FLAG_DO 0x8000u /* RFC 3225 */
#define ZB_COOKIE_CLIENT_LEN 8
#define ZB_COOKIE_SERVER_LEN 16 /* RFC 9018: version, reserved, timestamp, hash */
#define ZB_COOKIE_LEN (ZB_COOKIE_CLIENT_LEN + ZB_COOKIE_SERVER_LEN)

/* A parsed question: where it is in the packet, and its name lowercased for the lookup. */
struct zb_question {
	uint16_t qtype;
	uint16_t qclass;
	uint16_t name_len;              /* wire length of QNAME, root label included */
	uint16_t end;                   /* offset just past QCLASS */
	uint8_t guessed;                /* 1: the name's labels not walked (zb_guess_question) */
	uint8_t walked;                 /* 1: nlabels and label_off say where its labels are */
	uint8_t nlabels;                /* labels before the root */
	uint64_t hash;                  /* zb_hash of `lower` (hash.h), computed while parsing */
	/* QNAME, ASCII letters lowercased (RFC 4343), then zeros to the end of its last block of
	 * 16 octets and for 16 more (zb_lower_hash) */
	uint8_t lower[ZB_MAX_NAME + 1 + 16] __attribute__((aligned(16)));
	uint8_t label_off[ZB_MAX_LABELS + 1]; /* each label's offset, the root's last */
};

/* A query buffer must be readable this far past the query's end: the name is read sixteen
 * octets at a time (zb_lower_hash), and its last block may reach past the question. */
#define ZB_QUERY_SLACK 16

/* ASCII letters of eight bytes at once made lowercase; other bytes, label lengths included
 * (never above 63), stay as they are. */
static inline uint64_t zb_lower8(uint64_t w)
{
	uint64_t low7 = w & 0x7f7f7f7f7f7f7f7full;
	uint64_t at_least_a = low7 + 0x3f3f3f3f3f3f3f3full; /* bit 7 set where byte >= 'A' */
	uint64_t above_z = low7 + 0x2525252525252525ull;    /* bit 7 set where byte > 'Z' */
	uint64_t upper = at_least_a & ~above_z & ~w & 0x8080808080808080ull;
	return w | (upper >> 2);
}

/* The mask of a name's blocks: the sixteen octets at zb_name_mask(len) + i keep those of
 * block i that are the name's (256 ones, then 16 zeros). */
static inline const uint8_t *zb_name_mask(size_t len)
{
	static const uint8_t ones_then_zeros[ZB_MAX_NAME + 1 + 16] = {
		[0 ... ZB_MAX_NAME] = 0xff
	};
	return ones_then_zeros + ZB_MAX_NAME + 1 - len;
}

/*
 * A name of `len` octets (at least 1) lowercased into `out` and hashed as zb_hash hashes the
 * result, in one pass over blocks of sixteen octets: with SSE2 (every x86-64) in one
 * register, else as two words. Zeros follow it to the end of its last block and for a whole block
 * more, so that it and every suffix of it compare a block at a time (zb_same_name). It reads
 * up to 15 octets past the name (the query has ZB_QUERY_SLACK octets of slack); `out` has
 * room for 256 + 16.
 */
#if defined(__SSE2__) && !defined(ZB_NO_SIMD)
static inline __m128i zb_lower16(const uint8_t *at)
{
	__m128i v = _mm_loadu_si128((const __m128i *)at);
	/* 'A'..'Z' moved to the bottom of the signed octets, -128..-103: one signed comparison
	 * finds them, every other octet landing above. */
	__m128i moved = _mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - 'A')));
	__m128i upper = _mm_cmpgt_epi8(_mm_set1_epi8((char)(0x80 - 'A' + 'Z' + 1)), moved);
	return _mm_or_si128(v, _mm_and_si128(upper, _mm_set1_epi8(0x20)));
}

static inline uint64_t zb_lower_hash(const uint8_t *name, size_t len, uint64_t key,
				     uint8_t *out)
{
	const uint8_t *mask = zb_name_mask(len);
	uint64_t h = zb_hash_start(len, key);
	size_t i = 0;
	do {
		__m128i v = _mm_and_si128(zb_lower16(name + i),
					  _mm_loadu_si128((const __m128i *)(mask + i)));
		_mm_store_si128((__m128i *)(out + i), v);
		h = zb_hash_block(h, (uint64_t)_mm_cvtsi128_si64(v),
				  (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)), key);
		i += 16;
	} while (i < len);
	_mm_store_si128((__m128i *)(out + i), _mm_setzero_si128());
	return zb_hash_end(h);
}
#else
static inline uint64_t zb_lower_hash(const uint8_t *name, size_t len, uint64_t key,
				     uint8_t *out)
{
	const uint8_t *mask = zb_name_mask(len);
	uint64_t h = zb_hash_start(len, key);
	size_t i = 0;
	do {
		uint64_t w[2];
		for (int j = 0; j < 2; j++) {
			uint64_t keep;
			memcpy(&w[j], name + i + 8 * j, 8);
			memcpy(&keep, mask + i + 8 * j, 8);
			w[j] = zb_lower8(w[j]) & keep;
		}
		memcpy(out + i, w, 16);
		h = zb_hash_block(h, w[0], w[1], key);
		i += 16;
	} while (i < len);
	memset(out + i, 0, 16);
	return zb_hash_end(h);
}
#endif

/* The question of a packet whose name has `name_len` octets (at least 1, the last a 0): its
 * type, class and end, and its name lowercased and hashed. */
static inline __attribute__((always_inline)) void
zb_take_question(const uint8_t *pkt, size_t name_len, uint64_t key, struct zb_question *q)
{
	const uint8_t *after = pkt + ZB_HEADER_LEN + name_len;
	q->name_len = (uint16_t)name_len;
	q->qtype = zb_get16(after);
	q->qclass = zb_get16(after + 2);
	q->end = (uint16_t)(ZB_HEADER_LEN + name_len + 4);
	q->walked = 0;
	q->hash = zb_lower_hash(pkt + ZB_HEADER_LEN, name_len, key, q->lower);
}

/*
 * Parse the question that starts at offset 12 of a packet of `len` bytes, lowercasing its
 * name into q->lower on the way (RFC 4343) so the lookup can hash and compare it byte for
 * byte, and hash that with `key` (a seed's ZB_HASH_KEY). Returns 0, or -1 when it is
 * malformed: runs past the end, a label type other than a plain length (a compression
 * pointer has nothing to point back to in a question), or a name over 255 octets. Inline:
 * every query's, on the hot path.
 */
static inline __attribute__((always_inline)) int
zb_parse_question(const uint8_t *pkt, size_t len, uint64_t key, struct zb_question *q)
{
	const uint8_t *name = pkt + ZB_HEADER_LEN, *p = name;
	/* The root label must lie within the packet and within 255 octets of the name's start:
	 * one bound checks both. */
	const uint8_t *limit = pkt + (len < ZB_HEADER_LEN + ZB_MAX_NAME ? len
								: ZB_HEADER_LEN + ZB_MAX_NAME);

	/* Walk the labels: each a plain length. Where they start is left to a lookup that
	 * needs it (zb_label_offsets): a name found whole never does. */
	for (;;) {
		if (p >= limit)
			return -1;
		unsigned label = *p;
		if (label - 1 >= 63) { /* the root, or not a plain length: */
			if (label == 0)
				break;
			return -1; /* 0xC0 pointer, 0x40/0x80 extended or reserved label types */
		}
		p += 1 + label;
	}
	size_t name_len = (size_t)(p - name) + 1;
	if (ZB_HEADER_LEN + name_len + 4 > len)
		return -1;
	zb_take_question(pkt, name_len, key, q);
	q->guessed = 0;
	return 0;
}

/* Whether a packet of `len` octets ends in an OPT record (RFC 6891 §6.1.2: the root as its
 * owner, TYPE OPT) with `rdlen` octets of RDATA, after at least a header and a question. */
static inline int zb_ends_in_opt(const uint8_t *pkt, size_t len, size_t rdlen)
{
	if (len < ZB_HEADER_LEN + 1 + 4 + ZB_OPT_LEN + rdlen)
		return 0;
	const uint8_t *opt = pkt + len - ZB_OPT_LEN - rdlen;
	return opt[0] == 0 && zb_get16(opt + 1) == ZB_TYPE_OPT && zb_get16(opt + 9) == rdlen;
}

/* Whether a packet of `len` octets ends in a COOKIE option (RFC 7873 §4) of `cookie` octets,
 * the one option of an OPT record. */
static inline int zb_ends_in_cookie(const uint8_t *pkt, size_t len, size_t cookie)
{
	const uint8_t *option = pkt + len - 4 - cookie;
	return zb_ends_in_opt(pkt, len, 4 + cookie) &&
	       zb_get16(option) == ZB_EDNS_OPTION_COOKIE && zb_get16(option + 2) == cookie;
}

/*
 * How many octets follow a plain query's question, on a guess from its end: its QTYPE and
 * QCLASS (4) when ARCOUNT is 0, those and an OPT record without options when it is 1, the
 * forms nearly every query has. Returns 0 when the packet does not end so.
 */
static inline size_t zb_guess_tail(const uint8_t *pkt, size_t len, unsigned arcount)
{
	if (!arcount)
		return 4;
	return zb_ends_in_opt(pkt, len, 0) ? 4 + ZB_OPT_LEN : 0;
}

/* The same with ARCOUNT 1 for the OPT record with one COOKIE option (RFC 7873 §4) that a
 * resolver holding a cookie of ours sends with every query: a client cookie alone or with a
 * server cookie of RFC 9018's size. Returns 0 when the packet ends in neither. */
static inline size_t zb_guess_cookie_tail(const uint8_t *pkt, size_t len)
{
	if (zb_ends_in_cookie(pkt, len, ZB_COOKIE_LEN))
		return 4 + ZB_OPT_LEN + 4 + ZB_COOKIE_LEN;
	if (zb_ends_in_cookie(pkt, len, ZB_COOKIE_CLIENT_LEN))
		return 4 + ZB_OPT_LEN + 4 + ZB_COOKIE_CLIENT_LEN;
	return 0;
}

/*
 * The question of a packet of `len` octets taken on a guess at its name's length, its labels
 * not walked, for a plain query whose question `tail` octets end (zb_guess_tail,
 * zb_guess_cookie_tail). Returns 0, or -1 when the packet does not fit the guess
 * (zb_parse_question then reads it). The guess holds for any name a lookup finds whole: a
 * compiled name is well formed, and lowercasing leaves every label length as it is, so a name
 * equal to one has its labels, and the parser reads from the front what the guess took from
 * the end; for any other, zb_guess_holds says, before anything relies on the labels.
 */
static inline __attribute__((always_inline)) int
zb_guess_question(const uint8_t *pkt, size_t len, size_t tail, uint64_t key, struct zb_question *q)
{
	size_t name_len = len - ZB_HEADER_LEN - tail;
	if (len < ZB_HEADER_LEN + tail + 1 || name_len > ZB_MAX_NAME ||
	    pkt[ZB_HEADER_LEN + name_len - 1] != 0)
		return -1;
	zb_take_question(pkt, name_len, key, q);
	q->guessed = 1;
	return 0;
}

/* Whether a guessed question's name is the one zb_parse_question finds: its labels, each a
 * plain length, end at the last octet guessed (a 0, checked). The lowercased name serves: no
 * label length is a letter. Where the labels start is kept, for the lookup from the closest
 * encloser that follows (lookup.c). */
static inline int zb_guess_holds(struct zb_question *q)
{
	unsigned at = 0, last = q->name_len - 1u, n = 0;
	while (at < last) {
		unsigned label = q->lower[at];
		if (label - 1 >= 63)
			return 0;
		q->label_off[n++] = (uint8_t)at;
		at += 1 + label;
	}
	q->label_off[n] = (uint8_t)at;
	q->nlabels = (uint8_t)n;
	return q->walked = at == last;
}

/* The offset of each label of a well-formed name (a question's, parsed) in `off`, the root
 * label's last; returns how many labels come before the root. */
static inline unsigned zb_label_offsets(const uint8_t *name, uint8_t off[ZB_MAX_LABELS + 1])
{
	unsigned n = 0, at = 0;
	for (; name[at]; at += 1u + name[at])
		off[n++] = (uint8_t)at;
	off[n] = (uint8_t)at;
	return n;
}

/* Step over the name at *off in a message of `len` octets; it may end in a compression
 * pointer. Returns 0, or -1 when it runs past the end or has a label of another type
 * (RFC 6891 §5). */
int zb_skip_name(const uint8_t *pkt, size_t len, size_t *off);

/* EDNS(0) (RFC 6891) as the query asked for it. */
struct zb_edns {
	uint8_t present;
	uint8_t cookie_verdict;   /* the responder's: enum zb_cookie_verdict (beside `present`:
				   * the facts take both at once) */
	uint8_t version;
	uint8_t nsid;       /* the NSID option was in the query */
	uint16_t flags;     /* DO and the rest of the OPT TTL's low 16 bits */
	uint16_t udp_size;  /* the requestor's payload size, as sent */
	uint8_t cookie_len; /* the first COOKIE option's length; 0: none */
	uint8_t cookie_malformed; /* a COOKIE option of a length RFC 7873 §5.2.2 forbids */
	const uint8_t *cookie;    /* its octets, in the query; then the responder's reply */
	uint16_t opt_len;         /* the responder's: the length of the OPT record it returns */
};

/* The fixed fields of an OPT record whose TYPE is at `type`: the requestor's payload size
 * (CLASS), the version and flags (TTL) (RFC 6891 §6.1.2, §6.1.3); the rest of `edns` as it
 * is. */
static inline void zb_take_opt_fields(const uint8_t *type, struct zb_edns *edns)
{
	edns->present = 1;
	edns->udp_size = zb_get16(type + 2);
	edns->version = type[5];
	edns->flags = zb_get16(type + 6);
}

/*
 * Parse the additional section, which starts at `off`, and check nothing follows it. Records
 * other than OPT are skipped. Returns 0, or -1 (FORMERR) when a record runs past the end,
 * there is more than one OPT, an OPT's owner is not the root (RFC 6891 §6.1.2), its options
 * run past its RDATA, or bytes trail the last record.
 */
int zb_parse_additional(const uint8_t *pkt, size_t len, size_t off, unsigned count,
			struct zb_edns *edns);

#endif
