/*
 * udp.c - receive queries, answer each with zb_respond, send the answer back to its source.
 *
 * One thread, all listeners in one poll set; each readable socket is drained until it would
 * block. No allocation, logging or formatting per query.
 */
#include "udp.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "respond.h"
#include "wire.h"

#define ZB_MAX_LISTENERS 64

static void drain(const struct zb_zoneset *zs, int fd)
{
	static uint8_t query[ZB_RESPONSE_MAX + 1];
	static uint8_t response[ZB_RESPONSE_MAX];
	struct sockaddr_storage peer;

	for (;;) {
		socklen_t peer_len = sizeof(peer);
		ssize_t n = recvfrom(fd, query, sizeof(query), 0, (struct sockaddr *)&peer, &peer_len);
		if (n < 0)
			return; /* EAGAIN: drained; anything else: try again on the next poll */
		size_t len = zb_respond(zs, query, (size_t)n, response, ZB_UDP_PLAIN_MAX);
		if (len)
			sendto(fd, response, len, 0, (struct sockaddr *)&peer, peer_len);
	}
}

int zb_serve_udp(const struct zb_zoneset *zs, const struct zb_listener *listeners, int n)
{
	struct pollfd fds[ZB_MAX_LISTENERS];

	if (n > ZB_MAX_LISTENERS) {
		fprintf(stderr, "zonebake-server: at most %d listen addresses\n", ZB_MAX_LISTENERS);
		return -1;
	}
	for (int i = 0; i < n; i++)
		fds[i] = (struct pollfd){ .fd = listeners[i].fd, .events = POLLIN };
	for (;;) {
		if (poll(fds, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "zonebake-server: poll: %s\n", strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++)
			if (fds[i].revents & POLLIN)
				drain(zs, fds[i].fd);
	}
}
