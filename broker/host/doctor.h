/*
 * doctor.h: `stockade doctor`, every layer of the jail probed on this host
 * (issue 5, item 5), and the cached verdict every command checks first.
 *
 * Each check is a real probe, never a guess from the kernel version: the
 * system call is made (in a short-lived child when it changes the
 * process: a namespace, a seccomp filter, a Landlock domain) and what the
 * kernel answered is reported. The checks, in order (name: layer):
 *
 *   kernel            kernel                uname(2); informational, always ok
 *   user_namespaces   unprivileged user namespaces
 *                                           the sysctls that turn them off
 *                                           (user.max_user_namespaces,
 *                                           kernel.unprivileged_userns_clone,
 *                                           kernel.apparmor_restrict_
 *                                           unprivileged_userns), then
 *                                           unshare(CLONE_NEWUSER) in a child
 *                                           (preflight_userns, preflight.h)
 *   namespaces        pid, net and mount namespaces
 *                                           in a child's new user namespace,
 *                                           unshare of each of NEWNS, NEWPID,
 *                                           NEWNET, NEWIPC, NEWUTS, NEWCGROUP
 *                                           (the launcher's clone flags)
 *   proc_mount        /proc in a user namespace
 *                                           pid 1 of that pid namespace
 *                                           mounts a fresh proc (refused by
 *                                           the kernel when the host's /proc
 *                                           is partly hidden, as in many
 *                                           containers: mount_too_revealing)
 *   openat2           openat2 (RESOLVE_BENEATH)
 *                                           "." beneath "/" opens and ".."
 *                                           beneath "/" fails with EXDEV
 *   seccomp           seccomp filter        a filter loaded in a child
 *                                           answers a chosen errno
 *   landlock          Landlock              the ABI version, then a ruleset
 *                                           enforced in a child denies a read
 *   seccomp_notify    seccomp user notification
 *                                           SECCOMP_RET_USER_NOTIF: a child
 *                                           holds the listener and answers its
 *                                           own child's call
 *   cgroup            cgroup v2 delegation  the process's own cgroup v2
 *                                           (/proc/self/cgroup and
 *                                           /proc/self/mountinfo): its
 *                                           cgroup.controllers,
 *                                           cgroup.subtree_control, and
 *                                           whether this user may make
 *                                           cgroups there
 *   egress_proxy      egress proxy          stockade-proxy started as a
 *                                           session with a [network]
 *                                           allow-list starts it, confined
 *                                           (Landlock, seccomp), stopped;
 *                                           `stockade doctor` only
 *                                           (doctor_set_egress_proxy)
 *
 * A check's status says what it means for stockade: DOCTOR_OK, the layer
 * is there; DOCTOR_MISSING, an optional layer (or an optional part of
 * one) is missing and jobs run degraded; DOCTOR_REFUSED, a required layer
 * is missing and stockade refuses to run (style.md rule 18). Optional:
 * cgroup v2 delegation (limits then come from rlimits and the /proc
 * monitor), the egress proxy (without it a policy with a [network]
 * allow-list is refused; jobs without network run) and Landlock ABIs below 6 (the jail drops the rule types the
 * kernel lacks). seccomp user notification is required: the jail's filter
 * sends every refused call to the launcher (launcher/zygote/seccomp.c).
 *
 * Every probe child has a 5 s alarm: a probe never hangs the command.
 * Call these before the process makes threads (they fork, and the
 * children allocate), with SIGCHLD not ignored (the children are waited
 * for: an ignored SIGCHLD reaps them unseen, and the probe fails).
 */
#ifndef STOCKADE_DOCTOR_H
#define STOCKADE_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

enum doctor_status {
	DOCTOR_OK,
	DOCTOR_MISSING, /* optional: runs degraded */
	DOCTOR_REFUSED, /* required: stockade refuses */
};

#define DOCTOR_NCHECKS 10
#define DOCTOR_TEXT_MAX 1024

struct doctor_check {
	const char *name; /* stable identifier (above), static */
	const char *layer; /* the layer in words, static; the
				  * verdict lists these */
	bool required;
	bool ran; /* false: not run (DOCTOR_REQUIRED_ONLY) */
	enum doctor_status status;
	char observed[DOCTOR_TEXT_MAX]; /* what the probe saw */
	char fix[DOCTOR_TEXT_MAX]; /* what to do; "" when ok */
};

struct doctor_report {
	struct doctor_check checks[DOCTOR_NCHECKS]; /* in the order above */
	char kernel[256]; /* "Linux RELEASE MACHINE" (uname) */
	char verdict[DOCTOR_TEXT_MAX]; /* "full", "degraded: L; L",
					* "refused: L; L" (L: layers) */
	bool refused; /* a required check refused */
};

/* Flags of doctor_run. */
#define DOCTOR_REQUIRED_ONLY 0x1 /* skip the optional checks (ran false) */

