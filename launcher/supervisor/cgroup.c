/*
 * cgroup.c: cgroup v2 leaves for jobs (cgroup.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_internal.h"
#include "cgpath.h"
#include "fsutil.h"

/* Every interface file read here is a few hundred bytes at most. */

/* ---- reading and writing interface files ---- */

/* cgroup_internal.h. */
ssize_t
cg_read_at(int dir, const char *name, char *buf, size_t size)
{
	_cleanup_close_ int fd = openat(dir, name,
	    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + len, size - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		len += (size_t)n;
		if (len == size - 1)
			return -EFBIG;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

int
cg_write_at(int dir, const char *name, const char *val)
{
	_cleanup_close_ int fd = openat(dir, name,
	    O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

	if (fd < 0)
		return -errno;
	return write_all(fd, val, strlen(val));
}

/* ---- the parent ---- */

/* What a deployer reads when a parent cannot be used (cg_check_parent). */
#define NOT_AVAILABLE                                                        \
	"cgroup %s: the %s controller is not available there (not in "       \
	"cgroup.controllers): enable it in the parent's "                    \
	"cgroup.subtree_control, or, on a hybrid cgroup v1/v2 system where " \
	"v1 holds it, boot with systemd.unified_cgroup_hierarchy=1"
#define NOT_ENABLED                                                        \
	"cgroup %s: %s is not in cgroup.subtree_control; enable it: echo " \
	"'+memory +pids%s' > %s/cgroup.subtree_control (the cgroup must "  \
	"hold no process itself; a systemd unit gets this with Delegate=yes)"
#define NOT_WRITABLE                                                         \
	"cgroup %s: uid %u may not create cgroups in it or move processes "  \
	"there (%s; it needs write access to the directory and its "         \
	"cgroup.procs): delegate it to this user (chown, or a systemd unit " \
	"with Delegate=yes) or name another one in the policy's [limits] "   \
	"cgroup"

int
cg_check_parent(int fd, const char *dir, bool need_cpu, char *why,
    size_t whylen)
{
	static const char *const files[] = {"cgroup.controllers",
	    "cgroup.subtree_control"};
	const char *need[] = {"memory", "pids", need_cpu ? "cpu" : NULL};
	char buf[FILE_BUF];
	ssize_t n;

	for (size_t f = 0; f < 2; f++) {
		n = cg_read_at(fd, files[f], buf, sizeof(buf));
		if (n < 0) {
			snprintf(why, whylen,
			    "cgroup %s: cannot read %s: %s (is it a "
			    "cgroup v2 directory?)",
			    dir, files[f], strerror((int)-n));
			return (int)n;
		}
		for (size_t i = 0; i < 3 && need[i] != NULL; i++) {
			if (cg_has_word(buf, need[i]))
				continue;
			if (f == 0)
				snprintf(why, whylen, NOT_AVAILABLE, dir,
				    need[i]);
			else
				snprintf(why, whylen, NOT_ENABLED, dir, need[i],
				    need_cpu ? " +cpu" : "", dir);
			return -EOPNOTSUPP;
		}
	}
	if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0 ||
	    faccessat(fd, "cgroup.procs", W_OK, AT_EACCESS) != 0) {
		int e = errno;

		snprintf(why, whylen, NOT_WRITABLE, dir, (unsigned)geteuid(),
		    strerror(e));
		return e == ENOENT ? -ENOENT : -EACCES;
	}
	return 0;
}

int
cg_open_parent(const char *dir, bool need_cpu, char *why, size_t whylen)
{
	struct statfs sf;
	int fd, r;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		snprintf(why, whylen, "cannot open cgroup %s: %s", dir,
		    strerror(-r));
		return r;
	}
	if (fstatfs(fd, &sf) != 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(why, whylen,
		    "%s is not on a cgroup v2 file system: name a "
		    "directory below the cgroup2 mount (see "
		    "/proc/self/mountinfo) in the policy's [limits] "
		    "cgroup",
		    dir);
		close(fd);
		return -EOPNOTSUPP;
	}
	r = cg_check_parent(fd, dir, need_cpu, why, whylen);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* ---- leaves ---- */

int
cg_leaf_configure(int leaf, const struct cg_limits *l)
{
	char v[32];
	int r;

	if (l->memory_max == 0)
		snprintf(v, sizeof(v), "max");
	else
		snprintf(v, sizeof(v), "%llu",
		    (unsigned long long)l->memory_max);
	if ((r = cg_write_at(leaf, "memory.max", v)) < 0)
		return r;
	/* Absent when the kernel does not account swap. */
	if ((r = cg_write_at(leaf, "memory.swap.max", "0")) < 0 && r != -ENOENT)
		return r;
	if ((r = cg_write_at(leaf, "memory.oom.group", "1")) < 0)
		return r;
	if (l->pids_max == 0)
		snprintf(v, sizeof(v), "max");
	else
		snprintf(v, sizeof(v), "%u", (unsigned)l->pids_max);
	if ((r = cg_write_at(leaf, "pids.max", v)) < 0)
		return r;
	if (l->cpu_percent > 0) {
		snprintf(v, sizeof(v), "%llu 100000",
		    (unsigned long long)l->cpu_percent * 1000);
		if ((r = cg_write_at(leaf, "cpu.max", v)) < 0)
			return r;
	}
	return 0;
}

int
cg_leaf_create(int parent, const char *name, const struct cg_limits *l)
{
	int fd, r;

	if (name[0] == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	if (mkdirat(parent, name, 0755) != 0)
		return -errno;
	fd = openat(parent, name,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
	} else {
		r = cg_leaf_configure(fd, l);
		if (r == 0)
			return fd;
		close(fd);
	}
	unlinkat(parent, name, AT_REMOVEDIR);
	return r;
}

/* A single value: decimal digits or "max" (UINT64_MAX), then an optional
 * newline. */
static int
parse_single(const char *s, uint64_t *v)
{
	uint64_t n = 0;
	const char *p = s;

	if (strcmp(s, "max\n") == 0 || strcmp(s, "max") == 0) {
		*v = UINT64_MAX;
		return 0;
	}
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - d) / 10)
			return -EINVAL;
		n = n * 10 + d;
	}
	if (strcmp(p, "\n") != 0 && *p != '\0')
		return -EINVAL;
	*v = n;
	return 0;
}

