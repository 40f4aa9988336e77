/*
 * confine.c: the launcher's own confinement (confine.h). The cgroup2
 * mount points are read and opened first of all, with the process's
 * full rights; then the sequence shared with the broker
 * (shared/confine_util.h, cf_confine: no_new_privs, the capabilities,
 * Landlock, seccomp) applies the launcher's lists.
 */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgpath.h"
#include "confine_util.h"
#include "llutil.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* The Landlock rights of confine.h. */
#define FS_PROC (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_CGROUP                                                       \
	(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
	    LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_READ_DIR | \
	    LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR)
#define FS_WALK LANDLOCK_ACCESS_FS_READ_DIR

/* At most this many cgroup2 mounts get a rule; more is a refusal (a
 * mount table that large is not a host the launcher knows). */
#define MAX_CG_MOUNTS 64

/*
 * Denied with EPERM besides cf_seccomp_deny_common's. A name libseccomp
 * or the architecture lacks is skipped.
 */
static const char *const denied[] = {
    /* New programs and processes: the zygote makes every jail, and
	 * the launcher makes no thread (clone with any flags). */
    "execve",
    "execveat",
    "fork",
    "vfork",
    "clone",
    /* Sockets: both of its sockets exist before the call; nothing is
	 * made, bound, connected or accepted. This closes a pathname unix
	 * socket anywhere on the host (docker.sock, D-Bus), which Landlock
	 * does not cover (its ABI 6 scope is for abstract names only). */
    "socket",
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    /* No signal at all but to itself: the zygote kills jails on the
	 * launcher's request (zygote.h). pidfd_send_signal also takes a
	 * /proc/PID directory descriptor, which the launcher could open for
	 * any process (it reads /proc), and as root same uid needs no
	 * CAP_KILL: it would reach every root process. Nor a descriptor
	 * taken from, or memory advice given to, another process.
	 * tgkill and rt_tgsigqueueinfo: below. */
    "kill",
    "tkill",
    "rt_sigqueueinfo",
    "pidfd_send_signal",
    "pidfd_open",
    "pidfd_getfd",
    "process_madvise",
    /* Watching paths: Landlock does not check inotify or fanotify
	 * marks, and READ_DIR beneath / would let it watch any directory
	 * its uid may read. */
    "inotify_init",
    "inotify_init1",
    "fanotify_init",
    /* Priorities, scheduling and memory placement: the launcher sets
	 * none, and these act on the processes they name (setpriority and
	 * ioprio_set on every process of a user, with PRIO_USER and
	 * IOPRIO_WHO_USER). */
    "setpriority",
    "ioprio_set",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setaffinity",
    "sched_setattr",
    "migrate_pages",
    "move_pages",
    /* A handle that open_by_handle_at (common list) would open. */
    "name_to_handle_at",
    /* Ownership, mode, extended attributes and times: Landlock does not
	 * cover them, and the launcher changes none (the zygote sets up the
	 * workspace mount; the broker owns the workspace). */
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "chmod",
    "fchmod",
    "fchmodat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "utime",
    "utimes",
    "futimesat",
    "utimensat",
    /* Ids and capabilities are final (the zygote writes id maps). */
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setfsuid",
    "setfsgid",
    "setgroups",
    "capset",
    /* Nothing to hide: anonymous files a walk of /proc cannot name. */
    "memfd_create",
    "memfd_secret",
};

/* fchmodat2 (Linux 6.6): the same number on every architecture (the
 * unified table, 424 on); libseccomp 2.5 may have no name for it. */
#define NR_FCHMODAT2 452

struct cg_rules {
	int fds[MAX_CG_MOUNTS];
	char paths[MAX_CG_MOUNTS][PATH_MAX];
	size_t n;
};

/* Opens the directory PATH of a cgroup2 mount for a rule into CG. A
 * mount point that is gone, hidden or no longer cgroup2 (something was
 * mounted over it) gets no rule: its files cannot be reached by path. */
