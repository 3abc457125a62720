/*
 * xsk.c - an AF_XDP socket on raw system calls (see xsk.h and the kernel's
 * Documentation/networking/af_xdp.rst).
 *
 * One UMEM per socket, not one shared by the queues: each worker then owns its frames and its
 * four rings outright, as it owns its UDP sockets, with nothing to coordinate between queues
 * (a shared UMEM would need XDP_SHARED_UMEM and a fill and completion ring per queue anyway).
 * The UMEM lives in a memfd mapped MAP_SHARED: the kernel pins its pages at XDP_UMEM_REG, and
 * a successor given the memfd and the socket maps the same pages and the same rings (they are
 * mapped from the socket) at whatever addresses it gets; descriptors hold offsets, not
 * pointers.
 *
 * Zero-copy or copy: the bind asks for neither, and the kernel tries zero-copy first and
 * falls back to copy where the driver has none (xp_assign_dev), in one bind with nothing to
 * undo; XDP_OPTIONS then says which it chose. ZB_XSK_COPY / ZB_XSK_ZEROCOPY insist on one.
 *
 * The rings: the producer writes entries, then publishes its index with a store-release; the
 * consumer reads the producer's index with a load-acquire before it reads the entries, and
 * publishes its own index with a store-release once it is done with them, which the producer
 * reads with a load-acquire before it reuses their slots.
 */
#define _GNU_SOURCE /* memfd_create */
#include "transport/xdp/xsk.h"

#include <errno.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define DEFAULT_FRAMES 4096
#define DEFAULT_FRAME_SIZE 2048
/* sendto calls one kick makes at most: a copy-mode send takes 32 frames a call */
#define KICKS_MAX 64

static int power_of_two(unsigned n)
{
	return n && !(n & (n - 1));
}

/* Entries the producer may write: the free slots, the consumer's index read again only when
 * the copy of it says fewer than `want` are free. */
static uint32_t ring_free(struct zb_xsk_ring *ring, uint32_t want)
{
	uint32_t free = ring->size - (ring->head - ring->other);
	if (free < want) {
		ring->other = __atomic_load_n(ring->consumer, __ATOMIC_ACQUIRE);
		free = ring->size - (ring->head - ring->other);
	}
	return free;
}

/* Entries the consumer may read, up to `want`. */
static uint32_t ring_ready(struct zb_xsk_ring *ring, uint32_t want)
{
	uint32_t ready = ring->other - ring->head;
	if (ready < want) {
		ring->other = __atomic_load_n(ring->producer, __ATOMIC_ACQUIRE);
		ready = ring->other - ring->head;
	}
	return ready < want ? ready : want;
}

static void ring_produced(struct zb_xsk_ring *ring, uint32_t n)
{
	ring->head += n;
	__atomic_store_n(ring->producer, ring->head, __ATOMIC_RELEASE);
}

static void ring_consumed(struct zb_xsk_ring *ring, uint32_t n)
{
	ring->head += n;
	__atomic_store_n(ring->consumer, ring->head, __ATOMIC_RELEASE);
}

static const char *interface_name(unsigned ifindex, char *name)
{
	if (!if_indextoname(ifindex, name))
		snprintf(name, IF_NAMESIZE, "if%u", ifindex);
	return name;
}

static int fail(struct zb_xsk *xsk, const char *step, const char *hint, char *err,
		size_t err_len)
{
	int error = errno;
	char name[IF_NAMESIZE];
	snprintf(err, err_len, "%s queue %u: AF_XDP socket: %s: %s%s%s",
		 interface_name(xsk->ifindex, name), xsk->queue, step, strerror(error),
		 hint ? ": " : "", hint ? hint : "");
	zb_xsk_close(xsk);
	errno = error;
	return -1;
}

/* A ring's indexes as they stand (0 on a new socket; where the process that handed the
 * socket over left them), as the producer or as the consumer. */
