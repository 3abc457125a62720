/*
 * statkeys.h - what a response is counted as (stats.h): its query type and RCODE in one
 * number, the index of the worker's counter it adds to, worked out as the response is
 * written (respond.c), so that counting it is one add.
 */
#ifndef ZB_STATKEYS_H
#define ZB_STATKEYS_H

#include <stdint.h>

/* Response codes counted apart; anything else is ZB_STAT_RCODE_OTHER. */
enum zb_stat_rcode {
	ZB_STAT_NOERROR, ZB_STAT_FORMERR, ZB_STAT_SERVFAIL, ZB_STAT_NXDOMAIN, ZB_STAT_NOTIMP,
	ZB_STAT_REFUSED, ZB_STAT_YXDOMAIN, ZB_STAT_NOTAUTH, ZB_STAT_BADVERS, ZB_STAT_RCODE_OTHER,
	ZB_STAT_NRCODES
};

/* Query types counted apart; anything else is ZB_STAT_QTYPE_OTHER. */
enum zb_stat_qtype {
	ZB_STAT_A, ZB_STAT_NS, ZB_STAT_CNAME, ZB_STAT_SOA, ZB_STAT_PTR, ZB_STAT_MX, ZB_STAT_TXT,
	ZB_STAT_AAAA, ZB_STAT_SRV, ZB_STAT_DS, ZB_STAT_DNSKEY, ZB_STAT_HTTPS, ZB_STAT_SVCB,
	ZB_STAT_CAA, ZB_STAT_ANY, ZB_STAT_QTYPE_OTHER, ZB_STAT_NQTYPES
};

/* Index of each counted query type, by type number (CAA is 257); others ZB_STAT_QTYPE_OTHER. */
#define ZB_STAT_QTYPE_TABLE 258
extern const uint8_t zb_stat_qtype_slot[ZB_STAT_QTYPE_TABLE];
/* Index of each counted RCODE, extended bits included, by number (BADVERS is 16). */
#define ZB_STAT_RCODE_TABLE 32
extern const uint8_t zb_stat_rcode_slot[ZB_STAT_RCODE_TABLE];

/* A response's key: its query type's slot (ZB_STAT_NQTYPES: no question read) times 32, plus
 * its RCODE, extended bits included (zb_respond sends none above 16). */
#define ZB_STAT_KEYS ((ZB_STAT_NQTYPES + 1) * ZB_STAT_RCODE_TABLE)

static inline uint16_t zb_stat_key(int question, uint16_t qtype, unsigned rcode)
{
	unsigned slot = !question ? ZB_STAT_NQTYPES
			: qtype < ZB_STAT_QTYPE_TABLE ? zb_stat_qtype_slot[qtype]
						      : ZB_STAT_QTYPE_OTHER;
	return (uint16_t)(slot * ZB_STAT_RCODE_TABLE + (rcode & (ZB_STAT_RCODE_TABLE - 1)));
}

/* Whether a key's response echoed its question. */
static inline int zb_stat_key_question(uint16_t key)
{
	return key / ZB_STAT_RCODE_TABLE != ZB_STAT_NQTYPES;
}

#endif
