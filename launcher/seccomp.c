/*
 * seccomp.c: the jail's first seccomp filter, built with libseccomp.
 *
 * This is a deny-list on a default of allow; the full allow-list is the
 * subject of a later change (docs/decisions.md). What it guarantees now:
 *  - only the native x86_64 ABI: a call through the i386 (int 0x80) or x32
 *    ABI kills the process (SCMP_FLTATR_ACT_BADARCH);
 *  - EPERM for the calls that widen the kernel's attack surface or leave
 *    the jail: ptrace and cross-process memory access, bpf, io_uring,
 *    userfaultfd, perf_event_open, the key ring, the old and new mount
 *    API, unshare, setns, kexec, module loading, swap, reboot, acct,
 *    quotactl, file handles (open_by_handle_at: the "shocker" escape), and
 *    clone with any namespace flag;
 *  - ENOSYS for clone3, whose flags live in memory a filter cannot read,
 *    so libc falls back to clone, whose flags it can (as Docker and
 *    systemd-nspawn do);
 *  - EPERM for ioctl TIOCSTI and TIOCLINUX, compared on the low 32 bits
 *    the kernel uses, whatever the high bits (CVE-2016-7545, CVE-2017-5226);
 *  - EPERM for making a file setuid or setgid (chmod, fchmod, fchmodat,
 *    mkdir, mknod, open, openat and creat with O_CREAT or O_TMPFILE and
 *    such a mode; fchmodat2 and openat2, whose mode a filter cannot read or
 *    whose number libseccomp may not know, get ENOSYS so libc falls back):
 *    `nosuid` protects the jail, not the host, where the workspace's files
 *    keep their bits (systemd's RestrictSUIDSGID= is the model);
 *  - EAFNOSUPPORT for socket families other than AF_UNIX, AF_INET,
 *    AF_INET6 and AF_NETLINK: AF_VSOCK, for one, is not isolated by the
 *    network namespace and would reach the hypervisor;
 *  - with the /proc monitor holding memory (enforce.h), EPERM for the
 *    ways to hold memory that no process maps, which the monitor cannot
 *    see: memfd_create and memfd_secret (a file in memory, written and
 *    never mapped), SysV shared memory and message queues (shmget,
 *    msgget; the jail's IPC namespace has the kernel's huge defaults and
 *    its sysctls are writable only by the namespace's uid 0, which the
 *    jail does not map). A cgroup v2 leaf charges them, so they stay
 *    allowed there.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "jail.h"

static const char *const denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "bpf",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"userfaultfd", "perf_event_open", "keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "fsopen", "fsmount", "fsconfig",
	"fspick", "move_mount", "open_tree", "mount_setattr", "unshare",
	"setns", "kexec_load", "kexec_file_load", "init_module",
	"finit_module", "delete_module", "swapon", "swapoff", "reboot", "acct",
	"quotactl", "quotactl_fd", "lookup_dcookie", "open_by_handle_at",
	"name_to_handle_at", "settimeofday", "clock_settime", "clock_adjtime",
	"adjtimex", "syslog", "vhangup", "chroot", "iopl", "ioperm",
	"create_module", "get_kernel_syms", "query_module", "nfsservctl",
	"uselib", "ustat", "sysfs", "_sysctl", "pciconfig_read",
	"pciconfig_write", "fanotify_init",
};

static const unsigned long ns_flags[] = {
	CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
	CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME,
};

/* Syscalls taking a mode, and which argument holds it. */
static const struct {
	const char *name;
	unsigned mode_arg;
} mode_calls[] = {
	{"chmod", 1}, {"fchmod", 1}, {"fchmodat", 2}, {"mkdir", 1},
	{"mkdirat", 2}, {"mknod", 1}, {"mknodat", 2}, {"creat", 1},
};

/* open(2) and openat(2): flags argument, then mode. */
static const struct {
	const char *name;
	unsigned flags_arg;
} open_calls[] = {{"open", 1}, {"openat", 2}};

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif
/* x86_64 numbers of calls libseccomp 2.5 may not know by name. */
#define NR_FCHMODAT2 452
/* Newer mount API calls (Linux 6.8, 6.8, 6.15): statmount, listmount,
 * open_tree_attr. Denied like the rest of the mount API. */
