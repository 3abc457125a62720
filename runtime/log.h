/*
 * log.h - the server's log: one line on stderr per event at start-up, shutdown, swap or error,
 * each prefixed with an ISO-8601 UTC time stamp. Never called in the query path: taking the
 * time and formatting are exactly what the hot path must not do.
 */
#ifndef ZB_LOG_H
#define ZB_LOG_H

/* Write "YYYY-MM-DDTHH:MM:SSZ zonebake-server[PID]: <message>\n" to stderr in one write(2),
 * so that lines of threads and of the two processes of a swap (which may share a log, and
 * are told apart by their pid) never interleave. */
void zb_log(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
