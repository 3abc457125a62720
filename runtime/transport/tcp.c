/*
 * tcp.c - DNS over TCP, event-driven and non-blocking: one slow or silent client never holds
 * up another. A connection with something to do holds buffers from the worker's pool: a read
 * buffer of one maximal message and a write buffer of two; a connection whose client does not
 * read its answers is not read from either (back-pressure) until they drain. Once all is read
 * and sent the buffers go back to the pool, last in first out, so a thousand connections
 * asking a query now and then touch the memory of about one. No allocation after start-up.
 */
#define _GNU_SOURCE /* accept4 */
#include "transport/tcp.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "query/respond.h"
#include "query/wire.h"
#include "transport/descriptors.h"

#define ZB_FRAME (2 + ZB_RESPONSE_MAX)

struct zb_buffers {
	uint8_t rbuf[ZB_FRAME + ZB_QUERY_SLACK];
	uint8_t wbuf[2 * ZB_FRAME];
};

/* A client's address, as the per-source limit compares them: IPv4 in the first four octets
 * (an IPv4-mapped IPv6 address is the IPv4 one). */
struct zb_source {
	uint8_t addr[16];
};

struct zb_conn {
	int fd;               /* -1: the slot is free */
	uint32_t last_active; /* tcp->now when it last read or wrote something */
	uint32_t interest;    /* the epoll events registered */
	uint32_t rlen;
	uint32_t wstart;
	uint32_t wlen;
	int peer_closed;
	struct zb_buffers *buf; /* NULL while nothing is read or waiting to be sent */
	struct zb_source source;
	struct sockaddr_storage peer;
};

int zb_tcp_init(struct zb_tcp *tcp, const struct zb_zoneset *zs, struct zb_stats *stats,
		struct zb_cookies *cookies, int epfd, uint32_t idle_timeout, uint32_t max_conns, uint32_t max_per_source)
{
	*tcp = (struct zb_tcp){ .zs = zs, .stats = stats, .cookies = cookies, .epfd = epfd,
				.idle_timeout = idle_timeout, .max_conns = max_conns,
				.max_per_source = max_per_source };
	/* One set of buffers per connection, so that the pool never runs dry; untouched pages
	 * cost nothing: the kernel maps them as the pool's first entries are used. */
	tcp->conns = calloc(max_conns, sizeof(struct zb_conn));
	tcp->buffers = calloc(max_conns, sizeof(struct zb_buffers));
	tcp->free_buffers = calloc(max_conns, sizeof(*tcp->free_buffers));
	if (!tcp->conns || !tcp->buffers || !tcp->free_buffers)
		return -1;
	for (uint32_t i = 0; i < max_conns; i++) {
		tcp->conns[i].fd = -1;
		tcp->free_buffers[i] = max_conns - 1 - i; /* the first buffer on top */
	}
	tcp->nfree = max_conns;
	return 0;
}

static void conn_take_buffers(struct zb_tcp *tcp, struct zb_conn *c)
{
	if (!c->buf)
		c->buf = &tcp->buffers[tcp->free_buffers[--tcp->nfree]];
}

/* Nothing half read, nothing to send: the buffers go back for the next connection. */
static void conn_release_buffers(struct zb_tcp *tcp, struct zb_conn *c)
{
	if (c->buf && !c->rlen && !c->wlen) {
		tcp->free_buffers[tcp->nfree++] = (uint32_t)(c->buf - tcp->buffers);
		c->buf = NULL;
	}
}

static void conn_close(struct zb_tcp *tcp, struct zb_conn *c, enum zb_stat_close why)
{
	close(c->fd); /* also leaves the epoll set */
	c->fd = -1;
	c->rlen = c->wlen = c->wstart = 0;
	conn_release_buffers(tcp, c);
	tcp->nconns--;
	zb_stat_add(&tcp->stats->tcp_closed[why], 1);
}

static uint64_t conn_event_data(const struct zb_tcp *tcp, const struct zb_conn *c)
{
	return (uint64_t)ZB_EVENT_CONN << 32 | (uint64_t)(c - tcp->conns);
}

