/*
 * sockets.c - bind the listening sockets. Start-up code: may format, allocate and fail loudly.
 */
#include "sockets.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_port(const char *text, in_port_t *port)
{
	char *end;
	long value;

	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || *end || value < 0 || value > 65535)
		return -1;
	*port = htons((uint16_t)value);
	return 0;
}

int zb_parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *port;

	memset(ss, 0, sizeof(*ss));
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host))
			return -1;
		memcpy(host, spec + 1, (size_t)(close - spec - 1));
		host[close - spec - 1] = 0;
		port = close + 2;
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
		sin6->sin6_family = AF_INET6;
		*len = sizeof(*sin6);
		return inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1 &&
			       parse_port(port, &sin6->sin6_port) == 0 ? 0 : -1;
	}
	const char *colon = strrchr(spec, ':');
	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		return -1;
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = 0;
	port = colon + 1;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	sin->sin_family = AF_INET;
	*len = sizeof(*sin);
	return inet_pton(AF_INET, host, &sin->sin_addr) == 1 &&
		       parse_port(port, &sin->sin_port) == 0 ? 0 : -1;
}

static int is_wildcard(const struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return ((const struct sockaddr_in *)addr)->sin_addr.s_addr == htonl(INADDR_ANY);
}

static int bound_socket(int type, const struct sockaddr_storage *addr, socklen_t addr_len,
			const struct zb_socket_options *options)
{
	int one = 1;
	int family = addr->ss_family;
	int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	/* An IPv6 socket takes IPv6 only, so [::]:53 and 0.0.0.0:53 can both be listened on. */
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* Every worker binds its own socket; the kernel spreads queries over them. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (type == SOCK_STREAM)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (type == SOCK_DGRAM && is_wildcard(addr)) {
		if (family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		else
			setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	}
	if (type == SOCK_DGRAM && options->udp_rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &options->udp_rcvbuf, sizeof(int));
	if (type == SOCK_DGRAM && options->udp_sndbuf)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &options->udp_sndbuf, sizeof(int));
	if (bind(fd, (const struct sockaddr *)addr, addr_len) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 1024) != 0)) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static in_port_t *port_of(struct sockaddr_storage *addr)
{
	return addr->ss_family == AF_INET6 ? &((struct sockaddr_in6 *)addr)->sin6_port
					   : &((struct sockaddr_in *)addr)->sin_port;
}

int zb_listen(const char *spec, const struct zb_socket_options *options,
	      struct zb_listener *out, char *err, size_t err_len)
{
	if (zb_parse_addr(spec, &out->addr, &out->addr_len) != 0) {
		snprintf(err, err_len, "bad listen address '%s' (ADDRESS:PORT or [IPV6]:PORT)", spec);
		return -1;
	}
	out->wildcard = is_wildcard(&out->addr);
	int any_port = *port_of(&out->addr) == 0;
	/* Port 0: the kernel picks the UDP port, and TCP takes the same one; should another
	 * program hold it for TCP, pick again. */
	for (int attempt = 0; attempt < 16; attempt++) {
		struct sockaddr_storage addr = out->addr;
		out->udp_fd = bound_socket(SOCK_DGRAM, &addr, out->addr_len, options);
		if (out->udp_fd < 0)
			break;
		socklen_t len = sizeof(addr);
		getsockname(out->udp_fd, (struct sockaddr *)&addr, &len);
		out->tcp_fd = bound_socket(SOCK_STREAM, &addr, out->addr_len, options);
		if (out->tcp_fd >= 0) {
			out->addr = addr;
			return 0;
		}
		int saved = errno;
		close(out->udp_fd);
		errno = saved;
		if (!any_port || errno != EADDRINUSE) {
			snprintf(err, err_len, "%s: bind (tcp): %s", spec, strerror(errno));
			return -1;
		}
	}
	snprintf(err, err_len, "%s: bind: %s", spec, strerror(errno));
	return -1;
}

int zb_listen_again(const struct zb_listener *first, const struct zb_socket_options *options,
		    struct zb_listener *out, char *err, size_t err_len)
{
	*out = *first;
	out->udp_fd = bound_socket(SOCK_DGRAM, &first->addr, first->addr_len, options);
	out->tcp_fd = out->udp_fd < 0 ? -1
				      : bound_socket(SOCK_STREAM, &first->addr, first->addr_len,
						     options);
	if (out->tcp_fd < 0) {
		snprintf(err, err_len, "bind for another worker: %s", strerror(errno));
		if (out->udp_fd >= 0)
			close(out->udp_fd);
		return -1;
	}
	return 0;
}

void zb_format_addr(const struct zb_listener *l, char *buf, size_t len)
{
	zb_format_sockaddr(&l->addr, buf, len);
}

void zb_format_sockaddr(const struct sockaddr_storage *addr, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (addr->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;
		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(sin6->sin6_port));
	} else {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(sin->sin_port));
	}
}
