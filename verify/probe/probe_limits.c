/*
 * probe_limits.c: stockade-probe's commands for the limits checks
 * (verify/check/check_limits.c; probe_limits.h): the job's resource
 * limits, the host user's kernel quotas, and the calls that would pin
 * kernel memory the monitor cannot see, each answered by an errno name.
 * Every attempt is harmless whatever the jail does.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "probe_limits.h"

static void
limit_value(char *buf, size_t len, rlim_t v)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* rlimits: "rlimit.NAME=soft hard" for each resource ("unlimited"). */
int
limits_cmd_rlimits(int argc, char **argv)
{
	static const struct {
		const char *name;
		int res;
	} res[] = {
	    {"CPU", RLIMIT_CPU},
	    {"FSIZE", RLIMIT_FSIZE},
	    {"DATA", RLIMIT_DATA},
	    {"STACK", RLIMIT_STACK},
	    {"CORE", RLIMIT_CORE},
	    {"RSS", RLIMIT_RSS},
	    {"NPROC", RLIMIT_NPROC},
	    {"NOFILE", RLIMIT_NOFILE},
	    {"MEMLOCK", RLIMIT_MEMLOCK},
	    {"AS", RLIMIT_AS},
	    {"LOCKS", RLIMIT_LOCKS},
	    {"SIGPENDING", RLIMIT_SIGPENDING},
	    {"MSGQUEUE", RLIMIT_MSGQUEUE},
	    {"NICE", RLIMIT_NICE},
	    {"RTPRIO", RLIMIT_RTPRIO},
	    {"RTTIME", RLIMIT_RTTIME},
	};
	char key[32], cur[32], max[32];

	for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		struct rlimit rl;

		snprintf(key, sizeof(key), "rlimit.%s", res[i].name);
		if (getrlimit(res[i].res, &rl) < 0) {
			probe_errno(key, errno);
			continue;
		}
		limit_value(cur, sizeof(cur), rl.rlim_cur);
		limit_value(max, sizeof(max), rl.rlim_max);
		probe_kv(key, "%s %s", cur, max);
	}
	return 0;
}

/* The errno of CALL's result R (0 when R >= 0). */
#define ERR_OF(r) ((r) < 0 ? errno : 0)

#ifndef F_OFD_GETLK
#define F_OFD_GETLK 36
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#endif

/* cmd_kmem's locks: on a file of /tmp (unlinked at once), fcntl(2)
 * F_OFD_SETLK and F_OFD_SETLKW of byte 0 (an open file description
 * lock: it stays with the open file in flight in a unix socket, in no
 * descriptor table), F_OFD_GETLK, and F_SETLK of byte 2 (a POSIX lock,
 * gone with the owner's descriptors), each answer an errno name or "ok"
 * ("kmem.ofd_setlk", "kmem.ofd_setlkw", "kmem.ofd_getlk", "kmem.setlk"). */
static void
kmem_locks(void)
{
	char path[] = "/tmp/probe-lock-XXXXXX";
	struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1};
	int fd = mkstemp(path), r;

	if (fd < 0) {
		probe_errno("kmem.lockfile", errno);
		return;
	}
	(void)unlink(path);
	r = fcntl(fd, F_OFD_SETLK, &l);
	probe_errno("kmem.ofd_setlk", ERR_OF(r));
	l.l_start = 4;
	r = fcntl(fd, F_OFD_SETLKW, &l);
	probe_errno("kmem.ofd_setlkw", ERR_OF(r));
	l.l_start = 0;
	r = fcntl(fd, F_OFD_GETLK, &l);
	probe_errno("kmem.ofd_getlk", ERR_OF(r));
	l = (struct flock){.l_type = F_WRLCK,
	    .l_whence = SEEK_SET,
	    .l_start = 2,
	    .l_len = 1};
	r = fcntl(fd, F_SETLK, &l);
	probe_errno("kmem.setlk", ERR_OF(r));
	close(fd);
}