static int
add_cgroup(struct cg_rules *cg, const char *path, char *err, size_t errlen)
{
	struct statfs sf;
	int fd, e;

	for (size_t i = 0; i < cg->n; i++)
		if (strcmp(cg->paths[i], path) == 0)
			return 0; /* the same point mounted twice */
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		if (e == -ENOENT || e == -ENOTDIR || e == -EACCES)
			return 0;
		snprintf(err, errlen, "cannot open the cgroup2 mount %s: %s",
		    path, strerror(-e));
		return e;
	}
	if (fstatfs(fd, &sf) != 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		return 0;
	}
	if (cg->n == MAX_CG_MOUNTS) {
		close(fd);
		snprintf(err, errlen,
		    "more than %d cgroup2 mounts in "
		    "/proc/self/mountinfo",
		    MAX_CG_MOUNTS);
		return -E2BIG;
	}
	snprintf(cg->paths[cg->n], sizeof(cg->paths[cg->n]), "%s", path);
	cg->fds[cg->n++] = fd;
	return 0;
}

/* Fills CG with a descriptor of every cgroup2 mount point the process
 * sees (/proc/self/mountinfo). */
static int
find_cgroups(struct cg_rules *cg, char *err, size_t errlen)
{
	char mnt[PATH_MAX], *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int e = 0, r;

	if (f == NULL) {
		e = -errno;
		snprintf(err, errlen,
		    "cannot read /proc/self/mountinfo (is "
		    "/proc mounted?): %s",
		    strerror(-e));
		return e;
	}
	while (getline(&line, &cap, f) > 0) {
		r = cg_mountinfo_cgroup2(line, NULL, 0, mnt, sizeof(mnt));
		if (r < 0) {
			snprintf(err, errlen,
			    "a cgroup2 mount point in "
			    "/proc/self/mountinfo is too long");
			e = r;
			break;
		}
		if (r == 1 && (e = add_cgroup(cg, mnt, err, errlen)) < 0)
			break;
	}
	if (e == 0 && ferror(f)) {
		e = -EIO;
		snprintf(err, errlen, "cannot read /proc/self/mountinfo");
	}
	free(line);
	fclose(f);
	return e;
}

static void
close_cgroups(struct cg_rules *cg)
{
	for (size_t i = 0; i < cg->n; i++)
		close(cg->fds[i]);
	cg->n = 0;
}

/* The rules of confine.h into RULES (room for 2 + MAX_CG_MOUNTS);
 * returns their number. */
static size_t
landlock_rules(const struct cg_rules *cg, struct cf_ll_rule *rules)
{
	size_t n = 0;

	rules[n++] =
	    (struct cf_ll_rule){.fd = -1, .path = "/proc", .access = FS_PROC};
	/* The workspace walk (confine.h): names and stat, no contents. */
	rules[n++] =
	    (struct cf_ll_rule){.fd = -1, .path = "/", .access = FS_WALK};
	for (size_t i = 0; i < cg->n; i++)
		rules[n++] = (struct cf_ll_rule){.fd = cg->fds[i],
		    .path = cg->paths[i],
		    .access = FS_CGROUP};
	return n;
}

/* Adds the launcher's rules to CTX (a cf_plan filter; ARG unused); a
 * negative errno on failure. */
