/*
 * interfaces.h - the interfaces a server answers UDP on over AF_XDP (--xdp IFACE[@PORT]):
 * on each, the XDP program attached and one AF_XDP socket opened on each receive queue and
 * steered to, all or nothing. Done before the privileges go: it takes CAP_NET_ADMIN, CAP_BPF
 * (or CAP_SYS_ADMIN) and CAP_NET_RAW.
 */
#ifndef ZB_XDP_INTERFACES_H
#define ZB_XDP_INTERFACES_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/xdp/program.h"
#include "transport/xdp/serve.h"
#include "zonedata.h"

/* The UDP port of an --xdp IFACE without @PORT: DNS's, as Knot's `xdp: listen` has it. */
#define ZB_XDP_DEFAULT_PORT 53

struct zb_xdp_interface {
	char name[IF_NAMESIZE];
	struct zb_xdp_program program;
	uint32_t mtu;
	unsigned nqueues;
};

/* An interface's AF_XDP state as a server being swapped out hands it over: the link that
 * keeps its program attached, and each queue's socket with the memfd of its UMEM. The
 * successor maps the same UMEM and rings and goes on where the old one stopped: the XSKMAP
 * keeps pointing at the same sockets, and no frame changes hands. */
struct zb_xdp_handed_queue {
	unsigned queue, frame_size, ring_size;
	int fd, umem_fd;  /* -1 once taken */
};

struct zb_xdp_handed {
	char name[IF_NAMESIZE];
	uint16_t port;
	int native;
	int link_fd;  /* -1 once taken */
	struct zb_xdp_handed_queue *queues; /* from malloc */
	unsigned nqueues;
};

struct zb_xdp_set {
	int adopted;  /* some queues were handed over: served once the old process let go */
	struct zb_xdp_interface *interfaces;
	unsigned ninterfaces;
	struct zb_xdp_queue *queues; /* every interface's, in order */
	unsigned nqueues;
};

/* Read `spec`, IFACE or IFACE@PORT, into `name` and `port`. Returns 0, or -1 with a message
 * in `err`. */
int zb_xdp_parse_spec(const char *spec, char name[IF_NAMESIZE], uint16_t *port, char *err,
		      size_t err_len);

/* Attach to every interface of `specs` and open its queues' sockets. An interface among the
 * `nhanded` handed over is not attached anew: its program and sockets are taken (the entry's
 * descriptors become the set's, and -1 in `handed`; its rings are not to be touched before
 * zb_xdp_resume). Returns 0, or -1 with a message in `err` and nothing left attached or open
 * by it. */
int zb_xdp_open(struct zb_xdp_set *set, const char *const *specs, unsigned nspecs,
		struct zb_xdp_handed *handed, unsigned nhanded, const struct zb_zoneset *zs,
		char *err, size_t err_len);

/* Close what was handed over and not taken, and free the queue lists: an interface keeps
 * its program until the process that handed it over ends. */
void zb_xdp_handed_close(struct zb_xdp_handed *handed, unsigned n);

/* One line a interface for the start-up log: its name, port, queues and modes. */
void zb_xdp_describe(const struct zb_xdp_set *set, unsigned i, char *line, size_t len);

/* Detach every program (the interfaces as they were) and close the sockets. */
void zb_xdp_close(struct zb_xdp_set *set);

#endif
