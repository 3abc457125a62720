/*
 * zonefile.c - the fast reader's lexer (RFC 1035 §5.1 master files), with dnspython's meaning
 * and nothing else. The names are left as text for readzone.c to intern (lexed.h): this half
 * of the reading can run on a thread of its own.
 *
 * It reads `$ORIGIN`, `$TTL` and `$INCLUDE` anywhere, one record a line or parentheses over
 * lines, comments, blank owners continuing the previous one, TTL and class IN in either
 * order or neither (the TTL then as dnspython gives it), TTLs and SOA timers in units
 * (`1h30m`), names and quoted strings with escapes, UTF-8 in strings, the types A AAAA NS
 * CNAME DNAME PTR MX TXT SPF HINFO SOA SRV CAA, those with names kept as octets
 * (rdatanames.c): NAPTR SVCB HTTPS RRSIG NSEC NSEC3, those of octets only (rdatatext.c): DS
 * CDS SSHFP TLSA SMIMEA DNSKEY CDNSKEY NSEC3PARAM ZONEMD, and RFC 3597's TYPEnnn and `\#`.
 * Anything else, and anything dnspython would refuse, makes it decline the file: dnspython
 * reads it (compiler/read/) and says what is wrong where.
 */
#define _GNU_SOURCE  /* asprintf */
#include <ctype.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake.h"
#include "read/lexed.h"

/* dnspython's whitespace between tokens. */
static int space(char c)
{
	return c == ' ' || c == '\t';
}

/* What an octet is to the tokenizer outside quotes. ODD: another control character (dnspython
 * would take it into a token) or a parenthesis lex_lines did not join: the full reader's. */
enum { PLAIN, BLANK, QUOTE, COMMENT, ESCAPE, ODD };
static const uint8_t octet_kind[256] = {
	[0 ... 8] = ODD, [10 ... 31] = ODD, ['('] = ODD, [')'] = ODD,
	['\t'] = BLANK, [' '] = BLANK, ['"'] = QUOTE, [';'] = COMMENT, ['\\'] = ESCAPE,
};

/* A logical line's tokens, as dnspython's Tokenizer makes them: a quoted string ends at the
 * next `"` not escaped, and a `"` ends a token as a blank does; `;` outside quotes begins a
 * comment; a backslash takes the next character into the token, whatever it is. Escapes
 * stay in the tokens' text, read where the field is read. */
static void tokenize(const char *p, size_t len, struct tokens *out)
{
	out->n = 0;
	out->quoted = 0;
	for (size_t i = 0;;) {
		while (i < len && space(p[i]))
			i++;
		if (i == len || p[i] == ';')
			return;
		if (out->n == MAX_TOKENS)
			decline("a line of more than %d fields", MAX_TOKENS);
		size_t start = i;
		if (p[i] == '"') {
			for (start = ++i; i < len && p[i] != '"'; i++)
				i += p[i] == '\\';
			if (i >= len)
				decline("a quote left open");
			out->quoted |= 1ull << out->n;
			out->v[out->n++] = (struct token){p + start, i - start};
			i++;
			continue;
		}
		for (; i < len; i++) {
			uint8_t kind = octet_kind[(uint8_t)p[i]];
			if (kind == PLAIN)
				continue;
			if (kind == ESCAPE && i + 1 < len) {
				i++;
				continue;
			}
			if (kind != BLANK && kind != QUOTE && kind != COMMENT)
				decline("a field the full reader must read");
			break;
		}
		out->v[out->n++] = (struct token){p + start, i - start};
	}
}

/* A name with escapes (nametext.c), interned. */
static int escaped_name(const char *text, size_t len, name_t origin, name_t *out)
{
	uint8_t origin_wire[255], wire[255];
	size_t origin_len = name_wire(origin, origin_wire);
	if (name_text_to_wire((struct token){text, len}, origin_wire, origin_len, wire) == 0)
		return -1;
	*out = name_from_wire(wire);
	return 0;
}

/* A name as dnspython reads it: `@`, absolute, or relative to the origin. An `@` inside a
 * name is the full reader's. */