/*
 * `kmem`: the ways to hold kernel memory no process maps that the jail
 * bounds under the /proc monitor (docs/layers.md): one semget(2) set of
 * one semaphore (removed at once if made), F_SETPIPE_SZ of a pipe to
 * 1 MiB (fcntl(2)), SO_SNDBUF and SO_RCVBUF of a unix socket to 1 MiB
 * (socket(7)), vmsplice(2) of one byte into a pipe (a page a pipe
 * buffer holds, however large its folio), each answer an errno name or
 * "ok"; the lock commands of kmem_locks; and the user
 * namespace's user/max_inotify_watches. Nothing outlives the probe.
 */
int
limits_cmd_kmem(int argc, char **argv)
{
	int fds[2], id, one = 1 << 20, r;
	char buf[32];
	FILE *f;

	(void)argc;
	(void)argv;
	id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	probe_errno("kmem.semget", ERR_OF(id));
	if (id >= 0)
		semctl(id, 0, IPC_RMID);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		probe_errno("kmem.pipe", errno);
	} else {
		struct iovec iov = {.iov_base = buf, .iov_len = 1};

		r = fcntl(fds[0], F_SETPIPE_SZ, one);
		probe_errno("kmem.setpipe_sz", ERR_OF(r));
		buf[0] = 'x';
		r = (int)vmsplice(fds[1], &iov, 1, 0);
		probe_errno("kmem.vmsplice", ERR_OF(r));
		close(fds[0]);
		close(fds[1]);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) {
		probe_errno("kmem.socketpair", errno);
	} else {
		r = setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &one,
		    sizeof(one));
		probe_errno("kmem.so_sndbuf", ERR_OF(r));
		r = setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &one,
		    sizeof(one));
		probe_errno("kmem.so_rcvbuf", ERR_OF(r));
		close(fds[0]);
		close(fds[1]);
	}
	kmem_locks();
	f = fopen("/proc/sys/user/max_inotify_watches", "re");
	if (f == NULL || fgets(buf, sizeof(buf), f) == NULL)
		probe_errno("kmem.inotify_watches", errno != 0 ? errno : EIO);
	else
		probe_kv("kmem.inotify_watches", "%s", strtok(buf, "\n"));
	if (f != NULL)
		fclose(f);
	return 0;
}

/* userquotas: "userquota.NAME=value" for each per-user kernel quota of
 * the jail's user namespace the kernel has (/proc/sys/user/NAME,
 * kernel/ucount.c; "absent" when missing), and rlimit.SIGPENDING. */
int
limits_cmd_userquotas(int argc, char **argv)
{
	static const char *const names[] = {
	    "max_inotify_instances",
	    "max_inotify_watches",
	    "max_fanotify_groups",
	    "max_fanotify_marks",
	    "max_user_namespaces",
	    "max_pid_namespaces",
	    "max_net_namespaces",
	    "max_mnt_namespaces",
	    "max_ipc_namespaces",
	    "max_uts_namespaces",
	    "max_cgroup_namespaces",
	    "max_time_namespaces",
	};
	char path[96], key[64], buf[32], cur[32], max[32];
	struct rlimit rl;

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/sys/user/%s", names[i]);
		snprintf(key, sizeof(key), "userquota.%s", names[i]);
		f = fopen(path, "re");
		if (f == NULL) {
			if (errno == ENOENT)
				probe_kv(key, "absent");
			else
				probe_errno(key, errno);
			continue;
		}
		if (fgets(buf, sizeof(buf), f) == NULL)
			probe_errno(key, EIO);
		else
			probe_kv(key, "%s", strtok(buf, "\n"));
		fclose(f);
	}
	if (getrlimit(RLIMIT_SIGPENDING, &rl) < 0) {
		probe_errno("rlimit.SIGPENDING", errno);
		return 0;
	}
	limit_value(cur, sizeof(cur), rl.rlim_cur);
	limit_value(max, sizeof(max), rl.rlim_max);
	probe_kv("rlimit.SIGPENDING", "%s %s", cur, max);
	return 0;
}
