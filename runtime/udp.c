/*
 * udp.c - receive queries, answer each with zb_respond, send the answer back to its source.
 *
 * A readable socket is drained until it would block. No allocation, logging or formatting
 * per query.
 */
#include "udp.h"

#include <sys/socket.h>

#include "respond.h"
#include "wire.h"

void zb_udp_drain(const struct zb_zoneset *zs, int fd)
{
	static uint8_t query[ZB_RESPONSE_MAX + 1];
	static uint8_t response[ZB_RESPONSE_MAX];
	struct sockaddr_storage peer;

	for (;;) {
		socklen_t peer_len = sizeof(peer);
		ssize_t n = recvfrom(fd, query, sizeof(query), 0, (struct sockaddr *)&peer, &peer_len);
		if (n < 0)
			return; /* EAGAIN: drained; anything else: try again on the next poll */
		size_t len = zb_respond(zs, query, (size_t)n, response, ZB_UDP);
		if (len)
			sendto(fd, response, len, 0, (struct sockaddr *)&peer, peer_len);
	}
}
