/*
 * interfaces.c - attach to the --xdp interfaces and open their queues' AF_XDP sockets
 * (interfaces.h). The program goes on first and steers nothing until a queue's socket is in
 * the XSKMAP: until then every packet goes to the kernel, whose sockets answer it.
 */
#include "transport/xdp/interfaces.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "query/wire.h"
#include "transport/xdp/queues.h"

int zb_xdp_parse_spec(const char *spec, char name[IF_NAMESIZE], uint16_t *port, char *err,
		      size_t err_len)
{
	const char *at = strchr(spec, '@');
	size_t len = at ? (size_t)(at - spec) : strlen(spec);
	if (len == 0 || len >= IF_NAMESIZE) {
		snprintf(err, err_len, "--xdp %s: an interface's name has 1 to %d characters",
			 spec, IF_NAMESIZE - 1);
		return -1;
	}
	memcpy(name, spec, len);
	name[len] = 0;
	*port = ZB_XDP_DEFAULT_PORT;
	if (at) {
		char *end;
		long value = strtol(at + 1, &end, 10);
		if (!at[1] || *end || value < 1 || value > 65535) {
			snprintf(err, err_len, "--xdp %s: the port after @ is 1 to 65535", spec);
			return -1;
		}
		*port = (uint16_t)value;
	}
	return 0;
}

/* An interface whose MTU cannot carry a 512-octet response behind IPv4's and UDP's headers
 * (RFC 1035 §4.2.1): every query steered to its sockets would be one the frame layer leaves
 * to the kernel, which can no longer have it. Refused at the start instead. */
#define ZB_XDP_MTU_MIN (ZB_UDP_PLAIN_MAX + 20 + 8)

static int mtu_too_small(const struct zb_xdp_interface *ifc, char *err, size_t err_len)
{
	if (ifc->mtu >= ZB_XDP_MTU_MIN)
		return 0;
	snprintf(err, err_len, "%s: MTU %u: a 512-octet DNS response does not fit behind the IPv4 "
		 "and UDP headers; answering over AF_XDP needs an MTU of %u or more", ifc->name,
		 (unsigned)ifc->mtu, (unsigned)ZB_XDP_MTU_MIN);
	return 1;
}

/* Room for `more` queues in set->queues. */
static int grow_queues(struct zb_xdp_set *set, unsigned more, const char *ifname, char *err,
		       size_t err_len)
{
	struct zb_xdp_queue *grown = realloc(set->queues, (set->nqueues + more) * sizeof(*grown));
	if (!grown && set->nqueues + more) {
		snprintf(err, err_len, "%s: out of memory", ifname);
		return -1;
	}
	set->queues = grown;
	return 0;
}

/* What was handed over for `ifc`'s name, or NULL; an error where it was for another port
 * (its program steers that port: it stays until the old process ends, and another cannot be
 * attached beside it). */
static struct zb_xdp_handed *handed_for(const struct zb_xdp_interface *ifc, uint16_t port,
					struct zb_xdp_handed *handed, unsigned nhanded,
					int *wrong_port)
{
	*wrong_port = 0;
	for (unsigned i = 0; i < nhanded; i++) {
		if (handed[i].link_fd < 0 || strcmp(handed[i].name, ifc->name) != 0)
			continue;
		*wrong_port = handed[i].port != port;
		return *wrong_port ? NULL : &handed[i];
	}
	return NULL;
}

/* Take the program and the sockets handed over for `ifc`. */
static int take_handed(struct zb_xdp_set *set, struct zb_xdp_interface *ifc,
		       struct zb_xdp_handed *h, const struct zb_zoneset *zs, char *err,
		       size_t err_len)
{
	ifc->program = (struct zb_xdp_program){ .ifindex = (int)if_nametoindex(ifc->name),
						.map_fd = -1, .prog_fd = -1, .link_fd = h->link_fd,
						.native = h->native, .port = h->port };
	h->link_fd = -1;
	set->ninterfaces++; /* from here on zb_xdp_close detaches it */
	if (ifc->program.ifindex == 0) {
		snprintf(err, err_len, "%s: the interface is gone", ifc->name);
		return -1;
	}
	ifc->mtu = zb_xdp_mtu(ifc->name);
	if (mtu_too_small(ifc, err, err_len) || grow_queues(set, h->nqueues, ifc->name, err,
							    err_len) != 0)
		return -1;
	set->adopted = 1;
	for (unsigned q = 0; q < h->nqueues; q++) {
		struct zb_xdp_handed_queue *hq = &h->queues[q];
		struct zb_xsk xsk;
		int fd = hq->fd, umem_fd = hq->umem_fd;
		hq->fd = hq->umem_fd = -1;
		if (zb_xsk_adopt(&xsk, fd, umem_fd, (unsigned)ifc->program.ifindex, hq->queue,
				 hq->frame_size, hq->ring_size, err, err_len) != 0)
			return -1;
		zb_xdp_queue_init(&set->queues[set->nqueues++], &xsk, ifc->name, ifc->mtu,
				  h->port, zs);
		ifc->nqueues++;
	}
	return 0;
}