static void take_up(struct zb_xsk_ring *ring, int producer);

/* Map a ring at the offsets XDP_MMAP_OFFSETS gave, from the socket, and take up its indexes
 * as they stand (0 on a new socket), as the producer or as the consumer. */
static int map_ring(struct zb_xsk_ring *ring, int fd, const struct xdp_ring_offset *offsets,
		    uint32_t size, size_t entry_size, off_t page_offset, int producer)
{
	ring->map_size = offsets->desc + size * entry_size;
	ring->map = mmap(NULL, ring->map_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, fd, page_offset);
	if (ring->map == MAP_FAILED) {
		ring->map = NULL;
		return -1;
	}
	uint8_t *base = ring->map;
	ring->producer = (uint32_t *)(base + offsets->producer);
	ring->consumer = (uint32_t *)(base + offsets->consumer);
	ring->flags = (uint32_t *)(base + offsets->flags);
	ring->entries = base + offsets->desc;
	ring->size = size;
	ring->mask = size - 1;
	take_up(ring, producer);
	return 0;
}

static void unmap_ring(struct zb_xsk_ring *ring)
{
	if (ring->map)
		munmap(ring->map, ring->map_size);
	*ring = (struct zb_xsk_ring){ 0 };
}

/* The four rings of a socket whose ring sizes are set. */
static int map_rings(struct zb_xsk *xsk, const struct xdp_mmap_offsets *offsets,
		     unsigned frames, unsigned ring_size)
{
	if (map_ring(&xsk->fill, xsk->fd, &offsets->fr, frames, sizeof(uint64_t),
		     (off_t)XDP_UMEM_PGOFF_FILL_RING, 1) != 0 ||
	    map_ring(&xsk->completion, xsk->fd, &offsets->cr, frames, sizeof(uint64_t),
		     (off_t)XDP_UMEM_PGOFF_COMPLETION_RING, 0) != 0 ||
	    map_ring(&xsk->rx, xsk->fd, &offsets->rx, ring_size, sizeof(struct xdp_desc),
		     XDP_PGOFF_RX_RING, 0) != 0 ||
	    map_ring(&xsk->tx, xsk->fd, &offsets->tx, ring_size, sizeof(struct xdp_desc),
		     XDP_PGOFF_TX_RING, 1) != 0)
		return -1;
	return 0;
}

static int set_ring_size(int fd, int option, uint32_t size)
{
	int value = (int)size;
	return setsockopt(fd, SOL_XDP, option, &value, sizeof(value));
}

/* The UMEM: frames * frame_size bytes of a memfd, registered with the socket. */
static int make_umem(struct zb_xsk *xsk, unsigned frames, char *err, size_t err_len)
{
	xsk->umem_size = (size_t)frames * xsk->frame_size;
	xsk->umem_fd = memfd_create("zonebake-umem", MFD_CLOEXEC);
	if (xsk->umem_fd < 0)
		return fail(xsk, "memfd_create for the UMEM", NULL, err, err_len);
	if (ftruncate(xsk->umem_fd, (off_t)xsk->umem_size) != 0)
		return fail(xsk, "sizing the UMEM", NULL, err, err_len);
	void *umem = mmap(NULL, xsk->umem_size, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_POPULATE, xsk->umem_fd, 0);
	if (umem == MAP_FAILED)
		return fail(xsk, "mapping the UMEM", NULL, err, err_len);
	xsk->umem = umem;
	struct xdp_umem_reg reg = { .addr = (uintptr_t)umem, .len = xsk->umem_size,
				    .chunk_size = xsk->frame_size, .headroom = 0 };
	if (setsockopt(xsk->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) != 0)
		return fail(xsk, "registering the UMEM",
			    errno == ENOBUFS || errno == ENOMEM ?
			    "its pages count against RLIMIT_MEMLOCK without CAP_IPC_LOCK" : NULL,
			    err, err_len);
	return 0;
}