static const int new_mount_calls[] = {457, 458, 467};

static int
deny_suid_sgid(scmp_filter_ctx ctx)
{
	static const unsigned long bits[] = {S_ISUID, S_ISGID};
	static const unsigned long creating[] = {O_CREAT, __O_TMPFILE};

	for (size_t i = 0; i < sizeof(mode_calls) / sizeof(mode_calls[0]); i++) {
		int nr = seccomp_syscall_resolve_name(mode_calls[i].name);

		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;
		for (size_t b = 0; b < 2; b++) {
			struct scmp_arg_cmp c = {
				.arg = mode_calls[i].mode_arg,
				.op = SCMP_CMP_MASKED_EQ,
				.datum_a = bits[b], .datum_b = bits[b],
			};

			if (seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM),
						   nr, 1, &c) < 0)
				return -1;
		}
	}
	for (size_t i = 0; i < sizeof(open_calls) / sizeof(open_calls[0]); i++) {
		int nr = seccomp_syscall_resolve_name(open_calls[i].name);
		unsigned fa = open_calls[i].flags_arg;

		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;
		for (size_t f = 0; f < 2; f++)
			for (size_t b = 0; b < 2; b++) {
				struct scmp_arg_cmp c[2] = {
					{.arg = fa, .op = SCMP_CMP_MASKED_EQ,
					 .datum_a = creating[f],
					 .datum_b = creating[f]},
					{.arg = fa + 1, .op = SCMP_CMP_MASKED_EQ,
					 .datum_a = bits[b], .datum_b = bits[b]},
				};

				if (seccomp_rule_add_array(
					    ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
					    c) < 0)
					return -1;
			}
	}
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), NR_FCHMODAT2, 0) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2),
			     0) < 0)
		return -1;
	return 0;
}

/*
 * socket(2) and socketpair(2) families other than the four allowed. The
 * kernel reads the family as an int, so a value with high bits set is a
 * different 64-bit number: every such value is above AF_NETLINK and
 * denied by the "greater than" rule.
 */
static int
deny_socket_families(scmp_filter_ctx ctx)
{
	static const char *const calls[] = {"socket", "socketpair"};

	for (size_t i = 0; i < 2; i++) {
		int nr = seccomp_syscall_resolve_name(calls[i]);

		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;
		for (unsigned long fam = 0; fam < AF_NETLINK; fam++) {
			if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6)
				continue;
			if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT),
					     nr, 1,
					     SCMP_A0_64(SCMP_CMP_EQ, fam)) < 0)
				return -1;
		}
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1,
				     SCMP_A0_64(SCMP_CMP_GT, AF_NETLINK)) < 0)
			return -1;
	}
	return 0;
}

/* Calls that hold memory no process maps (see the top of this file). */
static const char *const unseen_memory[] = {
	"memfd_create", "memfd_secret", "shmget", "msgget",
};

scmp_filter_ctx
jail_seccomp_build(bool monitor)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (ctx == NULL)
		return NULL;
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
			     SCMP_ACT_KILL_PROCESS) < 0)
		goto fail;
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		int nr = seccomp_syscall_resolve_name(denied[i]);

		/* A name this architecture lacks is not an error. */
		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) < 0)
			goto fail;
	}
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
			     0) < 0)
		goto fail;
	for (size_t i = 0; i < sizeof(new_mount_calls) / sizeof(new_mount_calls[0]);
	     i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), new_mount_calls[i],
				     0) < 0)
			goto fail;
	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
				     SCMP_SYS(clone), 1,
				     SCMP_A0_64(SCMP_CMP_MASKED_EQ, ns_flags[i],
						ns_flags[i])) < 0)
			goto fail;
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
			     SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffu,
					TIOCSTI)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
			     SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffu,
					TIOCLINUX)) < 0)
		goto fail;
	if (deny_suid_sgid(ctx) < 0 || deny_socket_families(ctx) < 0)
		goto fail;
	for (size_t i = 0; monitor && i < sizeof(unseen_memory) /
						  sizeof(unseen_memory[0]); i++) {
		int nr = seccomp_syscall_resolve_name(unseen_memory[i]);

		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) < 0)
			goto fail;
	}
	return ctx;
fail:
	seccomp_release(ctx);
	return NULL;
}
