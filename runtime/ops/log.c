/*
 * log.c - time-stamped, one-line, one-write log messages on stderr (see log.h).
 */
#include "ops/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_ERR 3 /* syslog priorities (RFC 5424 §6.2.1) */
#define LOG_WARNING 4
#define LOG_INFO 6

static int journal; /* stderr is the journal: syslog priority prefixes, no time stamp */

void zb_log_init(void)
{
	const char *stream = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	journal = stream && sscanf(stream, "%llu:%llu", &dev, &ino) == 2 &&
		  fstat(STDERR_FILENO, &st) == 0 && (unsigned long long)st.st_dev == dev &&
		  (unsigned long long)st.st_ino == ino;
}

static const char *const severity[] = {[LOG_ERR] = "error", [LOG_WARNING] = "warning",
				       [LOG_INFO] = "info"};

static void vlog(int priority, const char *format, va_list args)
{
	char line[512];
	size_t len;
	if (journal) {
		len = (size_t)snprintf(line, sizeof(line), "<%d>", priority);
	} else {
		struct tm utc;
		time_t now = time(NULL);
		len = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ ", gmtime_r(&now, &utc));
		len += (size_t)snprintf(line + len, sizeof(line) - len, "zonebake-server[%d]: ",
					(int)getpid());
	}
	len += (size_t)snprintf(line + len, sizeof(line) - len, "%s: ", severity[priority]);
	int n = vsnprintf(line + len, sizeof(line) - len - 1, format, args);
	if (n < 0)
		return;
	len += (size_t)n < sizeof(line) - len - 1 ? (size_t)n : sizeof(line) - len - 2;
	line[len++] = '\n';
	/* Nothing to do if stderr is gone: the line is lost, the server goes on. */
	if (write(STDERR_FILENO, line, len) < 0)
		return;
}

void zb_log(const char *format, ...)
{
	va_list args;

	va_start(args, format);
	vlog(LOG_INFO, format, args);
	va_end(args);
}

void zb_log_warning(const char *format, ...)
{
	va_list args;

	va_start(args, format);
	vlog(LOG_WARNING, format, args);
	va_end(args);
}

void zb_log_error(const char *format, ...)
{
	va_list args;

	va_start(args, format);
	vlog(LOG_ERR, format, args);
	va_end(args);
}
