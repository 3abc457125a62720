/*
 * ask.c - the client side of the control socket for people and scripts (see ask.h): one
 * command, its answer on stdout without the leading "ok " (status: and the line of each of
 * the `zones=N` zones after it).
 */
#include "ops/ask.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/ctlio.h"

int zb_ask(int argc, char **argv)
{
	const char *command = argv[1];
	char err[300], reply[4] = "";
	size_t got = 0;

	if ((strcmp(command, "stats") != 0 && strcmp(command, "status") != 0) || argc != 4 ||
	    strcmp(argv[2], "--control") != 0) {
		fprintf(stderr, "usage: zonebake-server stats|status --control PATH\n");
		return 2;
	}
	int conn = zb_ctl_connect(argv[3], err, sizeof(err));
	if (conn < 0) {
		fprintf(stderr, "zonebake-server: %s\n", err);
		return 1;
	}
	/* The answer is one line of any length: copied through as it comes, after "ok ". */
	int failed = zb_ctl_sendf(conn, "%s", command) != 0;
	while (!failed && got < 3 && read(conn, reply + got, 1) == 1)
		got += reply[got] != '\n';
	failed = failed || strcmp(reply, "ok ") != 0;
	FILE *out = failed ? stderr : stdout;
	if (failed)
		fprintf(stderr, "zonebake-server: %s: %s%s", command, reply, got < 3 ? "\n" : "");
	char line[ZB_CONTROL_LINE_MAX];  /* the first line's start: status's zones=N */
	size_t kept = 0;
	for (char c = 0; c != '\n' && read(conn, &c, 1) == 1;) {
		fputc(c, out);
		if (kept < sizeof(line) - 1)
			line[kept++] = c;
	}
	line[kept] = 0;
	const char *zones = strstr(line, " zones=");
	unsigned long more = !failed && strcmp(command, "status") == 0 && zones ?
		strtoul(zones + 7, NULL, 10) : 0;
	for (char c = 0; more > 0 && read(conn, &c, 1) == 1;) {
		fputc(c, out);
		more -= c == '\n';
	}
	close(conn);
	return failed;
}
