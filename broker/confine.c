/*
 * confine.c: the broker's own confinement (confine.h): no_new_privs, then
 * the capabilities, then Landlock, then seccomp, in that order. Landlock
 * comes before seccomp so that the filter need not allow the landlock_*
 * calls; no_new_privs comes first because both need it in an
 * unprivileged process (landlock(7), seccomp(2)); capabilities are
 * dropped while /proc can still be read.
 *
 * Landlock is driven by raw system calls: Debian 12's <linux/landlock.h>
 * stops at ABI 2, so the later rights and the larger ruleset attribute
 * are defined here with their kernel values (include/uapi/linux/
 * landlock.h). The kernel copies the attribute with copy_struct_from_user
 * semantics: a larger struct whose unknown tail is zero is accepted by
 * older kernels, so one struct serves every ABI as long as only the
 * fields the ABI knows are set.
 */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <cap-ng.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "llutil.h"

/* Rights no rule grants, whatever it asks (CONFINE_ALL included): the
 * broker executes nothing and makes no device, fifo or socket file, so
 * a workspace cannot be given a block device it could then open (a raw
 * disk) or a program. Handled, so denied everywhere. */
#define FS_NEVER                                                         \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_MAKE_CHAR |      \
	 LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SOCK |   \
	 LANDLOCK_ACCESS_FS_MAKE_FIFO)

/* struct landlock_ruleset_attr as of ABI 6. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

/*
 * System calls denied with EPERM. The first lines are what a broker
 * never needs and what would undo or bypass the confinement (exec, the
 * mount API, namespaces, tracing); the rest is kernel attack surface
 * (bpf, io_uring, userfaultfd, perf, keys) and host administration.
 * open_by_handle_at bypasses path resolution ("shocker"); kcmp and acct
 * go with ptrace and reboot. A name libseccomp or the architecture lacks
 * is skipped.
 */
static const char *const denied[] = {
	"execve", "execveat",
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
	"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsmount",
	"fsconfig", "fspick", "move_mount", "open_tree", "mount_setattr",
	"unshare", "setns", "open_by_handle_at",
	"bpf", "perf_event_open", "io_uring_setup", "io_uring_enter",
	"io_uring_register", "userfaultfd", "keyctl", "add_key",
	"request_key",
	"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "reboot", "swapon", "swapoff", "acct",
	/* Set up, the broker makes and connects no socket: its listener,
	 * client sockets and launcher sockets exist already (the spawner
	 * makes each launcher's pair in its own process); accept4 on the
	 * listener stays. This closes a pathname unix socket anywhere on
	 * the host (docker.sock, D-Bus), which Landlock does not cover. */
	"socket", "socketpair", "connect",
	/* No device, fifo or socket file is ever made (Landlock denies the
	 * same outside the workspace and, from confine.h, inside it). */
	"mknod", "mknodat",
	/* Host administration. */
	"sethostname", "setdomainname", "settimeofday", "clock_settime",
	"clock_adjtime", "adjtimex", "iopl", "ioperm",
	/* Metadata calls that take a path: Landlock does not cover owner,
	 * mode, extended attributes or times, so these would reach any
	 * file on the host. The broker changes owner and mode only with
	 * fchown and fchmod on a descriptor Landlock let it open, and never
	 * sets extended attributes (the descriptor forms are denied too)
	 * or times (utimensat is below: only its descriptor form). chmod
	 * and fchmodat are below too. */
	"chown", "lchown", "fchownat",
	"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
	"fremovexattr", "utime", "utimes", "futimesat",
};

/* open_tree_attr (Linux 6.15) and fchmodat2 (6.6): the same number on
 * every architecture (the unified table from 424 on); libseccomp 2.5
 * may have no name for them. */
#define NR_OPEN_TREE_ATTR 467
#define NR_FCHMODAT2 452

static const unsigned long ns_flags[] = {
	CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
	CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME,
};

/* What a root broker keeps (confine.h, "Capabilities"). */
static const unsigned int kept_caps[] = {
	CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER,
};

/* Whether CAP is one of KEEP's. */
static bool
is_kept(unsigned int cap, bool keep)
{
	for (size_t i = 0; keep && i < sizeof(kept_caps) / sizeof(kept_caps[0]);
	     i++)
		if (kept_caps[i] == cap)
			return true;
	return false;
}

