/*
 * sockets.h - listen addresses: parse `ADDRESS:PORT` / `[IPV6]:PORT`, bind a UDP socket and a
 * TCP listening socket on the same port.
 */
#ifndef ZB_SOCKETS_H
#define ZB_SOCKETS_H

#include <stddef.h>
#include <sys/socket.h>

struct zb_listener {
	int udp_fd;
	int tcp_fd;
	int wildcard; /* bound to 0.0.0.0 or ::: answers say which address they leave from */
	struct sockaddr_storage addr; /* as bound: the real port when 0 was asked for */
	socklen_t addr_len;
};

struct zb_socket_options {
	int udp_rcvbuf; /* bytes; 0: the system's default */
	int udp_sndbuf;
};

/* Parse and bind one listen address (SO_REUSEPORT: other workers bind it too). Returns 0,
 * or -1 with a message in `err`. */
int zb_listen(const char *spec, const struct zb_socket_options *options,
	      struct zb_listener *out, char *err, size_t err_len);

/* Bind the address another worker's listener has, port included, for this worker. */
int zb_listen_again(const struct zb_listener *first, const struct zb_socket_options *options,
		    struct zb_listener *out, char *err, size_t err_len);

/* Parse ADDRESS:PORT or [IPV6]:PORT. Returns 0, or -1 when it is not one. */
int zb_parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len);

/* Format a bound address as ADDRESS:PORT or [IPV6]:PORT. */
void zb_format_addr(const struct zb_listener *l, char *buf, size_t len);
void zb_format_sockaddr(const struct sockaddr_storage *addr, char *buf, size_t len);

#endif
