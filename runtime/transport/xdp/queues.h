/*
 * queues.h - what an interface says of itself that an AF_XDP path needs: how many receive
 * queues it has (one AF_XDP socket and one worker's share each) and its MTU.
 */
#ifndef ZB_XDP_QUEUES_H
#define ZB_XDP_QUEUES_H

#include <stdint.h>

/* The interface's receive queues as ETHTOOL_GCHANNELS counts them (combined channels and
 * receive-only ones); 1 where the driver does not say (no get_channels, or none counted). */
unsigned zb_xdp_queue_count(const char *ifname);

/* The interface's MTU (SIOCGIFMTU): the largest IP packet it sends; 0 where it cannot be
 * read. */
uint32_t zb_xdp_mtu(const char *ifname);

#endif