/*
 * Runs the checks into *R (filled entirely; no allocation kept) and
 * builds the verdict from those that ran. Returns 0 when no required
 * check refused, else -1 (R->refused set). Cost: about six forks (see
 * README.md, "Checking a host").
 */
int doctor_run(struct doctor_report *r, unsigned int flags);

/*
 * Records in R (filled by doctor_run) the egress proxy's probe, which
 * the command makes (broker/cli/cmd_doctor.c: egress_proxy_start, then
 * egress_proxy_stop; broker/jobs/egress_proxy.h): ERR 0 when it started
 * and confined itself with Landlock ABI ABI, else its negative errno
 * with WHY (the start's sentence). The check is optional: a failure is
 * DOCTOR_MISSING, a policy with a [network] allow-list is then refused
 * (session_start_proxy). Rebuilds R's verdict.
 */
void doctor_set_egress_proxy(struct doctor_report *r, int err, unsigned abi,
    const char *why);

/*
 * The status as JSON and text: "ok", "missing", "refused".
 */
const char *doctor_status_name(enum doctor_status s);

/*
 * R as one JSON object: {"verdict": "...", "checks": [{"name", "layer",
 * "status", "observed", "fix"}...], "kernel": "..."}; checks that did not
 * run are left out. Returns a new reference (the caller json_decref's
 * it), NULL when memory runs out.
 */
json_t *doctor_to_json(const struct doctor_report *r);

/*
 * R as the text of `stockade doctor` to F: one "STATUS LAYER: observed"
 * per check that ran, its fix under it unless ok, the verdict last.
 * What the checks quote from the host (kernel strings, paths, sysctl
 * values, error texts) is written through term_escape (utf8.h): control
 * characters in caret notation, bytes that are not UTF-8 as U+FFFD, so
 * that a path or a value with ESC in it cannot drive the terminal
 * (issue 23). Write errors are F's (ferror).
 */
void doctor_print_text(FILE *f, const struct doctor_report *r);

/*
 * The required checks, run at most once per boot while they pass: for the
 * start of every command. Returns 0 when every required layer is there,
 * else -1 with WHY (WHYLEN bytes, NUL-terminated) set to the first
 * refused check as "OBSERVED. Fix: FIX" (for user namespaces, exactly
 * preflight_userns's message).
 *
 * The cache: a passing verdict is kept in DIR/stockade-doctor-UID-INO
 * (INO: the inode of the running binary, so that several stockade builds
 * run by one user each keep their own; one small file per binary, gone
 * with DIR, a tmpfs at logout or reboot, or /tmp's cleaning), where
 * DIR is $XDG_RUNTIME_DIR when that is set (and not empty); when it is
 * not (root, cron, CI, hyperfine), /run/user/EUID when that is a
 * directory (not a symbolic link) of the effective uid, else
 * /tmp/stockade-EUID, made mode 0700 when missing (doctor_cache_private_
 * dir). The file's content is the key: the boot
 * (/proc/sys/kernel/random/boot_id), the effective uid, the user and
 * mount namespaces (a container or a `unshare -r` shell sees another
 * kernel), and the identity of the running binary (device, inode,
 * modification time of /proc/self/exe: a rebuilt stockade checks again).
 * Only a pass is cached: a refusal is re-checked on every call, so that
 * applying the fix it names takes effect at once.
 * Never trusts a file another user could write: nothing is cached unless
 * DIR is a directory owned by the effective uid and writable by no one
 * else (not group/other-writable; a set XDG_RUNTIME_DIR must also be an
 * absolute path, else nothing is cached), and the cache file is read
 * only when it is a regular file owned by the effective uid, not
 * group/other-writable, with one link, opened with O_NOFOLLOW. It is
 * written under a temporary name (mode 0600) and renamed over. Any
 * failure to read or write the cache only means that the checks run.
 *
 * What a forged or stale cache can do: make a command skip these checks,
 * nothing more. They only decide how early and in which words a host
 * that lacks a layer is refused; every layer is still set up by the
 * launcher for every job, and one that fails ends the job unrun with a
 * sandbox_error (the launcher fails closed), so no cache can weaken a
 * jail.
 */
int doctor_cached_verdict(char *why, size_t whylen);

/*
 * The directory NAME under the directory descriptor PARENT as a private
 * cache directory: made with mode 0700 when missing, then opened without
 * following a symbolic link and used only when it is a directory owned by
 * the effective uid and writable by no one else. Returns its descriptor
 * (O_CLOEXEC; the caller closes it), or -1 when it is unusable (another
 * owner, a symbolic link, group- or other-writable, not a directory, or
 * an error): then nothing is cached. PARENT stays open.
 */
int doctor_cache_private_dir(int parent, const char *name);

#endif