int parse_name(const char *text, size_t len, name_t origin, name_t *out)
{
	if (len == 0)
		return -1;  /* `""`: the full reader's to say */
	if (len == 1 && text[0] == '@') {
		*out = origin;
		return 0;
	}
	if (memchr(text, '\\', len))
		return escaped_name(text, len, origin, out);
	if (memchr(text, '@', len))
		return -1;
	if (len == 1 && text[0] == '.') {
		*out = ROOT;
		return 0;
	}
	int absolute = text[len - 1] == '.';
	size_t end = absolute ? len - 1 : len;
	/* Labels from the right, so each is interned under its parent. */
	name_t name = absolute ? ROOT : origin;
	size_t wire = N(name)->wire_len;
	size_t stop = end;
	for (size_t i = end + 1; i-- > 0;) {
		if (i > 0 && text[i - 1] != '.')
			continue;
		size_t label_len = stop - i;
		if (label_len == 0 || label_len > 63)
			return -1;
		wire += 1 + label_len;
		if (wire > 255)
			return -1;
		name = name_child(name, (const uint8_t *)text + i, label_len);
		if (i == 0)
			break;
		stop = i - 1;
	}
	*out = name;
	return 0;
}

static struct lexed *current(struct lexer *lx)
{
	return &lx->block->v[lx->block->n];
}

/* A name in the record data, interned later in this order. */
static void lexed_name(struct lexer *lx, struct token t)
{
	struct lexed *it = current(lx);
	it->names[it->nnames++] = t;
}

/* A type's mnemonic, or TYPEnnn for any (RFC 3597 §5), whose data the fast reader reads; 0
 * for what the full reader must read. */
static uint16_t type_of(struct token t)
{
	static const struct { const char *text; uint16_t type; } known[] = {
		{"A", T_A}, {"NS", T_NS}, {"CNAME", T_CNAME}, {"SOA", T_SOA}, {"PTR", T_PTR},
		{"MX", T_MX}, {"TXT", T_TXT}, {"AAAA", T_AAAA}, {"SRV", T_SRV}, {"DS", T_DS},
		{"CAA", T_CAA}, {"DNAME", T_DNAME}, {"SPF", T_SPF}, {"HINFO", T_HINFO},
		{"SSHFP", T_SSHFP}, {"TLSA", T_TLSA}, {"SMIMEA", T_SMIMEA}, {"CDS", T_CDS},
		{"DNSKEY", T_DNSKEY}, {"CDNSKEY", T_CDNSKEY}, {"NSEC3PARAM", T_NSEC3PARAM},
		{"ZONEMD", T_ZONEMD}, {"NAPTR", T_NAPTR}, {"SVCB", T_SVCB}, {"HTTPS", T_HTTPS},
		{"RRSIG", T_RRSIG}, {"NSEC", T_NSEC}, {"NSEC3", T_NSEC3},
	};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (eq_upper(t, known[i].text))
			return known[i].type;
	int32_t type = generic_type(t);
	if (type >= 0) {
		/* dnspython reads TYPEnnn of a type it names as that type */
		const char *name = type_name(type);
		for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
			if (known[i].type == type)
				return type;
		return strncmp(name, "TYPE", 4) == 0 && type != 0 ? type : 0;
	}
	return 0;
}

static struct rdata raw_rdata(void)
{
	return (struct rdata){.raw = rdata_raw.n, .name = NONE, .name2 = NONE, .next = NONE};
}

static void finish_raw(struct rdata *rd)
{
	rd->raw_len = rdata_raw.n - rd->raw;
}

/* CAA: flags, an alphanumeric tag, the value (RFC 8659 §4.1); tag and value may be quoted. */
static void caa(const struct token *f)
{
	uint8_t flags = lex_number(f[0], 255, "CAA flags");
	bytes_put(&rdata_raw, &flags, 1);
	size_t at = rdata_raw.n;
	put_string(f[1]);
	for (size_t i = at + 1; i < rdata_raw.n; i++)
		if (!((rdata_raw.v[i] | 0x20) >= 'a' && (rdata_raw.v[i] | 0x20) <= 'z') &&
		    !(rdata_raw.v[i] >= '0' && rdata_raw.v[i] <= '9'))
			decline("a CAA tag that is not alphanumeric");
	if (rdata_raw.n == at + 1)
		decline("an empty CAA tag");
	put_unescaped(f[2]);
}

/* The fields that may be quoted strings, by type (a bit per field; ~0: all): dnspython
 * refuses a quoted string anywhere else. */
