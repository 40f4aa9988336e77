/*
 * usage_kobj.c: the kernel objects of a jail no resident set holds
 * (usage.h, usage_kernel_objects and usage_kobj_bytes): epoll watches
 * and files in flight from each descriptor's fdinfo, memory maps and
 * file locks, counted along a walk of the process tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "usage.h"
#include "usage_internal.h"

uint64_t
usage_kobj_bytes(const struct kernel_objects *k)
{
	const uint64_t n[] = {k->watches, k->maps, k->locks, k->inflight};
	const uint64_t each[] = {EPOLL_WATCH_BYTES, KOBJ_VMA_BYTES,
	    KOBJ_LOCK_BYTES, KOBJ_INFLIGHT_BYTES};
	uint64_t sum = 0;

	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		sum = sat_add(sum,
		    n[i] > UINT64_MAX / each[i] ? UINT64_MAX : n[i] * each[i]);
	return sum;
}

/* The each hook of usage_kernel_objects: counts one process's objects. */
struct kobj_count {
	int proc_fd;
	pid_t root_pid;
	uint64_t cap; /* bytes */
	struct kernel_objects k;
	int err;
};

static bool
kobj_full(const struct kobj_count *c)
{
	return usage_kobj_bytes(&c->k) >= c->cap;
}

/* Classifies one fdinfo line, of which HEAD holds the first LEN (at
 * most 31) characters, NUL-terminated: a "tfd:" line is an epoll watch,
 * a "lock:" line a lock (fs/locks.c show_fd_locks), "scm_fds: N" the
 * files in flight in a unix socket (af_unix.c unix_show_fdinfo). No
 * other line of fdinfo begins alike (proc(5)). */
static void
fdinfo_line(struct kernel_objects *k, const char *head, size_t len)
{
	static const char scm[] = "scm_fds:";
	uint64_t v = 0;

	if (len >= 4 && memcmp(head, "tfd:", 4) == 0) {
		k->watches++;
	} else if (len >= 5 && memcmp(head, "lock:", 5) == 0) {
		k->locks++;
	} else if (len > sizeof(scm) - 1 &&
	    memcmp(head, scm, sizeof(scm) - 1) == 0) {
		for (const char *p = head + sizeof(scm) - 1; *p != '\0'; p++)
			if (*p >= '0' && *p <= '9')
				v = v * 10 + (uint64_t)(*p - '0');
			else if (v > 0 || (*p != ' ' && *p != '\t'))
				break;
		/* An unsigned int in the kernel: 10 digits at most. */
		k->inflight = sat_add(k->inflight, v);
	}
}

/* Reads the fdinfo at FD to its end (or C's cap) and counts its lines
 * into C (fdinfo_line). Returns 0 or a negative errno of read. */
static int
count_fdinfo(int fd, struct kobj_count *c)
{
	char buf[16384], head[32];
	size_t hn = 0;
	ssize_t got;

	while (!kobj_full(c) && (got = read(fd, buf, sizeof(buf))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] != '\n') {
				if (hn < sizeof(head) - 1)
					head[hn++] = buf[i];
				continue;
			}
			head[hn] = '\0';
			fdinfo_line(&c->k, head, hn);
			hn = 0;
		}
	}
	if (hn > 0) {
		head[hn] = '\0';
		fdinfo_line(&c->k, head, hn);
	}
	return 0;
}

/* The maps a process whose maps cannot be read is counted as: the most
 * one process may have, vm.max_map_count (proc_sys_vm(5)); when that
 * cannot be read either, CAP's worth. */
static uint64_t
max_maps(int proc_fd, uint64_t cap)
{
	char buf[32];
	uint64_t v = 0;
	ssize_t n;
	int fd;

	fd = openat(proc_fd, "sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9';
		     i++)
			v = v > UINT64_MAX / 10
			    ? UINT64_MAX
			    : v * 10 + (uint64_t)(buf[i] - '0');
	}
	return v > 0 ? v : cap / KOBJ_VMA_BYTES + 1;
}

/* Counts the lines of BASE/maps (BASE: "PID" or "PID/task/TID") into
 * C, one a map (proc(5)). Returns 0, or -1 when the file cannot be read
 * for a reason other than the process's end (then nothing is counted). */