/* A flat keyed file ("key value" lines): the value of KEY, 0 when KEY is
 * absent; every line must parse. */
static int
parse_keyed(const char *s, const char *key, uint64_t *v)
{
	char val[32];

	*v = 0;
	for (const char *l = s, *nl; *l != '\0'; l = *nl ? nl + 1 : nl) {
		const char *sp;
		size_t vl;
		uint64_t x;

		nl = strchrnul(l, '\n');
		sp = memchr(l, ' ', (size_t)(nl - l));
		if (sp == NULL || sp == l)
			return -EINVAL;
		vl = (size_t)(nl - sp - 1);
		if (vl == 0 || vl >= sizeof(val))
			return -EINVAL;
		memcpy(val, sp + 1, vl);
		val[vl] = '\0';
		if (parse_single(val, &x) < 0)
			return -EINVAL;
		if ((size_t)(sp - l) == strlen(key) &&
		    memcmp(l, key, (size_t)(sp - l)) == 0)
			*v = x;
	}
	return 0;
}

/* Reads NAME under LEAF: its single value into *V1 (K1 NULL), or the
 * values of the keys K1 and K2 (K2 may be NULL) of a flat keyed file.
 * An absent file gives 0s when OPTIONAL. */
static int
stat_file(int leaf, const char *name, bool optional, const char *k1,
    uint64_t *v1, const char *k2, uint64_t *v2)
{
	char buf[FILE_BUF];
	ssize_t len = cg_read_at(leaf, name, buf, sizeof(buf));
	int r;

	if (len == -ENOENT && optional)
		return 0;
	if (len < 0)
		return (int)len;
	if (k1 == NULL)
		return parse_single(buf, v1);
	r = parse_keyed(buf, k1, v1);
	if (r == 0 && k2 != NULL)
		r = parse_keyed(buf, k2, v2);
	return r;
}

int
cg_leaf_stats(int leaf, struct cg_stats *s)
{
	int r;

	memset(s, 0, sizeof(*s));
	if ((r = stat_file(leaf, "memory.current", false, NULL,
		 &s->memory_current, NULL, NULL)) < 0 ||
	    (r = stat_file(leaf, "memory.peak", true, NULL, &s->memory_peak,
		 NULL, NULL)) < 0 ||
	    (r = stat_file(leaf, "memory.events", false, "oom_kill",
		 &s->oom_kill, "max", &s->memory_max_events)) < 0 ||
	    (r = stat_file(leaf, "pids.current", false, NULL, &s->pids_current,
		 NULL, NULL)) < 0 ||
	    (r = stat_file(leaf, "pids.events", false, "max",
		 &s->pids_max_events, NULL, NULL)) < 0 ||
	    (r = stat_file(leaf, "cpu.stat", true, "usage_usec",
		 &s->cpu_usage_usec, NULL, NULL)) < 0) {
		memset(s, 0, sizeof(*s));
		return r;
	}
	return 0;
}

int
cg_leaf_kill(int leaf)
{
	return cg_write_at(leaf, "cgroup.kill", "1");
}

int
cg_leaf_remove(int parent, const char *name)
{
	struct timespec t0, now, tick = {0, 10 * 1000 * 1000};

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long ms;
		int e;

		if (unlinkat(parent, name, AT_REMOVEDIR) == 0)
			return 0;
		e = errno;
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (now.tv_sec - t0.tv_sec) * 1000 +
		    (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (e != EBUSY || ms >= 200)
			return -e;
		nanosleep(&tick, NULL);
	}
}