static uint64_t may_be_quoted(uint16_t type)
{
	switch (type) {
	case T_TXT:
	case T_SPF:
	case T_HINFO:
		return ~0ull;
	case T_CAA:
		return 6;   /* tag, value */
	case T_NAPTR:
		return 28;  /* flags, services, regexp */
	case T_SVCB:
	case T_HTTPS:
		return ~3ull;  /* values after `key=` (svcb checks) */
	default:
		return 0;
	}
}

/* The record data: octets into rdata_raw, names the answers need as ids left as text for
 * readzone.c (lexed_name). Whatever the switch does not read, the full reader does. */
static struct rdata rdata_of(struct lexer *r, uint16_t type, const struct token *f,
			     size_t nf, uint64_t quoted)
{
	struct rdata rd = raw_rdata();
	uint8_t addr[16];
	if (quoted & ~may_be_quoted(type))
		decline("%s:%u: quoted text the full reader must read", r->zone->display, r->line);
	if (nf > 0 && f[0].len == 2 && f[0].p[0] == '\\' && f[0].p[1] == '#') {
		generic_rdata(type, f, nf);
		finish_raw(&rd);
		return rd;
	}
	switch (type) {
	case T_A:
	case T_AAAA:
		if (nf != 1 || (type == T_A ? ipv4(f[0], addr) : ipv6(f[0], addr)) != 0)
			goto unread;
		bytes_put(&rdata_raw, addr, type == T_A ? 4 : 16);
		break;
	case T_NS:
	case T_CNAME:
	case T_PTR:
	case T_DNAME:
		if (nf != 1)
			goto unread;
		lexed_name(r, f[0]);
		break;
	case T_MX:
		if (nf != 2 || !digits(f[0]))
			goto unread;
		bytes_u16(&rdata_raw, lex_number(f[0], 65535, "MX preference"));
		lexed_name(r, f[1]);
		break;
	case T_SRV:
		if (nf != 4)
			goto unread;
		for (int i = 0; i < 3; i++)
			bytes_u16(&rdata_raw, lex_number(f[i], 65535, "SRV field"));
		lexed_name(r, f[3]);
		break;
	case T_SOA:
		if (nf != 7)
			goto unread;
		lexed_name(r, f[0]);
		lexed_name(r, f[1]);
		for (int i = 2; i < 7; i++)
			/* The serial is a number; the timers are TTLs (RFC 1035 §3.3.13). */
			bytes_u32(&rdata_raw, i == 2 ? lex_number(f[i], UINT32_MAX, "SOA serial")
						: ttl_value(f[i], "SOA timer"));
		break;
	case T_NAPTR:
		naptr(r, f, nf);
		break;
	case T_SVCB:
	case T_HTTPS:  /* raw whole; the TargetName also as a name, for the additional section */
		svcb(r, f, nf, quoted);
		lexed_name(r, f[1]);
		break;
	case T_RRSIG:
		rrsig(r, f, nf);
		break;
	case T_NSEC:
		nsec(r, f, nf);
		break;
	case T_NSEC3:
		nsec3(f, nf);
		break;
	case T_DS:
	case T_CDS:
		if (nf < 4)
			goto unread;
		bytes_u16(&rdata_raw, lex_number(f[0], 65535, "DS key tag"));
		ds_rest(f + 1, nf - 1);
		break;
	case T_SSHFP:
		numbers_then_hex(f, nf, 2, "an SSHFP");
		break;
	case T_TLSA:
	case T_SMIMEA:
		numbers_then_hex(f, nf, 3, "a TLSA");
		break;
	case T_DNSKEY:
	case T_CDNSKEY:
		dnskey(f, nf);
		break;
	case T_NSEC3PARAM:
		nsec3param(f, nf);
		break;
	case T_ZONEMD:
		zonemd(f, nf);
		break;
	case T_HINFO:  /* CPU and OS, two character-strings (RFC 1035 §3.3.2) */
		if (nf != 2)
			goto unread;
		put_string(f[0]);
		put_string(f[1]);
		break;
	case T_CAA:
		if (nf != 3)
			goto unread;
		caa(f);
		break;
	case T_TXT:  /* words and quoted strings, one character-string each */
	case T_SPF:
		if (nf == 0)
			goto unread;
		for (size_t i = 0; i < nf; i++)
			put_string(f[i]);
		break;
	default:
		goto unread;
	}
	finish_raw(&rd);
	return rd;
unread:
	decline("%s:%u: record data the full reader must read", r->zone->display, r->line);
}

