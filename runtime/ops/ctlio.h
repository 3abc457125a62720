/*
 * ctlio.h - the control socket's wire: lines of text over a Unix stream socket, some with
 * file descriptors attached (SCM_RIGHTS). Both ends use it: the serving process (control.c)
 * and the process taking over from it (takeover.c).
 *
 * The protocol (version 1), each line ending in "\n":
 *   client: zonebake-control 1             server: ok zonebake-control 1 | error ...
 *   client: status                         server: ok pid=P workers=N sockets=S
 *   client: stats                          server: ok {JSON: the statistics, stats.c}
 *   client: cookie-secret                  server: ok HEX  (32 digits: the DNS cookie secret,
 *                                                  for a successor)
 *   client: takeover                       server: socket udp|tcp ADDRESS:PORT  (one per
 *                                                  listening socket, its descriptor attached)
 *                                          server: socket metrics ADDRESS:PORT  (the --metrics
 *                                                  listener, if any, likewise)
 *                                          server: ok sockets=S  (S: the udp and tcp ones)
 *   client: stop-reading (only after takeover, once the client reads every socket)
 *                                          server: ok stopping
 *                                          server: done  (its workers have finished)
 * An unknown command gets "error ..." and the conversation goes on.
 */
#ifndef ZB_CTLIO_H
#define ZB_CTLIO_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ZB_CONTROL_VERSION 1
#define ZB_CONTROL_LINE_MAX 512

/* Send `line` (ending in "\n") with descriptor `fd` attached, or none if fd is -1. Returns
 * 0, or -1 with errno set. */
int zb_ctl_send(int conn, const char *line, int fd);

/* Send a formatted line; "\n" is added. Returns 0, or -1. */
int zb_ctl_sendf(int conn, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Read one line into `line` (without its "\n"). A descriptor that came with it is stored
 * in *fd (else -1; pass NULL to close any). Returns 0, or -1: errno set, or 0 when the
 * peer closed the connection (see zb_ctl_why). */
int zb_ctl_read_line(int conn, char *line, size_t size, int *fd);

/* The same, given up when CLOCK_MONOTONIC passes `deadline` (seconds) or the peer is silent
 * for `quiet` seconds, whichever comes first (errno ETIMEDOUT or EAGAIN): a peer that sends
 * an octet now and then is cut off all the same. */
int zb_ctl_read_line_by(int conn, char *line, size_t size, int *fd, time_t deadline, int quiet);

/* Why the last call failed, for a message: strerror(errno), or "connection closed". */
const char *zb_ctl_why(void);

/* Give up on a silent peer after `seconds` in any one read or write. */
void zb_ctl_timeouts(int conn, int seconds);

/* Connect to the control socket at `path` and greet it (version check). Returns the
 * connection, or -1 with a message in `err`. */
int zb_ctl_connect(const char *path, char *err, size_t err_len);

/* `n` octets from 2n hexadecimal digits and nothing more. Returns 0, or -1. */
int zb_ctl_parse_hex(const char *text, uint8_t *out, size_t n);

#endif
