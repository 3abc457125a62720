/*
 * rdatanames.c - the fast reader's record data that holds names the answers need only as
 * octets: NAPTR, SVCB and HTTPS (the TargetName is also kept as a name, zonefile.c), RRSIG,
 * NSEC, and NSEC3 beside them. The names go in uncompressed (RFC 3597 §4; RFC 9460 §2.2) in
 * the letter case written, as dnspython writes them. Whatever dnspython would judge
 * otherwise (a mnemonic algorithm, docpath, an escape in an SvcParam) makes the reader
 * decline, so that dnspython says.
 */
#include <string.h>

#include "bake.h"
#include "read/lexed.h"

static void put_name(const struct lexer *lx, struct token t)
{
	uint8_t wire[255];
	size_t len = name_text_to_wire(t, lx->origin, lx->origin_len, wire);
	if (len == 0)
		decline("the name %.*s needs the full reader", (int)t.len, t.p);
	bytes_put(&rdata_raw, wire, len);
}

static void put_u8(uint8_t v)
{
	bytes_put(&rdata_raw, &v, 1);
}

/* NAPTR (RFC 3403 §4.1): order, preference, flags, services, regexp (each quoted or not),
 * replacement. */
void naptr(const struct lexer *lx, const struct token *f, size_t nf)
{
	if (nf != 6)
		decline("a NAPTR of %zu fields", nf);
	bytes_u16(&rdata_raw, lex_number(f[0], 65535, "NAPTR order"));
	bytes_u16(&rdata_raw, lex_number(f[1], 65535, "NAPTR preference"));
	for (int i = 2; i < 5; i++)
		put_string(f[i]);
	put_name(lx, f[5]);
}

/* ---- SVCB and HTTPS (RFC 9460 §2.1, the presentation form of SvcParams) ---- */

enum svc_key {
	MANDATORY, ALPN, NO_DEFAULT_ALPN, PORT, IPV4HINT, ECH, IPV6HINT, DOHPATH, OHTTP,
	NAMED_KEYS,
};
static const char *const svc_key_text[NAMED_KEYS] = {
	"mandatory", "alpn", "no-default-alpn", "port", "ipv4hint", "ech", "ipv6hint",
	"dohpath", "ohttp",
};
#define DOCPATH 10  /* RFC 9461: a list, as alpn; dnspython's own reading */

/* A key by its text: a name (lower case only, RFC 9460 §2.1), or keyNNNNN for a key with no
 * name, whose value is octets. */
static uint16_t svc_key(struct token t)
{
	for (int k = 0; k < NAMED_KEYS; k++)
		if (strlen(svc_key_text[k]) == t.len && memcmp(svc_key_text[k], t.p, t.len) == 0)
			return k;
	if (t.len > 3 && t.len <= 8 && memcmp(t.p, "key", 3) == 0 && t.p[3] != '0') {
		uint32_t key = lex_number((struct token){t.p + 3, t.len - 3}, 65535, "a key");
		if (key >= NAMED_KEYS && key != DOCPATH)
			return key;
	}
	decline("an SvcParamKey %.*s the full reader must read", (int)t.len, t.p);
}

struct svc_param {
	uint16_t key;
	int has_value;
	struct token value;
};

/* The items of a comma-separated value, each non-empty. */
static size_t items(struct token value, struct token *out, size_t max)
{
	size_t n = 0;
	for (size_t start = 0, i = 0; i <= value.len; i++) {
		if (i < value.len && value.p[i] != ',')
			continue;
		if (i == start || n == max)
			decline("an empty item, or too many, in an SvcParam");
		out[n++] = (struct token){value.p + start, i - start};
		start = i + 1;
	}
	return n;
}

static const struct svc_param *find_param(const struct svc_param *all, size_t n, uint16_t key)
{
	for (size_t i = 0; i < n; i++)
		if (all[i].key == key)
			return &all[i];
	return NULL;
}

/* A value, with dnspython's checks: no escapes here (the full reader's), and a value for
 * every key but no-default-alpn, ohttp and the unnamed ones, which may have none. */
