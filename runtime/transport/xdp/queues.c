/*
 * queues.c - an interface's receive queues and MTU (see queues.h), by ioctl: ethtool's for
 * the channels, the one interface ethtool itself uses and the only one the kernel has for
 * channels without netlink.
 */
#include "transport/xdp/queues.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* ioctl `request` on the interface `ifname`, `ifr` filled in by the caller but for the name.
 * Returns 0, or -1. */
static int interface_ioctl(const char *ifname, unsigned long request, struct ifreq *ifr)
{
	if (strlen(ifname) >= sizeof(ifr->ifr_name))
		return -1;
	strcpy(ifr->ifr_name, ifname);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int failed = ioctl(fd, request, ifr) != 0;
	close(fd);
	return failed ? -1 : 0;
}

unsigned zb_xdp_queue_count(const char *ifname)
{
	struct ethtool_channels channels = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_data = (void *)&channels;
	int failed = interface_ioctl(ifname, SIOCETHTOOL, &ifr) != 0;
	unsigned queues = failed ? 0 : channels.combined_count + channels.rx_count;
	return queues ? queues : 1;
}

uint32_t zb_xdp_mtu(const char *ifname)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	if (interface_ioctl(ifname, SIOCGIFMTU, &ifr) != 0 || ifr.ifr_mtu < 0)
		return 0;
	return (uint32_t)ifr.ifr_mtu;
}
