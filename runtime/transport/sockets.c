/*
 * sockets.c - bind the listening sockets, or adopt ones handed over. Start-up code: may format,
 * allocate and fail loudly.
 */
#include "transport/sockets.h"

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

/* An address given without a port is DNS's own (RFC 1035 §4.2), as NSD and Knot take it:
 * the port, or NULL for 53. */
static int port_or_dns(const char *port, in_port_t *out)
{
	if (!port) {
		*out = htons(53);
		return 0;
	}
	return parse_port(port, out);
}

int zb_parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *port;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || (close[1] != ':' && close[1] != 0) ||
		    (size_t)(close - spec - 1) >= sizeof(host))
			return -1;
		memcpy(host, spec + 1, (size_t)(close - spec - 1));
		host[close - spec - 1] = 0;
		port = close[1] ? close + 2 : NULL;
	} else {
		const char *colon = strrchr(spec, ':');
		size_t host_len = colon ? (size_t)(colon - spec) : strlen(spec);
		if (host_len >= sizeof(host))
			return -1;
		memcpy(host, spec, host_len);
		host[host_len] = 0;
		port = colon ? colon + 1 : NULL;
		sin->sin_family = AF_INET;
		*len = sizeof(*sin);
		return inet_pton(AF_INET, host, &sin->sin_addr) == 1 &&
			       port_or_dns(port, &sin->sin_port) == 0 ? 0 : -1;
	}
	sin6->sin6_family = AF_INET6;
	*len = sizeof(*sin6);
	return inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1 &&
		       port_or_dns(port, &sin6->sin6_port) == 0 ? 0 : -1;
}

static int is_wildcard(const struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return ((const struct sockaddr_in *)addr)->sin_addr.s_addr == htonl(INADDR_ANY);
}

/* What every listening socket needs, bound here or adopted: packet info on a wildcard UDP
 * socket (so each answer leaves from the address its query came to) and the buffer sizes. */
static void set_serving_options(int fd, int type, const struct sockaddr_storage *addr,
				const struct zb_socket_options *options)
{
	int one = 1;

	if (type != SOCK_DGRAM)
		return;
	if (is_wildcard(addr)) {
		if (addr->ss_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		else
			setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	}
	/* The FORCE forms pass the system's limit (net.core.rmem_max, often 208 KiB) when the
	 * server may (CAP_NET_ADMIN, before the privileges go); else the size is capped there. */
	if (options->udp_rcvbuf &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &options->udp_rcvbuf, sizeof(int)) != 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &options->udp_rcvbuf, sizeof(int));
	if (options->udp_sndbuf &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &options->udp_sndbuf, sizeof(int)) != 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &options->udp_sndbuf, sizeof(int));
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
	set_serving_options(fd, type, addr, options);
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

/* Fill in a bound pair's description from its UDP socket's address. */
static void describe_pair(struct zb_socket pair[2], int udp_fd, int tcp_fd,
			  const struct sockaddr_storage *addr, socklen_t addr_len)
{
	for (int i = 0; i < 2; i++)
		pair[i] = (struct zb_socket){ .fd = i ? tcp_fd : udp_fd,
					      .kind = i ? ZB_SOCKET_TCP : ZB_SOCKET_UDP,
					      .wildcard = is_wildcard(addr),
					      .addr = *addr, .addr_len = addr_len };
}

int zb_listen(const char *spec, const struct zb_socket_options *options,
	      struct zb_socket pair[2], char *err, size_t err_len)
{
	struct sockaddr_storage asked;
	socklen_t addr_len;

