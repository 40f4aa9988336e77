/*
 * confine_util.c: see confine_util.h.
 *
 * Landlock is driven by raw system calls: Debian 12's <linux/landlock.h>
 * stops at ABI 2, so the later rights and the larger ruleset attribute
 * are defined here and in llutil.h with their kernel values
 * (include/uapi/linux/landlock.h). The kernel copies the attribute with
 * copy_struct_from_user semantics: a larger struct whose unknown tail is
 * zero is accepted by older kernels, so one struct serves every ABI as
 * long as only the fields the ABI knows are set.
 */
#include "confine_util.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "llutil.h"

/* ---- capabilities ------------------------------------------------------ */

static bool
in_list(unsigned int cap, const unsigned int *keep, size_t nkeep)
{
	for (size_t i = 0; i < nkeep; i++)
		if (keep[i] == cap)
			return true;
	return false;
}

int
cf_drop_caps(const unsigned int *keep, size_t nkeep, char *err, size_t errlen)
{
	uint64_t have = 0;
	bool setpcap, bounds;
	int r;

	if (capng_get_caps_process() != 0) {
		snprintf(err, errlen, "cannot read the process's capabilities");
		return -EPERM;
	}
	/* Dropping the bounding set needs CAP_SETPCAP, asked before the
	 * copy of the sets is cleared below. */
	setpcap = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP) != 0;
	/* Which of KEEP it has: only those are kept (none is gained). */
	for (size_t i = 0; i < nkeep; i++)
		if (keep[i] < 64 &&
		    capng_have_capability(CAPNG_PERMITTED, keep[i]) != 0)
			have |= 1ULL << keep[i];
	capng_clear(CAPNG_SELECT_ALL);
	bounds = setpcap;
	for (unsigned int cap = 0; cap < 64; cap++)
		if ((have & (1ULL << cap)) != 0 &&
		    capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED,
			cap) != 0) {
			snprintf(err, errlen, "cannot keep capability %u", cap);
			return -EPERM;
		}
	r = capng_apply(bounds ? CAPNG_SELECT_ALL
			       : CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT);
	if (r != 0) {
		snprintf(err, errlen,
		    "cannot drop capabilities (capng_apply "
		    "%d)",
		    r);
		return -EPERM;
	}
	/* The kernel's own view. */
	if (capng_get_caps_process() != 0) {
		snprintf(err, errlen, "cannot read the process's capabilities");
		return -EPERM;
	}
	for (unsigned int cap = 0; cap < 64; cap++) {
		int b = prctl(PR_CAPBSET_READ, (unsigned long)cap, 0UL, 0UL,
		    0UL);

		if (b < 0)
			break; /* past the kernel's last capability */
		if ((capng_have_capability(CAPNG_EFFECTIVE, cap) != 0 ||
			capng_have_capability(CAPNG_PERMITTED, cap) != 0) &&
		    !in_list(cap, keep, nkeep)) {
			snprintf(err, errlen,
			    "capability %u is still held "
			    "after dropping",
			    cap);
			return -EPERM;
		}
		if (capng_have_capability(CAPNG_INHERITABLE, cap) != 0 ||
		    (bounds && b == 1)) {
			snprintf(err, errlen,
			    "capability %u is still "
			    "inheritable or in the bounding set",
			    cap);
			return -EPERM;
		}
	}
	return 0;
}

/* ---- Landlock ----------------------------------------------------------- */

/* struct landlock_ruleset_attr as of ABI 6. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped; /* ABI 6 */
};

/* struct landlock_net_port_attr (ABI 4), and its rule type: Debian 12's
 * <linux/landlock.h> predates them. */
struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};
#define LL_RULE_NET_PORT 2

/* Allows TCP connect to each of CFG's connect ports in the ruleset RS.
 * Returns 0 or a negative errno with ERR set. */
static int
add_port_rules(int rs, const struct cf_ll_config *cfg, char *err, size_t errlen)
{
	for (size_t i = 0; i < cfg->nconnect_ports; i++) {
		struct ll_net_port_attr np = {
		    .allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP,
		    .port = cfg->connect_ports[i],
		};

		if (syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &np,
			0U) < 0) {
			int e = -errno;

			snprintf(err, errlen,
			    "cannot allow TCP port %u in the Landlock "
			    "ruleset: %s",
			    (unsigned)np.port, strerror(errno));
			return e;
		}
	}
	return 0;
}

