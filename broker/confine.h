/*
 * confine.h: the broker confines itself once set up (issue 3, item 7;
 * docs/architecture.md, "Processes"): after it has opened the workspace,
 * the host files named on its command line, its socket and started its
 * launcher spawner (spawner.h, supervisor_use_spawner: a confined broker
 * cannot exec, and a launcher it exec'd would inherit a Landlock domain,
 * in which mount and pivot_root are forbidden), it applies
 *  - no_new_privs (prctl PR_SET_NO_NEW_PRIVS; required by both below);
 *  - a Landlock ruleset (landlock(7)) that handles every file-system
 *    right the kernel's ABI knows (ABI 1 to 6: up to REFER, TRUNCATE,
 *    IOCTL_DEV) and grants them only beneath the descriptors in RULES
 *    (the workspace: all rights; a host directory a command writes into:
 *    only the rights named) - nothing else on the host can be read,
 *    written, executed or made, /proc included; from ABI 4, TCP bind and
 *    connect to any port; from ABI 6, connecting to an abstract unix
 *    socket outside the broker's domain. Signals are not scoped: the
 *    broker must still kill its launcher, which is outside its domain;
 *  - a seccomp filter (libseccomp, default allow) that denies with EPERM
 *    execve, execveat, socket() and socketpair() for every family but
 *    AF_UNIX, clone with a namespace flag, and the system calls a broker
 *    never needs (ptrace, process_vm_*, kcmp, the old and new mount API,
 *    chroot, unshare, setns, open_by_handle_at, bpf, perf_event_open,
 *    io_uring, userfaultfd, the keyctl family, kexec, modules, reboot,
 *    swapon/off, acct), answers clone3 with ENOSYS (libc falls back to
 *    clone, whose flags the filter can read), and kills the process on
 *    any ABI but the native one (i386 and x32 on x86_64).
 * Descriptors opened before the call keep working (the workspace, a
 * client socket, a host file to copy), whatever the rules: Landlock
 * checks paths when they are opened.
 * Fail closed: a kernel without Landlock (or with it disabled) is a
 * refusal with the fix, never an unconfined broker.
 */
#ifndef STOCKADE_CONFINE_H
#define STOCKADE_CONFINE_H

#include <stddef.h>
#include <stdint.h>

struct confine_rule {
	int fd;              /* O_PATH or O_DIRECTORY descriptor, borrowed;
			      * a non-directory gets only the rights that
			      * apply to a file (execute, read, write,
			      * truncate, ioctl on a device) */
	uint64_t access;     /* LANDLOCK_ACCESS_FS_* rights beneath it;
			      * CONFINE_ALL: every right the ABI handles.
			      * Rights the ABI does not know are dropped;
			      * a rule left with none is skipped */
};
#define CONFINE_ALL UINT64_MAX

/*
 * Applies the confinement described above to the calling thread, which
 * must be the process's only one (Landlock and seccomp apply to the
 * calling thread and what it starts later: call it before making
 * threads), with NRULES rules. It cannot be undone. Returns 0, or
 * a negative errno with ERR (ERRLEN bytes) set to a sentence that names
 * the fix: -EOPNOTSUPP when the kernel has no Landlock (landlock not in
 * the lsm= list, or CONFIG_SECURITY_LANDLOCK off), another errno when a
 * step fails. On failure the process may be partly confined and must
 * not serve requests: the caller exits.
 */
int confine_broker(const struct confine_rule *rules, size_t nrules,
		   char *err, size_t errlen);

#endif
