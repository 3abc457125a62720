/*
 * sockets.h - listening sockets: parse `ADDRESS:PORT` / `[IPV6]:PORT`, bind a UDP socket and a
 * TCP listening socket on the same port, or adopt one bound by someone else (the process a
 * swap takes over from, systemd).
 */
#ifndef ZB_SOCKETS_H
#define ZB_SOCKETS_H

#include <stddef.h>
#include <sys/socket.h>

enum zb_socket_kind { ZB_SOCKET_UDP, ZB_SOCKET_TCP };

/* One listening socket: a UDP socket or a TCP listener. */
struct zb_socket {
	int fd;
	int kind;       /* enum zb_socket_kind */
	int wildcard;   /* bound to 0.0.0.0 or ::: answers say which address they leave from */
	unsigned group; /* the how-manieth socket of its kind and address (SO_REUSEPORT: one per
			 * worker of the process that bound it); decides the worker reading it */
	int shared;     /* read by several workers (fewer groups than workers) */
	struct sockaddr_storage addr; /* as bound: the real port when 0 was asked for */
	socklen_t addr_len;
};

struct zb_socket_options {
	int udp_rcvbuf; /* bytes; 0: the system's default */
	int udp_sndbuf;
};

/* Parse and bind one listen address: pair[0] UDP, pair[1] TCP (SO_REUSEPORT: other workers
 * bind it too). Returns 0, or -1 with a message in `err`. */
int zb_listen(const char *spec, const struct zb_socket_options *options,
	      struct zb_socket pair[2], char *err, size_t err_len);

/* Bind the address another worker's pair has, port included, for this worker. */
int zb_listen_again(const struct zb_socket first[2], const struct zb_socket_options *options,
		    struct zb_socket pair[2], char *err, size_t err_len);

/* Take a socket bound by someone else: its kind from SO_TYPE (a TCP one must be listening),
 * its address from getsockname; make it non-blocking and close-on-exec, and set what
 * zb_listen would have (packet info on a wildcard UDP socket, buffer sizes). Returns 0, or -1
 * with a message in `err`. */
int zb_adopt(int fd, const struct zb_socket_options *options, struct zb_socket *out,
	     char *err, size_t err_len);

/* Whether two sockets are bound to the same address and port. */
int zb_same_address(const struct zb_socket *a, const struct zb_socket *b);

/* Parse ADDRESS:PORT or [IPV6]:PORT. Returns 0, or -1 when it is not one. */
int zb_parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len);

/* Format a bound address as ADDRESS:PORT or [IPV6]:PORT. */
void zb_format_addr(const struct zb_socket *s, char *buf, size_t len);
void zb_format_sockaddr(const struct sockaddr_storage *addr, char *buf, size_t len);

/* "udp" or "tcp". */
const char *zb_kind_name(int kind);

#endif
