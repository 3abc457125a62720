/*
 * notify.h - systemd's readiness protocol (sd_notify(3)), spoken directly: one datagram to
 * the Unix socket $NOTIFY_SOCKET names, no libsystemd. READY=1 once this process serves;
 * MAINPID=<pid> when a successor has taken every socket over, so that it stays the unit's
 * main process (contrib/systemd/zonebake.service: Type=notify).
 */
#ifndef ZB_NOTIFY_H
#define ZB_NOTIFY_H

/* Open the socket $NOTIFY_SOCKET names, if it names one: before a chroot could hide it. */
void zb_notify_open(void);

/* Send one state line ("READY=1"); nothing when there is no socket. A failure is logged:
 * systemd would then time the start out, and the log says why. */
void zb_notify(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
