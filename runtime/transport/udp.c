/*
 * udp.c - receive a batch of queries with one recvmmsg, answer them all with
 * zb_respond_batch, send the answers with one sendmmsg. Buffers are the worker's own,
 * allocated at start-up: no allocation, lock, clock call, logging or formatting per query.
 */
#define _GNU_SOURCE /* recvmmsg, sendmmsg, in6_pktinfo */
#include "transport/udp.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "query/respond.h"
#include "query/wire.h"

/* Room for one IPv4 or IPv6 packet-info control message. */
#define ZB_CONTROL_SIZE CMSG_SPACE(sizeof(struct in6_pktinfo))

struct zb_udp_slot {
	struct sockaddr_storage peer;
	struct zb_client client; /* the peer and the worker's cookies, for zb_respond_batch */
	struct iovec iov;        /* the whole buffer to receive; the answer, in place, to send */
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
		slot->iov = (struct iovec){ buffer, ZB_UDP_QUERY_MAX };
		udp->queries[i] = (struct zb_batch_query){ .packet = buffer, .client = &slot->client };
		udp->in[i].msg_hdr = (struct msghdr){
			.msg_name = &slot->peer,
			.msg_namelen = sizeof(slot->peer),
			.msg_iov = &slot->iov,
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

/* Turn the packet info a query came with into the one its answer leaves with, in place (the
 * answer goes out with the header the query came in with); returns its length. */
static size_t reply_control(struct msghdr *received)
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
	return 0;
}

_Static_assert(offsetof(struct sockaddr_in, sin_port) == offsetof(struct sockaddr_in6, sin6_port),
	       "the port is at one place in both address families");

static int unanswerable_port(const struct sockaddr_storage *peer)
{
	return zb_unanswerable_port(ntohs(((const struct sockaddr_in *)peer)->sin_port));
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

__attribute__((noinline)) int zb_udp_limited(struct zb_stats *stats, uint8_t *response,
					    size_t *len, const struct zb_query_facts *facts,
					    enum zb_rrl_verdict verdict)
{
	if (verdict == ZB_RRL_SLIP) {
		*len = zb_rrl_slip(response, *len, facts);
		zb_stat_add(&stats->rrl_slipped, 1);
		return 0;
	}
	zb_stat_add(&stats->rrl_dropped, 1);
	return 1;
}

/* Send what the batch answered: the received headers themselves, each now holding its
 * answer's length, when every query got one; else the answered ones copied together. */
static void send_batch(struct zb_udp *udp, int fd, unsigned received, unsigned answers)
{
	if (answers == received) {
		send_answers(fd, udp->in, answers);
		return;
	}
	unsigned n = 0;
	for (unsigned i = 0; i < received; i++)
		if (udp->queries[i].len)
			udp->out[n++] = udp->in[i];
	send_answers(fd, udp->out, n);
}

int zb_udp_drain(struct zb_udp *udp, int fd, int pktinfo)
{
	/* In locals: the compiler cannot tell the stores below leave *udp alone. */
	struct zb_udp_slot *const slots = udp->slots;
	struct mmsghdr *const in = udp->in;
	struct zb_batch_query *const queries = udp->queries;
	struct zb_stats *const stats = udp->stats;

	/* A bounded number of batches, then back to the event loop, which comes back here at
	 * once if more is waiting: a flood that keeps the socket full must not hold up TCP,
	 * accepts, the timer and the stop signal. */
	for (unsigned round = 0; round < ZB_UDP_BATCHES_PER_WAKEUP; round++) {
		/* recvmmsg shortens the address and control lengths it fills, and each answer
		 * set its buffer's length: give them back. */
		struct zb_udp_slot *used = slots;
		for (struct mmsghdr *m = in, *end = in + udp->dirty; m != end; m++, used++) {
			m->msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
			m->msg_hdr.msg_controllen = ZB_CONTROL_SIZE;
			used->iov.iov_len = ZB_UDP_QUERY_MAX;
		}
		udp->dirty = 0;
		int received = recvmmsg(fd, in, udp->batch, MSG_DONTWAIT, NULL);
		if (received <= 0)
			return 0; /* EAGAIN: drained; anything else: try again on the next event */
		udp->dirty = (unsigned)received;
		zb_stat_add(&stats->queries[ZB_UDP], (unsigned)received);

		for (int i = 0; i < received; i++) {
			/* Longer than any question needs (MSG_TRUNC): dropped unanswered. */
			queries[i].len = (in[i].msg_hdr.msg_flags & MSG_TRUNC) ||
						 unanswerable_port(&slots[i].peer)
						 ? 0 : (uint16_t)in[i].msg_len;
		}
		zb_respond_batch(udp->zs, queries, (unsigned)received, udp->lookups);

		/* Each answer goes back with the received header: the peer's address and length
		 * as they came, the buffer's length now the answer's. */
		unsigned answers = 0;
		int rrl = udp->rrl.rate != 0;
		for (int i = 0; i < received; i++) {
			struct zb_udp_slot *slot = &slots[i];
			struct zb_query_facts *facts = &queries[i].facts;
			size_t len = queries[i].len;
			if (!len) {
				zb_stat_add(&stats->dropped, 1);
				continue;
			}
			/* Rate limiting, but for a source proven by a cookie of ours. */
			if (__builtin_expect(rrl, 0) && facts->cookie != ZB_COOKIE_VALID) {
				enum zb_rrl_verdict verdict =
					zb_rrl_account(&udp->rrl, &slot->peer, facts->rrl_key);
				if (verdict != ZB_RRL_SEND &&
				    zb_udp_limited(stats, slot->iov.iov_base, &len, facts, verdict)) {
					queries[i].len = 0;
					continue;
				}
			}
			zb_stats_count_response(stats, slot->iov.iov_base, facts);
			slot->iov.iov_len = len;
			in[i].msg_hdr.msg_controllen =
				pktinfo ? reply_control(&in[i].msg_hdr) : 0;
			answers++;
		}
		send_batch(udp, fd, (unsigned)received, answers);
		if ((unsigned)received < udp->batch)
			return 0;
	}
	return 1;
}
