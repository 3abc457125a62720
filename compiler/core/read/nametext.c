/*
 * nametext.c - names and character-strings in a zone file's text (RFC 1035 §5.1), as
 * dnspython reads them: `\X` is the octet X, `\DDD` the octet of that decimal value; labels
 * end at a dot that is not escaped. For the names inside record data the fast reader keeps as
 * octets (NAPTR, SVCB, RRSIG, NSEC), written in wire form, in the letter case written.
 */
#include <string.h>

#include "bake.h"
#include "read/lexed.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The octet an escape at p[*i] (a backslash) stands for, *i moved past it; -1 for one
 * dnspython refuses: nothing after the backslash, fewer than three digits, over 255. */
int escaped_octet(const char *p, size_t len, size_t *i)
{
	size_t at = *i + 1;
	if (at >= len)
		return -1;
	if (!is_digit(p[at])) {
		*i = at + 1;
		return (uint8_t)p[at];
	}
	if (at + 2 >= len || !is_digit(p[at + 1]) || !is_digit(p[at + 2]))
		return -1;
	int v = (p[at] - '0') * 100 + (p[at + 1] - '0') * 10 + (p[at + 2] - '0');
	*i = at + 3;
	return v > 255 ? -1 : v;
}

/* A name's text into wire form (at most 255 octets): `@` is the origin, a name without a
 * final dot is relative to it. Its length, or 0 for what dnspython refuses (an empty or
 * over-long label, a name over 255 octets, a bad escape) or reads otherwise (an `@` inside a
 * name). */
size_t name_text_to_wire(struct token t, const uint8_t *origin, size_t origin_len,
			 uint8_t out[255])
{
	if (t.len == 1 && t.p[0] == '@') {
		if (origin_len)  /* no origin (NULL): the text must be absolute */
			memcpy(out, origin, origin_len);
		return origin_len;
	}
	if (t.len == 0)
		return 0;
	if (t.len == 1 && t.p[0] == '.') {
		out[0] = 0;
		return 1;
	}
	size_t at = 0, label = 0;  /* label: where the current label's length goes */
	int absolute = 0;
	for (size_t i = 0; i < t.len;) {
		if (at == label) {
			if (at >= 255)
				return 0;
			out[at++] = 0;
		}
		int c;
		if (t.p[i] == '.') {
			if (out[label] == 0)
				return 0;  /* an empty label */
			label = at;
			i++;
			if (i == t.len)
				absolute = 1;
			continue;
		}
		if (t.p[i] == '\\') {
			if ((c = escaped_octet(t.p, t.len, &i)) < 0)
				return 0;
		} else if ((c = (uint8_t)t.p[i++]) == '@') {
			return 0;
		}
		if (out[label] == 63 || at >= 255)
			return 0;
		out[label]++;
		out[at++] = c;
	}
	if (absolute) {
		if (at >= 255)
			return 0;
		out[at++] = 0;
		return at;
	}
	if (at + origin_len > 255 || origin_len == 0)
		return 0;  /* too long, or relative to no origin */
	memcpy(out + at, origin, origin_len);
	return at + origin_len;
}

/* A token's octets, its escapes read (dnspython's unescape_to_bytes). */
void put_unescaped(struct token t)
{
	for (size_t i = 0; i < t.len;) {
		const char *escape = memchr(t.p + i, '\\', t.len - i);
		size_t run = escape ? (size_t)(escape - (t.p + i)) : t.len - i;
		bytes_put(&rdata_raw, t.p + i, run);
		if ((i += run) == t.len)
			break;
		int c = escaped_octet(t.p, t.len, &i);
		if (c < 0)
			decline("a bad escape in %.*s", (int)t.len, t.p);
		uint8_t octet = c;
		bytes_put(&rdata_raw, &octet, 1);
	}
}

/* A character-string (RFC 1035 §3.3): its length, then its octets. */
void put_string(struct token t)
{
	size_t at = rdata_raw.n;
	uint8_t length = 0;
	bytes_put(&rdata_raw, &length, 1);
	put_unescaped(t);
	if (rdata_raw.n - at - 1 > 255)
		decline("a character-string over 255 octets");
	rdata_raw.v[at] = rdata_raw.n - at - 1;
}