/* The TTL of a record that gives none (dnspython's Reader, RFC 2308 §4): the last TTL given
 * unless a $TTL says otherwise, else the default. 0 when there is none to give. */
static int implicit_ttl(const struct ttls *t, uint32_t *ttl)
{
	if (t->last_known && (!t->fallback_known || t->fallback_from_soa))
		*ttl = t->last;
	else if (t->fallback_known)
		*ttl = t->fallback;
	else
		return 0;
	return 1;
}

/* The record just put in the block counted: a full block goes to be filed. */
static void counted(struct lexer *lx)
{
	if (++lx->block->n == LEXED_BLOCK) {
		lx->deliver(lx, 0);
		lx->filling++;
	}
}

static void record(struct lexer *r, const char *line, size_t len)
{
	struct tokens tk;
	struct lexed *it = current(r);
	*it = (struct lexed){.line = r->line, .kind = LEXED_RECORD};
	r->building = 1;
	tokenize(line, len, &tk);
	if (tk.n == 0) {
		r->building = 0;
		return;
	}
	if (!r->head.known) {  /* what a record anywhere after the head starts from (image.c) */
		r->head.known = 1;
		r->head.end = r->line_start;
		memcpy(r->head.origin, r->origin, r->origin_len);
		r->head.origin_len = r->origin_len;
		r->head.ttls = r->ttls;
	}
	size_t at = 0;
	if (space(line[0])) {
		if (!r->have_owner)
			decline("%s:%u: a record without an owner", r->zone->display, r->line);
	} else if (tk.v[at].len == r->memo.len && !(tk.quoted & 1) &&
		   memcmp(tk.v[at].p, r->memo.p, r->memo.len) == 0) {
		/* Zone files name the owner on each of its records: the same text is the same
		 * name (until an $ORIGIN), and looking it up again cost a probe per label. */
		at++;
	} else {
		it->owner = r->memo = tk.v[at++];
		r->have_owner = 1;
	}
	/* TTL and class in either order (RFC 1035 §5.1), each at most once. */
	uint32_t ttl = 0;
	int explicit_ttl = 0, class = 0;
	for (int i = 0; i < 2 && at < tk.n; i++) {
		if (!explicit_ttl && isdigit((unsigned char)tk.v[at].p[0])) {
			ttl = ttl_value(tk.v[at++], "TTL");
			explicit_ttl = 1;
		} else if (!class && eq_upper(tk.v[at], "IN")) {
			at++;
			class = 1;
		}
	}
	if (at == tk.n)
		decline("%s:%u: a record without a type", r->zone->display, r->line);
	if (tk.quoted & ((2ull << at) - 1))
		decline("%s:%u: a quoted owner, TTL, class or type", r->zone->display, r->line);
	uint16_t type = type_of(tk.v[at]);
	if (type == 0)
		decline("%s:%u: type %.*s", r->zone->display, r->line, (int)tk.v[at].len,
			tk.v[at].p);
	at++;
	struct rdata rd = rdata_of(r, type, tk.v + at, tk.n - at, tk.quoted >> at);
	if (type == T_SOA && !r->ttls.fallback_known) {
		/* Without a $TTL, the SOA's MINIMUM is the default (RFC 1035 §3.3.13, as
		 * dnspython and BIND before 9 read it). */
		const uint8_t *m = rdata_raw.v + rd.raw + 16;
		r->ttls.fallback = (uint32_t)m[0] << 24 | m[1] << 16 | m[2] << 8 | m[3];
		r->ttls.fallback_known = r->ttls.fallback_from_soa = 1;
	}
	if (explicit_ttl) {
		r->ttls.last = ttl;
		r->ttls.last_known = 1;
	} else if (!implicit_ttl(&r->ttls, &ttl)) {
		decline("%s:%u: a record without a TTL", r->zone->display, r->line);
	}
	it->type = type;
	it->ttl = ttl;
	it->rd = rd;
	r->building = 0;
	counted(r);
}

/* The origin a name in a record's data is relative to, in wire form (names written into the
 * data as octets need it here; readzone.c follows the same directives for the rest). */
