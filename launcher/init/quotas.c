/*
 * quotas.c: the jail user namespace's own per-user kernel quotas
 * (/proc/sys/user, user_namespaces(7) and the kernel's kernel/ucount.c),
 * written by jail init while it still holds CAP_SYS_RESOURCE in that
 * namespace, before any code of the job runs (jail.h,
 * jail_user_quotas).
 *
 * Why: the jail's uid is a host uid (the caller's, or "nobody" for a root
 * launcher), and the kernel's ucounts are hierarchical: an inotify
 * instance or watch, a fanotify group or mark, or a namespace made in the
 * jail is charged to the jail's (user namespace, uid) and to every
 * ancestor's, up to the host user's. A fresh user namespace's own
 * maxima are INT_MAX (create_user_ns), so without these a job may take
 * the whole of the host user's quota (128 inotify instances by default)
 * and its other programs get EMFILE. The pending-signal quota, an
 * rlimit, is bounded by RLIMIT_SIGPENDING in payload.c instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jail.h"

/* One quota: its file under /proc/sys/user and the jail's value, or
 * JAIL_QUOTA_NS for the namespace counts (see jail_user_quotas). */
#define JAIL_QUOTA_NS (-1)

static const struct {
	const char *name;
	int value;
} quotas[] = {
    /* Instances: a file watcher, an IDE's language server or a test
	 * runner takes one to a few; the host user keeps 96 of 128. */
    {"max_inotify_instances", JAIL_INOTIFY_INSTANCES},
    /* Watches: one per watched directory (a few hundred bytes of
	 * kernel memory each, inotify(7)): a large tree watched whole. */
    {"max_inotify_watches", JAIL_INOTIFY_WATCHES},
    /* fanotify without CAP_SYS_ADMIN (Linux 5.13) is charged to the
	 * user like inotify (fanotify_init(2)). */
    {"max_fanotify_groups", JAIL_FANOTIFY_GROUPS},
    {"max_fanotify_marks", JAIL_FANOTIFY_MARKS},
    /* Namespaces: every one the job made would be charged to the host
	 * user too (the user's max_user_namespaces and the like). */
    {"max_user_namespaces", JAIL_QUOTA_NS},
    {"max_pid_namespaces", JAIL_QUOTA_NS},
    {"max_net_namespaces", JAIL_QUOTA_NS},
    {"max_mnt_namespaces", JAIL_QUOTA_NS},
    {"max_ipc_namespaces", JAIL_QUOTA_NS},
    {"max_uts_namespaces", JAIL_QUOTA_NS},
    {"max_cgroup_namespaces", JAIL_QUOTA_NS},
    {"max_time_namespaces", JAIL_QUOTA_NS},
};

/* Writes VALUE (decimal) to NAME in directory DIR. 0, -ENOENT when the
 * kernel has no such quota, or another negative errno. */
static int
write_quota(int dir, const char *name, int value)
{
	char buf[16];
	int fd, n, e = 0;

	fd = openat(dir, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", value);
	if (write(fd, buf, (size_t)n) != (ssize_t)n)
		e = errno != 0 ? -errno : -EIO;
	close(fd);
	return e;
}

/* jail.h */
int
jail_user_quotas(const char *dir_path, bool namespaces_allowed)
{
	int dir, e = 0;

	dir = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(quotas) / sizeof(quotas[0]); i++) {
		int v = quotas[i].value;

		if (v == JAIL_QUOTA_NS)
			v = namespaces_allowed ? JAIL_NAMESPACES_UNSAFE : 0;
		e = write_quota(dir, quotas[i].name, v);
		/* A quota this kernel does not have (fanotify's before
		 * 5.13, time namespaces' before 5.6) charges nothing. */
		if (e == -ENOENT)
			e = 0;
		if (e < 0)
			break;
	}
	close(dir);
	return e;
}
