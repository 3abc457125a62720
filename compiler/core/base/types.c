/*
 * types.c - record types by number and by mnemonic (the IANA registry of RFC 6895 §3.1, as
 * dnspython names them), for messages and for reading zone files; any other type is
 * TYPEnnn (RFC 3597 §5).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bake.h"

static const struct {
	uint16_t type;
	const char *name;
} registry[] = {
	{1, "A"}, {2, "NS"}, {3, "MD"}, {4, "MF"}, {5, "CNAME"}, {6, "SOA"}, {7, "MB"}, {8, "MG"},
	{9, "MR"}, {10, "NULL"}, {11, "WKS"}, {12, "PTR"}, {13, "HINFO"}, {14, "MINFO"}, {15, "MX"},
	{16, "TXT"}, {17, "RP"}, {18, "AFSDB"}, {19, "X25"}, {20, "ISDN"}, {21, "RT"}, {22, "NSAP"},
	{23, "NSAP-PTR"}, {24, "SIG"}, {25, "KEY"}, {26, "PX"}, {27, "GPOS"}, {28, "AAAA"},
	{29, "LOC"}, {30, "NXT"}, {33, "SRV"}, {35, "NAPTR"}, {36, "KX"}, {37, "CERT"}, {38, "A6"},
	{39, "DNAME"}, {41, "OPT"}, {42, "APL"}, {43, "DS"}, {44, "SSHFP"}, {45, "IPSECKEY"},
	{46, "RRSIG"}, {47, "NSEC"}, {48, "DNSKEY"}, {49, "DHCID"}, {50, "NSEC3"}, {51, "NSEC3PARAM"},
	{52, "TLSA"}, {53, "SMIMEA"}, {55, "HIP"}, {56, "NINFO"}, {59, "CDS"}, {60, "CDNSKEY"},
	{61, "OPENPGPKEY"}, {62, "CSYNC"}, {63, "ZONEMD"}, {64, "SVCB"}, {65, "HTTPS"}, {66, "DSYNC"},
	{67, "HHIT"}, {68, "BRID"}, {99, "SPF"}, {103, "UNSPEC"}, {104, "NID"}, {105, "L32"},
	{106, "L64"}, {107, "LP"}, {108, "EUI48"}, {109, "EUI64"}, {128, "NXNAME"}, {249, "TKEY"},
	{250, "TSIG"}, {251, "IXFR"}, {252, "AXFR"}, {253, "MAILB"}, {254, "MAILA"}, {255, "ANY"},
	{256, "URI"}, {257, "CAA"}, {258, "AVC"}, {260, "AMTRELAY"}, {261, "RESINFO"},
	{262, "WALLET"}, {32768, "TA"}, {32769, "DLV"},
};

#define NREGISTERED (sizeof registry / sizeof registry[0])

/* A buffer for TYPEnnn, one a thread (the chain checks run beside the signature checks):
 * a thread makes its messages one at a time. */
const char *type_name(uint16_t type)
{
	static _Thread_local char unknown[16];
	for (size_t i = 0; i < NREGISTERED; i++)
		if (registry[i].type == type)
			return registry[i].name;
	snprintf(unknown, sizeof unknown, "TYPE%u", type);
	return unknown;
}

static uint32_t fold_hash(const char *text, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (text[i] & 0xDF)) * 16777619u;  /* ASCII letters and digits: case folded */
	return h;
}

/* The registry by mnemonic: NSEC type bitmaps name a few types per record, over the whole
 * zone. Filled before main, so that any thread may read it. */
#define BY_NAME_SLOTS 256
static uint8_t by_name[BY_NAME_SLOTS];  /* registry index + 1, 0 for an empty slot */

__attribute__((constructor)) static void index_names(void)
{
	for (size_t i = 0; i < NREGISTERED; i++) {
		uint32_t s = fold_hash(registry[i].name, strlen(registry[i].name));
		while (by_name[s % BY_NAME_SLOTS])
			s++;
		by_name[s % BY_NAME_SLOTS] = i + 1;
	}
}

/* The type a mnemonic (any letter case) names, or 0. */
uint16_t type_by_name(const char *text, size_t len)
{
	for (uint32_t s = fold_hash(text, len); by_name[s % BY_NAME_SLOTS]; s++) {
		size_t i = by_name[s % BY_NAME_SLOTS] - 1;
		if (strlen(registry[i].name) == len && strncasecmp(registry[i].name, text, len) == 0)
			return registry[i].type;
	}
	return 0;
}
