/*
 * signedtext.c - a zone signed at build time written out as a zone file (`zonebake build
 * --write-signed`): every record it serves, the DNSSEC ones included, one a line with its
 * owner absolute, TTL, class and type, owners in DNSSEC's canonical order (RFC 4034 §6.1) and
 * each owner's RRsets by type. Record data is in its type's presentation format where this
 * file knows it, and in RFC 3597's generic form (`\# LENGTH HEX`, §5) for every other type,
 * which every zone-file reader takes for any type. It is what ldns-verify-zone and
 * dnssec-verify check, and what an operator publishes or hands to a secondary: written here,
 * in the core, at the pace of kzonesign's own writing (dnspython took minutes a million
 * names).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bake.h"

/* ---- the text of one record's data ---- */

static void put_str(bytes_t *b, const char *s)
{
	bytes_put(b, s, strlen(s));
}

static void put_char(bytes_t *b, char c)
{
	RESERVE(*b, 1);
	b->v[b->n++] = c;
}

static void put_u(bytes_t *b, uint64_t x)
{
	char digits[24];
	size_t n = 0;
	do
		digits[sizeof digits - ++n] = '0' + x % 10;
	while ((x /= 10) != 0);
	bytes_put(b, digits + sizeof digits - n, n);
}

/* An octet of a name, or of a character-string in quotes, as RFC 1035 §5.1 reads it back:
 * a backslash before what would end or change the field, \DDD for what is not printable. */
static void put_octet(bytes_t *b, uint8_t c, int quoted)
{
	if (c == '\\' || c == '"' || (!quoted && c && strchr("().;@$", c))) {
		put_char(b, '\\');
		put_char(b, c);
	} else if ((c > 0x20 || (quoted && c == 0x20)) && c < 0x7F) {
		put_char(b, c);
	} else {
		char esc[5] = {'\\', '0' + c / 100, '0' + c / 10 % 10, '0' + c % 10, 0};
		put_str(b, esc);
	}
}

/* An uncompressed wire-format name at p, at most `max` octets: its length, 0 if malformed. */
static size_t put_name(bytes_t *b, const uint8_t *p, size_t max)
{
	size_t at = 0;
	if (max == 0)
		return 0;
	if (p[0] == 0) {
		put_char(b, '.');
		return 1;
	}
	while (at < max && p[at] != 0) {
		if (p[at] > 63 || at + 1 + p[at] >= max)
			return 0;
		for (size_t i = 1; i <= p[at]; i++)
			put_octet(b, p[at + i], 0);
		put_char(b, '.');
		at += 1 + p[at];
	}
	return at < max ? at + 1 : 0;
}

/* A character-string (RFC 1035 §3.3) at p: its length with its length octet, 0 if it runs
 * past `max`. */
static size_t put_charstr(bytes_t *b, const uint8_t *p, size_t max)
{
	if (max == 0 || 1 + (size_t)p[0] > max)
		return 0;
	put_char(b, '"');
	for (size_t i = 1; i <= p[0]; i++)
		put_octet(b, p[i], 1);
	put_char(b, '"');
	return 1 + p[0];
}

static void put_hex(bytes_t *b, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789ABCDEF";
	RESERVE(*b, 2 * n);
	for (size_t i = 0; i < n; i++) {
		b->v[b->n++] = digits[p[i] >> 4];
		b->v[b->n++] = digits[p[i] & 15];
	}
}

static void put_base64(bytes_t *b, const uint8_t *p, size_t n)  /* RFC 4648 §4 */
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	RESERVE(*b, (n + 2) / 3 * 4);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t w = (uint32_t)p[i] << 16 | (i + 1 < n ? p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		b->v[b->n++] = digits[w >> 18];
		b->v[b->n++] = digits[w >> 12 & 63];
		b->v[b->n++] = i + 1 < n ? digits[w >> 6 & 63] : '=';
		b->v[b->n++] = i + 2 < n ? digits[w & 63] : '=';
	}
}