/* Read while the write side has room for another answer; write while there is output. */
static void conn_update_interest(struct zb_tcp *tcp, struct zb_conn *c)
{
	uint32_t want = 0;
	if (!c->peer_closed && sizeof(c->buf->wbuf) - c->wlen >= ZB_FRAME)
		want |= EPOLLIN;
	if (c->wlen)
		want |= EPOLLOUT;
	if (want != c->interest) {
		struct epoll_event ev = { .events = want, .data.u64 = conn_event_data(tcp, c) };
		epoll_ctl(tcp->epfd, EPOLL_CTL_MOD, c->fd, &ev);
		c->interest = want;
	}
}

/* Returns -1 when the connection had to be closed. */
static int conn_flush(struct zb_tcp *tcp, struct zb_conn *c)
{
	while (c->wlen) {
		ssize_t n = send(c->fd, c->buf->wbuf + c->wstart, c->wlen, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			conn_close(tcp, c, ZB_CLOSE_OTHER);
			return -1;
		}
		c->wstart += (uint32_t)n;
		c->wlen -= (uint32_t)n;
		c->last_active = tcp->now;
	}
	if (!c->wlen)
		c->wstart = 0;
	return 0;
}

/* Answer every complete query in the read buffer, in order, while answers fit. Returns -1
 * when the connection had to be closed. */
static int conn_answer(struct zb_tcp *tcp, struct zb_conn *c)
{
	uint32_t used = 0;

	while (c->rlen - used >= 2) {
		uint32_t msglen = zb_get16(c->buf->rbuf + used);
		if (msglen == 0) /* no DNS message is empty: the stream cannot be trusted */
			goto close;
		if (c->rlen - used < 2 + msglen)
			break;
		if (c->wstart) {
			memmove(c->buf->wbuf, c->buf->wbuf + c->wstart, c->wlen);
			c->wstart = 0;
		}
		if (sizeof(c->buf->wbuf) - c->wlen < ZB_FRAME)
			break; /* the client is not reading: wait for the answers to drain */
		uint8_t *frame = c->buf->wbuf + c->wlen;
		struct zb_query_facts facts;
		zb_stat_add(&tcp->stats->queries[ZB_TCP], 1);
		struct zb_client client = { &c->peer, tcp->cookies };
		size_t n = zb_respond(tcp->zs, c->buf->rbuf + used + 2, msglen, frame + 2, ZB_TCP,
				      &client, &facts);
		if (n == 0) { /* not a query (a response, or shorter than a header) */
			zb_stat_add(&tcp->stats->dropped, 1);
			goto close;
		}
		zb_stats_count_response(tcp->stats, frame + 2, &facts);
		zb_put16(frame, (uint16_t)n);
		c->wlen += (uint32_t)(2 + n);
		used += 2 + msglen;
	}
	if (used) {
		memmove(c->buf->rbuf, c->buf->rbuf + used, c->rlen - used);
		c->rlen -= used;
	}
	return 0;
close:
	conn_close(tcp, c, ZB_CLOSE_OTHER);
	return -1;
}

static void conn_read(struct zb_tcp *tcp, struct zb_conn *c)
{
	while (c->rlen < ZB_FRAME) {
		ssize_t n = recv(c->fd, c->buf->rbuf + c->rlen, ZB_FRAME - c->rlen, 0);
		if (n > 0) {
			c->rlen += (uint32_t)n;
			c->last_active = tcp->now;
			if (conn_answer(tcp, c) != 0)
				return;
			if (sizeof(c->buf->wbuf) - c->wlen < ZB_FRAME)
				break; /* back-pressure */
			continue;
		}
		if (n == 0) {
			c->peer_closed = 1;
			break;
		}
		if (errno == EAGAIN || errno == EINTR)
			break;
		conn_close(tcp, c, ZB_CLOSE_OTHER);
		return;
	}
}

void zb_tcp_event(struct zb_tcp *tcp, uint32_t index, uint32_t events)
{
	struct zb_conn *c = &tcp->conns[index];

	if (c->fd < 0)
		return; /* closed earlier in this round of events */
	if (events & EPOLLOUT) {
		if (conn_flush(tcp, c) != 0)
			return;
		/* Room again: answer what was waiting in the read buffer. */
		if (conn_answer(tcp, c) != 0)
			return;
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		conn_take_buffers(tcp, c);
		conn_read(tcp, c);
	}
	if (c->fd < 0 || conn_flush(tcp, c) != 0)
		return;
	if (c->peer_closed && !c->wlen) {
		conn_close(tcp, c, ZB_CLOSE_OTHER);
		return;
	}
	conn_release_buffers(tcp, c);
	conn_update_interest(tcp, c);
}