static int make_rings(struct zb_xsk *xsk, unsigned frames, unsigned ring_size, char *err,
		      size_t err_len)
{
	/* The fill and completion rings hold every frame: giving one back cannot fail. */
	if (set_ring_size(xsk->fd, XDP_UMEM_FILL_RING, frames) != 0 ||
	    set_ring_size(xsk->fd, XDP_UMEM_COMPLETION_RING, frames) != 0 ||
	    set_ring_size(xsk->fd, XDP_RX_RING, ring_size) != 0 ||
	    set_ring_size(xsk->fd, XDP_TX_RING, ring_size) != 0)
		return fail(xsk, "sizing the rings", NULL, err, err_len);
	struct xdp_mmap_offsets offsets;
	socklen_t len = sizeof(offsets);
	if (getsockopt(xsk->fd, SOL_XDP, XDP_MMAP_OFFSETS, &offsets, &len) != 0)
		return fail(xsk, "XDP_MMAP_OFFSETS", NULL, err, err_len);
	if (len != sizeof(offsets)) {
		errno = EPROTONOSUPPORT;
		return fail(xsk, "XDP_MMAP_OFFSETS", "a kernel before Linux 5.4 (no ring flags)",
			    err, err_len);
	}
	if (map_rings(xsk, &offsets, frames, ring_size) != 0)
		return fail(xsk, "mapping the rings", NULL, err, err_len);
	return 0;
}

static const char *bind_hint(int error, enum zb_xsk_mode mode)
{
	switch (error) {
	case EBUSY:
		return "another AF_XDP socket is bound to this queue";
	case EINVAL:
		return "the interface has no such queue";
	case EOPNOTSUPP:
		return mode == ZB_XSK_ZEROCOPY ? "the driver has no zero-copy AF_XDP" : NULL;
	default:
		return NULL;
	}
}