static void svc_value(const struct svc_param *p, const struct svc_param *all, size_t n)
{
	struct token v = p->value, item[MAX_TOKENS];
	if (v.len && memchr(v.p, '\\', v.len))
		decline("an SvcParam with an escape");
	if (p->key == NO_DEFAULT_ALPN || p->key == OHTTP) {
		if (v.len)
			decline("%s with a value", svc_key_text[p->key]);
		return;
	}
	if (p->key >= NAMED_KEYS || p->key == DOHPATH) {
		if (v.len)
			bytes_put(&rdata_raw, v.p, v.len);  /* octets as they are */
		return;
	}
	if (v.len == 0)
		decline("an SvcParam without a value");
	size_t count = items(v, item, MAX_TOKENS);
	uint8_t addr[16];
	switch (p->key) {
	case MANDATORY: {
		uint16_t keys[MAX_TOKENS];
		for (size_t i = 0; i < count; i++) {  /* ascending, each once (RFC 9460 §8) */
			uint16_t key = svc_key(item[i]);
			if (key == MANDATORY || !find_param(all, n, key))
				decline("a mandatory key that is mandatory itself, or not there");
			size_t at = i;
			for (; at > 0 && keys[at - 1] > key; at--)
				keys[at] = keys[at - 1];
			keys[at] = key;
			if (at > 0 && keys[at - 1] == key)
				decline("a key mandatory twice");
		}
		for (size_t i = 0; i < count; i++)
			bytes_u16(&rdata_raw, keys[i]);
		return;
	}
	case ALPN:
		for (size_t i = 0; i < count; i++)
			put_string(item[i]);
		return;
	case PORT:
		if (count != 1)
			decline("a port list");
		bytes_u16(&rdata_raw, lex_number(v, 65535, "SVCB port"));
		return;
	case IPV4HINT:
	case IPV6HINT:
		for (size_t i = 0; i < count; i++) {
			if ((p->key == IPV4HINT ? ipv4(item[i], addr) : ipv6(item[i], addr)) != 0)
				decline("an address hint the full reader must read");
			bytes_put(&rdata_raw, addr, p->key == IPV4HINT ? 4 : 16);
		}
		return;
	case ECH: {  /* an ECHConfigList: its length, then at least 4 octets (RFC 9849 §4) */
		size_t at = rdata_raw.n;
		base64_fields(&v, 1, "an ech value");
		size_t len = rdata_raw.n - at;
		if (len < 6 || (size_t)(rdata_raw.v[at] << 8 | rdata_raw.v[at + 1]) != len - 2)
			decline("an ech value that is not an ECHConfigList");
		return;
	}
	}
}

/* Priority, TargetName, then `key`, `key=value` or `key="value"` each; in AliasMode (0)
 * nothing after the target. On the wire the params go in ascending key order (§2.2). */
void svcb(const struct lexer *lx, const struct token *f, size_t nf, uint64_t quoted)
{
	if (nf < 2)
		decline("an SVCB without its target");
	uint16_t priority = lex_number(f[0], 65535, "SVCB priority");
	bytes_u16(&rdata_raw, priority);
	put_name(lx, f[1]);
	if (priority == 0 && nf > 2)
		decline("SvcParams in AliasMode");
	struct svc_param params[MAX_TOKENS];
	size_t n = 0;
	for (size_t i = 2; i < nf; i++) {
		if (quoted >> i & 1)
			decline("a quoted SvcParam");
		struct token key = f[i], value = {0};
		const char *equals = memchr(key.p, '=', key.len);
		if (equals) {
			key.len = equals - key.p;
			value = (struct token){equals + 1, f[i].len - key.len - 1};
			/* `key="value"`: the quoted string right after the `=` */
			if (value.len == 0 && i + 1 < nf && (quoted >> (i + 1) & 1) &&
			    f[i + 1].p == equals + 2)
				value = f[++i];
			else if (value.len == 0)
				decline("an SvcParam with nothing after its =");
		}
		struct svc_param p = {svc_key(key), equals != NULL, value};
		size_t at = n++;  /* in ascending key order, each key once */
		for (; at > 0 && params[at - 1].key > p.key; at--)
			params[at] = params[at - 1];
		params[at] = p;
		if (at > 0 && params[at - 1].key == p.key)
			decline("an SvcParamKey given twice");
	}
	if (find_param(params, n, NO_DEFAULT_ALPN) && !find_param(params, n, ALPN))
		decline("no-default-alpn without alpn");
	for (size_t i = 0; i < n; i++) {
		bytes_u16(&rdata_raw, params[i].key);
		size_t length_at = rdata_raw.n;
		bytes_u16(&rdata_raw, 0);
		svc_value(&params[i], params, n);
		size_t len = rdata_raw.n - length_at - 2;
		if (len > 65535)
			decline("an SvcParam over 65535 octets");
		rdata_raw.v[length_at] = len >> 8;
		rdata_raw.v[length_at + 1] = len;
	}
}

/* ---- DNSSEC (RFC 4034) ---- */

/* The type bitmap of NSEC and NSEC3 (RFC 4034 §4.1.2): the types in ascending order, in
 * windows of 256, each as long as its last type needs. */
static void type_bitmap(const struct token *f, size_t nf)
{
	uint16_t types[MAX_TOKENS];
	size_t n = 0;
	for (size_t i = 0; i < nf; i++) {
		uint16_t type = any_type(f[i]);
		if (type == 0)
			decline("a type bitmap with type 0");
		size_t at = n++;
		for (; at > 0 && types[at - 1] > type; at--)
			types[at] = types[at - 1];
		types[at] = type;
	}
	for (size_t i = 0; i < n;) {
		uint8_t window = types[i] >> 8, bits[32] = {0}, length = 0;
		for (; i < n && types[i] >> 8 == window; i++) {
			uint8_t low = types[i] & 0xFF;
			bits[low / 8] |= 0x80 >> (low % 8);
			length = low / 8 + 1;
		}
		put_u8(window);
		put_u8(length);
		bytes_put(&rdata_raw, bits, length);
	}
}

