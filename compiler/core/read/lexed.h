/*
 * lexed.h - a zone file's records between its two readers: the lexer (zonefile.c), which
 * reads everything but the names, and readzone.c, which interns the names and files the
 * records. A large file is read by both at once, one thread each; the names are interned in
 * file order either way, so their ids (and all that follows from them) are the same.
 */
#ifndef LEXED_H
#define LEXED_H

#include "bake.h"

struct token {
	const char *p;
	size_t len;
};

/* A logical line's tokens, as dnspython's Tokenizer splits it; bit i of `quoted` says that
 * v[i] was a quoted string (its text between the quotes). */
#define MAX_TOKENS 64
struct tokens {
	size_t n;
	uint64_t quoted;
	struct token v[MAX_TOKENS];
};

enum lexed_kind {
	LEXED_RECORD,
	LEXED_ORIGIN,   /* an $ORIGIN: its name in `owner` */
	LEXED_PARTIAL,  /* a record the lexer declined: its names so far are read, to say
			 * first what the one-thread reading says first */
	LEXED_INCLUDE,  /* an $INCLUDE's file begins: its name for messages in `display`, the
			 * origin it gives (if any) in `owner` */
	LEXED_INCLUDED, /* ...and ends: origin, previous owner and file are as before it */
};

struct lexed {
	uint32_t line;
	uint8_t kind;
	uint8_t nnames;      /* of `names`, in the order the record data has them */
	uint16_t type;
	uint32_t ttl;
	struct rdata rd;     /* its names NONE */
	/* NULL for the previous record's owner (a blank owner, or the same text again), and
	 * in a PARTIAL record, when the lexer declined before the owner. */
	struct token owner;
	struct token names[2];
	const char *display;  /* LEXED_INCLUDE's */
};

#define LEXED_BLOCK 1024
#define MAX_INCLUDE_DEPTH 8

struct lexed_block {
	size_t n;
	struct lexed v[LEXED_BLOCK];
};

/* A file an $INCLUDE names, mapped, and its name for messages. */
struct included {
	void *text;
	size_t size;
	char *path, *display;
};

/* What a record without a TTL gets, as dnspython's Reader keeps it: the last TTL given, or
 * the default ($TTL, or else the SOA's MINIMUM). */
struct ttls {
	uint32_t last, fallback;
	uint8_t last_known, fallback_known, fallback_from_soa;
};

/* Lines joined from parentheses: octets [from, to) of the zone file's text. */
struct span {
	uint64_t from, to;
};

/* What a zone file's text is to a build over its image (image.c): where its first record's
 * line begins, the origin and TTLs that line starts with, whether a directive comes after it
 * (or an $INCLUDE anywhere), and its records over more than one line. */
struct head {
	int known;           /* a record was read */
	size_t end;
	uint8_t origin[255];
	size_t origin_len;
	struct ttls ttls;
	int late;
	VEC(struct span) spans;
};

/* The lexer's state. `deliver` takes `block` when it is full (last 0) and returns with an
 * empty one in its place, or takes the last block (last 1) and returns once every record
 * handed over has been filed. */
struct lexer {
	const struct zone *zone;
	const char *text;
	size_t size;
	struct lexed_block *block;
	void (*deliver)(struct lexer *lx, int last);
	void *queue;         /* deliver's */
	/* Lexing state. */
	uint32_t line;       /* of the record being read */
	int have_owner, building;
	struct ttls ttls;
	uint8_t origin[255]; /* the current origin in wire form, as written */
	size_t origin_len;
	struct token memo;   /* the previous owner as written; len 0 after an $ORIGIN */
	struct kept *kept;   /* lines joined from parentheses, kept till their records are filed */
	size_t filling;      /* the number of the block being filled: blocks delivered before */
	int mapped;          /* `text` is the file mapped: pages read may be let go */
	const char *let_go;  /* the mapped text before this is not in memory */
	/* $INCLUDE: the files being read, outermost first, their text kept mapped (its tokens
	 * are filed later) till the zone is read. */
	int depth;
	char *including[MAX_INCLUDE_DEPTH];  /* their real paths, for cycles */
	VEC(struct included) included;
	bytes_t joined;      /* a record's lines in parentheses, joined (kept once filed) */
	size_t line_start;   /* the offset of the logical line being read, in the file's text */
	struct head head;
};

