/*
 * statkeys.c - the counted query types' and RCODEs' slots (statkeys.h).
 */
#include "query/statkeys.h"

#include "query/wire.h"

/* Every entry "other", then the ones counted apart: a later initializer overrides an earlier
 * one, as intended here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
const uint8_t zb_stat_qtype_slot[ZB_STAT_QTYPE_TABLE] = {
	[0 ... ZB_STAT_QTYPE_TABLE - 1] = ZB_STAT_QTYPE_OTHER,
	[1] = ZB_STAT_A, [2] = ZB_STAT_NS, [5] = ZB_STAT_CNAME, [6] = ZB_STAT_SOA,
	[12] = ZB_STAT_PTR, [15] = ZB_STAT_MX, [16] = ZB_STAT_TXT, [28] = ZB_STAT_AAAA,
	[33] = ZB_STAT_SRV, [43] = ZB_STAT_DS, [48] = ZB_STAT_DNSKEY, [64] = ZB_STAT_SVCB,
	[65] = ZB_STAT_HTTPS, [255] = ZB_STAT_ANY, [257] = ZB_STAT_CAA,
};

const uint8_t zb_stat_rcode_slot[ZB_STAT_RCODE_TABLE] = {
	[0 ... ZB_STAT_RCODE_TABLE - 1] = ZB_STAT_RCODE_OTHER,
	[0] = ZB_STAT_NOERROR, [1] = ZB_STAT_FORMERR, [2] = ZB_STAT_SERVFAIL,
	[3] = ZB_STAT_NXDOMAIN, [4] = ZB_STAT_NOTIMP, [5] = ZB_STAT_REFUSED, [6] = ZB_STAT_YXDOMAIN,
	[9] = ZB_STAT_NOTAUTH, [ZB_RCODE_BADVERS] = ZB_STAT_BADVERS,
};
#pragma GCC diagnostic pop
