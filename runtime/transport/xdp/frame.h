/*
 * frame.h - the frame layer of the AF_XDP path: a received Ethernet frame's headers checked
 * (Ethernet II with at most one VLAN tag, IPv4 or IPv6, UDP) and the DNS query in it found;
 * then, once the request handler has written the response where the query was, the frame
 * turned around in place: addresses and ports swapped, lengths and checksums written.
 *
 * A worker's AF_XDP loop, per frame of a batch:
 *
 *	switch (zb_frame_parse(umem + desc.addr, desc.len, &rules, &f)) {
 *	case ZB_FRAME_ANSWER: q->packet = frame + f.dns, q->len = f.dns_len,
 *			      q->client = {&f.peer, cookies}; ...
 *	case ZB_FRAME_PASS: the kernel's (the XDP program should not have sent it here) ...
 *	case ZB_FRAME_DROP: back to the fill ring unanswered ...
 *	}
 *	zb_respond_batch(&framed, ...);  (framed: zb_frame_zoneset's, made at setup)
 *	tx.len = zb_frame_answer(frame, &f, q->len); (0: none, the frame goes back unsent)
 *
 * Nothing here allocates, locks, asks the time or logs: it runs once per frame.
 */
#ifndef ZB_FRAME_H
#define ZB_FRAME_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "zonedata.h"

/* What becomes of a received frame. */
enum zb_frame_verdict {
	ZB_FRAME_PASS = 0, /* the kernel's (XDP_PASS): not a UDP datagram to our port, or one
			    * only the kernel can answer (a fragment, extension headers, a
			    * source route, a group address, a frame too small to answer in) */
	ZB_FRAME_DROP,     /* discarded: malformed, so the kernel would discard it too, or from
			    * a source no answer may go to (port 0, a small service's port) */
	ZB_FRAME_ANSWER,   /* a DNS message in a UDP datagram to our port: `struct zb_frame`
			    * says where, and whom to answer */
};

/* What one AF_XDP socket's frames share: set once, when it is made. */
struct zb_frame_rules {
	uint32_t room;  /* octets writable from a frame's first one on: the UMEM frame's size
			 * less the headroom in front of the packet */
	uint32_t mtu;   /* the interface's MTU: the largest IP packet it sends */
	uint16_t port;  /* the UDP port served, in host order */
};

/* A frame to answer, as zb_frame_parse found it; offsets from the frame's first octet. */
struct zb_frame {
	struct sockaddr_storage peer; /* the sender's address and port, for cookies and rate
				       * limiting (struct zb_client) */
	uint16_t ip;      /* the IP header */
	uint16_t udp;     /* the UDP header */
	uint16_t dns;     /* the DNS message: the query, then the handler's response */
	uint16_t dns_len; /* the query's length */
	uint16_t max_udp; /* the largest response the MTU and the frame carry, at least 512
			   * (zb_frame_zoneset) */
	uint8_t ipv6;
};

/* Check the frame of `len` octets at `frame` (readable up to rules->room): ZB_FRAME_ANSWER
 * fills `f`; the other verdicts leave it undefined. */
enum zb_frame_verdict zb_frame_parse(const uint8_t *frame, size_t len,
				     const struct zb_frame_rules *rules, struct zb_frame *f);

/* The zone set as the frame path hands it to the request handler: the same, but for the
 * largest UDP response, which no more than `max_udp` octets (what the frames carry: the MTU
 * less the headers, at least 512) may be. The handler caps a response with EDNS at the zone
 * set's udp_size, and one without at 512 (RFC 1035 §4.2.1, RFC 6891 §6.2.5), and advertises
 * udp_size in its OPT record: so a frame is never asked to carry more than fits, and the
 * socket path's handler has nothing more to test per query. Made once per worker, one for
 * each family's header length (or one, for the longer IPv6 headers). */
static inline struct zb_zoneset zb_frame_zoneset(const struct zb_zoneset *zs, uint16_t max_udp)
{
	struct zb_zoneset framed = *zs;
	if (max_udp < framed.udp_size)
		framed.udp_size = max_udp;
	return framed;
}

/* Turn a frame that zb_frame_parse answered into the response whose `dns_len` octets the
 * request handler wrote at f->dns: back to the sender from the address and port it asked,
 * lengths, the IPv4 header checksum and the UDP checksum written. Returns the frame's new
 * length, or 0 (no response to send) for a dns_len of 0 or over f->max_udp. */
size_t zb_frame_answer(uint8_t *frame, const struct zb_frame *f, size_t dns_len);

/* The Internet checksum (RFC 1071): zb_sum adds `len` octets to a running sum (whose pieces
 * must each start at an even offset in what is summed, as the UDP pseudo-header's and
 * header's do); zb_sum_fold folds it to the 16-bit one's-complement sum, in the host's byte
 * order for a memcpy into the packet (RFC 1071 §2(B)). The checksum is its complement. */
uint64_t zb_sum(const uint8_t *data, size_t len, uint64_t sum);
uint16_t zb_sum_fold(uint64_t sum);

#endif
