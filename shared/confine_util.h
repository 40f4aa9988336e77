/*
 * confine_util.h: the pieces of self-confinement that the broker
 * (broker/host/confine.c) and the launcher (launcher/supervisor/confine.c) share,
 * each process choosing its own lists: dropping capabilities to a kept list
 * (libcap-ng), building and enforcing a Landlock ruleset from (path or
 * descriptor, rights) rules, and a default-allow seccomp filter
 * (libseccomp) that kills foreign ABIs and denies named calls.
 *
 * Every function here acts on the calling thread (capabilities, Landlock
 * and seccomp are per thread and inherited by what it starts later), so
 * callers confine a process while it has only one thread. None of it can
 * be undone. Errors are negative errnos with ERR (ERRLEN bytes) set to a
 * sentence; nothing logs or exits.
 */
#ifndef STOCKADE_CONFINE_UTIL_H
#define STOCKADE_CONFINE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <seccomp.h>

/* ---- capabilities ------------------------------------------------------ */

/*
 * Leaves the process, in its effective and permitted sets, exactly those
 * of the NKEEP capabilities KEEP (CAP_* numbers; NULL when NKEEP is 0)
 * that it has in its permitted set now, and nothing else; empties the
 * inheritable and ambient sets, and the bounding set when the process
 * holds CAP_SETPCAP in its effective set (an ordinary user's cannot be
 * emptied, and with no_new_privs it gains nothing from it). Then reads
 * the sets back from the kernel: a capability still held that should not
 * be, or still inheritable or bounding when it could be cleared, is an
 * error. capabilities(7); capng_apply(3).
 * Returns 0 or -EPERM.
 */
int cf_drop_caps(const unsigned int *keep, size_t nkeep, char *err,
    size_t errlen);

/* ---- Landlock ----------------------------------------------------------- */

/* A file-system rule: the rights ACCESS beneath one file or directory. */
struct cf_ll_rule {
	int fd; /* an O_PATH or ordinary descriptor, borrowed;
			      * or -1: PATH is opened (O_PATH|O_CLOEXEC,
			      * following symlinks) and closed again */
	const char *path; /* used when FD is -1; names the rule in an
			      * error message otherwise (may be NULL) */
	uint64_t access; /* LANDLOCK_ACCESS_FS_* rights, or CF_LL_ALL.
			      * Rights the ABI does not handle, and the
			      * config's NEVER, are dropped; a non-directory
			      * keeps only the rights that apply to a file
			      * (landlock_add_rule(2): EINVAL otherwise); a
			      * rule left with none is skipped */
};
#define CF_LL_ALL UINT64_MAX

struct cf_ll_config {
	const char *who; /* "broker", "launcher": named in the refusal */
	uint64_t never; /* LANDLOCK_ACCESS_FS_* no rule may grant */
	bool deny_tcp; /* from ABI 4, TCP bind and connect are handled
			      * with no rule: refused to every port, on
			      * sockets opened before too */
	bool deny_tcp_bind; /* from ABI 4, TCP bind alone is handled
			      * with no rule (connect stays free unless
			      * CONNECT_PORTS says):
			      * stockade-proxy, which dials per job */
	/* With deny_tcp_bind, from ABI 4: TCP connect handled too, and
	 * allowed to these NCONNECT_PORTS ports alone (one
	 * LANDLOCK_RULE_NET_PORT rule each); NULL: connect not handled. */
	const uint16_t *connect_ports;
	size_t nconnect_ports;
	uint64_t scoped; /* LANDLOCK_SCOPE_* asked for, applied from
			      * ABI 6 (nothing before) */
};

/*
 * Enforces on the calling thread a Landlock domain (landlock(7)) that
 * handles every file-system right the running kernel's ABI knows
 * (ll_fs_rights, llutil.h) and grants them only as the NRULES RULES say,
 * with CFG's network and scope settings. Stores the ABI used in *ABI
 * when ABI is not NULL. no_new_privs (or CAP_SYS_ADMIN) must be set
 * already.
 * Fail closed: a kernel without Landlock, or with it not enabled at
 * boot, gives -EOPNOTSUPP and a sentence naming the fix (lsm= and
 * CONFIG_SECURITY_LANDLOCK=y) and "the CFG->WHO does not run
 * unconfined". A rule whose descriptor is bad or whose path cannot be
 * opened gives that errno with "confinement rule N: descriptor D: ..."
 * or "confinement rule N (PATH): ...". Returns 0 or a negative errno.
 */