/*
 * Leaves the process the capabilities of confine.h: a root broker
 * (effective uid 0) keeps kept_caps in its effective and permitted sets
 * (those it has), anything else nothing; the inheritable and ambient
 * sets are emptied and, when the process may (CAP_SETPCAP, which a root
 * broker has), the bounding set too. Then reads the sets back from the
 * kernel: anything left that should not be is an error (-EPERM).
 * capabilities(7); libcap-ng's capng_apply(3).
 */
static int
drop_capabilities(char *err, size_t errlen)
{
	bool keep = geteuid() == 0, bounds;
	bool have[sizeof(kept_caps) / sizeof(kept_caps[0])];
	int r;

	if (capng_get_caps_process() != 0) {
		snprintf(err, errlen, "cannot read the process's capabilities");
		return -EPERM;
	}
	bounds = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP) != 0;
	for (size_t i = 0; i < sizeof(kept_caps) / sizeof(kept_caps[0]); i++)
		have[i] = keep && capng_have_capability(CAPNG_PERMITTED,
							kept_caps[i]) != 0;
	capng_clear(CAPNG_SELECT_ALL);
	for (size_t i = 0; i < sizeof(kept_caps) / sizeof(kept_caps[0]); i++)
		if (have[i] &&
		    capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED,
				 kept_caps[i]) != 0) {
			snprintf(err, errlen, "cannot keep capability %u",
				 kept_caps[i]);
			return -EPERM;
		}
	r = capng_apply(bounds ? CAPNG_SELECT_ALL :
				 CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT);
	if (r != 0) {
		snprintf(err, errlen, "cannot drop capabilities (capng_apply "
			 "%d)", r);
		return -EPERM;
	}
	/* The kernel's own view. */
	if (capng_get_caps_process() != 0) {
		snprintf(err, errlen, "cannot read the process's capabilities");
		return -EPERM;
	}
	for (unsigned int cap = 0; cap < 64; cap++) {
		int b = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (b < 0)
			break; /* past the kernel's last capability */
		if ((capng_have_capability(CAPNG_EFFECTIVE, cap) != 0 ||
		     capng_have_capability(CAPNG_PERMITTED, cap) != 0) &&
		    !is_kept(cap, keep)) {
			snprintf(err, errlen, "capability %u is still held "
				 "after dropping", cap);
			return -EPERM;
		}
		if (capng_have_capability(CAPNG_INHERITABLE, cap) != 0 ||
		    (bounds && b == 1)) {
			snprintf(err, errlen, "capability %u is still "
				 "inheritable or in the bounding set", cap);
			return -EPERM;
		}
	}
	return 0;
}

static int
apply_landlock(const struct confine_rule *rules, size_t nrules, char *err,
	       size_t errlen)
{
	struct ll_ruleset_attr attr;
	_cleanup_close_ int rs = -1;
	int abi = ll_abi(), e;

	if (abi == -ENOSYS || abi == -EOPNOTSUPP || abi == 0) {
		snprintf(err, errlen,
			 "this kernel has no usable Landlock (%s), and the "
			 "broker does not run unconfined: enable it with "
			 "landlock in the lsm= boot parameter (for example "
			 "lsm=landlock,lockdown,yama,integrity,apparmor,bpf) "
			 "on a kernel built with CONFIG_SECURITY_LANDLOCK=y",
			 abi == -ENOSYS ? "not built in" :
					  "built in but not enabled at boot");
		return -EOPNOTSUPP;
	}
	if (abi < 0) {
		snprintf(err, errlen, "cannot query Landlock: %s",
			 strerror(-abi));
		return abi;
	}

	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = ll_fs_rights(abi);
	/* TCP bind and connect handled with no rule: denied to every
	 * port, even on a socket opened before confinement. */
	if (abi >= 4)
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP |
					  LANDLOCK_ACCESS_NET_CONNECT_TCP;
	/* Abstract unix sockets outside the domain cannot be reached.
	 * Signals are NOT scoped: the broker must still signal and kill
	 * its launcher, which the spawner started outside this domain. */
	if (abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot create a Landlock ruleset (ABI "
			 "%d): %s", abi, strerror(-e));
		return e;
	}
	for (size_t i = 0; i < nrules; i++) {
		struct landlock_path_beneath_attr pb;
		struct stat st;

		if (fstat(rules[i].fd, &st) < 0) {
			e = -errno;
			snprintf(err, errlen, "confinement rule %zu: "
				 "descriptor %d: %s", i, rules[i].fd,
				 strerror(-e));
			return e;
		}
		memset(&pb, 0, sizeof(pb));
		pb.parent_fd = rules[i].fd;
		pb.allowed_access = rules[i].access & attr.handled_access_fs &
				    ~FS_NEVER;
		if (!S_ISDIR(st.st_mode))
			pb.allowed_access &= LL_FS_FILE;
		/* Nothing this ABI handles is asked: nothing to grant. */
		if (pb.allowed_access == 0)
			continue;
		if (syscall(SYS_landlock_add_rule, rs,
			    LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
			e = -errno;
			snprintf(err, errlen, "confinement rule %zu "
				 "(descriptor %d): landlock_add_rule: %s", i,
				 rules[i].fd, strerror(-e));
			return e;
		}
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
		e = -errno;
		snprintf(err, errlen, "landlock_restrict_self: %s",
			 strerror(-e));
		return e;
	}
	return 0;
}

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
					     SCMP_CMP64(calls[i].arg,
							SCMP_CMP_MASKED_EQ,
							bit, bit));
			if (e < 0)
				return e;
		}
	}
	return 0;
}