/* The network rights CFG's domain handles under Landlock ABI V. */
static uint64_t
net_rights(const struct cf_ll_config *cfg, int v)
{
	if (v < 4)
		return 0; /* no network rights before ABI 4 */
	if (cfg->deny_tcp)
		return LANDLOCK_ACCESS_NET_BIND_TCP |
		    LANDLOCK_ACCESS_NET_CONNECT_TCP;
	if (cfg->deny_tcp_bind)
		return LANDLOCK_ACCESS_NET_BIND_TCP |
		    (cfg->connect_ports != NULL
			    ? LANDLOCK_ACCESS_NET_CONNECT_TCP
			    : 0);
	return 0;
}

/* Adds rule I (R) to the ruleset RS; HANDLED: the rights it handles. */
static int
add_rule(int rs, size_t i, const struct cf_ll_rule *r, uint64_t handled,
    uint64_t never, char *err, size_t errlen)
{
	struct landlock_path_beneath_attr pb;
	_cleanup_close_ int own = -1;
	struct stat st;
	int fd = r->fd, e;

	if (fd < 0) {
		own = open(r->path != NULL ? r->path : "", O_PATH | O_CLOEXEC);
		if (own < 0) {
			e = -errno;
			snprintf(err, errlen, "confinement rule %zu (%s): %s",
			    i, r->path != NULL ? r->path : "no path",
			    strerror(-e));
			return e;
		}
		fd = own;
	}
	if (fstat(fd, &st) < 0) {
		e = -errno;
		snprintf(err, errlen, "confinement rule %zu: descriptor %d: %s",
		    i, fd, strerror(-e));
		return e;
	}
	memset(&pb, 0, sizeof(pb));
	pb.parent_fd = fd;
	pb.allowed_access = r->access & handled & ~never;
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= LL_FS_FILE;
	/* Nothing this ABI handles is asked: nothing to grant. */
	if (pb.allowed_access == 0)
		return 0;
	if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb,
		0) < 0) {
		e = -errno;
		if (r->path != NULL)
			snprintf(err, errlen,
			    "confinement rule %zu (%s): "
			    "landlock_add_rule: %s",
			    i, r->path, strerror(-e));
		else
			snprintf(err, errlen,
			    "confinement rule %zu "
			    "(descriptor %d): landlock_add_rule: %s",
			    i, fd, strerror(-e));
		return e;
	}
	return 0;
}

int
cf_landlock_apply(const struct cf_ll_config *cfg,
    const struct cf_ll_rule *rules, size_t nrules, int *abi, char *err,
    size_t errlen)
{
	struct ll_ruleset_attr attr;
	_cleanup_close_ int rs = -1;
	int v = ll_abi(), e;

	if (abi != NULL)
		*abi = 0;
	/* ENOSYS: not built in; EOPNOTSUPP: built in, not enabled at boot
	 * (landlock_create_ruleset(2)). */
	if (v == -ENOSYS || v == -EOPNOTSUPP || v == 0) {
		snprintf(err, errlen,
		    "this kernel has no usable Landlock (%s), and the "
		    "%s does not run unconfined: enable it with "
		    "landlock in the lsm= boot parameter (for example "
		    "lsm=landlock,lockdown,yama,integrity,apparmor,bpf) "
		    "on a kernel built with CONFIG_SECURITY_LANDLOCK=y",
		    v == -ENOSYS ? "not built in"
				 : "built in but not enabled at boot",
		    cfg->who);
		return -EOPNOTSUPP;
	}
	if (v < 0) {
		snprintf(err, errlen, "cannot query Landlock: %s",
		    strerror(-v));
		return v;
	}

	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = ll_fs_rights(v);
	attr.handled_access_net = net_rights(cfg, v);
	if (v >= 6)
		attr.scoped = cfg->scoped &
		    (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
			LANDLOCK_SCOPE_SIGNAL);
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0U);
	if (rs < 0) {
		e = -errno;
		snprintf(err, errlen,
		    "cannot create a Landlock ruleset (ABI "
		    "%d): %s",
		    v, strerror(-e));
		return e;
	}
	for (size_t i = 0; i < nrules; i++)
		if ((e = add_rule(rs, i, &rules[i], attr.handled_access_fs,
			 cfg->never, err, errlen)) < 0)
			return e;
	if ((attr.handled_access_net & LANDLOCK_ACCESS_NET_CONNECT_TCP) != 0 &&
	    !cfg->deny_tcp && (e = add_port_rules(rs, cfg, err, errlen)) < 0)
		return e;
	if (syscall(SYS_landlock_restrict_self, rs, 0U) < 0) {
		e = -errno;
		snprintf(err, errlen, "landlock_restrict_self: %s",
		    strerror(-e));
		return e;
	}
	if (abi != NULL)
		*abi = v;
	return 0;
}

