/*
 * udp.c - receive a batch of queries with one recvmmsg, answer them all with
 * zb_respond_batch, send the answers with one sendmmsg. Buffers are the worker's own,
 * allocated at start-up: no allocation, lock, clock call, logging or formatting per query.
 */
#define _GNU_SOURCE /* recvmmsg, sendmmsg, in6_pktinfo */
#include "udp.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "respond.h"
#include "wire.h"

/* Room for one IPv4 or IPv6 packet-info control message. */
#define ZB_CONTROL_SIZE CMSG_SPACE(sizeof(struct in6_pktinfo))

struct zb_udp_slot {
	struct sockaddr_storage peer;
	struct zb_client client; /* the peer and the worker's cookies, for zb_respond_batch */
	struct iovec query_iov;  /* the whole buffer, for receiving */
	struct iovec answer_iov; /* the same buffer: each query is answered in place */
	uint8_t control[ZB_CONTROL_SIZE] __attribute__((aligned(8)));
};

int zb_udp_init(struct zb_udp *udp, const struct zb_zoneset *zs, struct zb_stats *stats,
		struct zb_cookies *cookies, const struct zb_rrl_options *rrl, unsigned batch)
{
	/* One buffer a slot, answered in place: room for the longest query taken and for the
	 * largest answer (the server's payload size; an error's header, question and OPT with
	 * NSID stay below 1024), rounded up to whole cache lines. */
	size_t size = zs->udp_size > ZB_UDP_QUERY_MAX ? zs->udp_size : ZB_UDP_QUERY_MAX;
	size = (size + ZB_QUERY_SLACK + 63) & ~(size_t)63;
	*udp = (struct zb_udp){ .zs = zs, .stats = stats, .batch = batch, .buffer_size = size };
	if (zb_rrl_init(&udp->rrl, rrl) != 0)
		return -1;
	udp->slots = calloc(batch, sizeof(*udp->slots));
	udp->in = calloc(batch, sizeof(*udp->in));
	udp->out = calloc(batch, sizeof(*udp->out));
	udp->queries = calloc(batch, sizeof(*udp->queries));
	udp->lookups = calloc(batch, sizeof(*udp->lookups));
	uint8_t *buffers = udp->buffers = calloc(batch, size);
	if (!udp->slots || !udp->in || !udp->out || !udp->queries || !udp->lookups ||
	    !buffers)
		return -1;
	for (unsigned i = 0; i < batch; i++) {
		struct zb_udp_slot *slot = &udp->slots[i];
		uint8_t *buffer = buffers + i * size;
		slot->client = (struct zb_client){ &slot->peer, cookies }; /* NULL: none made */
		slot->query_iov = (struct iovec){ buffer, ZB_UDP_QUERY_MAX };
		slot->answer_iov = (struct iovec){ buffer, 0 };
		udp->queries[i] = (struct zb_batch_query){ .packet = buffer, .client = &slot->client };
		udp->in[i].msg_hdr = (struct msghdr){
			.msg_name = &slot->peer,
			.msg_namelen = sizeof(slot->peer),
			.msg_iov = &slot->query_iov,
			.msg_iovlen = 1,
			.msg_control = slot->control,
			.msg_controllen = sizeof(slot->control),
		};
	}
	return 0;
}

void zb_udp_free(struct zb_udp *udp)
{
	free(udp->slots);
	free(udp->in);
	free(udp->out);
	free(udp->queries);
	free(udp->lookups);
	free(udp->buffers);
	zb_rrl_free(&udp->rrl);
	*udp = (struct zb_udp){ 0 };
}

/* Turn the packet info a query came with into the one its answer leaves with. */
static size_t reply_control(struct msghdr *received, uint8_t *control)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(received); c; c = CMSG_NXTHDR(received, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo *info = (struct in_pktinfo *)CMSG_DATA(c);
			info->ipi_spec_dst = info->ipi_addr;
			info->ipi_ifindex = 0;
			return CMSG_SPACE(sizeof(struct in_pktinfo));
		}
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO)
			return CMSG_SPACE(sizeof(struct in6_pktinfo)); /* reply from ipi6_addr as is */
	}
	(void)control;
	return 0;
}

/* Source ports no resolver sends from: 0 cannot be answered, and the small services of
 * RFC 862 (echo), 867 (daytime), 865 (quote of the day), 864 (chargen) and 868 (time) answer
 * whatever reaches them, so a query spoofed from one of them would start a loop between the
 * two servers. Dropped unanswered, as BIND and Knot drop them. */
