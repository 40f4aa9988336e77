/*
 * confine.h: the launcher confines itself once set up (issue 5, item 4;
 * docs/architecture.md, "Processes"; docs/confinement.md). Before the
 * call it has forked its zygote (zygote.h: the unconfined process that
 * clones every jail, so that no jail inherits what follows), opened its
 * own pidfd and a descriptor of /proc, and holds its broker socket and
 * its socket to the zygote. From then on it only supervises: it reads
 * and writes those sockets (descriptors arrive by SCM_RIGHTS: jail
 * pidfds, pipes, the seccomp listener, the workspace), polls, reads
 * /proc/PID/{stat,task,task/TID/children} of its jails, reads and writes
 * cgroup v2 interface files and makes and removes job leaves under a
 * cgroup2 mount, walks a job's workspace tree by directory descriptors,
 * answers seccomp user notifications and asks its zygote to kill a jail
 * (zygote_kill): it sends no signal itself. It never forks, execs, makes a
 * socket, mounts or changes ids again. The call applies, in this order:
 *  - no_new_privs (prctl PR_SET_NO_NEW_PRIVS; required by both below);
 *  - capabilities (capabilities(7)): a launcher whose effective uid is 0
 *    keeps exactly CAP_DAC_READ_SEARCH (if it has it) in its effective
 *    and permitted sets: the workspace walk meets directories of mode
 *    0700 owned by the workspace's owner, another user. Any other
 *    launcher keeps none. Inheritable and ambient sets are emptied, and
 *    the bounding set when the process holds CAP_SETPCAP (a root
 *    launcher does);
 *  - a Landlock domain (landlock(7); every file-system right the
 *    kernel's ABI knows is handled) that grants READ_FILE and READ_DIR
 *    beneath /proc; READ_FILE, WRITE_FILE, TRUNCATE, READ_DIR, MAKE_DIR
 *    and REMOVE_DIR beneath every cgroup2 mount point that
 *    /proc/self/mountinfo lists at the time of the call (none mounted:
 *    no such rule; one mounted later is not covered); READ_DIR, and
 *    nothing else, beneath "/". The last is the workspace walk's: the
 *    workspace differs per job and arrives as a descriptor, while a
 *    Landlock domain can never gain a rule. The trade-off: the names in,
 *    and the stat(2) of, any directory the launcher's uid may search are
 *    visible to it, the contents of no file outside /proc and the cgroup
 *    file systems are. From ABI 4, TCP bind and connect are handled with
 *    no rule (refused); from ABI 6, abstract unix sockets are scoped.
 *    Signals are NOT scoped (the filter refuses every way to send one):
 *    the kernel checks a parent-death signal against the dying
 *    parent's domain (security_task_kill), so a scoped launcher's death
 *    would no longer kill its zygote and its jails' init;
 *  - a seccomp filter (libseccomp, default allow, native ABI only: a
 *    call through i386 (int 0x80) or x32 kills the process) that
 *    answers with EPERM execve, execveat, fork, vfork, clone (any
 *    flags: no thread either), socket, socketpair, connect, bind,
 *    listen, accept, accept4; every signal but to itself: kill, tkill,
 *    rt_sigqueueinfo, pidfd_send_signal (which also takes a /proc/PID
 *    descriptor, and so would reach any process of its uid), tgkill
 *    and rt_tgsigqueueinfo unless their first argument is the
 *    launcher's own pid (abort(3), raise(3)), fcntl F_SETOWN,
 *    F_SETOWN_EX and F_SETSIG and ioctl FIOSETOWN and SIOCSPGRP (SIGIO
 *    to another process); acting on other processes: pidfd_open,
 *    pidfd_getfd, process_madvise, prlimit64 with a new limit for
 *    another pid, setpriority, ioprio_set, sched_setscheduler,
 *    sched_setparam, sched_setaffinity, sched_setattr, migrate_pages,
 *    move_pages; watches: inotify_init, inotify_init1, fanotify_init
 *    (Landlock does not check marks); name_to_handle_at; the calls no
 *    stockade helper needs (shared/confine_util.h,
 *    cf_seccomp_deny_common: ptrace,
 *    process_vm_*, kcmp, the old and new mount API, chroot, unshare,
 *    setns, open_by_handle_at, bpf, perf_event_open, io_uring,
 *    userfaultfd, the key ring, kexec, modules, reboot, swapon/off,
 *    acct, host and domain names, clock setting, iopl, ioperm, mknod,
 *    mknodat); ownership, mode, extended attributes and times (chown,
 *    fchown, lchown, fchownat, chmod, fchmod, fchmodat, fchmodat2, the
 *    xattr set and remove calls, utime, utimes, futimesat, utimensat),
 *    which Landlock does not cover; ids and capabilities (setuid,
 *    setgid, setreuid, setregid, setresuid, setresgid, setfsuid,
 *    setfsgid, setgroups, capset); memfd_create and memfd_secret (it
 *    has nothing to hide); ioctl TIOCSTI and TIOCLINUX on any
 *    descriptor (its stderr may be the user's terminal), compared on the
 *    low 32 bits whatever the high ones; and answers clone3 with ENOSYS.
 *    A name libseccomp does not know is skipped.
 * Descriptors opened before the call keep working: Landlock checks
 * paths when they are opened. Reads beneath /proc are limited by the
 * kernel's own checks (ptrace_may_access for environ, mem, maps...) and
 * Landlock's ptrace scoping (a process outside the domain may not be
 * traced), not by a path rule.
 */
#ifndef STOCKADE_LAUNCHER_CONFINE_H
#define STOCKADE_LAUNCHER_CONFINE_H

#include <stddef.h>

/*
 * Applies the confinement above to the calling process, which must have
 * only one thread (Landlock and seccomp apply to the calling thread). It
 * cannot be undone. Returns 0, or a negative errno with ERR (ERRLEN
 * bytes) set to a sentence that names the fix: -EOPNOTSUPP when the
 * kernel has no usable Landlock (landlock not in the lsm= list, or
 * CONFIG_SECURITY_LANDLOCK off), another errno when a step fails. On
 * failure the process may be partly confined and must not serve jobs:
 * the caller exits.
 */
int confine_launcher(char *err, size_t errlen);

#endif
