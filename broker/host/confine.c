/*
 * confine.c: the broker's own confinement (confine.h). The sequence
 * (no_new_privs, then the capabilities, then Landlock, then seccomp) and
 * its mechanics (libcap-ng, the raw Landlock calls, libseccomp) are
 * shared with the launcher's own confinement (shared/confine_util.h,
 * cf_confine); the lists are the broker's.
 */
#include "confine.h"

#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine_util.h"
#include "llutil.h"

/* Rights no rule grants, whatever it asks (CONFINE_ALL included): the
 * broker executes nothing and makes no device, fifo or socket file, so
 * a workspace cannot be given a block device it could then open (a raw
 * disk) or a program. Handled, so denied everywhere. */
#define FS_NEVER                                                           \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_MAKE_CHAR |       \
	    LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SOCK | \
	    LANDLOCK_ACCESS_FS_MAKE_FIFO)

/*
 * System calls denied with EPERM besides cf_seccomp_deny_common's (what
 * no stockade helper needs: tracing, the mount API, namespaces, kernel
 * attack surface, host administration, device nodes; clone3 ENOSYS).
 * A name libseccomp or the architecture lacks is skipped.
 */
static const char *const denied[] = {
    "execve",
    "execveat",
    /* Set up, the broker makes and connects no socket: its listener,
	 * client sockets and launcher sockets exist already (the spawner
	 * makes each launcher's pair in its own process); accept4 on the
	 * listener stays. This closes a pathname unix socket anywhere on
	 * the host (docker.sock, D-Bus), which Landlock does not cover. */
    "socket",
    "socketpair",
    "connect",
    /* Metadata calls that take a path: Landlock does not cover owner,
	 * mode, extended attributes or times, so these would reach any
	 * file on the host. The broker changes owner and mode only with
	 * fchown and fchmod on a descriptor Landlock let it open, and never
	 * sets extended attributes (the descriptor forms are denied too)
	 * or times (utimensat is below: only its descriptor form). chmod
	 * and fchmodat are below too. (mknod and mknodat, denied with the
	 * common list: no device, fifo or socket file is ever made;
	 * Landlock denies the same outside the workspace and, from
	 * confine.h, inside it.) */
    "chown",
    "lchown",
    "fchownat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "utime",
    "utimes",
    "futimesat",
};

/* fchmodat2 (6.6): the same number on every architecture (the unified
 * table from 424 on); libseccomp 2.5 may have no name for it. */
#define NR_FCHMODAT2 452

static const unsigned long ns_flags[] = {
    CLONE_NEWUSER,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWNET,
    CLONE_NEWIPC,
    CLONE_NEWUTS,
    CLONE_NEWCGROUP,
    CLONE_NEWTIME,
};

/* What a root broker keeps (confine.h, "Capabilities"). */
static const unsigned int kept_caps[] = {
    CAP_CHOWN,
    CAP_DAC_OVERRIDE,
    CAP_FOWNER,
};

/*
 * chmod and fchmodat (ARG: the index of their mode argument), which take
 * a path. Denied to a root broker (ROOT), whose CAP_FOWNER would reach
 * any file on the host. A broker that is not root gets them with the
 * owner's bits only (no group, other, setuid, setgid or sticky bit: the
 * kernel reads mode & 07777): shared/fsutil.c's remove_tree_at gives a
 * directory u+rwx through its /proc/self/fd link before removing it,
 * which nothing else can do for a directory of mode 0 (no descriptor
 * but O_PATH opens, and fchmod refuses O_PATH). A rogue broker can then
 * change only its own access to its own files - the kernel allows
 * nothing else without capabilities - and give nothing to anyone.
 */
static int
add_chmod_rules(scmp_filter_ctx ctx, bool root)
{
	static const struct {
		const char *name;
		unsigned int arg;
	} calls[] = {{"chmod", 1}, {"fchmodat", 2}};
	int e, nr;

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		nr = seccomp_syscall_resolve_name(calls[i].name);
		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;
		if (root) {
			if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
				 nr, 0)) < 0)
				return e;
			continue;
		}
		/* Denied when any bit of 07077 is set: one rule a bit. */
		for (unsigned int bit = 1; bit <= 04000; bit <<= 1) {
			if ((bit & 07077) == 0)
				continue;
			e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
			    SCMP_CMP64(calls[i].arg, SCMP_CMP_MASKED_EQ, bit,
				bit));
			if (e < 0)
				return e;
		}
	}
	return 0;
}

/*
 * Adds the broker's rules to CTX (a cf_plan filter; ARG unused). The
 * filter allows by default and denies the lists above; only the native
 * ABI is in it, any other kills the process (cf_seccomp_new).
 */
static int
build_filter(scmp_filter_ctx ctx, void *arg)
{
	int e;

	(void)arg;
	if ((e = cf_seccomp_deny_common(ctx)) < 0 ||
	    (e = cf_seccomp_deny(ctx, denied,
		 sizeof(denied) / sizeof(denied[0]), EPERM)) < 0)
		return e;
	if ((e = add_chmod_rules(ctx, geteuid() == 0)) < 0)
		return e;
	if ((e = cf_seccomp_deny_nr(ctx, "fchmodat2", NR_FCHMODAT2, EPERM)) < 0)
		return e;
	/*
	 * utimensat with a path; with a NULL path it is futimens(3), on a
	 * descriptor, which stays. Any non-NULL pointer is denied, "" with
	 * AT_EMPTY_PATH included (a filter cannot read the string).
	 */
	if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		 SCMP_SYS(utimensat), 1, SCMP_A1_64(SCMP_CMP_NE, 0))) < 0)
		return e;
	/*
	 * unshare is denied (cf_seccomp_deny_common); clone with a namespace
	 * flag would do the same, so it is denied too. clone3, whose flags
	 * a filter cannot read, answers ENOSYS (the common list), so libc
	 * falls back to clone.
	 */
	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++)
		if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
			 SCMP_SYS(clone), 1,
			 SCMP_A0_64(SCMP_CMP_MASKED_EQ, ns_flags[i],
			     ns_flags[i]))) < 0)
			return e;
	return 0;
}

int
confine_broker(const struct confine_rule *rules, size_t nrules, char *err,
    size_t errlen)
{
	const struct cf_ll_config ll = {
	    .who = "broker",
	    .never = FS_NEVER,
	    /* TCP bind and connect handled with no rule: denied to
		 * every port, even on a socket opened before confinement. */
	    .deny_tcp = true,
	    /* Abstract unix sockets outside the domain cannot be
		 * reached. Signals are NOT scoped: the broker must still
		 * signal and kill its launcher, which the spawner started
		 * outside this domain. */
	    .scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET,
	};
	struct cf_plan plan = {
	    .keep = kept_caps,
	    .nkeep = sizeof(kept_caps) / sizeof(kept_caps[0]),
	    .ll = &ll,
	    .nrules = nrules,
	    .filter = build_filter,
	};
	struct cf_ll_rule *r = calloc(nrules > 0 ? nrules : 1, sizeof(*r));
	int e;

	if (r == NULL) {
		snprintf(err, errlen,
		    "cannot build the Landlock rules: out "
		    "of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < nrules; i++)
		r[i] = (struct cf_ll_rule){.fd = rules[i].fd,
		    .access = rules[i].access};
	plan.rules = r;
	e = cf_confine(&plan, err, errlen);
	free(r);
	return e;
}
