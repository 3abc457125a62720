/*
 * descriptors.c - running out of file descriptors (see descriptors.h).
 */
#include "transport/descriptors.h"

#include <errno.h>
#include <poll.h>
#include <sys/resource.h>

/* Beyond the connections and the listeners: epoll, eventfds, timers, the control and
 * metrics sockets and their connections, the log. */
#define ZB_DESCRIPTORS_SPARE 64

unsigned long zb_descriptors_needed(unsigned threads, unsigned max_conns, unsigned sockets)
{
	return (unsigned long)threads * (max_conns + 4) + sockets + ZB_DESCRIPTORS_SPARE;
}

unsigned long zb_raise_descriptor_limit(unsigned long need)
{
	struct rlimit limit;
	if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
		return need; /* cannot tell: say nothing */
	if (limit.rlim_cur >= need)
		return limit.rlim_cur;
	rlim_t was = limit.rlim_cur;
	limit.rlim_cur = limit.rlim_max == RLIM_INFINITY || limit.rlim_max >= need
		? need : limit.rlim_max;
	if (limit.rlim_cur > was && setrlimit(RLIMIT_NOFILE, &limit) != 0)
		limit.rlim_cur = was;
	return limit.rlim_cur;
}

int zb_accept_exhausted(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

void zb_accept_backoff(int stop_fd)
{
	struct pollfd p = { .fd = stop_fd, .events = POLLIN };
	poll(&p, 1, 100);
}
