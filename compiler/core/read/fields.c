/*
 * fields.c - the fields of a zone file's records that are neither names nor strings, read
 * as dnspython reads them: numbers, TTLs (`1h30m`), types (mnemonics and RFC 3597's TYPEnnn)
 * and addresses. The lexer (zonefile.c) and the record data readers (rdatatext.c,
 * rdatanames.c) all read their fields here; a field dnspython must judge declines.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "bake.h"
#include "read/lexed.h"

/* Plain digits, at least one. */
int digits(struct token t)
{
	if (t.len == 0)
		return 0;
	for (size_t i = 0; i < t.len; i++)
		if (!isdigit((unsigned char)t.p[i]))
			return 0;
	return 1;
}

/* A number in plain digits up to `max`, or decline (units like 1h are the Python path's). */
uint32_t lex_number(struct token t, uint64_t max, const char *what)
{
	uint64_t v = 0;
	if (!digits(t) || t.len > 10)
		decline("%s %.*s is not plain digits", what, (int)t.len, t.p);
	for (size_t i = 0; i < t.len; i++)
		v = v * 10 + (t.p[i] - '0');
	if (v > max)
		decline("%s %.*s is out of range", what, (int)t.len, t.p);
	return (uint32_t)v;
}

/* A TTL: plain digits, or BIND's units (`1h30m`, `2W`: s m h d w, any case, each after a
 * number), at most 2^32 - 1, as dnspython's dns.ttl reads it; anything else declines. */
uint32_t ttl_value(struct token t, const char *what)
{
	if (digits(t))
		return lex_number(t, UINT32_MAX, what);
	uint64_t total = 0, current = 0;
	int need_digit = 1;
	for (size_t i = 0; i < t.len; i++) {
		char c = t.p[i];
		if (c >= '0' && c <= '9') {
			current = current * 10 + (c - '0');
			need_digit = 0;
			if (current > UINT32_MAX)
				break;
			continue;
		}
		static const char units[] = "smhdw";
		static const uint32_t seconds[] = {1, 60, 3600, 86400, 604800};
		const char *unit = c ? strchr(units, c | 0x20) : NULL;
		if (need_digit || !unit)
			decline("%s %.*s is not a TTL", what, (int)t.len, t.p);
		total += current * seconds[unit - units];
		current = 0;
		need_digit = 1;
	}
	if (!need_digit || total > UINT32_MAX || t.len == 0)
		decline("%s %.*s is not a TTL", what, (int)t.len, t.p);
	return (uint32_t)total;
}

/* TYPEnnn (RFC 3597 §5): its number, or -1. */
int32_t generic_type(struct token t)
{
	if (t.len > 4 && t.len <= 9 && eq_upper((struct token){t.p, 4}, "TYPE") &&
	    digits((struct token){t.p + 4, t.len - 4}))
		return lex_number((struct token){t.p + 4, t.len - 4}, 65535, "a type");
	return -1;
}

/* Any type, as in an NSEC type bitmap or an RRSIG's type covered: a mnemonic dnspython
 * knows (types.c's registry) or TYPEnnn. */
uint16_t any_type(struct token t)
{
	uint16_t type = type_by_name(t.p, t.len);
	int32_t generic = type ? -1 : generic_type(t);
	if (type == 0 && generic < 0)
		decline("a type %.*s the full reader must read", (int)t.len, t.p);
	return type ? type : generic;
}

/* dnspython's IPv4 text form: four decimal parts, no leading zeros, each at most 255. */
int ipv4(struct token t, uint8_t out[4])
{
	size_t part = 0, i = 0;
	for (; part < 4; part++) {
		size_t start = i;
		unsigned v = 0;
		while (i < t.len && isdigit((unsigned char)t.p[i]) && i - start < 4)
			v = v * 10 + (t.p[i++] - '0');
		size_t n = i - start;
		if (n == 0 || n > 3 || v > 255 || (n > 1 && t.p[start] == '0'))
			return -1;
		out[part] = v;
		if (part < 3) {
			if (i == t.len || t.p[i] != '.')
				return -1;
			i++;
		}
	}
	return i == t.len ? 0 : -1;
}

int ipv6(struct token t, uint8_t out[16])
{
	char text[64];
	if (t.len >= sizeof text)
		return -1;
	/* glibc reads what dnspython reads here, embedded IPv4 included (both refuse its leading
	 * zeros); anything but these characters is dnspython's to judge. */
	for (size_t i = 0; i < t.len; i++)
		if (!isxdigit((unsigned char)t.p[i]) && t.p[i] != ':' && t.p[i] != '.')
			return -1;
	memcpy(text, t.p, t.len);
	text[t.len] = 0;
	return inet_pton(AF_INET6, text, out) == 1 ? 0 : -1;
}
