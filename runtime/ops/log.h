/*
 * log.h - the server's log: one line on stderr per event at start-up, shutdown, swap or error,
 * each prefixed with an ISO-8601 UTC time stamp. Never called in the query path: taking the
 * time and formatting are exactly what the hot path must not do.
 */
#ifndef ZB_LOG_H
#define ZB_LOG_H

/* Write "YYYY-MM-DDTHH:MM:SSZ zonebake-server[PID]: info: <message>\n" to stderr in one
 * write(2), so that lines of threads and of the two processes of a swap (which may share a
 * log, and are told apart by their pid) never interleave. When stderr is the journal, the
 * line is "<6>info: <message>\n" instead: the syslog priority journald reads (sd-daemon(3));
 * it adds the time and pid. */
void zb_log(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* The same, a warning: the server goes on, but not as asked ("warning: ", priority 4). */
void zb_log_warning(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* The same, an error: the server cannot go on ("error: ", priority 3). */
void zb_log_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Whether stderr is the journal: $JOURNAL_STREAM names its device and inode (systemd.exec(5)).
 * Call once at start-up, before any thread. */
void zb_log_init(void);

#endif