int cf_landlock_apply(const struct cf_ll_config *cfg,
    const struct cf_ll_rule *rules, size_t nrules, int *abi, char *err,
    size_t errlen);

/* ---- seccomp ------------------------------------------------------------ */

/*
 * Makes in *CTX a libseccomp filter that allows by default, holds only
 * the native ABI (seccomp_init adds just that one) and kills the whole
 * process on a call through any other (SCMP_FLTATR_ACT_BADARCH =
 * SCMP_ACT_KILL_PROCESS: i386 by int 0x80 and x32 on x86_64), since no
 * rule of the native ABI would see such a call. Release it with
 * seccomp_release, or load it with cf_seccomp_load.
 * Returns 0 or a negative errno (-ENOMEM).
 */
int cf_seccomp_new(scmp_filter_ctx *ctx);

/*
 * Adds to CTX a rule answering each of the N system calls NAMES with
 * ERRNO (EPERM, ENOSYS, ...), whatever its arguments. A name that
 * libseccomp or the native architecture does not know is skipped.
 * Returns 0 or libseccomp's negative errno.
 */
int cf_seccomp_deny(scmp_filter_ctx ctx, const char *const *names, size_t n,
    int errnum);

/*
 * The same for one call NAME that an older libseccomp may not know:
 * when it does not resolve, the system call number NR is used instead
 * (for the calls of the unified table, 424 on, which have the same
 * number on every architecture: fchmodat2 452, open_tree_attr 467).
 */
int cf_seccomp_deny_nr(scmp_filter_ctx ctx, const char *name, int nr,
    int errnum);

/*
 * Denies with EPERM what no stockade helper process needs once set up,
 * whatever it is: tracing and reading other processes (ptrace,
 * process_vm_readv/writev, kcmp), the old and new mount API (open_tree_attr
 * included), chroot, unshare, setns, open_by_handle_at (bypasses path
 * resolution, CVE-2014-3519 "shocker"), kernel attack surface (bpf,
 * perf_event_open, io_uring_*, userfaultfd, keyctl, add_key,
 * request_key), host administration (kexec, module loading, reboot,
 * swapon/off, acct, sethostname, setdomainname, settimeofday,
 * clock_settime, clock_adjtime, adjtimex, iopl, ioperm) and device,
 * fifo and socket files (mknod, mknodat); and answers clone3 with ENOSYS
 * (its flags are in memory a filter cannot read; libc falls back to
 * clone, whose flags it can). Returns 0 or a negative errno.
 */
int cf_seccomp_deny_common(scmp_filter_ctx ctx);

/*
 * Loads CTX into the kernel for the calling thread and releases it
 * (also on failure). no_new_privs (or CAP_SYS_ADMIN) must be set.
 * Returns 0 or a negative errno with ERR set.
 */
int cf_seccomp_load(scmp_filter_ctx ctx, char *err, size_t errlen);

/* ---- the whole sequence ------------------------------------------------ */

/* What one process keeps: its own lists, applied by cf_confine. */
struct cf_plan {
	const unsigned int *keep; /* CAP_* kept by a process whose effective
				    * uid is 0 (cf_drop_caps); any other
				    * keeps none */
	size_t nkeep;
	const struct cf_ll_config *ll; /* the Landlock domain */
	const struct cf_ll_rule *rules; /* and its rules (cf_landlock_apply) */
	size_t nrules;
	/* Adds the process's rules to the filter CTX that cf_seccomp_new
	 * made, with ARG; returns 0 or a negative errno. */
	int (*filter)(scmp_filter_ctx ctx, void *arg);
	void *arg;
};

/*
 * Confines the calling thread, which must be its process's only one, as
 * PLAN says, in this order: no_new_privs (prctl PR_SET_NO_NEW_PRIVS;
 * Landlock and seccomp need it in an unprivileged process, landlock(7),
 * seccomp(2)); the capabilities (cf_drop_caps: before Landlock, which
 * may hide /proc from libcap-ng, and before seccomp, which may deny
 * capset); the Landlock domain (cf_landlock_apply: before seccomp, so
 * that a filter need not allow the landlock_* calls); the seccomp filter
 * (cf_seccomp_new, PLAN->filter, cf_seccomp_load). It cannot be undone.
 * Returns 0, or the first step's negative errno with ERR (ERRLEN bytes)
 * set to its sentence (-EOPNOTSUPP for a kernel without Landlock, as
 * cf_landlock_apply says); the process may then be partly confined and
 * must not go on serving.
 */
int cf_confine(const struct cf_plan *plan, char *err, size_t errlen);

#endif
