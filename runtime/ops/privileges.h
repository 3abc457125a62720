/*
 * privileges.h - after binding, leave root: --chroot DIR, --user NAME or UID:GID. The binary
 * is static, so there is no NSS: a user name is looked up in /etc/passwd by hand, before the
 * chroot hides it. Running on as root takes --allow-root.
 */
#ifndef ZB_PRIVILEGES_H
#define ZB_PRIVILEGES_H

#include <stddef.h>
#include <sys/types.h>

struct zb_privileges {
	const char *user;       /* --user, or NULL: keep the current user */
	const char *chroot_dir; /* --chroot, or NULL */
	int allow_root;         /* --allow-root */
	uid_t uid;              /* --user resolved, or (uid_t)-1 */
	gid_t gid;
};

/* Resolve --user: UID:GID as numbers, or a name from /etc/passwd (its primary group).
 * Refuse now, before anything is bound, a server that would go on as root without
 * --allow-root. Returns 0, or -1 with a message in `err`. */
int zb_privileges_resolve(struct zb_privileges *p, char *err, size_t err_len);

/* Enter the chroot, then become the user: supplementary groups set to the primary group
 * alone, then the group, then the user; check there is no way back. Call before any thread
 * starts. Returns 0, or -1 with a message in `err`. */
int zb_privileges_drop(const struct zb_privileges *p, char *err, size_t err_len);

#endif
