/*
 * queues.c - an interface's receive queues (see queues.h), by the ethtool ioctl: the one
 * interface ethtool itself uses, and the only one the kernel has for channels without netlink.
 */
#include "transport/xdp/queues.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

unsigned zb_xdp_queue_count(const char *ifname)
{
	struct ethtool_channels channels = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return 1;
	strcpy(ifr.ifr_name, ifname);
	ifr.ifr_data = (void *)&channels;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 1;
	int failed = ioctl(fd, SIOCETHTOOL, &ifr) != 0;
	close(fd);
	unsigned queues = failed ? 0 : channels.combined_count + channels.rx_count;
	return queues ? queues : 1;
}
