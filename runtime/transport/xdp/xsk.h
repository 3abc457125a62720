/*
 * xsk.h - one AF_XDP socket on one receive queue of an interface: its UMEM (frames in shared
 * memory, a memfd a successor can map), its fill, completion, RX and TX rings, and what a
 * worker does with them: receive frames, answer them in place, give the others back.
 *
 * Every frame is always in exactly one place: the fill ring (the kernel's to receive into),
 * the RX ring, the worker's hands, the TX ring, or the completion ring. The fill and
 * completion rings have room for every frame, so giving a frame back never fails and a sent
 * frame always has a completion to come back by; a completed frame goes straight back to the
 * fill ring. There is no free list: a frame is answered in the buffer it came in.
 *
 * A worker's loop:
 *
 *   n = zb_xsk_receive(xsk, frames, batch);
 *   for each frame: answer it in place (frames[i].len = the answer's) or not;
 *   zb_xsk_transmit(xsk, answered, count);  (what the TX ring has no room for is dropped)
 *   zb_xsk_refill(xsk, unanswered, count);
 *   zb_xsk_kick(xsk);                        (a system call only when the kernel asks for one)
 *   zb_xsk_complete(xsk);
 *   and when zb_xsk_receive finds nothing: poll(xsk->fd, POLLIN) with the worker's timeout.
 *
 * Per frame: no system call, allocation, lock, clock call or formatting.
 */
#ifndef ZB_XSK_H
#define ZB_XSK_H

#include <stddef.h>
#include <stdint.h>

/* Zero-copy where the driver can, copy otherwise (AUTO); or one of them, insisted on. */
enum zb_xsk_mode { ZB_XSK_AUTO = 0, ZB_XSK_COPY, ZB_XSK_ZEROCOPY };

struct zb_xsk_config {
	unsigned frames;     /* UMEM frames, a power of two; 0: 4096 */
	unsigned frame_size; /* 2048 or 4096 (a page); 0: 2048 */
	unsigned ring_size;  /* RX and TX ring entries, a power of two <= frames; 0: frames/2 */
	enum zb_xsk_mode mode;
};

/* One of the four rings, mapped from the socket; `producer`, `consumer` and `flags` are
 * shared with the kernel. The side that produces keeps its own index, and a copy of the
 * other side's, read again only when the copy says the ring is full (or empty). */
struct zb_xsk_ring {
	uint32_t *producer;
	uint32_t *consumer;
	uint32_t *flags;     /* XDP_RING_NEED_WAKEUP */
	void *entries;       /* struct xdp_desc (RX, TX) or uint64_t addresses (fill, completion) */
	uint32_t mask;       /* entries - 1 */
	uint32_t size;
	uint32_t head;       /* our index: what we produce next, or consume next */
	uint32_t other;      /* the other side's index as last read */
	void *map;
	size_t map_size;
};

struct zb_xsk {
	int fd;              /* the AF_XDP socket: poll it; put it in the XSKMAP */
	int umem_fd;         /* the memfd holding the UMEM: a successor maps it */
	uint8_t *umem;
	size_t umem_size;
	unsigned frame_size;
	unsigned ifindex;
	unsigned queue;
	int zerocopy;        /* the kernel chose zero-copy */
	struct zb_xsk_ring fill, completion, rx, tx;
};

/* A frame in the UMEM: its packet at zb_xsk_packet(xsk, addr), len bytes. */
struct zb_xsk_frame {
	uint64_t addr;
	uint32_t len;
};

/* Create the socket, its UMEM and rings, put every frame on the fill ring, and bind it to
 * queue `queue` of interface `ifindex` (XDP_USE_NEED_WAKEUP). `config` may be NULL: the
 * defaults. The socket then receives what the XSKMAP steers to it (zb_xdp_steer). Returns 0,
 * or -1 with a message in `err` (nothing left open). */
int zb_xsk_open(struct zb_xsk *xsk, unsigned ifindex, unsigned queue,
		const struct zb_xsk_config *config, char *err, size_t err_len);

/* Take over a socket another process opened with zb_xsk_open (a swap): `fd` bound to queue
 * `queue` of `ifindex`, its UMEM in the memfd `umem_fd`, its frames `frame_size` octets, its
 * RX and TX rings `ring_size` entries. Maps the UMEM and the rings; the descriptors are the
 * xsk's from here on (closed on failure too). Returns 0, or -1 with a message in `err`.
 * Touch no ring before zb_xsk_resume, once the other process has let go of them. */
int zb_xsk_adopt(struct zb_xsk *xsk, int fd, int umem_fd, unsigned ifindex, unsigned queue,
		 unsigned frame_size, unsigned ring_size, char *err, size_t err_len);

/* Take up the rings' indexes where the process that used them before left them. */
void zb_xsk_resume(struct zb_xsk *xsk);

/* Unmap and close everything (the socket leaves the XSKMAP as it closes). */
void zb_xsk_close(struct zb_xsk *xsk);

/* Up to `max` received frames. */
unsigned zb_xsk_receive(struct zb_xsk *xsk, struct zb_xsk_frame *frames, unsigned max);

/* Give frames back to the kernel to receive into: those not answered. */
void zb_xsk_refill(struct zb_xsk *xsk, const struct zb_xsk_frame *frames, unsigned n);

/* Send frames (received ones, their packets rewritten in place, len bytes each). What the TX
 * ring has no room for goes back to the fill ring, unsent. Returns how many it queued. */
unsigned zb_xsk_transmit(struct zb_xsk *xsk, const struct zb_xsk_frame *frames, unsigned n);

/* The wake-ups the kernel asks for (XDP_RING_NEED_WAKEUP): sendto for what the TX ring holds,
 * recvfrom for the fill ring. In copy mode the kernel sends from the TX ring only in sendto,
 * so there it is one system call per batch. */
void zb_xsk_kick(struct zb_xsk *xsk);

/* Frames the kernel has sent, from the completion ring back to the fill ring. Returns how
 * many. */
unsigned zb_xsk_complete(struct zb_xsk *xsk);

static inline uint8_t *zb_xsk_packet(const struct zb_xsk *xsk, uint64_t addr)
{
	return xsk->umem + addr;
}

/* The bytes a packet at `addr` may grow to in place: to the end of its frame. */
static inline uint32_t zb_xsk_room(const struct zb_xsk *xsk, uint64_t addr)
{
	return xsk->frame_size - (uint32_t)(addr & (xsk->frame_size - 1));
}

#endif
