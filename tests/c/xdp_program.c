/*
 * xdp_program.c - runtime/transport/xdp/program.c's XDP program, attached and asked, for
 * tests/transport/test_xdp_program.py:
 *
 *   xdp_program attach IFACE PORT auto|native|generic
 *     attach it; print `attached native` (or generic), then at each line on stdin: `close`
 *     detaches it (closes the link) and prints `closed`; end of input ends the program. A
 *     failure prints the message on stderr and exits with its enum zb_xdp_status.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/xdp/program.h"

static int attach(const char *ifname, const char *port, enum zb_xdp_mode mode,
		  struct zb_xdp_program *xdp)
{
	char err[8192];
	enum zb_xdp_status status = zb_xdp_attach(xdp, ifname, (uint16_t)atoi(port), mode, err,
						  sizeof(err));
	if (status != ZB_XDP_OK)
		fprintf(stderr, "%s\n", err);
	return (int)status;
}

static int attach_and_wait(const char *ifname, const char *port, const char *mode_name)
{
	enum zb_xdp_mode mode = strcmp(mode_name, "native") == 0 ? ZB_XDP_MODE_NATIVE :
				strcmp(mode_name, "generic") == 0 ? ZB_XDP_MODE_GENERIC :
				ZB_XDP_MODE_AUTO;
	struct zb_xdp_program xdp;
	int status = attach(ifname, port, mode, &xdp);
	if (status)
		return status;
	printf("attached %s\n", xdp.native ? "native" : "generic");
	fflush(stdout);
	char line[64];
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "close", 5) == 0) {
			zb_xdp_detach(&xdp);
			printf("closed\n");
			fflush(stdout);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "attach") == 0)
		return attach_and_wait(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: xdp_program attach IFACE PORT auto|native|generic\n");
	return 2;
}