static int
count_maps(struct kobj_count *c, const char *base)
{
	char path[64], buf[65536];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%s/maps", base);
	fd = openat(c->proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vanished(-errno) ? 0 : -1;
	while (!kobj_full(c) && (got = read(fd, buf, sizeof(buf))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			got = -errno;
			close(fd);
			return vanished((int)got) ? 0 : -1;
		}
		for (char *p = buf;
		     (p = memchr(p, '\n', (size_t)(buf + got - p))) != NULL;
		     p++)
			c->k.maps++;
	}
	close(fd);
	return 0;
}

/*
 * Writes to BASE (SIZE bytes) where the files of process ST are read:
 * "PID", or, for a leader that ended before its threads (state Z with
 * threads left: its own mm and descriptor table are gone, its threads'
 * are not), "PID/task/TID" of a thread still there (proc(5)).
 */
static void
live_base(int proc_fd, const struct proc_stat *st, char *base, size_t size)
{
	char path[32];
	DIR *d;
	struct dirent *de;
	int dfd;

	snprintf(base, size, "%d", (int)st->pid);
	if (st->state != 'Z' || st->num_threads <= 1)
		return;
	snprintf(path, sizeof(path), "%d/task", (int)st->pid);
	dfd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		int tid = atoi(de->d_name);

		if (tid > 0 && tid != st->pid) {
			snprintf(base, size, "%d/task/%d", (int)st->pid, tid);
			break;
		}
	}
	closedir(d);
}

/*
 * Reads /proc/PID/maps and every /proc/PID/fdinfo/N of the process ST
 * (of a thread of it when its leader is gone: live_base):
 * its fd directory is mode 0500 for the process's owner alone, while
 * fdinfo asks ptrace read access (proc(5)), which the zygote has.
 */
static void
kobj_each(void *arg, const struct proc_stat *st)
{
	struct kobj_count *c = arg;
	char base[64], path[96];
	DIR *d;
	struct dirent *de;
	int dfd, ffd, n;

	/* Jail init is stockade's own (jail.h), holds no epoll instance,
	 * lock nor file in flight, and is not the payload's to read. */
	if (c->err != 0 || kobj_full(c) || st->pid == c->root_pid)
		return;
	live_base(c->proc_fd, st, base, sizeof(base));
	if (count_maps(c, base) < 0) {
		/* Init's child before its exec is the payload still running
		 * init's code: init made its memory non-dumpable, and that
		 * memory's user namespace is the one init was cloned from,
		 * outside the jail, so a zygote without CAP_SYS_PTRACE there
		 * (an unprivileged launcher) may not read it (proc(5), ptrace
		 * access mode; seen as a 13.7 MiB charge on a job of
		 * sockets). It holds stockade's own few maps. Any process of
		 * the job's own, after an exec or forked from one, has its
		 * memory in the jail's user namespace, where the zygote has
		 * every capability. */
		if (st->ppid == c->root_pid)
			return;
		/* Not gone, not readable: the most it may map. Its fdinfo
		 * needs the same access (proc(5)). */
		c->k.maps = sat_add(c->k.maps, max_maps(c->proc_fd, c->cap));
		c->k.unreadable++;
		return;
	}
	snprintf(path, sizeof(path), "%s/fdinfo", base);
	dfd = openat(c->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		if (!vanished(-errno) && st->state != 'Z' && st->state != 'X')
			c->err = -errno;
		return;
	}
	if ((d = fdopendir(dfd)) == NULL) {
		c->err = -errno;
		close(dfd);
		return;
	}
	while (!kobj_full(c) && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		ffd = openat(dfd, de->d_name, O_RDONLY | O_CLOEXEC);
		if (ffd < 0) {
			/* Closed since the listing: no objects of its own. */
			if (!vanished(-errno))
				c->err = -errno;
			continue;
		}
		if ((n = count_fdinfo(ffd, c)) < 0)
			c->err = n;
		close(ffd);
	}
	closedir(d);
}

int
usage_kernel_objects(struct usage_walker *w, int proc_fd, pid_t root_pid,
    uint64_t cap, struct kernel_objects *k)
{
	void (*each)(void *, const struct proc_stat *) = w->each;
	void *each_arg = w->each_arg;
	struct kobj_count c = {.proc_fd = proc_fd,
	    .root_pid = root_pid,
	    .cap = cap};
	struct jail_usage u;
	int r;

	w->each = kobj_each;
	w->each_arg = &c;
	r = usage_walk_tree(w, proc_fd, root_pid, &u, false);
	w->each = each;
	w->each_arg = each_arg;
	*k = c.k;
	if (r < 0)
		return r;
	if (c.err != 0)
		return c.err;
	return kobj_full(&c) ? -E2BIG : 0;
}
