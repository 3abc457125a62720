/*
 * queues.h - how many receive queues an interface has: one AF_XDP socket and one worker each.
 */
#ifndef ZB_XDP_QUEUES_H
#define ZB_XDP_QUEUES_H

/* The interface's receive queues as ETHTOOL_GCHANNELS counts them (combined channels and
 * receive-only ones); 1 where the driver does not say (no get_channels, or none counted). */
unsigned zb_xdp_queue_count(const char *ifname);

#endif
