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

struct zb_xdp_set {
	struct zb_xdp_interface *interfaces;
	unsigned ninterfaces;
	struct zb_xdp_queue *queues; /* every interface's, in order */
	unsigned nqueues;
};

/* Read `spec`, IFACE or IFACE@PORT, into `name` and `port`. Returns 0, or -1 with a message
 * in `err`. */
int zb_xdp_parse_spec(const char *spec, char name[IF_NAMESIZE], uint16_t *port, char *err,
		      size_t err_len);

/* Attach to every interface of `specs` and open its queues' sockets. Returns 0, or -1 with a
 * message in `err` and nothing left attached or open. */
int zb_xdp_open(struct zb_xdp_set *set, const char *const *specs, unsigned nspecs,
		const struct zb_zoneset *zs, char *err, size_t err_len);

/* One line a interface for the start-up log: its name, port, queues and modes. */
void zb_xdp_describe(const struct zb_xdp_set *set, unsigned i, char *line, size_t len);

/* Detach every program (the interfaces as they were) and close the sockets. */
void zb_xdp_close(struct zb_xdp_set *set);

#endif
