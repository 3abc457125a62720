/*
 * xdp_reflector.c - the AF_XDP path's floor, as reflector.c is the sockets': every UDP frame
 * to the port is sent back where it came from, in place, by the runtime's own XDP program and
 * AF_XDP sockets (runtime/transport/xdp/); everything else stays with the kernel. No DNS
 * server answers faster over AF_XDP than this; the difference to it is a server's own work.
 *
 *   xdp_reflector [-q QUEUES] [-c FIRST_CPU] [-g] [-C] IFACE PORT
 *
 * -q: the queues to serve (default: all the interface has), one thread each; -c: pin the
 * thread of queue i to CPU FIRST_CPU + i (default: no pinning); -g: the generic XDP mode;
 * -C: copy mode, even where the driver has zero-copy. It prints one line when it is ready,
 * nothing per packet, and on SIGTERM or SIGINT detaches the program, prints what it reflected
 * and exits 0.
 *
 * A reflected frame keeps its checksums without recomputing them. The IPv4 header checksum
 * and the UDP checksum are ones' complement sums of 16-bit words, and addition commutes:
 * swapping the source and destination addresses (in the header, and in the pseudo-header the
 * UDP checksum covers) and the two ports moves words around without changing their sum. The
 * TTL or hop limit is left as it came. (A sender that leaves its UDP checksum to the
 * interface's offload, as a veth does by default, sends a partial one: that stays partial.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/xdp/program.h"
#include "transport/xdp/queues.h"
#include "transport/xdp/xsk.h"

#define BATCH 64
/* How long an idle thread sleeps in poll before it looks at the stop flag again. */
#define IDLE_MS 100

struct worker {
	struct zb_xsk xsk;
	pthread_t thread;
	int cpu; /* -1: not pinned */
	unsigned long reflected, dropped;
};

static int stopping;

static void swap(uint8_t *a, uint8_t *b, size_t n)
{
	uint8_t t[16];
	memcpy(t, a, n);
	memcpy(a, b, n);
	memcpy(b, t, n);
}

/* Swap the MAC addresses, the IP addresses and the UDP ports of a frame the XDP program
 * steered here (Ethernet, an optional tag, IPv4 or IPv6, UDP). Returns 0 where the frame is
 * shorter than its headers say. */
static int reflect(uint8_t *frame, uint32_t len)
{
	size_t l3 = 14;
	if (len < l3)
		return 0;
	unsigned type = (unsigned)frame[12] << 8 | frame[13];
	if (type == 0x8100 || type == 0x88a8) {
		l3 += 4;
		if (len < l3)
			return 0;
		type = (unsigned)frame[16] << 8 | frame[17];
	}
	size_t l4;
	if (type == 0x0800) {
		if (len < l3 + 20)
			return 0;
		l4 = l3 + (frame[l3] & 0x0f) * 4u;
		if (len < l4 + 8)
			return 0;
		swap(frame + l3 + 12, frame + l3 + 16, 4);
	} else if (type == 0x86dd) {
		l4 = l3 + 40;
		if (len < l4 + 8)
			return 0;
		swap(frame + l3 + 8, frame + l3 + 24, 16);
	} else {
		return 0;
	}
	swap(frame, frame + 6, 6);
	swap(frame + l4, frame + l4 + 2, 2);
	return 1;
}