static int
build_filter(scmp_filter_ctx ctx, void *arg)
{
	static const char *const own_pid_only[] = {"tgkill",
	    "rt_tgsigqueueinfo"};
	static const struct {
		int nr;
		unsigned long cmd;
	} cmds[] = {
	    {SCMP_SYS(fcntl), F_SETOWN},
	    {SCMP_SYS(fcntl), F_SETOWN_EX},
	    {SCMP_SYS(fcntl), F_SETSIG},
	    {SCMP_SYS(ioctl), FIOSETOWN},
	    {SCMP_SYS(ioctl), SIOCSPGRP},
	    {SCMP_SYS(ioctl), TIOCSTI},
	    {SCMP_SYS(ioctl), TIOCLINUX},
	};
	const uint64_t self = (uint64_t)getpid();
	int e, nr;

	(void)arg;
	if ((e = cf_seccomp_deny_common(ctx)) < 0 ||
	    (e = cf_seccomp_deny(ctx, denied,
		 sizeof(denied) / sizeof(denied[0]), EPERM)) < 0 ||
	    (e = cf_seccomp_deny_nr(ctx, "fchmodat2", NR_FCHMODAT2, EPERM)) < 0)
		return e;
	/*
	 * A signal to a thread of its own process only: abort(3) and
	 * raise(3) use tgkill(getpid(), gettid(), sig). The whole 64-bit
	 * argument must equal the pid (the kernel reads an int: a pid with
	 * junk in the high word is refused, never read as the pid).
	 */
	for (size_t i = 0; i < 2; i++) {
		nr = seccomp_syscall_resolve_name(own_pid_only[i]);
		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;
		if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
			 SCMP_A0_64(SCMP_CMP_NE, self))) < 0)
			return e;
	}
	/*
	 * prlimit64 sets limits only on itself: a root launcher could
	 * otherwise set RLIMIT_NOFILE to 1 on any root daemon (the same uid
	 * needs no capability). Reading them (a NULL new limit, which is
	 * what getrlimit(2) does, pid 0) stays.
	 */
	if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		 SCMP_SYS(prlimit64), 2, SCMP_A0_64(SCMP_CMP_NE, self),
		 SCMP_A2_64(SCMP_CMP_NE, 0))) < 0)
		return e;
	/*
	 * Commands refused on the low 32 bits the kernel reads (mask
	 * 0xffffffff), whatever the high ones. No SIGIO for another
	 * process: making it the owner of a descriptor (fcntl F_SETOWN,
	 * F_SETOWN_EX; ioctl FIOSETOWN, SIOCSPGRP) or choosing the signal
	 * (F_SETSIG) would have the kernel signal it on I/O (fcntl(2),
	 * "Managing signals"). No terminal injection on a descriptor it
	 * inherited (stderr may be the user's tty): TIOCSTI and TIOCLINUX
	 * (CVE-2016-7545, CVE-2017-5226).
	 */
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
			 cmds[i].nr, 1,
			 SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL,
			     cmds[i].cmd))) < 0)
			return e;
	return 0;
}

int
confine_launcher(char *err, size_t errlen)
{
	static const unsigned int keep[] = {CAP_DAC_READ_SEARCH};
	const struct cf_ll_config ll = {
	    .who = "launcher",
	    .never = 0,
	    /* TCP bind and connect handled with no rule: refused. */
	    .deny_tcp = true,
	    /* Abstract unix sockets outside the domain cannot be
		 * reached (ABI 6). Signals are NOT scoped, though the
		 * launcher sends none (the filter refuses every way): the
		 * kernel checks a parent-death signal against the dying
		 * parent's domain, so a scoped launcher's death would no
		 * longer kill its zygote and jail inits, which are outside
		 * it (PR_SET_PDEATHSIG; security_task_kill). */
	    .scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET,
	};
	struct cf_plan plan = {
	    .keep = keep,
	    .nkeep = 1,
	    .ll = &ll,
	    .filter = build_filter,
	};
	struct cf_ll_rule rules[2 + MAX_CG_MOUNTS];
	struct cg_rules *cg;
	int e;

	if (errlen > 0)
		err[0] = '\0';
	/* On the heap: PATH_MAX per mount. */
	if ((cg = calloc(1, sizeof(*cg))) == NULL) {
		snprintf(err, errlen,
		    "cannot confine the launcher: out of "
		    "memory");
		return -ENOMEM;
	}
	/* The cgroup2 mounts first, with every right the process has. */
	if ((e = find_cgroups(cg, err, errlen)) == 0) {
		plan.rules = rules;
		plan.nrules = landlock_rules(cg, rules);
		e = cf_confine(&plan, err, errlen);
	}
	close_cgroups(cg);
	free(cg);
	return e;
}