int zb_xsk_open(struct zb_xsk *xsk, unsigned ifindex, unsigned queue,
		const struct zb_xsk_config *config, char *err, size_t err_len)
{
	struct zb_xsk_config c = config ? *config : (struct zb_xsk_config){ 0 };
	unsigned frames = c.frames ? c.frames : DEFAULT_FRAMES;
	unsigned frame_size = c.frame_size ? c.frame_size : DEFAULT_FRAME_SIZE;
	unsigned ring_size = c.ring_size ? c.ring_size : frames / 2;
	*xsk = (struct zb_xsk){ .fd = -1, .umem_fd = -1, .ifindex = ifindex, .queue = queue,
				.frame_size = frame_size };
	if (!power_of_two(frames) || (frame_size != 2048 && frame_size != 4096) ||
	    !power_of_two(ring_size) || ring_size > frames) {
		errno = EINVAL;
		return fail(xsk, "configuration", "frames and ring sizes are powers of two "
			    "(ring <= frames), frames 2048 or 4096 bytes", err, err_len);
	}

	xsk->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (xsk->fd < 0)
		return fail(xsk, "socket", errno == EAFNOSUPPORT ?
			    "the kernel has no AF_XDP (CONFIG_XDP_SOCKETS)" :
			    errno == EPERM || errno == EACCES ? "AF_XDP needs CAP_NET_RAW" : NULL,
			    err, err_len);
	if (make_umem(xsk, frames, err, err_len) != 0 ||
	    make_rings(xsk, frames, ring_size, err, err_len) != 0)
		return -1;

	/* Every frame to the fill ring before the bind: a zero-copy driver fills its own
	 * receive ring from it as the bind starts the queue. */
	uint64_t *fill = xsk->fill.entries;
	for (unsigned i = 0; i < frames; i++)
		fill[(xsk->fill.head + i) & xsk->fill.mask] = (uint64_t)i * frame_size;
	ring_produced(&xsk->fill, frames);

	struct sockaddr_xdp addr = {
		.sxdp_family = AF_XDP,
		.sxdp_flags = XDP_USE_NEED_WAKEUP |
			      (c.mode == ZB_XSK_COPY ? XDP_COPY : 0) |
			      (c.mode == ZB_XSK_ZEROCOPY ? XDP_ZEROCOPY : 0),
		.sxdp_ifindex = ifindex,
		.sxdp_queue_id = queue,
	};
	if (bind(xsk->fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		return fail(xsk, "bind", bind_hint(errno, c.mode), err, err_len);
	struct xdp_options options;
	socklen_t len = sizeof(options);
	if (getsockopt(xsk->fd, SOL_XDP, XDP_OPTIONS, &options, &len) == 0)
		xsk->zerocopy = !!(options.flags & XDP_OPTIONS_ZEROCOPY);
	return 0;
}

int zb_xsk_adopt(struct zb_xsk *xsk, int fd, int umem_fd, unsigned ifindex, unsigned queue,
		 unsigned frame_size, unsigned ring_size, char *err, size_t err_len)
{
	*xsk = (struct zb_xsk){ .fd = fd, .umem_fd = umem_fd, .ifindex = ifindex,
				.queue = queue, .frame_size = frame_size };
	struct stat st;
	if (fstat(umem_fd, &st) != 0)
		return fail(xsk, "the UMEM handed over", NULL, err, err_len);
	xsk->umem_size = (size_t)st.st_size;
	unsigned frames = (unsigned)(xsk->umem_size / (frame_size ? frame_size : 1));
	if ((frame_size != 2048 && frame_size != 4096) || !power_of_two(frames) ||
	    (size_t)frames * frame_size != xsk->umem_size || !power_of_two(ring_size) ||
	    ring_size > frames) {
		errno = EINVAL;
		return fail(xsk, "the UMEM handed over", "sizes that zb_xsk_open never makes",
			    err, err_len);
	}
	void *umem = mmap(NULL, xsk->umem_size, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_POPULATE, umem_fd, 0);
	if (umem == MAP_FAILED)
		return fail(xsk, "mapping the UMEM handed over", NULL, err, err_len);
	xsk->umem = umem;
	struct xdp_mmap_offsets offsets;
	socklen_t len = sizeof(offsets);
	if (getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &offsets, &len) != 0 ||
	    len != sizeof(offsets))
		return fail(xsk, "XDP_MMAP_OFFSETS of the socket handed over", NULL, err, err_len);
	if (map_rings(xsk, &offsets, frames, ring_size) != 0)
		return fail(xsk, "mapping the rings handed over", NULL, err, err_len);
	struct xdp_options options;
	len = sizeof(options);
	if (getsockopt(fd, SOL_XDP, XDP_OPTIONS, &options, &len) == 0)
		xsk->zerocopy = !!(options.flags & XDP_OPTIONS_ZEROCOPY);
	return 0;
}

static void take_up(struct zb_xsk_ring *ring, int producer)
{
	uint32_t produced = __atomic_load_n(ring->producer, __ATOMIC_ACQUIRE);
	uint32_t consumed = __atomic_load_n(ring->consumer, __ATOMIC_ACQUIRE);
	ring->head = producer ? produced : consumed;
	ring->other = producer ? consumed : produced;
}

void zb_xsk_resume(struct zb_xsk *xsk)
{
	take_up(&xsk->fill, 1);
	take_up(&xsk->completion, 0);
	take_up(&xsk->rx, 0);
	take_up(&xsk->tx, 1);
}

void zb_xsk_close(struct zb_xsk *xsk)
{
	unmap_ring(&xsk->fill);
	unmap_ring(&xsk->completion);
	unmap_ring(&xsk->rx);
	unmap_ring(&xsk->tx);
	if (xsk->fd >= 0)
		close(xsk->fd);
	if (xsk->umem)
		munmap(xsk->umem, xsk->umem_size);
	if (xsk->umem_fd >= 0)
		close(xsk->umem_fd);
	xsk->fd = xsk->umem_fd = -1;
	xsk->umem = NULL;
}

unsigned zb_xsk_receive(struct zb_xsk *xsk, struct zb_xsk_frame *frames, unsigned max)
{
	struct zb_xsk_ring *rx = &xsk->rx;
	uint32_t n = ring_ready(rx, max);
	const struct xdp_desc *descs = rx->entries;
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *desc = &descs[(rx->head + i) & rx->mask];
		frames[i] = (struct zb_xsk_frame){ desc->addr, desc->len };
	}
	if (n)
		ring_consumed(rx, n);
	return n;
}