/* ---- seccomp ------------------------------------------------------------ */

int
cf_seccomp_new(scmp_filter_ctx *ctx)
{
	int e;

	*ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (*ctx == NULL)
		return -ENOMEM;
	if ((e = seccomp_attr_set(*ctx, SCMP_FLTATR_ACT_BADARCH,
		 SCMP_ACT_KILL_PROCESS)) < 0) {
		seccomp_release(*ctx);
		*ctx = NULL;
		return e;
	}
	return 0;
}

int
cf_seccomp_deny(scmp_filter_ctx ctx, const char *const *names, size_t n,
    int errnum)
{
	int e, nr;

	for (size_t i = 0; i < n; i++) {
		nr = seccomp_syscall_resolve_name(names[i]);
		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;
		e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)errnum), nr,
		    0U);
		if (e < 0)
			return e;
	}
	return 0;
}

int
cf_seccomp_deny_nr(scmp_filter_ctx ctx, const char *name, int nr, int errnum)
{
	int r = seccomp_syscall_resolve_name(name);

	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)errnum),
	    r == __NR_SCMP_ERROR || r < 0 ? nr : r, 0U);
}

/* open_tree_attr (Linux 6.15): the same number on every architecture;
 * libseccomp 2.5 has no name for it. */
#define NR_OPEN_TREE_ATTR 467

/* What no stockade helper needs once set up (confine_util.h). */
static const char *const never_needed[] = {
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "unshare",
    "setns",
    "open_by_handle_at",
    "bpf",
    "perf_event_open",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "sethostname",
    "setdomainname",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "iopl",
    "ioperm",
    "mknod",
    "mknodat",
};

int
cf_seccomp_deny_common(scmp_filter_ctx ctx)
{
	int e;

	if ((e = cf_seccomp_deny(ctx, never_needed,
		 sizeof(never_needed) / sizeof(never_needed[0]), EPERM)) < 0 ||
	    (e = cf_seccomp_deny_nr(ctx, "open_tree_attr", NR_OPEN_TREE_ATTR,
		 EPERM)) < 0)
		return e;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
	    0U);
}

int
cf_seccomp_load(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	int e = seccomp_load(ctx);

	if (e < 0)
		snprintf(err, errlen,
		    "cannot load the seccomp filter (a "
		    "kernel without CONFIG_SECCOMP_FILTER?): %s",
		    strerror(-e));
	seccomp_release(ctx);
	return e < 0 ? e : 0;
}

/* ---- the whole sequence ------------------------------------------------ */

int
cf_confine(const struct cf_plan *plan, char *err, size_t errlen)
{
	scmp_filter_ctx ctx;
	int e;

	if (errlen > 0)
		err[0] = '\0';
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		e = -errno;
		snprintf(err, errlen, "prctl(PR_SET_NO_NEW_PRIVS): %s",
		    strerror(-e));
		return e;
	}
	if ((e = cf_drop_caps(plan->keep, geteuid() == 0 ? plan->nkeep : 0, err,
		 errlen)) < 0)
		return e;
	if ((e = cf_landlock_apply(plan->ll, plan->rules, plan->nrules, NULL,
		 err, errlen)) < 0)
		return e;
	if ((e = cf_seccomp_new(&ctx)) < 0 ||
	    (e = plan->filter(ctx, plan->arg)) < 0) {
		snprintf(err, errlen, "cannot build the seccomp filter: %s",
		    strerror(-e));
		if (ctx != NULL)
			seccomp_release(ctx);
		return e;
	}
	return cf_seccomp_load(ctx, err, errlen);
}
