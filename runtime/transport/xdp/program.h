/*
 * program.h - the XDP program that steers UDP to the server's port into AF_XDP sockets, and
 * everything else to the kernel: held as BPF bytecode, loaded with bpf(), attached to one
 * interface by a BPF link, so that it goes away with the last descriptor of the link (the
 * process that holds it ending included).
 */
#ifndef ZB_XDP_PROGRAM_H
#define ZB_XDP_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

/* Queues the XSKMAP has room for: queue indexes at or above it are passed to the kernel. */
#define ZB_XDP_QUEUES_MAX 256

/* What went wrong; the message beside it says it in words, with the interface's name. */
enum zb_xdp_status {
	ZB_XDP_OK = 0,
	ZB_XDP_NO_INTERFACE,  /* ENODEV: no interface of that name */
	ZB_XDP_NOT_PERMITTED, /* EPERM: bpf() needs CAP_BPF (or CAP_SYS_ADMIN), the link
			       * CAP_NET_ADMIN */
	ZB_XDP_UNSUPPORTED,   /* the kernel has no bpf(), XSKMAP or XDP links (ENOSYS, EINVAL) */
	ZB_XDP_BUSY,          /* EBUSY, EEXIST: another XDP program is on the interface */
	ZB_XDP_REFUSED,       /* the kernel's verifier refused the program: its log follows */
	ZB_XDP_FAILED,        /* anything else: errno's text in the message */
};

/* Where the program runs: the driver's own XDP hook (native), or the generic one the kernel
 * runs on socket buffers for a driver without it. */
enum zb_xdp_mode {
	ZB_XDP_MODE_AUTO = 0, /* native, and generic where the driver has no XDP */
	ZB_XDP_MODE_NATIVE,
	ZB_XDP_MODE_GENERIC,
};

/* The program on one interface. Closing link_fd detaches it; map_fd and prog_fd keep the
 * XSKMAP and the program alive (a successor needs only the link to keep the program on the
 * interface, and the map to put its sockets in). */
struct zb_xdp_program {
	int ifindex;
	int map_fd;     /* the XSKMAP: receive queue index -> AF_XDP socket */
	int prog_fd;
	int link_fd;
	int native;     /* attached in the driver's mode (1) or the generic mode (0) */
	uint16_t port;  /* the UDP destination port it steers */
};

/* Create the XSKMAP, load the program for UDP `port` (host order), and attach it to `ifname`
 * by a BPF link in `mode`. Returns ZB_XDP_OK, or what failed with a message in `err` (no
 * descriptor left open). */
enum zb_xdp_status zb_xdp_attach(struct zb_xdp_program *xdp, const char *ifname,
				 uint16_t port, enum zb_xdp_mode mode, char *err,
				 size_t err_len);

/* Steer the packets of receive queue `queue` to the AF_XDP socket `xsk_fd`, bound to that
 * queue of this interface. Returns ZB_XDP_OK, or what failed with a message in `err`. */
enum zb_xdp_status zb_xdp_steer(const struct zb_xdp_program *xdp, unsigned queue, int xsk_fd,
				char *err, size_t err_len);

/* Detach the program (close the link) and close the map and the program. */
void zb_xdp_detach(struct zb_xdp_program *xdp);

#endif