static int unanswerable_port(const struct sockaddr_storage *peer)
{
	in_port_t port;
	if (peer->ss_family == AF_INET)
		port = ((const struct sockaddr_in *)peer)->sin_port;
	else if (peer->ss_family == AF_INET6)
		port = ((const struct sockaddr_in6 *)peer)->sin6_port;
	else
		return 0;
	switch (ntohs(port)) {
	case 0: case 7: case 13: case 17: case 19: case 37:
		return 1;
	default:
		return 0;
	}
}

/* Send the batch's answers. A message the kernel refuses (a destination it will not send to:
 * port 0, a broadcast address) is left out and the rest still go; a full socket buffer loses
 * the rest, as the network would. */
static void send_answers(int fd, struct mmsghdr *out, unsigned answers)
{
	for (unsigned sent = 0; sent < answers;) {
		int n = sendmmsg(fd, out + sent, answers - sent, 0);
		if (n > 0) {
			sent += (unsigned)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
			return;
		} else {
			sent++; /* the first unsent one failed: skip it alone */
		}
	}
}

/* A response over its rate (rrl.h): whether it is dropped, or else slipped (*len
 * shortened). */
static __attribute__((noinline)) int limited(struct zb_udp *udp, const struct zb_udp_slot *slot,
					    size_t *len, const struct zb_query_facts *facts,
					    enum zb_rrl_verdict verdict)
{
	if (verdict == ZB_RRL_SLIP) {
		*len = zb_rrl_slip(slot->answer_iov.iov_base, *len, facts);
		zb_stat_add(&udp->stats->rrl_slipped, 1);
		return 0;
	}
	zb_stat_add(&udp->stats->rrl_dropped, 1);
	return 1;
}

void zb_udp_drain(struct zb_udp *udp, int fd, int pktinfo)
{
	/* A bounded number of batches, then back to the event loop, which comes back here at
	 * once if more is waiting: a flood that keeps the socket full must not hold up TCP,
	 * accepts, the timer and the stop signal. */
	for (unsigned round = 0; round < ZB_UDP_BATCHES_PER_WAKEUP; round++) {
		/* recvmmsg shortens the address and control lengths it fills: give them back. */
		for (unsigned i = 0; i < udp->dirty; i++) {
			udp->in[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
			udp->in[i].msg_hdr.msg_controllen = ZB_CONTROL_SIZE;
		}
		udp->dirty = 0;
		int received = recvmmsg(fd, udp->in, udp->batch, MSG_DONTWAIT, NULL);
		if (received <= 0)
			return; /* EAGAIN: drained; anything else: try again on the next event */
		udp->dirty = (unsigned)received;
		zb_stat_add(&udp->stats->queries[ZB_UDP], (unsigned)received);

		for (int i = 0; i < received; i++) {
			/* Longer than any question needs (MSG_TRUNC): dropped unanswered. */
			struct msghdr *in = &udp->in[i].msg_hdr;
			udp->queries[i].len = (in->msg_flags & MSG_TRUNC) ||
						      unanswerable_port(&udp->slots[i].peer)
						      ? 0 : (uint16_t)udp->in[i].msg_len;
		}
		zb_respond_batch(udp->zs, udp->queries, (unsigned)received, udp->lookups);

		unsigned answers = 0;
		int rrl = udp->rrl.rate != 0;
		for (int i = 0; i < received; i++) {
			struct zb_udp_slot *slot = &udp->slots[i];
			struct msghdr *in = &udp->in[i].msg_hdr;
			struct zb_query_facts *facts = &udp->queries[i].facts;
			size_t len = udp->queries[i].len;
			if (!len) {
				zb_stat_add(&udp->stats->dropped, 1);
				continue;
			}
			/* Rate limiting, but for a source proven by a cookie of ours. */
			if (__builtin_expect(rrl, 0) && facts->cookie != ZB_COOKIE_VALID) {
				enum zb_rrl_verdict verdict =
					zb_rrl_account(&udp->rrl, &slot->peer, facts->rrl_key);
				if (verdict != ZB_RRL_SEND && limited(udp, slot, &len, facts, verdict))
					continue;
			}
			zb_stats_count_response(udp->stats, slot->answer_iov.iov_base, facts);
			slot->answer_iov.iov_len = len;
			udp->out[answers].msg_hdr = (struct msghdr){
				.msg_name = &slot->peer,
				.msg_namelen = in->msg_namelen,
				.msg_iov = &slot->answer_iov,
				.msg_iovlen = 1,
				.msg_control = pktinfo ? slot->control : NULL,
				.msg_controllen = pktinfo ? reply_control(in, slot->control) : 0,
			};
			answers++;
		}
		send_answers(fd, udp->out, answers);
		if ((unsigned)received < udp->batch)
			return;
	}
}