static void set_origin(struct lexer *lx, struct token name)
{
	uint8_t wire[255];
	size_t len = name_text_to_wire(name, lx->origin, lx->origin_len, wire);
	if (len == 0)
		decline("%s:%u: the origin %.*s needs the full reader", lx->zone->display,
			lx->line, (int)name.len, name.p);
	memcpy(lx->origin, wire, len);
	lx->origin_len = len;
}

static void emit(struct lexer *lx, struct lexed it)
{
	*current(lx) = it;
	counted(lx);
}

static void lex_lines(struct lexer *lx, const char *text, size_t size, const char *display,
		      int high, uint32_t first_line);
static int scan_text(const char *text, size_t size, const char *display);

/* A file an $INCLUDE names, relative to the zone file's directory (as in Knot; dnspython
 * reads it from there too), and its name for messages: beside the zone file's as the user
 * named it. */
static struct included open_included(const struct lexer *lx, struct token file)
{
	struct included in = {0};
	const char *zone_path = lx->zone->path, *zone_display = lx->zone->display;
	const char *slash = strrchr(zone_path, '/'), *shown = strrchr(zone_display, '/');
	int absolute = file.p[0] == '/';
	if (asprintf(&in.path, "%.*s%.*s", absolute || !slash ? 0 : (int)(slash - zone_path + 1),
		     zone_path, (int)file.len, file.p) < 0 ||
	    asprintf(&in.display, "%.*s%.*s", absolute || !shown ? 0
		     : (int)(shown - zone_display + 1), zone_display, (int)file.len, file.p) < 0)
		fail("out of memory");
	int fd = open(in.path, O_RDONLY);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);  /* a directory, a device */
		fd = -1;
	}
	if (fd < 0)
		decline("%s:%u: $INCLUDE %.*s cannot be read", zone_display, lx->line,
			(int)file.len, file.p);
	in.size = st.st_size;
	in.text = in.size ? mmap(NULL, in.size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (in.text == MAP_FAILED)
		decline("%s:%u: $INCLUDE %.*s cannot be read", zone_display, lx->line,
			(int)file.len, file.p);
	return in;
}

/* $INCLUDE file [origin] (RFC 1035 §5.1): the file's records as if they stood here, with
 * its origin; after it, the origin, the previous owner and the TTLs are as they were before,
 * as dnspython restores them. A cycle, a quoted name: dnspython's to say. */
static void include(struct lexer *lx, struct token file, const struct token *origin)
{
	if (lx->depth == MAX_INCLUDE_DEPTH)
		decline("%s:%u: an $INCLUDE the full reader must read", lx->zone->display, lx->line);
	lx->head.late = 1;
	struct included in = open_included(lx, file);
	char *real = realpath(in.path, NULL), *zone_real = realpath(lx->zone->path, NULL);
	int cycle = !real || (zone_real && strcmp(real, zone_real) == 0);
	for (int d = 0; d < lx->depth && !cycle; d++)
		cycle = strcmp(real, lx->including[d]) == 0;
	free(zone_real);
	if (cycle)
		decline("%s:%u: an $INCLUDE cycle", lx->zone->display, lx->line);
	PUSH(lx->included, in);
	int high = scan_text(in.text, in.size, in.display);
	emit(lx, (struct lexed){.line = lx->line, .kind = LEXED_INCLUDE, .display = in.display,
				.owner = origin ? *origin : (struct token){0}});
	uint32_t line = lx->line;
	int have_owner = lx->have_owner;
	struct ttls ttls = lx->ttls;
	struct token memo = lx->memo;
	uint8_t before[255];
	size_t before_len = lx->origin_len;
	memcpy(before, lx->origin, before_len);
	if (origin)
		set_origin(lx, *origin);
	lx->memo.len = 0;  /* the origin may be another: the same text, another name */
	lx->including[lx->depth++] = real;
	lex_lines(lx, in.text, in.size, in.display, high, 1);
	free(lx->including[--lx->depth]);
	lx->ttls = ttls;
	lx->have_owner = have_owner;
	lx->memo = memo;
	lx->line = line;
	memcpy(lx->origin, before, before_len);
	lx->origin_len = before_len;
	emit(lx, (struct lexed){.line = line, .kind = LEXED_INCLUDED});
}