/* Days from 1970-01-01 to a date of the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static unsigned field(const char *p, size_t len)
{
	unsigned v = 0;
	for (size_t i = 0; i < len; i++)
		v = v * 10 + (p[i] - '0');
	return v;
}

/* An RRSIG's expiration or inception (RFC 4034 §3.2): seconds since 1970 in at most ten
 * digits, or YYYYMMDDHHmmSS in UTC, a real date and time, within 32 bits. */
static uint32_t signature_time(struct token t)
{
	if (t.len <= 10)
		return lex_number(t, UINT32_MAX, "a signature time");
	for (size_t i = 0; i < t.len; i++)
		if (t.len != 14 || t.p[i] < '0' || t.p[i] > '9')
			decline("a signature time that is neither seconds nor YYYYMMDDHHmmSS");
	unsigned year = field(t.p, 4), month = field(t.p + 4, 2), day = field(t.p + 6, 2);
	unsigned hour = field(t.p + 8, 2), minute = field(t.p + 10, 2), second = field(t.p + 12, 2);
	static const uint8_t month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
	if (year == 0 || month < 1 || month > 12 || day < 1 || day > month_days[month - 1] ||
	    (month == 2 && day == 29 && !leap) || hour > 23 || minute > 59 || second > 59)
		decline("a signature time that is not a date");
	int64_t seconds = days_from_civil(year, month, day) * 86400 + hour * 3600 +
			  minute * 60 + second;
	if (seconds < 0 || seconds > UINT32_MAX)
		decline("a signature time outside 32 bits");
	return seconds;
}

/* RRSIG (RFC 4034 §3.2): type covered, algorithm (a number), labels, original TTL,
 * expiration, inception, key tag, signer, signature. */
void rrsig(const struct lexer *lx, const struct token *f, size_t nf)
{
	if (nf < 9)
		decline("an RRSIG of %zu fields", nf);
	bytes_u16(&rdata_raw, any_type(f[0]));
	put_u8(lex_number(f[1], 255, "RRSIG algorithm"));
	put_u8(lex_number(f[2], 255, "RRSIG labels"));
	bytes_u32(&rdata_raw, ttl_value(f[3], "RRSIG original TTL"));
	bytes_u32(&rdata_raw, signature_time(f[4]));
	bytes_u32(&rdata_raw, signature_time(f[5]));
	bytes_u16(&rdata_raw, lex_number(f[6], 65535, "RRSIG key tag"));
	put_name(lx, f[7]);
	base64_fields(f + 8, nf - 8, "an RRSIG signature");
}

/* NSEC (RFC 4034 §4.2): the next name, then the types. */
void nsec(const struct lexer *lx, const struct token *f, size_t nf)
{
	if (nf < 1)
		decline("an NSEC without its next name");
	put_name(lx, f[0]);
	type_bitmap(f + 1, nf - 1);
}

static int base32hex_value(char c)
{
	c = c >= 'a' && c <= 'z' ? c - 32 : c;
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'V' ? c - 'A' + 10 : -1;
}

/* The next hashed owner name (RFC 5155 §3.3): base32hex (RFC 4648 §7) in either case,
 * without padding, the unused bits of the last character zero. */
static void next_hashed(struct token t)
{
	size_t at = rdata_raw.n, rest = t.len % 8;
	put_u8(0);
	if (rest == 1 || rest == 3 || rest == 6)
		decline("a hashed name of the wrong length");
	uint64_t bits = 0;
	unsigned nbits = 0;
	for (size_t i = 0; i < t.len; i++) {
		int v = base32hex_value(t.p[i]);
		if (v < 0)
			decline("a hashed name that is not base32hex");
		bits = bits << 5 | v;
		if ((nbits += 5) >= 8) {
			nbits -= 8;
			put_u8(bits >> nbits);
		}
	}
	if (bits & ((1u << nbits) - 1))
		decline("a hashed name with stray bits");
	size_t len = rdata_raw.n - at - 1;
	if (len > 255)
		decline("a hashed name over 255 octets");
	rdata_raw.v[at] = len;
}

/* NSEC3 (RFC 5155 §3.3): hash algorithm, flags, iterations, salt (hex or `-`), the next
 * hashed owner name, the types. */
void nsec3(const struct token *f, size_t nf)
{
	if (nf < 5)
		decline("an NSEC3 of %zu fields", nf);
	put_u8(lex_number(f[0], 255, "NSEC3 algorithm"));
	put_u8(lex_number(f[1], 255, "NSEC3 flags"));
	bytes_u16(&rdata_raw, lex_number(f[2], 65535, "NSEC3 iterations"));
	size_t at = rdata_raw.n;
	put_u8(0);
	if (!(f[3].len == 1 && f[3].p[0] == '-')) {
		size_t n = hex_fields(f + 3, 1, "an NSEC3 salt");
		if (n > 255)
			decline("an NSEC3 salt over 255 octets");
		rdata_raw.v[at] = n;
	}
	next_hashed(f[4]);
	type_bitmap(f + 5, nf - 5);
}
