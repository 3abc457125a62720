/*
 * metrics.c - the statistics over HTTP/1.0, for Prometheus and for people with curl.
 *
 * Deliberately small: one thread, one connection at a time, read until the end of the
 * request's headers (at most ZB_HTTP_REQUEST_MAX octets), answer, close, all within
 * ZB_HTTP_DEADLINE_MS. A client that sends too much, too slowly or nonsense gets an error
 * status or is cut off; it can delay the next scrape by at most that and never affects DNS, which
 * runs in the workers' threads. This thread may allocate, format and ask the time: it is not
 * the query path.
 */
#define _GNU_SOURCE /* accept4 */
#include "ops/metrics.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ops/log.h"
#include "ops/stats.h"
#include "server/threads.h"
#include "transport/descriptors.h"
#include "transport/sockets.h"

#define ZB_HTTP_REQUEST_MAX 4096 /* request line and headers; a scrape sends a few hundred */
/* For a whole connection: the request, the answer and the close. A scrape over loopback or
 * a LAN takes milliseconds; a client trickling bytes holds the thread no longer than this. */
#define ZB_HTTP_DEADLINE_MS 1000
#define ZB_HTTP_DRAIN_MAX 65536  /* unread request octets swallowed before closing */

int zb_metrics_bind(struct zb_metrics *m, const char *spec, char *err, size_t err_len)
{
	socklen_t len;
	int one = 1;

	*m = (struct zb_metrics){ .listen_fd = -1, .stop_fd = -1 };
	if (zb_parse_addr(spec, &m->addr, &len) != 0) {
		snprintf(err, err_len, "bad --metrics address '%s' (ADDRESS:PORT or [IPV6]:PORT)",
			 spec);
		return -1;
	}
	m->listen_fd = socket(m->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (m->listen_fd < 0 ||
	    setsockopt(m->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(m->listen_fd, (struct sockaddr *)&m->addr, len) != 0 ||
	    listen(m->listen_fd, 16) != 0 ||
	    getsockname(m->listen_fd, (struct sockaddr *)&m->addr, &len) != 0) {
		snprintf(err, err_len, "--metrics %s: %s", spec, strerror(errno));
		return -1;
	}
	return 0;
}

int zb_metrics_adopt(struct zb_metrics *m, int fd, const char *spec, char *err,
		     size_t err_len)
{
	struct zb_socket wanted = { 0 }, handed = { .addr_len = sizeof(handed.addr) };

	if (zb_parse_addr(spec, &wanted.addr, &wanted.addr_len) == 0 &&
	    getsockname(fd, (struct sockaddr *)&handed.addr, &handed.addr_len) == 0) {
		/* Port 0 asked for any port: the one already bound is as good. */
		if (wanted.addr.ss_family == handed.addr.ss_family) {
			if (wanted.addr.ss_family == AF_INET6)
				((struct sockaddr_in6 *)&wanted.addr)->sin6_port =
					((struct sockaddr_in6 *)&wanted.addr)->sin6_port ?:
					((struct sockaddr_in6 *)&handed.addr)->sin6_port;
			else
				((struct sockaddr_in *)&wanted.addr)->sin_port =
					((struct sockaddr_in *)&wanted.addr)->sin_port ?:
					((struct sockaddr_in *)&handed.addr)->sin_port;
		}
		if (zb_same_address(&wanted, &handed)) {
			*m = (struct zb_metrics){ .listen_fd = fd, .stop_fd = -1, .addr = handed.addr };
			return 0;
		}
	}
	close(fd);
	return zb_metrics_bind(m, spec, err, err_len);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for `events` on fd until `deadline` (now_ms). Returns 1 when ready, 0 otherwise. */
static int wait_for(int fd, short events, long long deadline)
{
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = { .fd = fd, .events = events };
		int n = poll(&p, 1, (int)left);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return 0;
	}
}

static int send_all(int fd, const char *data, size_t len, long long deadline)
{
	while (len) {
		if (!wait_for(fd, POLLOUT, deadline))
			return -1;
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (n > 0) {
			data += n;
			len -= (size_t)n;
		}
	}
	return 0;
}

enum { ZB_HTTP_GONE = -1, ZB_HTTP_TOO_LONG = -2, ZB_HTTP_JUNK = -3 };

/* Read until the blank line that ends the headers. Returns the request's length (its end
 * NUL-terminated), or ZB_HTTP_GONE when the client went away or was too slow,
 * ZB_HTTP_TOO_LONG, ZB_HTTP_JUNK. */
static ssize_t read_request(int fd, char *req, size_t cap, long long deadline)
{
	size_t len = 0;

	while (len < cap - 1) {
		if (!wait_for(fd, POLLIN, deadline))
			return ZB_HTTP_GONE;
		ssize_t n = recv(fd, req + len, cap - 1 - len, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return ZB_HTTP_GONE;
		if (n < 0)
			continue;
		len += (size_t)n;
		req[len] = 0;
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			return (ssize_t)len;
		if (strlen(req) != len)
			return ZB_HTTP_JUNK; /* a NUL: no real client sends one */
	}
	return ZB_HTTP_TOO_LONG;
}

/* Format the statistics into the thread's body buffer, growing it until they fit. */
static const char *format_body(struct zb_metrics *m,
			       size_t (*format)(const struct zb_server *, char *, size_t),
			       size_t *len)
{
	for (;;) {
		*len = format(m->server, m->body, m->body_cap);
		if (*len < m->body_cap)
			return m->body;
		char *bigger = realloc(m->body, *len + 4096);
		if (!bigger)
			return NULL;
		m->body = bigger;
		m->body_cap = *len + 4096;
	}
}

static void respond(int fd, int status, const char *reason, const char *type, const char *body,
		    size_t body_len, int head_only, long long deadline)
{
	char header[256];
	int n = snprintf(header, sizeof(header),
			 "HTTP/1.0 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
			 "Connection: close\r\n\r\n",
			 status, reason, type, body_len, status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (send_all(fd, header, (size_t)n, deadline) == 0 && !head_only)
		send_all(fd, body, body_len, deadline);
}

static void http_error(int fd, int status, const char *reason, long long deadline)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, reason);
	respond(fd, status, reason, "text/plain; charset=utf-8", body, (size_t)n, 0, deadline);
}

/* One request: `METHOD TARGET HTTP/x.y`, headers ignored. */
static void serve(struct zb_metrics *m, int fd, long long deadline)
{
	char req[ZB_HTTP_REQUEST_MAX];
	ssize_t len = read_request(fd, req, sizeof(req), deadline);

	if (len == ZB_HTTP_GONE)
		return;
	if (len == ZB_HTTP_TOO_LONG) {
		http_error(fd, 431, "Request Header Fields Too Large", deadline);
		return;
	}
	char *line_end = req + strcspn(req, "\r\n");
	*line_end = 0;
	char *method = req, *target = strchr(req, ' ');
	char *version = target ? strchr(target + 1, ' ') : NULL;
	if (len == ZB_HTTP_JUNK || !target || !version || strncmp(version + 1, "HTTP/", 5) != 0 ||
	    target[1] != '/') {
		http_error(fd, 400, "Bad Request", deadline);
		return;
	}
	*target++ = 0;
	*version = 0;
	int head = strcmp(method, "HEAD") == 0;
	if (!head && strcmp(method, "GET") != 0) {
		http_error(fd, 405, "Method Not Allowed", deadline);
		return;
	}
	target[strcspn(target, "?")] = 0; /* a query string changes nothing */
	size_t (*format)(const struct zb_server *, char *, size_t) = NULL;
	const char *type = NULL;
	if (strcmp(target, "/metrics") == 0) {
		format = zb_stats_prometheus;
		type = "text/plain; version=0.0.4; charset=utf-8";
	} else if (strcmp(target, "/stats.json") == 0) {
		format = zb_stats_json;
		type = "application/json";
	}
	if (!format) {
		http_error(fd, 404, "Not Found", deadline);
		return;
	}
	size_t body_len;
	const char *body = format_body(m, format, &body_len);
	if (!body)
		http_error(fd, 503, "Service Unavailable", deadline);
	else
		respond(fd, 200, "OK", type, body, body_len, head, deadline);
}

/* Close without losing the response: were unread request octets left, close() would reset
 * the connection and the client could lose what we sent. */
static void finish(int fd, long long deadline)
{
	char sink[4096];

	shutdown(fd, SHUT_WR);
	for (size_t drained = 0; drained < ZB_HTTP_DRAIN_MAX && wait_for(fd, POLLIN, deadline);) {
		ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
		if (n > 0)
			drained += (size_t)n;
	}
	close(fd);
}

static void *run(void *arg)
{
	struct zb_metrics *m = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = m->listen_fd, .events = POLLIN },
				       { .fd = m->stop_fd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		int fd = accept4(m->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) { /* gone before we took it, or out of descriptors: try later */
			if (zb_accept_exhausted(errno))
				zb_accept_backoff(m->stop_fd);
			continue;
		}
		long long deadline = now_ms() + ZB_HTTP_DEADLINE_MS;
		serve(m, fd, deadline);
		finish(fd, deadline);
	}
	return NULL;
}

int zb_metrics_start(struct zb_metrics *m, const struct zb_server *server)
{
	m->server = server;
	m->stop_fd = server->stop_fd;
	int failed = zb_start_helper_thread(&m->thread, run, m);
	if (failed) {
		zb_log_error("cannot start the metrics thread: %s", strerror(failed));
		return -1;
	}
	m->started = 1;
	return 0;
}

void zb_metrics_stop(struct zb_metrics *m)
{
	if (m->started)
		pthread_join(m->thread, NULL);
	m->started = 0;
	if (m->listen_fd >= 0)
		close(m->listen_fd);
	m->listen_fd = -1;
	free(m->body);
	m->body = NULL;
	m->body_cap = 0;
}
