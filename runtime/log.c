/*
 * log.c - time-stamped, one-line, one-write log messages on stderr (see log.h).
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

void zb_log(const char *format, ...)
{
	char line[512];
	struct tm utc;
	time_t now = time(NULL);
	size_t len = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ ", gmtime_r(&now, &utc));
	len += (size_t)snprintf(line + len, sizeof(line) - len, "zonebake-server[%d]: ",
				(int)getpid());
	va_list args;

	va_start(args, format);
	int n = vsnprintf(line + len, sizeof(line) - len - 1, format, args);
	va_end(args);
	if (n < 0)
		return;
	len += (size_t)n < sizeof(line) - len - 1 ? (size_t)n : sizeof(line) - len - 2;
	line[len++] = '\n';
	/* Nothing to do if stderr is gone: the line is lost, the server goes on. */
	if (write(STDERR_FILENO, line, len) < 0)
		return;
}
