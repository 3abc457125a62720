/*
 * xdp_socket.c - runtime/transport/xdp/xsk.c's and queues.c's set-up, for
 * tests/transport/test_xdp_socket.py:
 *
 *   xdp_socket queues IFACE
 *     print zb_xdp_queue_count's count
 *   xdp_socket bind IFACE QUEUE auto|copy|zerocopy [QUEUE2]
 *     open an AF_XDP socket on QUEUE (and a second on QUEUE2), print `bound copy` (or
 *     zero-copy) for each, and hold them until end of input; a failure prints the message on
 *     stderr and exits 1
 */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/xdp/queues.h"
#include "transport/xdp/xsk.h"

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "queues") == 0) {
		printf("%u\n", zb_xdp_queue_count(argv[2]));
		return 0;
	}
	if (argc < 5 || argc > 6 || strcmp(argv[1], "bind") != 0) {
		fprintf(stderr, "usage: xdp_socket queues IFACE\n"
				"       xdp_socket bind IFACE QUEUE auto|copy|zerocopy [QUEUE2]\n");
		return 2;
	}
	struct zb_xsk_config config = {
		.mode = strcmp(argv[4], "copy") == 0 ? ZB_XSK_COPY :
			strcmp(argv[4], "zerocopy") == 0 ? ZB_XSK_ZEROCOPY : ZB_XSK_AUTO,
	};
	struct zb_xsk sockets[2];
	for (int i = 0; i < argc - 4; i++) {
		char err[512];
		unsigned queue = (unsigned)atoi(argv[i == 0 ? 3 : 5]);
		if (zb_xsk_open(&sockets[i], if_nametoindex(argv[2]), queue, &config, err,
				sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		printf("bound %s\n", sockets[i].zerocopy ? "zero-copy" : "copy");
		fflush(stdout);
	}
	while (getchar() != EOF)
		;
	for (int i = 0; i < argc - 4; i++)
		zb_xsk_close(&sockets[i]);
	return 0;
}
