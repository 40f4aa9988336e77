/*
 * confine.h: the broker confines itself once set up (issue 3, item 7;
 * docs/architecture.md, "Processes"): after it has opened the workspace,
 * the host files named on its command line, its socket and started its
 * launcher (or the launcher spawner, spawner.h), it applies
 *  - no_new_privs (prctl PR_SET_NO_NEW_PRIVS; required by both below);
 *  - a Landlock ruleset (landlock(7)) that handles every file-system
 *    right the kernel's ABI knows and grants them only beneath the
 *    descriptors in RULES (the workspace: all rights; a host directory a
 *    command writes into: only the rights named) - nothing else on the
 *    host can be read, written, executed or made;
 *  - a seccomp filter (libseccomp) that denies with EPERM execve,
 *    execveat, socket() for every family but AF_UNIX, and the system
 *    calls a broker never needs (ptrace, process_vm_*, mount API,
 *    unshare, setns, bpf, perf_event_open, io_uring, userfaultfd,
 *    keyctl family, kexec, modules, reboot, swapon/off), and kills the
 *    process on the x32 and i386 ABIs.
 * Fail closed: a kernel without Landlock (or with it disabled) is a
 * refusal with the fix, never an unconfined broker.
 */
#ifndef STOCKADE_CONFINE_H
#define STOCKADE_CONFINE_H

#include <stddef.h>
#include <stdint.h>

struct confine_rule {
	int fd;              /* O_PATH or O_DIRECTORY descriptor, borrowed */
	uint64_t access;     /* LANDLOCK_ACCESS_FS_* rights beneath it;
			      * CONFINE_ALL: every right the ABI handles */
};
#define CONFINE_ALL UINT64_MAX

/*
 * Applies the confinement described above to the calling process (every
 * thread: call it before making threads) with NRULES rules. Returns 0, or
 * a negative errno with ERR (ERRLEN bytes) set to a sentence that names
 * the fix: -EOPNOTSUPP when the kernel has no Landlock (landlock not in
 * the lsm= list, or CONFIG_SECURITY_LANDLOCK off), another errno when a
 * step fails. On failure the process may be partly confined and must
 * not serve requests: the caller exits.
 */
int confine_broker(const struct confine_rule *rules, size_t nrules,
		   char *err, size_t errlen);


#endif
