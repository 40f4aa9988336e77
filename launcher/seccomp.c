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
 *    the kernel uses, whatever the high bits (CVE-2016-7545, CVE-2017-5226).
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>

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

scmp_filter_ctx
jail_seccomp_build(void)
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
	return ctx;
fail:
	seccomp_release(ctx);
	return NULL;
}
