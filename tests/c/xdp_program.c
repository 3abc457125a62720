/*
 * xdp_program.c - runtime/transport/xdp/program.c's XDP program, attached and asked, for
 * tests/transport/test_xdp_program.py:
 *
 *   xdp_program attach IFACE PORT auto|native|generic
 *     attach it; print `attached native` (or generic), then at each line on stdin: `close`
 *     detaches it (closes the link) and prints `closed`; end of input ends the program. A
 *     failure prints the message on stderr and exits with its enum zb_xdp_status.
 *   xdp_program verdicts IFACE PORT
 *     attach it, bind an AF_XDP socket to queue 0 and put it in the XSKMAP, then for each line
 *     `QUEUE HEX` on stdin run the program on the frame HEX as received on that queue
 *     (BPF_PROG_TEST_RUN) and print its verdict: pass, redirect, drop or the number.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "transport/xdp/program.h"
#include "transport/xdp/xsk.h"

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

static int test_run(int prog_fd, int ifindex, unsigned queue, const uint8_t *frame, size_t len)
{
	struct xdp_md ctx = { .data_end = (uint32_t)len, .ingress_ifindex = (uint32_t)ifindex,
			      .rx_queue_index = queue };
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)prog_fd;
	attr.test.data_in = (uintptr_t)frame;
	attr.test.data_size_in = (uint32_t)len;
	attr.test.ctx_in = (uintptr_t)&ctx;
	attr.test.ctx_size_in = sizeof(ctx);
	attr.test.repeat = 1;
	if (syscall(SYS_bpf, BPF_PROG_TEST_RUN, &attr, sizeof(attr)) != 0)
		return -errno;
	return (int)attr.test.retval;
}

static int verdicts(const char *ifname, const char *port)
{
	struct zb_xdp_program xdp;
	int status = attach(ifname, port, ZB_XDP_MODE_AUTO, &xdp);
	if (status)
		return status;
	struct zb_xsk xsk;
	char err[512];
	if (zb_xsk_open(&xsk, (unsigned)xdp.ifindex, 0, NULL, err, sizeof(err)) != 0 ||
	    zb_xdp_steer(&xdp, 0, xsk.fd, err, sizeof(err)) != ZB_XDP_OK) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	static char hex[2 * 9000 + 1];
	static uint8_t frame[9000];
	unsigned queue;
	while (scanf("%u %18000s", &queue, hex) == 2) {
		size_t len = 0;
		for (; hex[2 * len] && hex[2 * len + 1]; len++)
			sscanf(hex + 2 * len, "%2hhx", &frame[len]);
		int verdict = test_run(xdp.prog_fd, xdp.ifindex, queue, frame, len);
		switch (verdict) {
		case XDP_PASS:
			printf("pass\n");
			break;
		case XDP_REDIRECT:
			printf("redirect\n");
			break;
		case XDP_DROP:
			printf("drop\n");
			break;
		default:
			printf("%d\n", verdict);
		}
		fflush(stdout);
	}
	zb_xsk_close(&xsk);
	zb_xdp_detach(&xdp);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "attach") == 0)
		return attach_and_wait(argv[2], argv[3], argv[4]);
	if (argc == 4 && strcmp(argv[1], "verdicts") == 0)
		return verdicts(argv[2], argv[3]);
	fprintf(stderr, "usage: xdp_program attach IFACE PORT auto|native|generic\n"
			"       xdp_program verdicts IFACE PORT\n");
	return 2;
}
