/*
 * worker.c - one worker's epoll loop: UDP sockets and AF_XDP queues are drained in batches,
 * TCP listeners accept, connections read and write, and a timerfd advances the coarse clocks that expire
 * idle TCP connections, refill rate limiting's buckets and stamp cookies, so the query path
 * itself never asks the time.
 */
#include "server/worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "ops/log.h"
#include "transport/tcp.h"
#include "transport/udp.h"

enum { ZB_EVENT_UDP = 1, ZB_EVENT_LISTEN = 2, ZB_EVENT_TIMER = 4, ZB_EVENT_STOP = 5,
       ZB_EVENT_XDP = 6, ZB_EVENT_XDP_GO = 7 };
/* 3 is ZB_EVENT_CONN */

static int watch(int epfd, int fd, uint32_t kind, uint32_t index, uint32_t flags)
{
	struct epoll_event ev = { .events = EPOLLIN | flags,
				  .data.u64 = (uint64_t)kind << 32 | index };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int one_second_timer(void)
{
	struct itimerspec every_second = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

	if (fd >= 0 && timerfd_settime(fd, 0, &every_second, NULL) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint32_t socket_flags(const struct zb_socket *s)
{
	return s->shared ? EPOLLEXCLUSIVE : 0; /* read by other workers too: wake one, not all */
}

/* Out of descriptors: the pending connection stays queued and the listener readable, so it
 * leaves the epoll set until the next tick instead of waking the worker again at once. */
static void pause_listener(const struct zb_worker *w, int epfd, unsigned index, uint8_t *paused)
{
	int err = errno;
	if (paused[index] || epoll_ctl(epfd, EPOLL_CTL_DEL, w->sockets[index].fd, NULL) != 0)
		return;
	paused[index] = 1;
	zb_log_warning("worker %u: cannot accept a TCP connection: %s; trying again in a second",
	       w->index, strerror(err));
}

static void resume_listeners(const struct zb_worker *w, int epfd, uint8_t *paused)
{
	for (unsigned i = 0; i < w->nsockets; i++)
		if (paused[i] && watch(epfd, w->sockets[i].fd, ZB_EVENT_LISTEN, i,
				       socket_flags(&w->sockets[i])) == 0)
			paused[i] = 0;
}

/*
 * A UDP socket that stays full is read round after round with epoll not watching it: while
 * it is in the epoll set, every datagram that comes in and every answer the kernel lets go
 * wakes the socket's wait queue, and epoll's callback takes its lock, interrupts off, for
 * each of them, whether or not the worker waits (a bare recvmmsg/sendmmsg loop pays none of
 * it). So when a read stops with every batch full, the socket leaves the set, and the event
 * loop polls the set without waiting and reads the socket again after each round of events,
 * until a read finds it empty: then it goes back (level-triggered: a datagram that came in
 * meanwhile is reported at once).
 */
struct busy_udp {
	uint8_t *set_aside;  /* by socket index */
	unsigned count;
};

static void read_udp(const struct zb_worker *w, int epfd, struct zb_udp *udp,
		     struct busy_udp *busy, uint32_t index)
{
	const struct zb_socket *s = &w->sockets[index];
	int full = zb_udp_drain(udp, s->fd, s->wildcard);
	if (full && !busy->set_aside[index]) {
		if (epoll_ctl(epfd, EPOLL_CTL_DEL, s->fd, NULL) == 0) {
			busy->set_aside[index] = 1;
			busy->count++;
		}
	} else if (!full && busy->set_aside[index] &&
		   watch(epfd, s->fd, ZB_EVENT_UDP, index, socket_flags(s)) == 0) {
		busy->set_aside[index] = 0; /* else read on as it is: it is not lost */
		busy->count--;
	}
}

static void read_set_aside(const struct zb_worker *w, int epfd, struct zb_udp *udp,
			   struct busy_udp *busy)
{
	for (uint32_t i = 0; busy->count && i < w->nsockets; i++)
		if (busy->set_aside[i])
			read_udp(w, epfd, udp, busy, i);
}

/* Stopping (SIGTERM, or a successor that reads the sockets now): the connections this worker
 * holds are served until each client has closed it or it has been quiet for DRAIN_QUIET_MS,
 * DRAIN_MS at most, so that a query that came on a connection accepted just before the stop
 * is answered, not reset; the listeners and UDP sockets are not read any more (RFC 7766
 * §6.2.3: the server closes connections, after what they hold). */
#define DRAIN_QUIET_MS 200
#define DRAIN_MS 2000

static void drain_connections(const struct zb_worker *w, int epfd, int timer, struct zb_tcp *tcp)
{
	for (unsigned i = 0; i < w->nsockets; i++)
		epoll_ctl(epfd, EPOLL_CTL_DEL, w->sockets[i].fd, NULL);
	epoll_ctl(epfd, EPOLL_CTL_DEL, w->stop_fd, NULL);
	epoll_ctl(epfd, EPOLL_CTL_DEL, timer, NULL);
	for (int waited = 0; tcp->nconns > 0 && waited < DRAIN_MS; waited += DRAIN_QUIET_MS) {
		struct epoll_event events[64];
		int ready = epoll_wait(epfd, events, 64, DRAIN_QUIET_MS);
		if (ready == 0)
			return; /* every connection quiet: nothing more is coming */
		for (int i = 0; i < ready; i++)
			if ((uint32_t)(events[i].data.u64 >> 32) == ZB_EVENT_CONN)
				zb_tcp_event(tcp, (uint32_t)events[i].data.u64, events[i].events);
	}
}

/* Watch this worker's AF_XDP queues. An AF_XDP queue stays in the set when it is full
 * (level-triggered: reported again at once): its socket is woken once per batch the driver
 * hands over, not per frame. */
static int serve_xdp(const struct zb_worker *w, int epfd, int *serving)
{
	for (unsigned i = 0; i < w->nxdp; i++)
		if (watch(epfd, w->xdp[i].xsk.fd, ZB_EVENT_XDP, i, 0) != 0)
			return -1;
	*serving = 1;
	return 0;
}

/* Full drains of an AF_XDP queue at a stop, at most: more than its RX ring holds. */
#define ZB_XDP_FINAL_ROUNDS 64

static void *fail(const struct zb_worker *w, const char *what)
{
	zb_log_warning("worker %u: %s: %s", w->index, what, strerror(errno));
	return (void *)1;
}

void *zb_worker_run(void *arg)
{
	struct zb_worker *w = arg;
	const struct zb_server_options *options = w->options;
	struct zb_tcp tcp;
	struct zb_udp udp;
	struct zb_xdp_batch xdp = { 0 };
	struct zb_cookies *cookies = malloc(sizeof(*cookies));

	int epfd = epoll_create1(EPOLL_CLOEXEC);
	int timer = one_second_timer();
	uint8_t *paused = calloc(w->nsockets ? w->nsockets : 1, 1); /* listeners left out */
	struct busy_udp busy = { calloc(w->nsockets ? w->nsockets : 1, 1), 0 };
	if (!paused || !busy.set_aside || !cookies)
		return fail(w, "buffers");
	zb_cookies_init(cookies, options->cookie_secret);
	if (epfd < 0 || timer < 0 || watch(epfd, timer, ZB_EVENT_TIMER, 0, 0) != 0 ||
	    watch(epfd, w->stop_fd, ZB_EVENT_STOP, 0, 0) != 0)
		return fail(w, "event loop");
	if (zb_tcp_init(&tcp, w->zs, &w->stats, cookies, epfd, options->tcp_idle_timeout,
			options->tcp_max_connections,
			options->tcp_max_connections_per_source) != 0 ||
	    zb_udp_init(&udp, w->zs, &w->stats, cookies, &options->rrl, options->batch) != 0)
		return fail(w, "buffers");
	for (unsigned i = 0; i < w->nsockets; i++) {
		uint32_t kind = w->sockets[i].kind == ZB_SOCKET_UDP ? ZB_EVENT_UDP : ZB_EVENT_LISTEN;
		if (watch(epfd, w->sockets[i].fd, kind, i, socket_flags(&w->sockets[i])) != 0)
			return fail(w, "epoll");
	}
	if (w->nxdp && zb_xdp_batch_init(&xdp, &w->stats, &udp.rrl, cookies, options->batch) != 0)
		return fail(w, "buffers");
	/* Queues handed over by a swap wait until the old process has let go of their rings. */
	int xdp_serving = 0;
	if (w->nxdp && (w->xdp_go_fd >= 0 ? watch(epfd, w->xdp_go_fd, ZB_EVENT_XDP_GO, 0, 0)
					  : serve_xdp(w, epfd, &xdp_serving)) != 0)
		return fail(w, "epoll");
	/* From here on every socket of this worker is read: a takeover may tell the old
	 * process to stop reading once all workers said so. */
	uint64_t one = 1;
	if (write(w->ready_fd, &one, sizeof(one)) != sizeof(one))
		return fail(w, "ready");

	for (int stopping = 0; !stopping;) {
		struct epoll_event events[64];
		int ready = epoll_wait(epfd, events, 64, busy.count ? 0 : -1);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			return fail(w, "epoll_wait");
		}
		for (int i = 0; i < ready; i++) {
			uint32_t kind = (uint32_t)(events[i].data.u64 >> 32);
			uint32_t index = (uint32_t)events[i].data.u64;
			switch (kind) {
			case ZB_EVENT_UDP:
				read_udp(w, epfd, &udp, &busy, index);
				break;
			case ZB_EVENT_XDP:
				zb_xdp_drain(&xdp, &w->xdp[index]);
				break;
			case ZB_EVENT_XDP_GO:
				epoll_ctl(epfd, EPOLL_CTL_DEL, w->xdp_go_fd, NULL);
				for (unsigned q = 0; q < w->nxdp; q++)
					zb_xsk_resume(&w->xdp[q].xsk);
				if (serve_xdp(w, epfd, &xdp_serving) != 0)
					return fail(w, "epoll");
				break;
			case ZB_EVENT_LISTEN:
				if (zb_tcp_accept(&tcp, w->sockets[index].fd) != 0)
					pause_listener(w, epfd, index, paused);
				break;
			case ZB_EVENT_CONN:
				zb_tcp_event(&tcp, index, events[i].events);
				break;
			case ZB_EVENT_STOP:
				/* Every event of this round is handled; then no more reading. */
				stopping = 1;
				break;
			case ZB_EVENT_TIMER: {
				uint64_t expirations = 0;
				if (read(timer, &expirations, sizeof(expirations)) == sizeof(expirations)) {
					zb_tcp_tick(&tcp, (uint32_t)expirations);
					udp.rrl.now += (uint32_t)expirations;
					zb_cookies_tick(cookies);
					for (unsigned q = 0; xdp_serving && q < w->nxdp; q++)
						zb_xdp_tend(&w->xdp[q]);
					if (options->tick)
						options->tick();
				}
				resume_listeners(w, epfd, paused);
				break;
			}
			}
		}
		if (!stopping)
			read_set_aside(w, epfd, &udp, &busy);
		const struct zb_zoneset *now = __atomic_load_n(w->zs_now, __ATOMIC_ACQUIRE);
		if (__builtin_expect(now != udp.zs, 0)) {
			udp.zs = tcp.zs = now;
			for (unsigned q = 0; q < w->nxdp; q++)
				zb_xdp_queue_rezone(&w->xdp[q], now);
		}
	}
	/* What the AF_XDP queues hold is answered: at a swap the successor steered the queues
	 * to its own sockets before it asked this one to stop, so nothing more comes here. */
	for (unsigned q = 0; xdp_serving && q < w->nxdp; q++)
		for (int rounds = 0; rounds < ZB_XDP_FINAL_ROUNDS && zb_xdp_drain(&xdp, &w->xdp[q]);
		     rounds++)
			;
	drain_connections(w, epfd, timer, &tcp);
	zb_tcp_finish(&tcp);
	zb_udp_free(&udp);
	zb_xdp_batch_free(&xdp);
	free(cookies);
	free(paused);
	free(busy.set_aside);
	close(timer);
	close(epfd);
	return NULL;
}
