/*
 * activation.c - take the sockets systemd passed (see activation.h). Which socket is which
 * is read from the sockets themselves (SO_TYPE, getsockname), so LISTEN_FDNAMES is not needed
 * and the .socket unit may list them in any order.
 */
#include "transport/activation.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZB_LISTEN_FDS_START 3
#define ZB_ACTIVATION_MAX 1024

int zb_activation_sockets(const struct zb_socket_options *options, struct zb_socket **sockets,
			  char *err, size_t err_len)
{
	const char *pid_text = getenv("LISTEN_PID"), *fds_text = getenv("LISTEN_FDS");
	char *end;

	if (!pid_text || !fds_text)
		return 0;
	long pid = strtol(pid_text, &end, 10);
	if (*end || pid != (long)getpid())
		return 0; /* meant for another process (a parent that exec'd us without clearing) */
	long n = strtol(fds_text, &end, 10);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (*end || n < 1 || n > ZB_ACTIVATION_MAX) {
		snprintf(err, err_len, "LISTEN_FDS=%s: not a number of sockets", fds_text);
		return -1;
	}
	*sockets = calloc((size_t)n, sizeof(**sockets));
	if (!*sockets) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	for (long i = 0; i < n; i++) {
		char why[200];
		if (zb_adopt(ZB_LISTEN_FDS_START + (int)i, options, &(*sockets)[i], why,
			     sizeof(why)) != 0) {
			snprintf(err, err_len, "socket activation: %s", why);
			free(*sockets);
			return -1;
		}
	}
	return (int)n;
}