void zb_xsk_refill(struct zb_xsk *xsk, const struct zb_xsk_frame *frames, unsigned n)
{
	struct zb_xsk_ring *fill = &xsk->fill;
	uint32_t room = ring_free(fill, n); /* room for every frame: n at least */
	n = n < room ? n : room;
	uint64_t *addrs = fill->entries;
	for (uint32_t i = 0; i < n; i++)
		addrs[(fill->head + i) & fill->mask] = frames[i].addr;
	if (n)
		ring_produced(fill, n);
}

unsigned zb_xsk_transmit(struct zb_xsk *xsk, const struct zb_xsk_frame *frames, unsigned n)
{
	struct zb_xsk_ring *tx = &xsk->tx;
	uint32_t room = ring_free(tx, n);
	uint32_t sent = n < room ? n : room;
	struct xdp_desc *descs = tx->entries;
	for (uint32_t i = 0; i < sent; i++)
		descs[(tx->head + i) & tx->mask] =
			(struct xdp_desc){ .addr = frames[i].addr, .len = frames[i].len };
	if (sent)
		ring_produced(tx, sent);
	if (sent < n)
		zb_xsk_refill(xsk, frames + sent, n - sent);
	return sent;
}

unsigned zb_xsk_complete(struct zb_xsk *xsk)
{
	struct zb_xsk_ring *completion = &xsk->completion, *fill = &xsk->fill;
	uint32_t n = ring_ready(completion, completion->size);
	if (!n)
		return 0;
	uint32_t room = ring_free(fill, n); /* room for every frame: n at least */
	n = n < room ? n : room;
	const uint64_t *done = completion->entries;
	uint64_t *addrs = fill->entries;
	for (uint32_t i = 0; i < n; i++)
		addrs[(fill->head + i) & fill->mask] = done[(completion->head + i) &
							    completion->mask];
	ring_consumed(completion, n);
	ring_produced(fill, n);
	return n;
}

void zb_xsk_kick(struct zb_xsk *xsk)
{
	struct zb_xsk_ring *tx = &xsk->tx, *fill = &xsk->fill;
	/* Our producer index published before we read the kernel's flag: the kernel sets the
	 * flag, then looks at the ring; we publish, then look at the flag. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* In copy mode the kernel sends only in sendto, whatever the flag says. */
	for (int kicks = 0; kicks < KICKS_MAX; kicks++) {
		uint32_t consumed = __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE);
		if (consumed == tx->head)
			break;
		if (xsk->zerocopy && !(__atomic_load_n(tx->flags, __ATOMIC_RELAXED) &
				       XDP_RING_NEED_WAKEUP))
			break;
		if (sendto(xsk->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			break;
		/* EAGAIN: the kernel took its 32 frames a call (copy mode) and more wait, or the
		 * completion ring is full; EBUSY: the driver dropped one. Anything else (the
		 * interface down) waits for the next kick. So does no progress at all. */
		if (errno != EAGAIN && errno != EBUSY)
			break;
		zb_xsk_complete(xsk);
		if (__atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE) == consumed)
			break;
	}
	if (__atomic_load_n(fill->flags, __ATOMIC_RELAXED) & XDP_RING_NEED_WAKEUP)
		recvfrom(xsk->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
}