/* The program on `spec`'s interface, and a socket on each of its queues. */
static int open_interface(struct zb_xdp_set *set, const char *spec,
			  struct zb_xdp_handed *handed, unsigned nhanded,
			  const struct zb_zoneset *zs, char *err, size_t err_len)
{
	struct zb_xdp_interface *ifc = &set->interfaces[set->ninterfaces];
	uint16_t port;
	if (zb_xdp_parse_spec(spec, ifc->name, &port, err, err_len) != 0)
		return -1;
	for (unsigned i = 0; i < set->ninterfaces; i++) {
		if (strcmp(set->interfaces[i].name, ifc->name) == 0) {
			snprintf(err, err_len, "--xdp %s: %s is given twice: one XDP program an "
				 "interface", spec, ifc->name);
			return -1;
		}
	}
	int wrong_port;
	struct zb_xdp_handed *h = handed_for(ifc, port, handed, nhanded, &wrong_port);
	if (wrong_port) {
		snprintf(err, err_len, "--xdp %s: the server taken over answers another port on "
			 "%s over AF_XDP: stop it to change the port", spec, ifc->name);
		return -1;
	}
	if (h)
		return take_handed(set, ifc, h, zs, err, err_len);
	if (zb_xdp_attach(&ifc->program, ifc->name, port, ZB_XDP_MODE_AUTO, err, err_len) !=
	    ZB_XDP_OK)
		return -1;
	set->ninterfaces++; /* from here on zb_xdp_close detaches it */
	ifc->mtu = zb_xdp_mtu(ifc->name);
	if (mtu_too_small(ifc, err, err_len))
		return -1;
	unsigned queues = zb_xdp_queue_count(ifc->name);
	if (queues > ZB_XDP_QUEUES_MAX)
		queues = ZB_XDP_QUEUES_MAX; /* the XSKMAP's size: the program passes the rest */
	if (grow_queues(set, queues, ifc->name, err, err_len) != 0)
		return -1;
	for (unsigned q = 0; q < queues; q++) {
		struct zb_xsk xsk;
		if (zb_xsk_open(&xsk, (unsigned)ifc->program.ifindex, q, NULL, err, err_len) != 0)
			return -1;
		zb_xdp_queue_init(&set->queues[set->nqueues++], &xsk, ifc->name, ifc->mtu, port,
				  zs);
		ifc->nqueues++;
		if (zb_xdp_steer(&ifc->program, q, xsk.fd, err, err_len) != ZB_XDP_OK)
			return -1;
	}
	return 0;
}

int zb_xdp_open(struct zb_xdp_set *set, const char *const *specs, unsigned nspecs,
		struct zb_xdp_handed *handed, unsigned nhanded, const struct zb_zoneset *zs,
		char *err, size_t err_len)
{
	*set = (struct zb_xdp_set){ 0 };
	set->interfaces = calloc(nspecs ? nspecs : 1, sizeof(*set->interfaces));
	if (!set->interfaces) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < nspecs; i++) {
		if (open_interface(set, specs[i], handed, nhanded, zs, err, err_len) != 0) {
			zb_xdp_close(set);
			return -1;
		}
	}
	return 0;
}

void zb_xdp_describe(const struct zb_xdp_set *set, unsigned i, char *line, size_t len)
{
	const struct zb_xdp_interface *ifc = &set->interfaces[i];
	const struct zb_xdp_queue *first = NULL;
	for (unsigned q = 0; q < set->nqueues && !first; q++)
		if (set->queues[q].ifname == ifc->name)
			first = &set->queues[q];
	snprintf(line, len, "%s port %u over AF_XDP: %u queue%s, %s XDP, %s, responses up to "
		 "%u octets (MTU %u)", ifc->name, (unsigned)ifc->program.port, ifc->nqueues,
		 ifc->nqueues == 1 ? "" : "s", ifc->program.native ? "native" : "generic",
		 first && first->xsk.zerocopy ? "zero-copy" : "copy mode",
		 first ? (unsigned)first->zs.udp_size : 0, (unsigned)ifc->mtu);
}

void zb_xdp_close(struct zb_xdp_set *set)
{
	/* The programs first: from then on the kernel takes every packet, and nothing is
	 * steered to a socket about to close. */
	for (unsigned i = 0; i < set->ninterfaces; i++)
		zb_xdp_detach(&set->interfaces[i].program);
	for (unsigned q = 0; q < set->nqueues; q++)
		zb_xsk_close(&set->queues[q].xsk);
	free(set->interfaces);
	free(set->queues);
	*set = (struct zb_xdp_set){ 0 };
}

void zb_xdp_handed_close(struct zb_xdp_handed *handed, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct zb_xdp_handed *h = &handed[i];
		for (unsigned q = 0; q < h->nqueues; q++) {
			if (h->queues[q].fd >= 0)
				close(h->queues[q].fd);
			if (h->queues[q].umem_fd >= 0)
				close(h->queues[q].umem_fd);
		}
		if (h->link_fd >= 0)
			close(h->link_fd);
		h->link_fd = -1;
		free(h->queues);
		h->queues = NULL;
		h->nqueues = 0;
	}
}
