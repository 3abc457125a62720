/*
 * notify.c - sd_notify spoken directly (see notify.h): $NOTIFY_SOCKET is a path, or an
 * abstract socket when it starts with '@' (sd_notify(3)).
 */
#include "ops/notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ops/log.h"

static int notify_fd = -1;

void zb_notify_open(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t len = path ? strlen(path) : 0;

	if (len == 0)
		return;
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(addr.sun_path)) {
		zb_log_warning("NOTIFY_SOCKET=%s is not a socket path; systemd is not told when "
		       "this server is ready", path);
		return;
	}
	memcpy(addr.sun_path, path, len);
	if (path[0] == '@')
		addr.sun_path[0] = 0;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) != 0) {
		zb_log_warning("NOTIFY_SOCKET %s: %s; systemd is not told when this server is "
		       "ready", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	notify_fd = fd;
}

void zb_notify(const char *format, ...)
{
	char line[128];
	va_list args;

	if (notify_fd < 0)
		return;
	va_start(args, format);
	int n = vsnprintf(line, sizeof(line), format, args);
	va_end(args);
	if (n > 0 && send(notify_fd, line, (size_t)n, MSG_NOSIGNAL) != n)
		zb_log_warning("cannot tell systemd %s: %s", line, strerror(errno));
}