static void *serve(void *arg)
{
	struct worker *w = arg;
	struct zb_xsk *xsk = &w->xsk;
	struct zb_xsk_frame frames[BATCH], back[BATCH];

	if (w->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (!__atomic_load_n(&stopping, __ATOMIC_RELAXED)) {
		unsigned n = zb_xsk_receive(xsk, frames, BATCH);
		if (n == 0) {
			zb_xsk_kick(xsk);
			zb_xsk_complete(xsk);
			struct pollfd pfd = { .fd = xsk->fd, .events = POLLIN };
			poll(&pfd, 1, IDLE_MS);
			continue;
		}
		unsigned out = 0, kept = 0;
		for (unsigned i = 0; i < n; i++) {
			if (reflect(zb_xsk_packet(xsk, frames[i].addr), frames[i].len))
				frames[out++] = frames[i];
			else
				back[kept++] = frames[i];
		}
		unsigned sent = zb_xsk_transmit(xsk, frames, out);
		zb_xsk_refill(xsk, back, kept);
		zb_xsk_kick(xsk);
		zb_xsk_complete(xsk);
		w->reflected += sent;
		w->dropped += n - sent;
	}
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: xdp_reflector [-q QUEUES] [-c FIRST_CPU] [-g] [-C] IFACE PORT\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned queues = 0;
	int first_cpu = -1, opt;
	enum zb_xdp_mode mode = ZB_XDP_MODE_AUTO;
	struct zb_xsk_config config = { 0 };

	while ((opt = getopt(argc, argv, "q:c:gC")) != -1) {
		switch (opt) {
		case 'q':
			queues = (unsigned)atoi(optarg);
			break;
		case 'c':
			first_cpu = atoi(optarg);
			break;
		case 'g':
			mode = ZB_XDP_MODE_GENERIC;
			break;
		case 'C':
			config.mode = ZB_XSK_COPY;
			break;
		default:
			return usage();
		}
	}
	if (argc - optind != 2)
		return usage();
	const char *ifname = argv[optind];
	int port = atoi(argv[optind + 1]);
	if (port < 1 || port > 65535)
		return usage();
	if (queues == 0)
		queues = zb_xdp_queue_count(ifname);
	if (queues > ZB_XDP_QUEUES_MAX)
		queues = ZB_XDP_QUEUES_MAX;

	/* The threads inherit the mask: the signals are the main thread's, in sigwait. */
	sigset_t signals;
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);

	char err[4096];
	struct zb_xdp_program xdp;
	if (zb_xdp_attach(&xdp, ifname, (uint16_t)port, mode, err, sizeof(err)) != ZB_XDP_OK) {
		fprintf(stderr, "xdp_reflector: %s\n", err);
		return 1;
	}
	struct worker *workers = calloc(queues, sizeof(*workers));
	if (!workers) {
		fprintf(stderr, "xdp_reflector: out of memory\n");
		return 1;
	}
	for (unsigned q = 0; q < queues; q++) {
		workers[q].cpu = first_cpu < 0 ? -1 : first_cpu + (int)q;
		if (zb_xsk_open(&workers[q].xsk, (unsigned)xdp.ifindex, q, &config, err,
				sizeof(err)) != 0 ||
		    zb_xdp_steer(&xdp, q, workers[q].xsk.fd, err, sizeof(err)) != ZB_XDP_OK) {
			fprintf(stderr, "xdp_reflector: %s\n", err);
			return 1;
		}
	}
	fprintf(stderr, "xdp_reflector: %s port %d, %u queue%s, %s XDP, %s\n", ifname, port,
		queues, queues == 1 ? "" : "s", xdp.native ? "native" : "generic",
		workers[0].xsk.zerocopy ? "zero-copy" : "copy mode");
	for (unsigned q = 0; q < queues; q++) {
		if (pthread_create(&workers[q].thread, NULL, serve, &workers[q]) != 0) {
			fprintf(stderr, "xdp_reflector: pthread_create failed\n");
			return 1;
		}
	}

	int caught;
	while (sigwait(&signals, &caught) != 0)
		;
	__atomic_store_n(&stopping, 1, __ATOMIC_RELAXED);
	unsigned long reflected = 0, dropped = 0;
	for (unsigned q = 0; q < queues; q++) {
		pthread_join(workers[q].thread, NULL);
		reflected += workers[q].reflected;
		dropped += workers[q].dropped;
	}
	zb_xdp_detach(&xdp);
	for (unsigned q = 0; q < queues; q++)
		zb_xsk_close(&workers[q].xsk);
	free(workers);
	fprintf(stderr, "xdp_reflector: reflected %lu frames, dropped %lu\n", reflected, dropped);
	return 0;
}