/* Whether a connection is worth less than another: one with nothing half read and nothing
 * waiting to be sent before one in the middle of an exchange, then the one quiet longest. */
static int conn_expendable_before(const struct zb_conn *a, const struct zb_conn *b)
{
	int a_idle = !a->rlen && !a->wlen, b_idle = !b->rlen && !b->wlen;
	if (a_idle != b_idle)
		return a_idle;
	return a->last_active < b->last_active;
}

/* The connection to close for a new one from `source`, if one must go: the most expendable
 * of that source's own when it holds max_per_source of them, or else, at the cap, the most
 * expendable of all; NULL when none must. One pass over the slots: accepting at the cap or
 * from a busy source is rare, and the slots are few (tcp-max-connections per worker). */
static struct zb_conn *conn_to_evict(struct zb_tcp *tcp, const struct zb_source *source)
{
	struct zb_conn *any = NULL, *own = NULL;
	uint32_t held = 0;
	for (uint32_t i = 0; i < tcp->max_conns; i++) {
		struct zb_conn *c = &tcp->conns[i];
		if (c->fd < 0)
			continue;
		if (!any || conn_expendable_before(c, any))
			any = c;
		if (memcmp(&c->source, source, sizeof(*source)) == 0) {
			held++;
			if (!own || conn_expendable_before(c, own))
				own = c;
		}
	}
	if (held >= tcp->max_per_source)
		return own;
	return tcp->nconns == tcp->max_conns ? any : NULL;
}

static void source_of(const struct sockaddr_storage *peer, struct zb_source *source)
{
	static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };
	memset(source, 0, sizeof(*source));
	if (peer->ss_family == AF_INET) {
		memcpy(source->addr, &((const struct sockaddr_in *)peer)->sin_addr, 4);
	} else if (peer->ss_family == AF_INET6) {
		const uint8_t *a = ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr;
		if (memcmp(a, v4_mapped, 12) == 0)
			memcpy(source->addr, a + 12, 4);
		else
			memcpy(source->addr, a, 16);
	}
}

int zb_tcp_accept(struct zb_tcp *tcp, int listen_fd)
{
	int one = 1;

	for (;;) {
		struct sockaddr_storage peer;
		socklen_t peer_len = sizeof(peer);
		int fd = accept4(listen_fd, (struct sockaddr *)&peer, &peer_len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) /* EAGAIN: all accepted; a connection reset before it: the next event */
			return zb_accept_exhausted(errno) ? -1 : 0;
		struct zb_source source;
		source_of(&peer, &source);
		struct zb_conn *evict = conn_to_evict(tcp, &source);
		if (evict)
			conn_close(tcp, evict, ZB_CLOSE_CAPPED);
		struct zb_conn *c = tcp->conns;
		while (c->fd >= 0)
			c++;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->fd = fd;
		c->last_active = tcp->now;
		c->interest = EPOLLIN;
		c->rlen = c->wstart = c->wlen = 0;
		c->peer_closed = 0;
		c->source = source;
		c->peer = peer;
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = conn_event_data(tcp, c) };
		if (epoll_ctl(tcp->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			c->fd = -1;
			continue;
		}
		tcp->nconns++;
		zb_stat_add(&tcp->stats->tcp_accepted, 1);
	}
}

void zb_tcp_tick(struct zb_tcp *tcp, uint32_t ticks)
{
	tcp->now += ticks;
	for (uint32_t i = 0; i < tcp->max_conns; i++) {
		struct zb_conn *c = &tcp->conns[i];
		if (c->fd >= 0 && tcp->now - c->last_active >= tcp->idle_timeout)
			conn_close(tcp, c, ZB_CLOSE_IDLE);
	}
}

void zb_tcp_finish(struct zb_tcp *tcp)
{
	for (uint32_t i = 0; i < tcp->max_conns; i++) {
		struct zb_conn *c = &tcp->conns[i];
		if (c->fd < 0)
			continue;
		if (conn_flush(tcp, c) == 0)
			conn_close(tcp, c, ZB_CLOSE_OTHER);
	}
	free(tcp->conns);
	free(tcp->buffers);
	free(tcp->free_buffers);
	tcp->conns = NULL;
	tcp->buffers = NULL;
	tcp->free_buffers = NULL;
}