/* Adds the rules of the filter to CTX; negative errno on failure. */
static int
build_filter(scmp_filter_ctx ctx)
{
	int e, nr;

	if ((e = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
				  SCMP_ACT_KILL_PROCESS)) < 0)
		return e;
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		nr = seccomp_syscall_resolve_name(denied[i]);
		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;
		e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (e < 0)
			return e;
	}
	if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
				  NR_OPEN_TREE_ATTR, 0)) < 0)
		return e;
	if ((e = add_chmod_rules(ctx, geteuid() == 0)) < 0)
		return e;
	nr = seccomp_syscall_resolve_name("fchmodat2");
	if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
				  nr == __NR_SCMP_ERROR || nr < 0 ?
					  NR_FCHMODAT2 : nr, 0)) < 0)
		return e;
	/*
	 * utimensat with a path; with a NULL path it is futimens(3), on a
	 * descriptor, which stays. Any non-NULL pointer is denied, "" with
	 * AT_EMPTY_PATH included (a filter cannot read the string).
	 */
	if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
				  SCMP_SYS(utimensat), 1,
				  SCMP_A1_64(SCMP_CMP_NE, 0))) < 0)
		return e;
	/*
	 * unshare is denied above; clone with a namespace flag would do the
	 * same, so it is denied too. clone3 keeps its flags in memory a
	 * filter cannot read: ENOSYS makes libc fall back to clone (as the
	 * launcher's filter does, launcher/seccomp.c).
	 */
	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++)
		if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
					  SCMP_SYS(clone), 1,
					  SCMP_A0_64(SCMP_CMP_MASKED_EQ,
						     ns_flags[i],
						     ns_flags[i]))) < 0)
			return e;
	if ((e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
				  SCMP_SYS(clone3), 0)) < 0)
		return e;
	return 0;
}

/*
 * The filter allows by default and denies the list above. Only the
 * native ABI is in it (seccomp_init adds just that one): a call through
 * another (i386 by int 0x80, x32, or aarch32 on arm64) kills the process
 * (SCMP_FLTATR_ACT_BADARCH), since none of the rules above would see it.
 */
static int
apply_seccomp(char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int e;

	if (ctx == NULL) {
		snprintf(err, errlen, "cannot build the seccomp filter: out "
			 "of memory");
		return -ENOMEM;
	}
	if ((e = build_filter(ctx)) < 0) {
		snprintf(err, errlen, "cannot build the seccomp filter: %s",
			 strerror(-e));
		seccomp_release(ctx);
		return e;
	}
	if ((e = seccomp_load(ctx)) < 0) {
		snprintf(err, errlen, "cannot load the seccomp filter (a "
			 "kernel without CONFIG_SECCOMP_FILTER?): %s",
			 strerror(-e));
		seccomp_release(ctx);
		return e;
	}
	seccomp_release(ctx);
	return 0;
}

int
confine_broker(const struct confine_rule *rules, size_t nrules, char *err,
	       size_t errlen)
{
	int e;

	if (errlen > 0)
		err[0] = '\0';
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		e = -errno;
		snprintf(err, errlen, "prctl(PR_SET_NO_NEW_PRIVS): %s",
			 strerror(-e));
		return e;
	}
	/* Before Landlock, which hides /proc (libcap-ng may read it). */
	if ((e = drop_capabilities(err, errlen)) < 0)
		return e;
	if ((e = apply_landlock(rules, nrules, err, errlen)) < 0)
		return e;
	return apply_seccomp(err, errlen);
}
