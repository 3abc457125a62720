/*
 * privileges.c - chroot and user switch after binding (see privileges.h).
 */
#define _GNU_SOURCE /* setgroups */
#include "ops/privileges.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A user or group id: digits only, below (id_t)-1, which means "unchanged" to the kernel. */
static int parse_id(const char *text, size_t len, unsigned long *id)
{
	char digits[16];
	char *end;

	if (len == 0 || len >= sizeof(digits) || text[0] < '0' || text[0] > '9')
		return -1;
	memcpy(digits, text, len);
	digits[len] = 0;
	errno = 0;
	*id = strtoul(digits, &end, 10);
	return errno || *end || *id >= 0xffffffffUL ? -1 : 0;
}

/* Find `name` in /etc/passwd: name:password:uid:gid:gecos:home:shell. */
static int lookup_user(const char *name, struct zb_privileges *p, char *err, size_t err_len)
{
	char line[1024];
	size_t name_len = strlen(name);
	FILE *passwd = fopen("/etc/passwd", "r");

	if (!passwd) {
		snprintf(err, err_len, "--user %s: /etc/passwd: %s", name, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), passwd)) {
		if (strncmp(line, name, name_len) != 0 || line[name_len] != ':')
			continue;
		char *uid = strchr(line + name_len + 1, ':');
		char *gid = uid ? strchr(uid + 1, ':') : NULL;
		char *gid_end = gid ? strchr(gid + 1, ':') : NULL;
		unsigned long u, g;
		fclose(passwd);
		if (!gid_end || parse_id(uid + 1, (size_t)(gid - uid - 1), &u) != 0 ||
		    parse_id(gid + 1, (size_t)(gid_end - gid - 1), &g) != 0) {
			snprintf(err, err_len, "--user %s: its /etc/passwd line does not parse", name);
			return -1;
		}
		p->uid = (uid_t)u;
		p->gid = (gid_t)g;
		return 0;
	}
	fclose(passwd);
	snprintf(err, err_len, "--user %s: no such user in /etc/passwd", name);
	return -1;
}

int zb_privileges_resolve(struct zb_privileges *p, char *err, size_t err_len)
{
	p->uid = (uid_t)-1;
	p->gid = (gid_t)-1;
	if (p->user) {
		const char *colon = strchr(p->user, ':');
		unsigned long u, g;
		if (colon) {
			if (parse_id(p->user, (size_t)(colon - p->user), &u) != 0 ||
			    parse_id(colon + 1, strlen(colon + 1), &g) != 0) {
				snprintf(err, err_len, "--user %s: UID:GID takes two numbers below "
					 "4294967295", p->user);
				return -1;
			}
			p->uid = (uid_t)u;
			p->gid = (gid_t)g;
		} else if (lookup_user(p->user, p, err, err_len) != 0) {
			return -1;
		}
	}
	uid_t will_be = p->user ? p->uid : geteuid();
	if (will_be == 0 && !p->allow_root) {
		snprintf(err, err_len, "refusing to serve as root: give --user NAME (or UID:GID), "
			 "or --allow-root");
		return -1;
	}
	return 0;
}

int zb_privileges_drop(const struct zb_privileges *p, char *err, size_t err_len)
{
	if (p->chroot_dir && (chroot(p->chroot_dir) != 0 || chdir("/") != 0)) {
		snprintf(err, err_len, "--chroot %s: %s", p->chroot_dir, strerror(errno));
		return -1;
	}
	if (!p->user)
		return 0;
	if (setgroups(1, &p->gid) != 0 || setgid(p->gid) != 0 || setuid(p->uid) != 0) {
		snprintf(err, err_len, "--user %s: %s", p->user, strerror(errno));
		return -1;
	}
	/* setuid from root changes the real, effective and saved ids: there must be no way
	 * back. */
	if (getuid() != p->uid || geteuid() != p->uid || getegid() != p->gid ||
	    (p->uid != 0 && setuid(0) == 0)) {
		snprintf(err, err_len, "--user %s: the switch did not hold", p->user);
		return -1;
	}
	return 0;
}
