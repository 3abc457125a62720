/*
 * rdatatext.c - the fast reader's record data that is octets only, no names: the fields in
 * hex or base64 of the DNSSEC, SSH and TLS types, and RFC 3597's generic form. Each reads
 * as dnspython's rdtypes read it; whatever dnspython would judge otherwise (a mnemonic, odd
 * padding, a digest of the wrong length) makes the reader decline, so that dnspython says.
 */
#include <string.h>

#include "bake.h"
#include "read/lexed.h"

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Hex over one or more fields, joined (dnspython's concatenate_remaining_identifiers and
 * unhexlify): at least one field, an even number of digits. The octets put, counted. */
size_t hex_fields(const struct token *f, size_t nf, const char *what)
{
	size_t digits = 0, start = rdata_raw.n;
	if (nf == 0)
		decline("%s without its hex", what);
	for (size_t i = 0; i < nf; i++)
		for (size_t j = 0; j < f[i].len; j++, digits++) {
			int v = hex_value(f[i].p[j]);
			if (v < 0)
				decline("%s that is not hex", what);
			if (digits % 2 == 0) {
				uint8_t high = v << 4;
				bytes_put(&rdata_raw, &high, 1);
			} else {
				rdata_raw.v[rdata_raw.n - 1] |= v;
			}
		}
	if (digits % 2)
		decline("%s with an odd number of hex digits", what);
	return rdata_raw.n - start;
}

/* RFC 4648 §4's alphabet: each character's value, 0x80 for any other ('=' too). */
static uint8_t base64_values[256];

__attribute__((constructor)) static void base64_table(void)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				       "0123456789+/";
	memset(base64_values, 0x80, sizeof base64_values);
	for (int v = 0; v < 64; v++)
		base64_values[(uint8_t)alphabet[v]] = v;
}

/* Base64 over one or more fields, joined (RFC 4648 §4, as Python's b64decode with
 * validate=True): whole quanta, `=` only as the last one's padding. A field's whole quanta
 * are decoded four characters at a time until one is not of the alphabet; from there, one
 * at a time (padding, or what makes the reader decline). A signed zone's signatures are
 * most of its text. */
void base64_fields(const struct token *f, size_t nf, const char *what)
{
	uint32_t quantum = 0;
	size_t n = 0, padding = 0;
	if (nf == 0)
		decline("%s without its base64", what);
	for (size_t i = 0; i < nf; i++) {
		const uint8_t *p = (const uint8_t *)f[i].p;
		size_t len = f[i].len, j = 0;
		RESERVE(rdata_raw, len / 4 * 3 + 3);
		if (n % 4 == 0) {
			uint8_t *out = rdata_raw.v + rdata_raw.n;
			for (; j + 4 <= len; j += 4) {
				uint8_t a = base64_values[p[j]], b = base64_values[p[j + 1]],
					c = base64_values[p[j + 2]], d = base64_values[p[j + 3]];
				if ((a | b | c | d) & 0x80 || padding)
					break;
				uint32_t q = (uint32_t)a << 18 | b << 12 | c << 6 | d;
				out[0] = q >> 16;
				out[1] = q >> 8;
				out[2] = q;
				out += 3;
			}
			rdata_raw.n = out - rdata_raw.v;
			n += j;
		}
		for (; j < len; j++) {
			char c = p[j];
			int v = base64_values[(uint8_t)c];
			if (c == '=' && n % 4 >= 2 && padding < 2) {
				padding++;
				v = 0;
			} else if (v & 0x80 || padding) {
				decline("%s that is not plain base64", what);
			}
			quantum = quantum << 6 | v;
			if (++n % 4 == 0) {
				uint8_t three[3] = {quantum >> 16, quantum >> 8, quantum};
				bytes_put(&rdata_raw, three, 3 - padding);
				quantum = 0;
			}
		}
	}
	if (n % 4)
		decline("%s that is not whole base64", what);
}

/* DS and CDS after the key tag (RFC 4034 §5.3): algorithm (a number; mnemonics are
 * dnspython's), digest type, and the digest of the length its type says (dnspython's
 * checks). */
void ds_rest(const struct token *f, size_t nf)
{
	static const size_t length_of_type[] = {0, 20, 32, 32, 48};
	uint8_t algorithm = lex_number(f[0], 255, "DS algorithm");
	uint8_t digest_type = lex_number(f[1], 255, "DS digest type");
	bytes_put(&rdata_raw, &algorithm, 1);
	bytes_put(&rdata_raw, &digest_type, 1);
	size_t length = hex_fields(f + 2, nf - 2, "a DS digest");
	if (digest_type == 0 || (digest_type < 5 && length != length_of_type[digest_type]))
		decline("a DS digest the full reader must judge");
}

