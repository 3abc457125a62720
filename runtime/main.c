/*
 * main.c - zonebake-server: parse options, bind, serve the compiled zone set.
 *
 *   zonebake-server [--listen ADDRESS:PORT ...]
 *
 * Without --listen, the addresses of the zonebake.toml [server] table compiled in are used.
 */
#include <stdio.h>
#include <string.h>

#include "sockets.h"
#include "udp.h"
#include "zonedata.h"

#define ZB_MAX_LISTEN 64

static void usage(FILE *to)
{
	fprintf(to, "usage: zonebake-server [--listen ADDRESS:PORT]...\n"
		    "  --listen ADDRESS:PORT  answer UDP queries there; repeatable; IPv6 as [::1]:53\n"
		    "                         (default:");
	for (uint32_t i = 0; i < zb_zoneset.ndefault_listen; i++)
		fprintf(to, " %s", zb_zoneset.default_listen[i]);
	fprintf(to, ")\nserves: %s\n", zb_zoneset.description);
}

int main(int argc, char **argv)
{
	const char *specs[ZB_MAX_LISTEN];
	struct zb_listener listeners[ZB_MAX_LISTEN];
	int nspecs = 0;
	char err[256];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
			if (nspecs == ZB_MAX_LISTEN) {
				fprintf(stderr, "zonebake-server: at most %d --listen\n", ZB_MAX_LISTEN);
				return 2;
			}
			specs[nspecs++] = argv[++i];
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "zonebake-server: unknown or incomplete option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (nspecs == 0)
		for (uint32_t i = 0; i < zb_zoneset.ndefault_listen && i < ZB_MAX_LISTEN; i++)
			specs[nspecs++] = zb_zoneset.default_listen[i];

	for (int i = 0; i < nspecs; i++) {
		if (zb_listen_udp(specs[i], &listeners[i], err, sizeof(err)) != 0) {
			fprintf(stderr, "zonebake-server: %s\n", err);
			return 1;
		}
	}
	for (int i = 0; i < nspecs; i++) {
		char addr[80];
		zb_format_addr(&listeners[i], addr, sizeof(addr));
		fprintf(stderr, "zonebake-server: serving %s on %s (udp)\n", zb_zoneset.description,
			addr);
	}
	fflush(stderr);
	return zb_serve_udp(&zb_zoneset, listeners, nspecs) == 0 ? 0 : 1;
}
