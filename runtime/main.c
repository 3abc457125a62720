/*
 * main.c - zonebake-server: parse options, bind, serve the compiled zone set.
 *
 *   zonebake-server [--listen ADDRESS:PORT ...] [options]  (see usage below)
 *
 * Without an option, the value of the zonebake.toml [server] table compiled in is used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "server.h"
#include "sockets.h"
#include "zonedata.h"

static void usage(FILE *to)
{
	fprintf(to, "usage: zonebake-server [options]\n"
		    "  --listen ADDRESS:PORT       answer UDP and TCP there; repeatable; IPv6 as\n"
		    "                              [::1]:53 (default:");
	for (uint32_t i = 0; i < zb_zoneset.ndefault_listen; i++)
		fprintf(to, " %s", zb_zoneset.default_listen[i]);
	fprintf(to, ")\n"
		    "  --tcp-idle-timeout SECONDS  close a silent TCP connection (default: %u)\n"
		    "  --tcp-max-connections N     TCP connections at once per worker; the oldest\n"
		    "                              idle one makes way for a new one (default: %u)\n"
		    "  --threads N                 workers, each with its own sockets (default: one\n"
		    "                              per CPU)\n"
		    "  --cpu-affinity              pin worker i to CPU i\n"
		    "  --batch N                   UDP queries taken per recvmmsg (default: 64)\n"
		    "  --udp-rcvbuf BYTES          UDP socket receive buffer (default: the system's)\n"
		    "  --udp-sndbuf BYTES          UDP socket send buffer (default: the system's)\n"
		    "serves: %s\n",
		zb_zoneset.tcp_idle_timeout, zb_zoneset.tcp_max_connections,
		zb_zoneset.description);
}

/* Set *out from an option's whole-number value in [min, max]; complain and return -1 if
 * it is not one. */
static int numeric_option(const char *name, const char *text, long min, long max,
			  uint32_t *out)
{
	char *end;
	long value = strtol(text, &end, 10);

	if (!*text || *end || value < min || value > max) {
		fprintf(stderr, "zonebake-server: %s takes %ld to %ld\n", name, min, max);
		return -1;
	}
	*out = (uint32_t)value;
	return 0;
}

int main(int argc, char **argv)
{
	const char *specs[ZB_MAX_LISTEN];
	int nspecs = 0;
	char err[256];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t threads = cpus > 0 ? (uint32_t)cpus : 1, batch = 64, rcvbuf = 0, sndbuf = 0;
	struct zb_server server = { .options = {
		.tcp_idle_timeout = zb_zoneset.tcp_idle_timeout,
		.tcp_max_connections = zb_zoneset.tcp_max_connections,
	} };
	struct zb_server_options *options = &server.options;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--tcp-idle-timeout") == 0 && i + 1 < argc) {
			if (numeric_option(argv[i], argv[i + 1], 1, 86400,
					   &options->tcp_idle_timeout) != 0)
				return 2;
			i++;
		} else if (strcmp(argv[i], "--tcp-max-connections") == 0 && i + 1 < argc) {
			if (numeric_option(argv[i], argv[i + 1], 1, 65536,
					   &options->tcp_max_connections) != 0)
				return 2;
			i++;
		} else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			if (numeric_option(argv[i], argv[i + 1], 1, 1024, &threads) != 0)
				return 2;
			i++;
		} else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
			if (numeric_option(argv[i], argv[i + 1], 1, 1024, &batch) != 0)
				return 2;
			i++;
		} else if (strcmp(argv[i], "--udp-rcvbuf") == 0 && i + 1 < argc) {
			if (numeric_option(argv[i], argv[i + 1], 4096, 1 << 30, &rcvbuf) != 0)
				return 2;
			i++;
		} else if (strcmp(argv[i], "--udp-sndbuf") == 0 && i + 1 < argc) {
			if (numeric_option(argv[i], argv[i + 1], 4096, 1 << 30, &sndbuf) != 0)
				return 2;
			i++;
		} else if (strcmp(argv[i], "--cpu-affinity") == 0) {
			options->cpu_affinity = 1;
		} else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
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

	options->threads = threads;
	options->batch = batch;
	options->sockets = (struct zb_socket_options){ .udp_rcvbuf = (int)rcvbuf,
						       .udp_sndbuf = (int)sndbuf };
	if (zb_server_bind(&server, &zb_zoneset, specs, nspecs, err, sizeof(err)) != 0) {
		zb_log("%s", err);
		return 1;
	}
	if (zb_server_start(&server) != 0)
		return 1;
	zb_server_log_serving(&server, zb_zoneset.description);
	if (zb_server_run_first(&server) != 0)
		return 1;
	zb_log("stopped");
	return 0;
}
