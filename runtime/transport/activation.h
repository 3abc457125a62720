/*
 * activation.h - systemd socket activation (sd_listen_fds(3), without libsystemd): when
 * LISTEN_PID is this process and LISTEN_FDS is N, descriptors 3 .. 3+N-1 are listening
 * sockets bound by systemd (zonebake.socket). They outlive the service: queries sent while
 * it restarts wait in them.
 */
#ifndef ZB_ACTIVATION_H
#define ZB_ACTIVATION_H

#include <stddef.h>

#include "transport/sockets.h"

/* Adopt the sockets systemd passed, if any. Returns their number (0: none passed) with
 * *sockets from malloc, or -1 with a message in `err`. The variables are removed from the
 * environment, as sd_listen_fds(1) does, so that nothing started later takes them. */
int zb_activation_sockets(const struct zb_socket_options *options, struct zb_socket **sockets,
			  char *err, size_t err_len);

#endif
