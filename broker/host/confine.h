/*
 * confine.h: the broker confines itself once set up (issue 3, item 7;
 * docs/architecture.md, "Processes"): after it has opened the workspace,
 * the host files named on its command line, its socket and started its
 * launcher spawner (spawner.h, supervisor_use_spawner: a confined broker
 * cannot exec, and a launcher it exec'd would inherit a Landlock domain,
 * in which mount and pivot_root are forbidden), it applies
 *  - no_new_privs (prctl PR_SET_NO_NEW_PRIVS; required by both below);
 *  - capabilities (capabilities(7)): a broker whose effective uid is 0
 *    keeps exactly CAP_CHOWN, CAP_DAC_OVERRIDE and CAP_FOWNER (those of
 *    them it has) in its effective and permitted sets; any other broker
 *    keeps none. Inheritable and ambient sets are emptied, and so is the
 *    bounding set when the process holds CAP_SETPCAP (a root broker
 *    does; an ordinary user's cannot be, and need not be: it cannot
 *    exec, and no_new_privs forbids gaining any). Why these three: a
 *    root broker works in a workspace owned by another user
 *    (PROTO_ROOT_PAYLOAD_ID, workspace.h) whose files and directories
 *    the job may give any mode - DAC_OVERRIDE to read, write, search and
 *    remove there; CHOWN to give what the file API makes (fs.write,
 *    fs.mkdir) to that owner; FOWNER to restore the workspace's own mode
 *    at the end (workspace_close: fchmod of a directory it does not
 *    own) and to remove from a sticky directory the job made. All three
 *    act only on files Landlock lets it open: the calls that take a path
 *    are denied below;
 *  - a Landlock ruleset (landlock(7)) that handles every file-system
 *    right the kernel's ABI knows (ABI 1 to 6: up to REFER, TRUNCATE,
 *    IOCTL_DEV) and grants them only beneath the descriptors in RULES
 *    (the workspace: all rights but EXECUTE, MAKE_CHAR, MAKE_BLOCK,
 *    MAKE_SOCK and MAKE_FIFO, which no rule grants; a host directory a
 *    command writes into: only the rights named) - nothing else on the
 *    host can be read, written, executed or made, /proc included; no
 *    device node anywhere; from ABI 4, TCP bind and
 *    connect to any port; from ABI 6, connecting to an abstract unix
 *    socket outside the broker's domain. Signals are not scoped: the
 *    broker must still kill its launcher, which is outside its domain;
 *  - a seccomp filter (libseccomp, default allow) that denies with EPERM
 *    execve, execveat, socket, socketpair and connect (every family:
 *    set up, the broker makes no socket; accept4 on its listener
 *    stays), clone with a namespace flag, mknod and mknodat, the
 *    metadata calls that take a path, which Landlock does not cover
 *    (chown, lchown, fchownat, fchmodat2, setxattr, lsetxattr,
 *    removexattr, lremovexattr, utime, utimes, futimesat, and utimensat
 *    unless its path is NULL, i.e. futimens; chmod and fchmodat for a
 *    root broker, and for any other whenever the mode has a bit outside
 *    0700 - remove_tree_at, shared/fsutil.c, gives a directory of mode
 *    0 u+rwx through its /proc/self/fd link, which an ordinary user
 *    cannot do otherwise, and with the owner's bits alone nothing is
 *    given to anyone), the
 *    descriptor forms of the xattr calls (fsetxattr, fremovexattr:
 *    never needed), and the system calls a broker never needs (ptrace,
 *    process_vm_*, kcmp, the old and new mount API, chroot, unshare,
 *    setns, open_by_handle_at, bpf, perf_event_open, io_uring,
 *    userfaultfd, the keyctl family, kexec, modules, reboot, swapon/off,
 *    acct, sethostname, setdomainname, settimeofday, clock_settime,
 *    clock_adjtime, adjtimex, iopl, ioperm), answers clone3 with ENOSYS
 *    (libc falls back to clone, whose flags the filter can read), and
 *    kills the process on any ABI but the native one (i386 and x32 on
 *    x86_64). fchown and fchmod on a descriptor stay: that is how the
 *    broker sets owner and mode (open the file or directory for real,
 *    never through a /proc/self/fd path).
 * Descriptors opened before the call keep working (the workspace, a
 * client socket, a host file to copy), whatever the rules: Landlock
 * checks paths when they are opened.
 * Not covered: signals (the broker must kill its launcher, outside its
 * domain; a root broker can still signal other root processes, as same
 * uid needs no CAP_KILL), and stat or readlink outside the workspace.
 * Fail closed: a kernel without Landlock (or with it disabled) is a
 * refusal with the fix, never an unconfined broker.
 */
#ifndef STOCKADE_CONFINE_H
#define STOCKADE_CONFINE_H

#include <stddef.h>
#include <stdint.h>

struct confine_rule {
	int fd; /* O_PATH or O_DIRECTORY descriptor, borrowed;
			      * a non-directory gets only the rights that
			      * apply to a file (execute, read, write,
			      * truncate, ioctl on a device) */
	uint64_t access; /* LANDLOCK_ACCESS_FS_* rights beneath it;
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
int confine_broker(const struct confine_rule *rules, size_t nrules, char *err,
    size_t errlen);

#endif
