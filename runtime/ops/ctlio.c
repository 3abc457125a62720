/*
 * ctlio.c - lines and descriptors over the control socket (see ctlio.h). Control traffic is
 * rare and short, so lines are read one byte at a time: a descriptor arrives with the byte it
 * was sent with, and reading byte by byte never takes the next line's descriptor early.
 */
#include "ops/ctlio.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int zb_ctl_send(int conn, const char *line, int fd)
{
	size_t len = strlen(line);
	struct iovec iov = { (void *)line, len };
	union {
		struct cmsghdr align;
		char bytes[CMSG_SPACE(sizeof(int))];
	} control;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		memset(&control, 0, sizeof(control));
		msg.msg_control = control.bytes;
		msg.msg_controllen = sizeof(control.bytes);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (iov.iov_len) {
		ssize_t n = sendmsg(conn, &msg, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		/* The descriptor went with the first byte sent. */
		msg.msg_control = NULL;
		msg.msg_controllen = 0;
		iov.iov_base = (char *)iov.iov_base + n;
		iov.iov_len -= (size_t)n;
	}
	return 0;
}

int zb_ctl_sendf(int conn, const char *format, ...)
{
	char line[ZB_CONTROL_LINE_MAX];
	va_list args;

	va_start(args, format);
	int n = vsnprintf(line, sizeof(line) - 1, format, args);
	va_end(args);
	if (n < 0 || (size_t)n >= sizeof(line) - 1) {
		errno = EMSGSIZE;
		return -1;
	}
	line[n] = '\n';
	line[n + 1] = 0;
	return zb_ctl_send(conn, line, -1);
}

/* Keep the first descriptor of a control message in *fd; close any other. */
static void take_descriptors(struct msghdr *msg, int *fd)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count; i++) {
			int received;
			memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd && *fd < 0)
				*fd = received;
			else
				close(received);
		}
	}
}

/* Wait at most until `deadline` (CLOCK_MONOTONIC seconds; 0: no deadline) and `quiet`
 * seconds for the next octet. Returns 0, or -1 with errno ETIMEDOUT when it has passed. */
static int next_wait(int conn, time_t deadline, int quiet)
{
	if (!deadline)
		return 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec >= deadline) {
		errno = ETIMEDOUT;
		return -1;
	}
	time_t left = deadline - now.tv_sec;
	struct timeval limit = { .tv_sec = left < quiet ? left : quiet };
	setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	return 0;
}

int zb_ctl_read_line(int conn, char *line, size_t size, int *fd)
{
	return zb_ctl_read_line_by(conn, line, size, fd, 0, 0);
}

int zb_ctl_read_line_by(int conn, char *line, size_t size, int *fd, time_t deadline, int quiet)
{
	size_t len = 0;

	if (fd)
		*fd = -1;
	for (;;) {
		if (next_wait(conn, deadline, quiet) != 0)
			break;
		char byte;
		union {
			struct cmsghdr align;
			char bytes[CMSG_SPACE(4 * sizeof(int))];
		} control;
		struct iovec iov = { &byte, 1 };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = control.bytes,
				      .msg_controllen = sizeof(control.bytes) };
		ssize_t n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = 0;
			break;
		}
		take_descriptors(&msg, fd);
		if (byte == '\n') {
			line[len] = 0;
			return 0;
		}
		if (len + 1 >= size) {
			errno = EMSGSIZE;
			break;
		}
		line[len++] = byte;
	}
	if (fd && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return -1;
}

const char *zb_ctl_why(void)
{
	return errno ? strerror(errno) : "connection closed";
}

void zb_ctl_timeouts(int conn, int seconds)
{
	struct timeval limit = { .tv_sec = seconds };
	setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
}

int zb_ctl_connect(const char *path, char *err, size_t err_len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char reply[ZB_CONTROL_LINE_MAX], expected[64];

	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, err_len, "%s: path too long for a Unix socket", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	int conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (conn < 0 || connect(conn, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		snprintf(err, err_len, "cannot connect to %s: %s", path, strerror(errno));
		if (conn >= 0)
			close(conn);
		return -1;
	}
	zb_ctl_timeouts(conn, 10);
	snprintf(expected, sizeof(expected), "ok zonebake-control %d", ZB_CONTROL_VERSION);
	if (zb_ctl_sendf(conn, "zonebake-control %d", ZB_CONTROL_VERSION) != 0 ||
	    zb_ctl_read_line(conn, reply, sizeof(reply), NULL) != 0) {
		snprintf(err, err_len, "%s: no greeting: %s", path, zb_ctl_why());
		close(conn);
		return -1;
	}
	if (strcmp(reply, expected) != 0) {
		snprintf(err, err_len, "%s answers '%s' to zonebake-control %d", path, reply,
			 ZB_CONTROL_VERSION);
		close(conn);
		return -1;
	}
	return conn;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int zb_ctl_parse_hex(const char *text, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hex_digit(text[2 * i]), lo = hi < 0 ? -1 : hex_digit(text[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return text[2 * n] == '\0' ? 0 : -1;
}