static void directive(struct lexer *r, const char *line, size_t len)
{
	struct tokens tk;
	tokenize(line, len, &tk);
	const struct token *t = tk.v;
	size_t n = tk.n;
	r->head.late |= r->head.known;  /* a directive after a record */
	if (tk.quoted) {
		decline("%s:%u: %.*s with quotes", r->zone->display, r->line, (int)t[0].len,
			t[0].p);
	} else if (n >= 2 && n <= 3 && eq_upper(t[0], "$INCLUDE")) {
		include(r, t[1], n == 3 ? &t[2] : NULL);
	} else if (n != 2) {
		decline("%s:%u: %.*s the full reader must read", r->zone->display, r->line,
			(int)t[0].len, t[0].p);
	} else if (eq_upper(t[0], "$TTL")) {
		r->ttls.fallback = ttl_value(t[1], "$TTL");
		r->ttls.fallback_known = 1;
		r->ttls.fallback_from_soa = 0;
	} else if (eq_upper(t[0], "$ORIGIN")) {
		set_origin(r, t[1]);
		emit(r, (struct lexed){.line = r->line, .kind = LEXED_ORIGIN, .owner = t[1]});
		r->memo.len = 0;  /* a relative owner now means another name */
	} else {
		decline("%s:%u: %.*s", r->zone->display, r->line, (int)t[0].len, t[0].p);
	}
}

static void logical_line(struct lexer *r, const char *line, size_t len)
{
	if (len > 0 && line[0] == '$')
		directive(r, line, len);
	else
		record(r, line, len);
}

/* The end of the physical line at p (its newline, or the end of the text). A lone CR would
 * end a line for Python's universal newlines: the full reader's business. */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', end - p);
	return nl ? nl : end;
}

static size_t code_len(const char *p, size_t len)
{
	const char *semicolon = memchr(p, ';', len);
	return semicolon ? (size_t)(semicolon - p) : len;
}

static size_t count_char(const char *p, size_t len, char c)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += p[i] == c;
	return n;
}

/* Eight octets none of which needs a closer look: no NUL, nothing past ASCII, no CR. The
 * whole file is scanned so, some tens of megabytes. */
static int plain_word(const char *p)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t w;
	memcpy(&w, p, 8);
	uint64_t cr = w ^ (ones * '\r');
	uint64_t zero_or_cr = ((w - ones) & ~w) | ((cr - ones) & ~cr);
	return ((w | zero_or_cr) & highs) == 0;
}

/* Lines joined from parentheses, kept till the records in them are filed: a signed zone's
 * RRSIG and NSEC3 records are most of its text (500 MiB of a million names'). */
#define KEPT_BLOCK 65536
struct kept {
	struct kept *next;
	size_t used, cap;
	size_t block;  /* the last lexed block whose records point into it */
	char text[];
};

static const char *keep(struct lexer *lx, const char *p, size_t len)
{
	struct kept *k = lx->kept;
	if (!k || k->cap - k->used < len) {
		size_t cap = len > KEPT_BLOCK ? len : KEPT_BLOCK;
		struct kept *fresh = xmalloc(sizeof *fresh + cap);
		*fresh = (struct kept){.next = k, .cap = cap};
		lx->kept = k = fresh;
	}
	char *at = k->text + k->used;
	memcpy(at, p, len);
	k->used += len;
	k->block = lx->filling;
	return at;
}

void kept_filed(struct lexer *lx, size_t filed)
{
	for (struct kept **link = &lx->kept; *link;) {
		struct kept *k = *link;
		/* The owner the next record may repeat (lx->memo) stays with its line. */
		int memo = lx->memo.p >= k->text && lx->memo.p < k->text + k->used;
		if (k->block < filed && !memo) {
			*link = k->next;
			free(k);
		} else {
			link = &k->next;
		}
	}
}

/* The mapped file's pages before `p`, but the last few megabytes the records waiting to be
 * filed may point into, leave the process's memory: a signed zone's text is as large as
 * all the rest the reader holds. They stay in the page cache, and a private mapping never
 * written to reads the file again where touched (madvise(2)). */
#define LET_GO_STEP (16 << 20)
#define LET_GO_BEHIND (16 << 20)

static void let_go_before(struct lexer *lx, const char *p)
{
	let_go_pages(lx->let_go, p);
	lx->let_go = p;
}