static void put_base32hex(bytes_t *b, const uint8_t *p, size_t n)  /* RFC 4648 §7, unpadded */
{
	static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUV";
	uint64_t bits = 0;
	unsigned have = 0;
	for (size_t i = 0; i < n; i++) {
		bits = bits << 8 | p[i];
		for (have += 8; have >= 5; have -= 5)
			put_char(b, digits[bits >> (have - 5) & 31]);
	}
	if (have)
		put_char(b, digits[bits << (5 - have) & 31]);
}

static uint16_t u16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static uint32_t u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* An RRSIG's time (RFC 4034 §3.2): YYYYMMDDHHmmSS, UTC. */
static void put_time(bytes_t *b, uint32_t t)
{
	time_t at = t;
	struct tm tm;
	char text[32];
	gmtime_r(&at, &tm);
	snprintf(text, sizeof text, "%04d%02d%02d%02d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	put_str(b, text);
}

/* A type bitmap (RFC 4034 §4.1.2) as the types' mnemonics: 0 if malformed. */
static int put_types(bytes_t *b, const uint8_t *p, size_t len)
{
	for (size_t at = 0; at < len;) {
		if (at + 2 > len || p[at + 1] == 0 || p[at + 1] > 32 || at + 2 + p[at + 1] > len)
			return 0;
		for (unsigned i = 0; i < p[at + 1]; i++)
			for (unsigned bit = 0; bit < 8; bit++)
				if (p[at + 2 + i] & (0x80 >> bit)) {
					put_char(b, ' ');
					put_str(b, type_name(p[at] << 8 | i << 3 | bit));
				}
		at += 2 + p[at + 1];
	}
	return 1;
}

/* A field that says its own length (a name, a character-string, an NSEC3 salt or hash) at
 * p: the octets it takes, 0 if it runs past `max`. */
typedef size_t (*field_put)(bytes_t *b, const uint8_t *p, size_t max);

/* A salt (RFC 5155 §3.3), its length first: in hex, "-" for none. */
static size_t put_salt(bytes_t *b, const uint8_t *p, size_t max)
{
	if (max == 0 || 1 + (size_t)p[0] > max)
		return 0;
	if (p[0] == 0)
		put_char(b, '-');
	put_hex(b, p + 1, p[0]);
	return 1 + p[0];
}

/* The next hashed owner (RFC 5155 §3.3), its length first: in base32hex, never empty. */
static size_t put_hash(bytes_t *b, const uint8_t *p, size_t max)
{
	if (max == 0 || p[0] == 0 || 1 + (size_t)p[0] > max)
		return 0;
	put_base32hex(b, p + 1, p[0]);
	return 1 + p[0];
}

/* The fields of a format: 1/2/4 an unsigned of that many octets, T a type's mnemonic, d an
 * RRSIG's time; n a name, s a character-string, h a salt, H a hash; x the rest in hex, b the
 * rest in base64, t the rest as types. */
static int put_fields(bytes_t *b, const char *format, const uint8_t *p, size_t len)
{
	size_t at = 0, used;
	for (const char *f = format; *f; f++) {
		if (f != format)
			put_char(b, ' ');
		field_put put = *f == 'n' ? put_name : *f == 's' ? put_charstr :
				*f == 'h' ? put_salt : *f == 'H' ? put_hash : NULL;
		if (put) {
			if ((used = put(b, p + at, len - at)) == 0)
				return 0;
			at += used;
			continue;
		}
		switch (*f) {
		case '1':
		case '2':
		case '4':
		case 'T':
		case 'd':
			used = *f == 'T' ? 2 : *f == 'd' ? 4 : (size_t)(*f - '0');
			if (at + used > len)
				return 0;
			if (*f == 'T')
				put_str(b, type_name(u16(p + at)));
			else if (*f == 'd')
				put_time(b, u32(p + at));
			else
				put_u(b, used == 1 ? p[at] : used == 2 ? u16(p + at) : u32(p + at));
			at += used;
			break;
		case 'x':
		case 'b':
			if (at == len)
				return 0;  /* no presentation for none: the generic form says it */
			if (*f == 'x')
				put_hex(b, p + at, len - at);
			else
				put_base64(b, p + at, len - at);
			at = len;
			break;
		case 't':
			b->n--;  /* put_types puts a space before each */
			if (!put_types(b, p + at, len - at))
				return 0;
			at = len;
			break;
		}
	}
	return at == len;
}

static const char *format_of(uint16_t type)
{
	switch (type) {
	case T_NS: case T_CNAME: case T_PTR: case T_DNAME: return "n";
	case T_SOA: return "nn44444";
	case T_MX: case 18 /* AFSDB */: case 21 /* RT */: case 36 /* KX */: return "2n";
	case T_HINFO: return "ss";
	case T_SRV: return "222n";
	case T_NAPTR: return "22sssn";
	case T_DS: case T_CDS: return "211x";
	case T_SSHFP: return "11x";
	case T_RRSIG: return "T114dd2nb";     /* RFC 4034 §3.2 */
	case T_NSEC: return "nt";
	case T_DNSKEY: case T_CDNSKEY: return "211b";
	case T_NSEC3: return "112hHt";       /* RFC 5155 §3.3 */
	case T_NSEC3PARAM: return "112h";    /* RFC 5155 §4.3 */
	case T_TLSA: case T_SMIMEA: return "111x";
	default: return NULL;
	}
}

/* CAA (RFC 8659 §4.1): flags, the tag as a word, the value a quoted string. */
static int put_caa(bytes_t *b, const uint8_t *p, size_t len)
{
	if (len < 2 || p[1] == 0 || 2 + (size_t)p[1] > len)
		return 0;
	for (size_t i = 0; i < p[1]; i++) {
		uint8_t c = p[2 + i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return 0;
	}
	put_u(b, p[0]);
	put_char(b, ' ');
	bytes_put(b, p + 2, p[1]);
	put_str(b, " \"");
	for (size_t i = 2 + p[1]; i < len; i++)
		put_octet(b, p[i], 1);
	put_char(b, '"');
	return 1;
}

static int put_rdata(bytes_t *b, uint16_t type, const uint8_t *p, size_t len)
{
	const char *format = format_of(type);
	char ip[INET6_ADDRSTRLEN];
	if (len == 0)
		return 0;  /* no type here has empty data: the generic form says it */
	switch (type) {
	case T_A:
	case T_AAAA:
		if (len != (type == T_A ? 4u : 16u))
			return 0;
		put_str(b, inet_ntop(type == T_A ? AF_INET : AF_INET6, p, ip, sizeof ip));
		return 1;
	case T_TXT:
	case T_SPF:
		for (size_t at = 0, used; at < len; at += used) {
			if (at)
				put_char(b, ' ');
			if ((used = put_charstr(b, p + at, len - at)) == 0)
				return 0;
		}
		return 1;
	case T_CAA:
		return put_caa(b, p, len);
	default:
		return format && put_fields(b, format, p, len);
	}
}

/* One record: `OWNER TTL IN TYPE DATA`, the data in the generic form where its type's
 * presentation is not known here, or the data is not as its type says (RFC 3597 §5 allows
 * it for a known type too). */
static void put_record(bytes_t *b, const uint8_t *owner, uint16_t type, uint32_t ttl,
		       const uint8_t *p, size_t len)
{
	put_name(b, owner, 256);
	put_char(b, '\t');
	put_u(b, ttl);
	put_str(b, "\tIN\t");
	put_str(b, type_name(type));
	put_char(b, '\t');
	size_t data = b->n;
	if (!put_rdata(b, type, p, len)) {
		b->n = data;
		put_str(b, "\\# ");
		put_u(b, len);
		if (len) {
			put_char(b, ' ');
			put_hex(b, p, len);
		}
	}
	put_char(b, '\n');
}

/* ---- the zone ---- */

static const uint8_t *owner_keys;
static const size_t *owner_key_at;

static int by_canonical_owner(const void *x, const void *y)
{
	return canonical_cmp(owner_keys + owner_key_at[*(const uint32_t *)x],
			     owner_keys + owner_key_at[*(const uint32_t *)y]);
}

static int by_type(const struct rrset *a, const struct rrset *b)
{
	return a->type != b->type ? a->type - b->type : a->covers - b->covers;
}

size_t write_signed_text(uint32_t zone, const char *path)
{
	const struct zone *z = &zones.v[zone];
	size_t nsets = z->rrsets_end - z->rrsets_begin;
	/* Its owners, each once, in canonical order; each RRset under its owner's rank. */
	uint32_t *rank = xmalloc((names.n ? names.n : 1) * sizeof *rank);
	memset(rank, 0xFF, names.n * sizeof *rank);
	VEC(uint32_t) owners = {0};
	bytes_t keys = {0};
	VEC(size_t) key_at = {0};
	for (uint32_t s = z->rrsets_begin; s < z->rrsets_end; s++) {
		name_t owner = rrsets.v[s].owner;
		if (rank[owner] != NONE)
			continue;
		rank[owner] = owners.n;
		PUSH(owners, owner);
		PUSH(key_at, keys.n);
		RESERVE(keys, 256);
		keys.n += name_key(owner, keys.v + keys.n);
	}
	owner_keys = keys.v;
	owner_key_at = key_at.v;
	uint32_t *order = xmalloc((owners.n ? owners.n : 1) * sizeof *order);
	for (uint32_t i = 0; i < owners.n; i++)
		order[i] = i;
	qsort(order, owners.n, sizeof *order, by_canonical_owner);
	uint32_t *place = xmalloc((owners.n + 1) * sizeof *place);
	for (uint32_t i = 0; i < owners.n; i++)
		place[order[i]] = i;
	for (uint32_t i = 0; i < owners.n; i++)
		rank[owners.v[i]] = place[i];
	/* A counting sort of the RRsets by their owner's rank. */
	memset(place, 0, (owners.n + 1) * sizeof *place);
	for (uint32_t s = z->rrsets_begin; s < z->rrsets_end; s++)
		place[rank[rrsets.v[s].owner] + 1]++;
	for (uint32_t i = 0; i < owners.n; i++)
		place[i + 1] += place[i];
	uint32_t *sets = xmalloc((nsets ? nsets : 1) * sizeof *sets);
	for (uint32_t s = z->rrsets_begin; s < z->rrsets_end; s++)
		sets[place[rank[rrsets.v[s].owner]]++] = s;
	/* place[i] is now where owner i's RRsets end. */
	FILE *f = fopen(path, "w");
	if (!f)
		fail("cannot write %s", path);
	bytes_t text = {0}, rdata = {0};
	uint8_t owner[256];
	size_t records = 0;
	for (uint32_t i = 0, begin = 0; i < owners.n; begin = place[i++]) {
		uint32_t end = place[i];
		for (uint32_t k = begin + 1; k < end; k++)  /* by type: a handful */
			for (uint32_t j = k; j > begin && by_type(&rrsets.v[sets[j - 1]],
								  &rrsets.v[sets[j]]) > 0; j--) {
				uint32_t t = sets[j];
				sets[j] = sets[j - 1];
				sets[j - 1] = t;
			}
		for (uint32_t k = begin; k < end; k++) {
			const struct rrset *set = &rrsets.v[sets[k]];
			name_wire(set->owner, owner);
			for (uint32_t r = set->first; r != NONE; r = rdatas.v[r].next) {
				rdata.n = 0;
				rdata_wire(set->type, &rdatas.v[r], &rdata, 0);
				put_record(&text, owner, set->type, set->ttl, rdata.v, rdata.n);
				records++;
			}
		}
		if (text.n >= (1 << 20)) {
			if (fwrite(text.v, 1, text.n, f) != text.n)
				break;
			text.n = 0;
		}
	}
	if (fwrite(text.v, 1, text.n, f) != text.n || fclose(f) != 0)
		fail("cannot write %s", path);
	free(text.v);
	free(rdata.v);
	free(sets);
	free(place);
	free(order);
	free(key_at.v);
	free(keys.v);
	free(owners.v);
	free(rank);
	return records;
}
