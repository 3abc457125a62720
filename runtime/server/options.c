/*
 * options.c - parse zonebake-server's options. Without an option, the value of the
 * zonebake.toml [server] table compiled in is used.
 */
#include "server/options.h"

#include <net/if.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/xdp/interfaces.h"

/* A repeatable option's defaults, from zonebake.toml: " a b c)", or " none)". */
static void defaults(FILE *to, const char *const *values, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		fprintf(to, " %s", values[i]);
	fprintf(to, "%s)\n", n ? "" : " none");
}

static void usage(FILE *to)
{
	fprintf(to, "usage: zonebake-server [options]\n"
		    "       zonebake-server stats|status --control PATH\n"
		    "       zonebake-server --version | --help\n"
		    "  --listen ADDRESS:PORT       answer UDP and TCP there; repeatable; IPv6 as\n"
		    "                              [::1]:53 (default:");
	defaults(to, zb_zoneset.default_listen, zb_zoneset.ndefault_listen);
	fprintf(to, "  --xdp IFACE[@PORT]          answer UDP to PORT (default: 53) on the interface\n"
		    "                              over AF_XDP, beside the sockets; repeatable\n"
		    "                              (default:");
	defaults(to, zb_zoneset.default_xdp, zb_zoneset.ndefault_xdp);
	fprintf(to, "  --xdp-optional              where AF_XDP cannot be had, say why and serve on\n"
		    "                              the sockets alone (default: %s)\n"
		    "  --tcp-idle-timeout SECONDS  close a silent TCP connection (default: %u)\n"
		    "  --tcp-max-connections N     TCP connections at once per worker; an idle one\n"
		    "                              makes way for a new one (default: %u)\n"
		    "  --tcp-max-connections-per-source N\n"
		    "                              of them from one client address; its own idle\n"
		    "                              one makes way for its new one (default: %u)\n"
		    "  --rrl-responses-per-second N  rate limit UDP responses per client prefix and\n"
		    "                              answer; 0: off (default: %u)\n"
		    "  --rrl-slip N                every Nth limited response goes out truncated;\n"
		    "                              0: none (default: %u)\n"
		    "  --rrl-ipv4-prefix BITS      client prefix of a rate (default: %u)\n"
		    "  --rrl-ipv6-prefix BITS      (default: %u)\n"
		    "  --threads N                 workers, each with its own sockets (default: one\n"
		    "                              per CPU)\n"
		    "  --cpu-affinity              pin worker i to CPU i\n"
		    "  --batch N                   UDP queries taken per recvmmsg (default: 64)\n"
		    "  --no-huge-pages             leave the zone data in the binary's mapping; by\n"
		    "                              default, when 2 MiB or more and the kernel allows,\n"
		    "                              it is copied to transparent huge pages at start-up\n"
		    "  --udp-rcvbuf BYTES          UDP socket receive buffer (default: the system's)\n"
		    "  --udp-sndbuf BYTES          UDP socket send buffer (default: the system's)\n"
		    "  --metrics ADDRESS:PORT      serve statistics over HTTP there: GET /metrics\n"
		    "                              (Prometheus), GET /stats.json (default: none)\n"
		    "  --control PATH              serve the control socket (swaps) at PATH\n"
		    "  --takeover PATH             take the listening sockets over from the server\n"
		    "                              at control socket PATH (not with --listen)\n"
		    "  --release PATH              on SIGHUP, start PATH to take the sockets over\n"
		    "                              and serve in this server's place (needs --control)\n"
		    "  --user NAME|UID:GID         after binding, run as this user\n"
		    "  --chroot DIR                after binding, chroot to DIR\n"
		    "  --allow-root                go on as root (refused without it)\n"
		    "  --version                   print the version and each zone's serial\n"
		    "  --help, -h                  print this help\n"
		    "Sockets passed by systemd (LISTEN_FDS) are served instead of --listen.\n"
		    "serves: %s\n",
		zb_zoneset.xdp_optional ? "on" : "off", zb_zoneset.tcp_idle_timeout, zb_zoneset.tcp_max_connections,
		zb_zoneset.tcp_max_connections_per_source, zb_zoneset.rrl_responses_per_second,
		zb_zoneset.rrl_slip, zb_zoneset.rrl_ipv4_prefix, zb_zoneset.rrl_ipv6_prefix,
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

static const struct numeric {
	const char *name;
	long min, max;
	size_t offset; /* of the uint32_t in struct zb_server_options */
} numerics[] = {
	{ "--tcp-idle-timeout", 1, 86400, offsetof(struct zb_server_options, tcp_idle_timeout) },
	{ "--tcp-max-connections", 1, 65536,
	  offsetof(struct zb_server_options, tcp_max_connections) },
	{ "--tcp-max-connections-per-source", 1, 65536,
	  offsetof(struct zb_server_options, tcp_max_connections_per_source) },
	{ "--rrl-responses-per-second", 0, 1000000,
	  offsetof(struct zb_server_options, rrl.rate) },
	{ "--rrl-slip", 0, 10, offsetof(struct zb_server_options, rrl.slip) },
	{ "--rrl-ipv4-prefix", 1, 32, offsetof(struct zb_server_options, rrl.ipv4_prefix) },
	{ "--rrl-ipv6-prefix", 1, 128, offsetof(struct zb_server_options, rrl.ipv6_prefix) },
	{ "--threads", 1, 1024, offsetof(struct zb_server_options, threads) },
	{ "--batch", 1, 1024, offsetof(struct zb_server_options, batch) },
	{ "--udp-rcvbuf", 4096, 1 << 30, offsetof(struct zb_server_options, sockets.udp_rcvbuf) },
	{ "--udp-sndbuf", 4096, 1 << 30, offsetof(struct zb_server_options, sockets.udp_sndbuf) },
};

static const struct text {
	const char *name;
	size_t offset; /* of the const char * in struct zb_options */
} texts[] = {
	{ "--control", offsetof(struct zb_options, control) },
	{ "--takeover", offsetof(struct zb_options, takeover) },
	{ "--metrics", offsetof(struct zb_options, metrics) },
	{ "--release", offsetof(struct zb_options, release) },
	{ "--user", offsetof(struct zb_options, privileges.user) },
	{ "--chroot", offsetof(struct zb_options, privileges.chroot_dir) },
};

int zb_options_parse(struct zb_options *o, int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	*o = (struct zb_options){ .server = {
		.tcp_idle_timeout = zb_zoneset.tcp_idle_timeout,
		.tcp_max_connections = zb_zoneset.tcp_max_connections,
		.tcp_max_connections_per_source = zb_zoneset.tcp_max_connections_per_source,
		.rrl = { .rate = zb_zoneset.rrl_responses_per_second, .slip = zb_zoneset.rrl_slip,
			 .ipv4_prefix = zb_zoneset.rrl_ipv4_prefix,
			 .ipv6_prefix = zb_zoneset.rrl_ipv6_prefix },
		.threads = zb_zoneset.default_threads ? zb_zoneset.default_threads
			   : cpus > 0 ? (unsigned)cpus : 1,
		.batch = 64,
	}, .huge_pages = 1 };
	/* zonebake.toml's [server] table; options given here override it. */
	o->control = zb_zoneset.default_control;
	o->metrics = zb_zoneset.default_metrics;
	o->privileges.user = zb_zoneset.default_user;
	for (uint32_t i = 0; i < zb_zoneset.ndefault_xdp && i < ZB_MAX_LISTEN; i++)
		o->xdp[o->nxdp++] = zb_zoneset.default_xdp[i];
	o->xdp_optional = zb_zoneset.xdp_optional != 0;
	int xdp_given = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
		int known = 0;
		for (size_t n = 0; value && n < sizeof(numerics) / sizeof(numerics[0]); n++) {
			if (strcmp(arg, numerics[n].name) != 0)
				continue;
			void *field = (char *)&o->server + numerics[n].offset;
			if (numeric_option(arg, value, numerics[n].min, numerics[n].max, field) != 0)
				return 2;
			known = 1;
		}
		for (size_t n = 0; value && n < sizeof(texts) / sizeof(texts[0]); n++) {
			if (strcmp(arg, texts[n].name) == 0) {
				*(const char **)((char *)o + texts[n].offset) = value;
				known = 1;
			}
		}
		if (known) {
			i++;
		} else if (strcmp(arg, "--cpu-affinity") == 0) {
			o->server.cpu_affinity = 1;
		} else if (strcmp(arg, "--huge-pages") == 0) {
			o->huge_pages = 1; /* the default, said */
		} else if (strcmp(arg, "--no-huge-pages") == 0) {
			o->huge_pages = 0;
		} else if (strcmp(arg, "--allow-root") == 0) {
			o->privileges.allow_root = 1;
		} else if (strcmp(arg, "--listen") == 0 && value) {
			if (o->nspecs == ZB_MAX_LISTEN) {
				fprintf(stderr, "zonebake-server: at most %d --listen\n", ZB_MAX_LISTEN);
				return 2;
			}
			o->specs[o->nspecs++] = argv[++i];
			o->listen_given = 1;
		} else if (strcmp(arg, "--xdp") == 0 && value) {
			char name[IF_NAMESIZE], err[200];
			uint16_t port;
			if (zb_xdp_parse_spec(value, name, &port, err, sizeof(err)) != 0) {
				fprintf(stderr, "zonebake-server: %s\n", err);
				return 2;
			}
			if (!xdp_given)
				o->nxdp = 0; /* the command line's replace zonebake.toml's */
			xdp_given = 1;
			if (o->nxdp == ZB_MAX_LISTEN) {
				fprintf(stderr, "zonebake-server: at most %d --xdp\n", ZB_MAX_LISTEN);
				return 2;
			}
			o->xdp[o->nxdp++] = argv[++i];
		} else if (strcmp(arg, "--xdp-optional") == 0) {
			o->xdp_optional = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(arg, "--version") == 0) {
			/* What is served, for a fleet's convergence to be checked on the host. */
			printf("zonebake-server %s\n", zb_zoneset.version);
			for (uint32_t z = 0; z < zb_zoneset.nzones; z++) {
				const struct zb_zone_info *zone = &zb_zoneset.zones[z];
				printf("%s serial %u", zone->origin, (unsigned)zone->serial);
				if (zone->expires)
					printf(" expires %lld", (long long)zone->expires);
				printf("\n");
			}
			return 0;
		} else {
			fprintf(stderr, "zonebake-server: unknown or incomplete option '%s'\n", arg);
			usage(stderr);
			return 2;
		}
	}
	if (o->release && !o->control) {
		fprintf(stderr, "zonebake-server: --release needs --control: the successor takes "
				"the sockets over through it\n");
		return 2;
	}
	if (o->release && o->privileges.chroot_dir) {
		fprintf(stderr, "zonebake-server: --release and --chroot exclude each other: the "
				"successor could not start from inside the chroot\n");
		return 2;
	}
	if (o->takeover && o->listen_given) {
		/* The addresses come with the sockets; a different list could only be wrong. */
		fprintf(stderr, "zonebake-server: --listen and --takeover exclude each other: the "
				"sockets taken over decide the addresses\n");
		return 2;
	}
	if (o->nspecs == 0)
		for (uint32_t i = 0; i < zb_zoneset.ndefault_listen && i < ZB_MAX_LISTEN; i++)
			o->specs[o->nspecs++] = zb_zoneset.default_listen[i];
	return -1;
}