void lex_zone_file(struct lexer *lx);

/* A part of a zone file read into records, for a build over its image (image.c): each with
 * its names interned, not filed; its records over more than one line; whether it held
 * anything but records (a directive: image.c takes none). */
struct region_record {
	name_t owner;
	uint16_t type;
	uint32_t ttl, line;
	struct rdata rd;
};
struct region {
	VEC(struct region_record) records;
	VEC(struct span) spans;
	int odd;
};
void read_zone_region(uint32_t zone, const char *text, size_t size, uint32_t first_line,
		      const uint8_t *origin_wire, size_t origin_len, name_t origin,
		      struct ttls ttls, struct region *out);
/* The lexer's `text` alone, a part of a zone file whose origin and TTLs are set already,
 * its lines numbered from `first_line` (image.c). */
void lex_region(struct lexer *lx, uint32_t first_line);

/* Inline, so that the words' lengths are constants: it runs a dozen times a record. */
static inline int eq_upper(struct token t, const char *word)
{
	size_t n = strlen(word);
	if (t.len != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((t.p[i] >= 'a' && t.p[i] <= 'z' ? t.p[i] - 32 : t.p[i]) != word[i])
			return 0;
	return 1;
}

/* fields.c: a number in plain digits up to `max`, or the reader declines. */
uint32_t lex_number(struct token t, uint64_t max, const char *what);
uint32_t ttl_value(struct token t, const char *what);  /* 1h30m too */
int digits(struct token t);  /* plain digits, at least one */
int32_t generic_type(struct token t);  /* TYPEnnn (RFC 3597 §5): its number, or -1 */
int ipv4(struct token t, uint8_t out[4]);
int ipv6(struct token t, uint8_t out[16]);
uint16_t any_type(struct token t);  /* a mnemonic or TYPEnnn, as dnspython reads either */

/* nametext.c */
int escaped_octet(const char *p, size_t len, size_t *i);  /* the octet, or -1 */
size_t name_text_to_wire(struct token t, const uint8_t *origin, size_t origin_len,
			 uint8_t out[255]);  /* its length, or 0 */
void put_string(struct token t);     /* a character-string, its length first */
void put_unescaped(struct token t);  /* the octets alone */

/* rdatanames.c: record data with names in it, all octets (the names uncompressed, RFC 3597
 * §4), `quoted` the fields' bits (struct tokens) */
void naptr(const struct lexer *lx, const struct token *f, size_t nf);
void svcb(const struct lexer *lx, const struct token *f, size_t nf, uint64_t quoted);
void rrsig(const struct lexer *lx, const struct token *f, size_t nf);
void nsec(const struct lexer *lx, const struct token *f, size_t nf);
void nsec3(const struct token *f, size_t nf);

/* rdatatext.c: record data of octets only, put in rdata_raw; each declines what dnspython
 * must judge. */
size_t hex_fields(const struct token *f, size_t nf, const char *what);
void ds_rest(const struct token *f, size_t nf);  /* DS and CDS after the key tag */
void numbers_then_hex(const struct token *f, size_t nf, size_t numbers, const char *what);
void dnskey(const struct token *f, size_t nf);
void nsec3param(const struct token *f, size_t nf);
void zonemd(const struct token *f, size_t nf);
void generic_rdata(uint16_t type, const struct token *f, size_t nf);  /* RFC 3597 §5 */
void base64_fields(const struct token *f, size_t nf, const char *what);
void free_kept(struct lexer *lx);
/* `deliver`, once the blocks before number `filed` are filed: the lines kept for them go. */
void kept_filed(struct lexer *lx, size_t filed);

#endif