	if (zb_parse_addr(spec, &asked, &addr_len) != 0) {
		snprintf(err, err_len, "bad listen address '%s' (ADDRESS:PORT or [IPV6]:PORT)", spec);
		return -1;
	}
	int any_port = *port_of(&asked) == 0;
	/* Port 0: the kernel picks the UDP port, and TCP takes the same one; should another
	 * program hold it for TCP, pick again. */
	for (int attempt = 0; attempt < 16; attempt++) {
		struct sockaddr_storage addr = asked;
		int udp_fd = bound_socket(SOCK_DGRAM, &addr, addr_len, options);
		if (udp_fd < 0)
			break;
		socklen_t len = sizeof(addr);
		getsockname(udp_fd, (struct sockaddr *)&addr, &len);
		int tcp_fd = bound_socket(SOCK_STREAM, &addr, addr_len, options);
		if (tcp_fd >= 0) {
			describe_pair(pair, udp_fd, tcp_fd, &addr, addr_len);
			return 0;
		}
		int saved = errno;
		close(udp_fd);
		errno = saved;
		if (!any_port || errno != EADDRINUSE) {
			snprintf(err, err_len, "%s: bind (tcp): %s", spec, strerror(errno));
			return -1;
		}
	}
	snprintf(err, err_len, "%s: bind: %s", spec, strerror(errno));
	return -1;
}

int zb_listen_again(const struct zb_socket first[2], const struct zb_socket_options *options,
		    struct zb_socket pair[2], char *err, size_t err_len)
{
	int udp_fd = bound_socket(SOCK_DGRAM, &first->addr, first->addr_len, options);
	int tcp_fd = udp_fd < 0 ? -1
				: bound_socket(SOCK_STREAM, &first->addr, first->addr_len, options);
	if (tcp_fd < 0) {
		snprintf(err, err_len, "bind for another worker: %s", strerror(errno));
		if (udp_fd >= 0)
			close(udp_fd);
		return -1;
	}
	describe_pair(pair, udp_fd, tcp_fd, &first->addr, first->addr_len);
	return 0;
}

int zb_adopt(int fd, const struct zb_socket_options *options, struct zb_socket *out,
	     char *err, size_t err_len)
{
	int type = 0, listening = 0;
	socklen_t len = sizeof(type);

	*out = (struct zb_socket){ .fd = fd, .addr_len = sizeof(out->addr) };
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) {
		snprintf(err, err_len, "descriptor %d: not a socket: %s", fd, strerror(errno));
		return -1;
	}
	len = sizeof(listening);
	if (getsockname(fd, (struct sockaddr *)&out->addr, &out->addr_len) != 0 ||
	    (out->addr.ss_family != AF_INET && out->addr.ss_family != AF_INET6)) {
		snprintf(err, err_len, "descriptor %d: not an IPv4 or IPv6 socket", fd);
		return -1;
	}
	if (type == SOCK_STREAM &&
	    (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)) {
		snprintf(err, err_len, "descriptor %d: a TCP socket that is not listening", fd);
		return -1;
	}
	if (type != SOCK_DGRAM && type != SOCK_STREAM) {
		snprintf(err, err_len, "descriptor %d: neither UDP nor TCP", fd);
		return -1;
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
		snprintf(err, err_len, "descriptor %d: %s", fd, strerror(errno));
		return -1;
	}
	out->kind = type == SOCK_DGRAM ? ZB_SOCKET_UDP : ZB_SOCKET_TCP;
	out->wildcard = is_wildcard(&out->addr);
	set_serving_options(fd, type, &out->addr, options);
	return 0;
}

int zb_same_address(const struct zb_socket *a, const struct zb_socket *b)
{
	if (a->addr.ss_family != b->addr.ss_family)
		return 0;
	if (a->addr.ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)&a->addr, *y = (const void *)&b->addr;
		return x->sin6_port == y->sin6_port &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
	}
	const struct sockaddr_in *x = (const void *)&a->addr, *y = (const void *)&b->addr;
	return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
}

void zb_format_addr(const struct zb_socket *s, char *buf, size_t len)
{
	zb_format_sockaddr(&s->addr, buf, len);
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

const char *zb_kind_name(int kind)
{
	return kind == ZB_SOCKET_UDP ? "udp" : "tcp";
}