/* The kept lines, and the included files' texts (their names stay: messages name them). */
void free_kept(struct lexer *lx)
{
	while (lx->kept) {
		struct kept *next = lx->kept->next;
		free(lx->kept);
		lx->kept = next;
	}
	for (size_t i = 0; i < lx->included.n; i++) {
		if (lx->included.v[i].size)
			munmap(lx->included.v[i].text, lx->included.v[i].size);
		free(lx->included.v[i].path);
	}
	VEC_FREE(lx->included);
	VEC_FREE(lx->joined);
	VEC_FREE(lx->head.spans);
}

/* The lexer's way out: the records before the one it declines are filed first, and the
 * names read so far of that one, so that the reason given is the one-thread reading's. */
static void lexer_declines(void *arg)
{
	struct lexer *lx = arg;
	if (lx->building) {
		current(lx)->kind = LEXED_PARTIAL;
		lx->block->n++;  /* a block is handed over as soon as it is full: there is room */
	}
	lx->deliver(lx, 1);
}

/* The length of a well-formed UTF-8 sequence at p (RFC 3629 §4: no overlong form, no
 * surrogate, nothing past U+10FFFF, as Python's decoder), or 0. */
static size_t utf8_length(const unsigned char *p, size_t left)
{
	unsigned char c = p[0];
	size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
		   : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
	if (n == 0 || left < n)
		return 0;
	unsigned char low = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
	unsigned char high = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
	if (p[1] < low || p[1] > high)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

/* Octets the fast reader leaves to dnspython: NUL, what is not UTF-8 (dnspython reads the
 * file as UTF-8), a carriage return alone (a line end to Python). Scanned a word at a time:
 * the file may be tens of megabytes. Whether the text holds any octet past ASCII: where
 * one may stand is for lex_lines to see (struct shape). */
static int scan_text(const char *text, size_t size, const char *display)
{
	int high = 0;
	for (size_t i = 0; i < size; i++) {
		if (i % 8 == 0 && i + 8 <= size && plain_word(text + i)) {
			i += 7;
			continue;
		}
		unsigned char c = text[i];
		if (c >= 0x80) {
			size_t n = utf8_length((const unsigned char *)text + i, size - i);
			if (n == 0)
				decline("%s: octets outside ASCII that are not UTF-8", display);
			high = 1;
			i += n - 1;
			continue;
		}
		if (c == 0)
			decline("%s: a NUL octet", display);
		if (c == '\r' && (i + 1 == size || text[i + 1] != '\n'))
			decline("%s: a carriage return alone", display);
	}
	return high;
}

/* What the reader needs of a physical line: where its code ends (the first `;` outside
 * quotes), its parentheses outside quotes, and what in it the full reader must read, if
 * anything: a quote left open (no string goes on to the next line for dnspython), octets past
 * ASCII outside quotes and comments (a name in Unicode, which dnspython turns to IDNA). A
 * backslash outside quotes takes the next character, be it `;`, `(` or `"`, into a token. */
struct shape {
	size_t code;
	const char *open, *close;  /* the first of each, or NULL */
	size_t opens;
	const char *odd;
};

static struct shape shape_of(const char *p, size_t len, int high)
{
	struct shape s = {0};
	if (!high) {
		s.code = code_len(p, len);
		s.open = memchr(p, '(', s.code);
		s.close = memchr(p, ')', s.code);
		const char *escape = memchr(p, '\\', s.code);
		if (!s.open && !s.close && !escape)
			return s;  /* most lines: record() reads any quotes and comment */
		if (!escape && !memchr(p, '"', len)) {
			s.opens = s.open ? count_char(p, s.code, '(') : 0;
			return s;
		}
		s = (struct shape){0};
	}
	int quoted = 0;
	size_t i = 0;
	for (; i < len && (quoted || p[i] != ';'); i++) {
		char c = p[i];
		if (quoted) {
			if (c == '\\' && i + 1 < len)
				i++;  /* an escaped character: put_string reads it */
			else if (c == '"')
				quoted = 0;
		} else if (c == '"') {
			quoted = 1;
		} else if (c == '(') {
			s.open = s.open ? s.open : p + i;
			s.opens++;
		} else if (c == ')') {
			s.close = s.close ? s.close : p + i;
		} else if (c == '\\') {
			/* the next character is the token's, whatever it is (tokenize) */
			if (i + 1 == len)
				s.odd = "a backslash ending a line";
			else if ((unsigned char)p[++i] >= 0x80)
				s.odd = "octets outside ASCII in a name";
		} else if ((unsigned char)c >= 0x80) {
			s.odd = "octets outside ASCII in a name";
		}
	}
	if (quoted)
		s.odd = "a quote left open";
	s.code = i;
	return s;
}

void lex_zone_file(struct lexer *lx)
{
	lx->origin_len = name_text_to_wire((struct token){lx->zone->origin_text,
							  strlen(lx->zone->origin_text)},
					   NULL, 0, lx->origin);
	if (lx->origin_len == 0)  /* its last dot escaped: config.py never gives one */
		unsupported("the origin %s is not an absolute name", lx->zone->origin_text);
	/* Only now: unsupported() leaves without it, and it would be left pointing at `lx`,
	 * which reading_reset frees. */
	before_decline = lexer_declines;
	before_decline_arg = lx;
	int high = scan_text(lx->text, lx->size, lx->zone->display);
	lx->let_go = lx->text;
	if (lx->mapped) {
		let_go_before(lx, lx->text + lx->size);  /* the scan's pages: lines come back */
		lx->let_go = lx->text;
	}
	lex_lines(lx, lx->text, lx->size, lx->zone->display, high, 1);
	before_decline = NULL;
	lx->deliver(lx, 1);
}

void lex_region(struct lexer *lx, uint32_t first_line)
{
	before_decline = lexer_declines;
	before_decline_arg = lx;
	int high = scan_text(lx->text, lx->size, lx->zone->display);
	lx->head.known = 1;  /* a directive here is a late one */
	lex_lines(lx, lx->text, lx->size, lx->zone->display, high, first_line);
	before_decline = NULL;
	lx->deliver(lx, 1);
}

/* The records of a text, in order: one logical line at a time, parentheses joined; its lines
 * numbered from `first_line`. */
static void lex_lines(struct lexer *lx, const char *text, size_t size, const char *display,
		      int high, uint32_t first_line)
{
	const char *end = text + size;
	bytes_t *joined = &lx->joined;  /* an $INCLUDE's lines use it too, once it is kept */
	uint32_t number = first_line - 1;
	int own = text == lx->text;  /* the zone file's text, not an $INCLUDE's */
	for (const char *p = text; p < end;) {
		if (lx->mapped && text == lx->text && p - lx->let_go > LET_GO_STEP + LET_GO_BEHIND)
			let_go_before(lx, p - LET_GO_BEHIND);
		const char *e = line_end(p, end);
		const char *next = e < end ? e + 1 : end;
		size_t len = e - p;
		if (len > 0 && p[len - 1] == '\r')
			len--;
		lx->line = ++number;
		struct shape s = shape_of(p, len, high);
		if (s.odd)
			decline("%s:%u: %s", display, lx->line, s.odd);
		if (own)
			lx->line_start = p - text;
		if (!s.open && !s.close) {
			logical_line(lx, p, len);
			p = next;
			continue;
		}
		const char *first = p;
		/* Parentheses only group (RFC 1035 §5.1): join the lines, comments dropped. */
		if (s.opens != 1 || (s.close && s.close < s.open))
			decline("%s:%u: parentheses the full reader must read", display, lx->line);
		joined->n = 0;
		bytes_put(joined, p, s.code);
		joined->v[s.open - p] = ' ';
		size_t closing = s.close ? (size_t)(s.close - p) : SIZE_MAX;  /* in `joined` */
		while (closing == SIZE_MAX) {
			if (next >= end)
				decline("%s:%u: unbalanced parentheses", display, lx->line);
			p = next;
			e = line_end(p, end);
			next = e < end ? e + 1 : end;
			len = e - p;
			if (len > 0 && p[len - 1] == '\r')
				len--;
			number++;
			struct shape more = shape_of(p, len, high);
			if (more.odd || more.open)
				decline("%s:%u: parentheses the full reader must read",
					display, number);
			bytes_put(joined, " ", 1);
			if (more.close)
				closing = joined->n + (more.close - p);
			bytes_put(joined, p, more.code);
		}
		for (size_t q = closing + 1; q < joined->n; q++)
			if (!space(joined->v[q]))
				decline("%s:%u: text after a closing parenthesis", display,
					number);
		joined->n = closing;
		if (own && number > lx->line)  /* lines joined: image.c keeps its edits off them */
			PUSH(lx->head.spans, ((struct span){first - text, next - text}));
		logical_line(lx, keep(lx, (const char *)joined->v, joined->n), joined->n);
		p = next;
	}
}