/* SSHFP (RFC 4255 §3.2), TLSA and SMIMEA (RFC 6698 §2.2): small numbers, then hex. */
void numbers_then_hex(const struct token *f, size_t nf, size_t numbers, const char *what)
{
	if (nf <= numbers)
		decline("%s with too few fields", what);
	for (size_t i = 0; i < numbers; i++) {
		uint8_t v = lex_number(f[i], 255, what);
		bytes_put(&rdata_raw, &v, 1);
	}
	hex_fields(f + numbers, nf - numbers, what);
}

/* DNSKEY and CDNSKEY (RFC 4034 §2.2): flags, protocol, algorithm (a number), the key. */
void dnskey(const struct token *f, size_t nf)
{
	if (nf < 4)
		decline("a DNSKEY with too few fields");
	bytes_u16(&rdata_raw, lex_number(f[0], 65535, "DNSKEY flags"));
	uint8_t protocol = lex_number(f[1], 255, "DNSKEY protocol");
	uint8_t algorithm = lex_number(f[2], 255, "DNSKEY algorithm");
	bytes_put(&rdata_raw, &protocol, 1);
	bytes_put(&rdata_raw, &algorithm, 1);
	base64_fields(f + 3, nf - 3, "a DNSKEY key");
}

/* NSEC3PARAM (RFC 5155 §4.3): algorithm, flags, iterations, the salt in hex or `-`. */
void nsec3param(const struct token *f, size_t nf)
{
	if (nf != 4)
		decline("an NSEC3PARAM of %zu fields", nf);
	uint8_t head[2] = {lex_number(f[0], 255, "NSEC3PARAM algorithm"),
			   lex_number(f[1], 255, "NSEC3PARAM flags")};
	bytes_put(&rdata_raw, head, 2);
	bytes_u16(&rdata_raw, lex_number(f[2], 65535, "NSEC3PARAM iterations"));
	uint8_t length = 0;
	size_t at = rdata_raw.n;
	bytes_put(&rdata_raw, &length, 1);
	if (!(f[3].len == 1 && f[3].p[0] == '-')) {
		size_t n = hex_fields(f + 3, 1, "an NSEC3PARAM salt");
		if (n > 255)
			decline("an NSEC3PARAM salt over 255 octets");
		rdata_raw.v[at] = n;
	}
}

/* ZONEMD (RFC 8976 §2.2): serial, scheme, hash algorithm, digest, with dnspython's checks:
 * scheme and algorithm not 0, the digest at least 12 octets, and SHA-384's or SHA-512's
 * own length for those. */
void zonemd(const struct token *f, size_t nf)
{
	if (nf < 4)
		decline("a ZONEMD with too few fields");
	bytes_u32(&rdata_raw, lex_number(f[0], UINT32_MAX, "ZONEMD serial"));
	uint8_t scheme = lex_number(f[1], 255, "ZONEMD scheme");
	uint8_t hash = lex_number(f[2], 255, "ZONEMD hash algorithm");
	bytes_put(&rdata_raw, &scheme, 1);
	bytes_put(&rdata_raw, &hash, 1);
	size_t n = hex_fields(f + 3, nf - 3, "a ZONEMD digest");
	if (scheme == 0 || hash == 0 || n < 12 || (hash == 1 && n != 48) || (hash == 2 && n != 64))
		decline("a ZONEMD the full reader must judge");
}

/* RFC 3597 §5: `\# length hex`. dnspython reads the octets as the type's own wire form when
 * it knows the type: only the addresses, whose form is their length, are read here, and
 * types it has no form for. */
void generic_rdata(uint16_t type, const struct token *f, size_t nf)
{
	if (nf < 2 || !(f[0].len == 2 && f[0].p[0] == '\\' && f[0].p[1] == '#'))
		decline("record data the full reader must read");
	int unnamed = strncmp(type_name(type), "TYPE", 4) == 0;  /* dnspython has no form */
	if (!(type == T_A || type == T_AAAA || unnamed))
		decline("generic data of a type the full reader must check");
	uint32_t length = lex_number(f[1], 65535, "generic data length");
	size_t n = length == 0 && nf == 2 ? 0 : hex_fields(f + 2, nf - 2, "generic data");
	if (n != length || (type == T_A && n != 4) || (type == T_AAAA && n != 16))
		decline("generic data of the wrong length");
}
