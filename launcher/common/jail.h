/*
 * jail.h: building one namespace jail for one job (architecture.md, "The
 * jail, layer by layer") and the records its init sends back.
 */
#ifndef STOCKADE_JAIL_H
#define STOCKADE_JAIL_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <linux/filter.h>
#include <seccomp.h>

#include "proto.h"

/* A running jail, as the launcher sees it. Descriptors owned by it. */
struct jail {
	pid_t pid; /* jail init, in the launcher's pid namespace */
	int pidfd; /* pidfd of init (CLONE_PIDFD) */
	int out_fd, err_fd; /* read ends of the payload's stdout/stderr */
	int status_fd; /* read end of init's status pipe */
	int notify_sock; /* where the payload sends the seccomp
			      * filter's listener (SCM_RIGHTS) */
	int go_fd; /* a warm pool's jail: the socket init reads
			      * its job from (jail_host.pooled), else -1 */
	uint64_t token; /* the zygote's name for it (zygote_kill) */
	struct timespec start; /* CLOCK_MONOTONIC at clone; for a pool's
				* jail, when its job was sent */
};

/* Stages of jail set-up, reported by init when one fails. Stable numbers. */
enum jail_stage {
	STAGE_PARENT = 1,
	STAGE_ID_MAPS,
	STAGE_MOUNT_NS,
	STAGE_ROOT_TMPFS,
	STAGE_BIND,
	STAGE_ETC,
	STAGE_DEV,
	STAGE_PROC,
	STAGE_TMP,
	STAGE_HOME,
	STAGE_WORK,
	STAGE_HOSTNAME,
	STAGE_LOOPBACK,
	STAGE_PIVOT_ROOT,
	STAGE_REMOUNT_ROOT,
	STAGE_CAPS,
	STAGE_FORK_PAYLOAD,
	STAGE_SIGNALS,
	STAGE_SET_IDS,
	STAGE_SETSID,
	STAGE_STDIO,
	STAGE_RLIMITS,
	STAGE_CLOSE_FDS,
	STAGE_NO_NEW_PRIVS,
	STAGE_SECCOMP,
	STAGE_LANDLOCK,
	STAGE_SUBREAPER,
	STAGE_PRIVATE_DIRS,
	STAGE_POOL_JOB,
	STAGE_PROC_MASK,
	STAGE_USER_QUOTAS,
	STAGE_TCP_BUFFERS,
	/* issue 25: the proxy's listener, the routes to lo, the packet
	 * socket, or sending them to the launcher (init/egress.c) */
	STAGE_EGRESS,
	/* issue 26: the job's stage tmpfs (launcher/init/stage.c), or
	 * sending it to the launcher; the overlay at /work over it */
	STAGE_WORK_STAGE,
	STAGE_WORK_OVERLAY,
};
#define STAGE_MAX STAGE_WORK_OVERLAY
/* A short name for STAGE ("bind mounts"), never NULL. */
const char *jail_stage_name(int stage);

/* Records on the status pipe, init (and the payload) -> launcher: the
 * status channel of shared/wire.h, whose table gives each INIT_REC_*
 * type and its body (jail_send_record, wire_status_read). */
/* File systems init found full as the payload ended (statfs(2) f_bavail
 * 0): the payload may have died of ENOSPC there. */
#define INIT_FULL_TMP 0x1
#define INIT_FULL_HOME 0x2
#define INIT_FULL_WORK 0x4 /* the job's stage under /work (issue 26) */

/*
 * The signal jail init gets (from the zygote, at the launcher's request:
 * zygote_kill) to end a jail that has no pid namespace of its own (layer
 * pid_ns off), and init's parent-death signal then: SIGKILL would kill
 * init alone and leave the job's processes running, so init catches this
 * one (it is not among the signals it forwards) and first kills what
 * layer process_group says (docs/layers.md). With a pid namespace it gets
 * SIGKILL: init's death kills the namespace (pid_namespaces(7)).
 */
#define JAIL_KILL_SIGNAL SIGPWR
/* How long init may take to end the jail after JAIL_KILL_SIGNAL before
 * it gets SIGKILL (init stopped, or stuck), milliseconds. */
#define JAIL_KILL_GRACE_MS 2000u

/* What the launcher lends every jail it starts. Nothing here is owned. */
struct jail_host {
	uid_t outer_uid; /* host uid the payload's uid maps to */
	gid_t outer_gid; /* host gid the payload's gid maps to */
	int launcher_pidfd; /* a pidfd of the launcher itself */
	int cgroup_fd; /* a cgroup v2 leaf to clone into, or -1 */
	const struct sock_fprog *filter; /* the compiled seccomp filter
				 * (jail_seccomp_compile); NULL only with
				 * layer seccomp off */
	bool sibling; /* clone with CLONE_PARENT: init becomes the
				* caller's parent's child (the zygote's
				* jails belong to the launcher; zygote.h) */
	int stdin_fd; /* the payload's standard input: the read
				* end of the job's stdin pipe (JOB_F_STDIN)
				* or, with layer no_terminal off, the
				* caller's terminal; -1 otherwise (stdin is
				* /dev/null) */
	bool pooled; /* a warm pool's jail: init builds it, then
				* waits for its job on jail.go_fd */
};

/*
 * Whether job B asks for nothing job A did not: the same payload ids,
 * flags (JOB_F_STDIN aside), layers, hostname, user, home, seccomp profile,
 * bind mounts and proxy port (issue 25: network or none, and where the
 * listener is; argv, environment and limits may differ). The zygote's session
 * pin and the warm pool's check both use it (zygote.h, "Authority").
 */
bool jail_same_authority(const struct job_spec *a, const struct job_spec *b);

/*
 * Whether job B may run in a jail built for job A (a warm pool's,
 * jail_host.pooled): jail_same_authority, and the same sizes of the
 * tmpfs mounts built before the job came (/tmp, /dev/shm, home, and
 * the stage under /work: workspace_allow and stage_files, issue 26).
 */
bool jail_pool_compatible(const struct job_spec *a, const struct job_spec *b);

/*
 * Why this launcher cannot run a job without the layers in mask OFF
 * (JOB_LAYER_BIT, result.h), as root (AS_ROOT) or not: a sentence for the
 * job's sandbox_error, or NULL when it can. Two combinations need what
 * the process does not have: other namespaces without a user namespace
 * need CAP_SYS_ADMIN (only a root launcher's zygote keeps it); and a
 * Landlock domain or seccomp filter without no_new_privs needs
 * CAP_SYS_ADMIN in the payload's user namespace (seccomp(2),
 * landlock_restrict_self(2)), which only a user namespace gives it.
 */
const char *jail_layers_refusal(uint32_t off, bool as_root);

/*
 * Starts the jail for SPEC, without the layers job_spec_layers_off(SPEC)
 * names (docs/layers.md; the caller has checked jail_layers_refusal).
 * The workspace arrives either as WORK_TREE_FD,
 * a detached (open_tree) and id-mapped mount that init moves to /work
 * (when the launcher runs as root, see idmap.c), or, when that is -1, as
 * the directory WSFD, which init binds through its current directory.
 * Both descriptors are borrowed. H->launcher_pidfd lets init notice a
 * launcher that died before init armed PR_SET_PDEATHSIG. The caller (the
 * zygote) writes the jail's one-line uid and gid maps (H's outer ids)
 * before init goes on (user_namespaces(7)); without a user namespace init
 * takes H's outer ids itself once its mounts are made. Returns 0 and
 * fills J, or a negative errno
 * when the clone or the maps fail (-EPERM, -ENOSPC and -EINVAL from the
 * clone mean user namespaces are not available); failures inside the jail
 * are reported later on status_fd.
 */
int jail_start(const struct job_spec *spec, int wsfd, int work_tree_fd,
    const struct jail_host *h, struct jail *j);

/* Closes J's descriptors (not the process: it is reaped by the caller). */
void jail_close(struct jail *j);

/*
 * Makes the detached, id-mapped copy of the workspace mount that a
 * launcher running as root hands to its jails (idmap.c): files owned by
 * the workspace directory's owner appear owned by OUTER_UID/OUTER_GID, and
 * what the payload creates lands on disk as that owner. Needs
 * CAP_SYS_ADMIN in the initial user namespace and a file system with
 * idmapped-mount support (mount_setattr(2), MOUNT_ATTR_IDMAP). Returns the
 * new O_CLOEXEC descriptor, or a negative errno.
 */
int jail_idmapped_workspace(int wsfd, uid_t outer_uid, gid_t outer_gid);

/*
 * Builds the seccomp filter of the profile named PROFILE ("default",
 * "strict": policy/seccomp-*.ini, compiled in; launcher/zygote/seccomp.c says
 * which rules every profile gets): the profile's calls allowed, with the
 * fixed argument rules; everything else, foreign ABIs included, notified
 * to the listener (SCMP_ACT_NOTIFY); clone3, fchmodat2 and openat2
 * answered ENOSYS. With MONITOR, memfd_create, memfd_secret, shmget and
 * msgget are not allowed whatever the profile says. *KILL gets the
 * profile's `denied = kill`. Returns a context the caller releases, or
 * NULL with WHY (WHYLEN bytes) saying why (unknown profile, a name the
 * architecture lacks, out of memory).
 */
scmp_filter_ctx jail_seccomp_build(const char *profile, bool monitor,
    bool *kill, char *why, size_t whylen);

/*
 * Compiles CTX (jail_seccomp_build) into the classic BPF program the
 * kernel loads (seccomp_export_bpf(3), through a memfd), so that a jail
 * loads it with one seccomp(2) call instead of libseccomp generating it
 * again in every payload. PROG->filter is malloc'd, owned by the caller.
 * Returns 0, or a negative errno (-E2BIG: over BPF_MAXINSNS).
 */
int jail_seccomp_compile(scmp_filter_ctx ctx, struct sock_fprog *prog);

/*
 * Loads PROG into the calling thread: seccomp(SECCOMP_SET_MODE_FILTER,
 * SECCOMP_FILTER_FLAG_NEW_LISTENER), which needs no_new_privs or
 * CAP_SYS_ADMIN in the caller's user namespace (seccomp(2)). Returns the
 * listener's descriptor (close-on-exec) or a negative errno.
 */
int jail_seccomp_load(const struct sock_fprog *prog);

/* The text of the compiled-in profile NAME, or NULL. */
const char *jail_seccomp_profile(const char *name);

/* The name of the I-th compiled-in profile (from 0), or NULL past the
 * last. */
const char *jail_seccomp_profile_name(size_t i);

/*
 * The compiled-in profile PROFILE's filter for MONITOR (jail_seccomp_build),
 * compiled to BPF when stockade was built (launcher/zygote/bpfgen.c): a copy
 * into *PROG (PROG->filter malloc'd, owned by the caller) and the
 * profile's `denied = kill` into *KILL. Returns 0, -ENOENT when there is
 * none (the caller builds it with libseccomp), or -ENOMEM.
 */
int jail_seccomp_prebuilt(const char *profile, bool monitor,
    struct sock_fprog *prog, bool *kill);

/*
 * Drops to the payload and executes SPEC's program in the already built
 * jail: setsid (not with layer no_terminal off) and stdin from STDIN_FD
 * when it is not -1 (the job's stdin pipe, or the caller's terminal with
 * layer no_terminal off), else from /dev/null,
 * rlimits (not with layer limits off), signal mask reset, descriptors
 * closed, private HOME and TMPDIR in the workspace (layer private_cwd
 * with mount_ns off), no_new_privs (not with caps_nnp off), Landlock (not
 * with landlock off: the ruleset LANDLOCK_RS that init built with
 * jail_landlock_build, of ABI LANDLOCK_ABI), seccomp (FILTER unless
 * NULL), execvp. Never returns. A
 * set-up step that fails is reported on STATUS_FD (close-on-exec, so the
 * program never holds it) as INIT_REC_SETUP_FAILED, a sandbox_error; an
 * exec failure is the program's: it prints why on stderr (fd 2) and exits
 * 127 (not found) or 126 (not executable), the shell's convention
 * (POSIX.1-2017, Shell Command Language 2.9.1.1).
 */
_Noreturn void jail_exec_payload(const struct job_spec *spec,
    const struct sock_fprog *filter, int landlock_rs, int landlock_abi,
    int status_fd, int notify_sock, int stdin_fd);

/*
 * A warm pool's payload (issue 27; handover.h): applies every step
 * jail_exec_payload applies, for TEMPLATE (the job the jail was built
 * for; its limits are every job's that may take the jail,
 * jail_pool_compatible), with stdin from /dev/null, and then blocks in
 * recvmsg(2) on HAND_FD, its end of init's hand-over socket (close-on-exec
 * like every descriptor above 2 by then), until init sends the exec
 * block. It then moves the job's stdin pipe, if one came, to descriptor
 * 0 and executes the job's argv with the job's environment. Its seccomp
 * filter therefore also allows recvmsg (seccomp.c). Never returns: at EOF
 * on HAND_FD (init is gone) it exits 0; a block that does not parse is
 * STAGE_POOL_JOB, a stdin pipe that cannot be moved STAGE_STDIO, both on
 * STATUS_FD; an exec failure as jail_exec_payload's.
 */
_Noreturn void jail_wait_payload(const struct job_spec *template,
    const struct sock_fprog *filter, int landlock_rs, int landlock_abi,
    int status_fd, int notify_sock, int hand_fd);

/*
 * Writes the one-line id map "INSIDE OUTSIDE 1" to /proc/PID/FILE
 * ("uid_map" or "gid_map"; user_namespaces(7)). Returns 0 or -errno.
 */
int jail_write_id_map(pid_t pid, const char *file, unsigned inside,
    unsigned outside);

/*
 * The jail's maps for init PID (its pidfd PIDFD): "setgroups" denied,
 * then one line each, SPEC's payload ids inside to H's outer ids outside
 * (user_namespaces(7); an unprivileged writer of a gid_map must deny
 * setgroups first, which also keeps the payload from dropping a group to
 * get past a "deny group" permission). Init is the launcher's child, not
 * the caller's (CLONE_PARENT): its /proc directory is opened while PIDFD
 * says it lives, so a pid reused after an early death is never written
 * to. Returns 0 or -errno (-ESRCH: init is gone).
 */
int jail_write_id_maps(pid_t pid, int pidfd, const struct job_spec *spec,
    const struct jail_host *h);

/*
 * Kills every descendant of this process (a child subreaper: layer
 * pid_ns off, process_group on) and reaps them. Each walk of the tree
 * from /proc (PROC_FD, the host's) kills what it lists; a child of a
 * killed process is reparented to us and listed by the next walk, so the
 * walks go on until one lists nobody but us: a fork bomb is caught up
 * with, a process that called setsid or double-forked is still below
 * us. PROC_FD is borrowed. Best effort (at most 5000 walks, reaper.c);
 * never fails.
 */
void jail_kill_tree(int proc_fd);

/* Writes the status record KIND (an INIT_REC_* type, shared/wire.h) with
 * A and B to the status pipe FD (wire_status_write); best effort: an
 * error is dropped (the reader then finds no ending record). */
void jail_send_record(int fd, int32_t kind, int32_t a, int32_t b);

/*
 * The jail's share of the host user's kernel quotas (issue 23, point 2;
 * docs/layers.md, "Per-user kernel quotas"). The ucounts of
 * kernel/ucount.c are charged to the jail's (user namespace, uid) and to
 * every ancestor's up to the host user, so these maxima, set in the
 * jail's own user namespace, bound what one job takes of the user's.
 * RLIMIT_SIGPENDING bounds the pending-signal quota (queued signals and
 * POSIX timers, which preallocate one: timer_create(2)); it is an rlimit
 * and is set with the others (payload.c).
 */
#define JAIL_SIGPENDING 256 /* RLIMIT_SIGPENDING, soft and hard */
#define JAIL_INOTIFY_INSTANCES 32 /* of the host user's 128 (default) */
#define JAIL_INOTIFY_WATCHES 8192
#define JAIL_FANOTIFY_GROUPS 8
#define JAIL_FANOTIFY_MARKS 8192
/* Namespaces a job may make with layer seccomp off (evaluation only:
 * the filter refuses them otherwise, and the maxima are then 0). */
#define JAIL_NAMESPACES_UNSAFE 4

/*
 * Writes the maxima above to DIR_PATH, the /proc/sys/user directory of a
 * procfs, as jail init in the jail's user namespace holding
 * CAP_SYS_RESOURCE there (the files show and set the caller's user
 * namespace's values: set_permissions in kernel/ucount.c). The
 * max_*_namespaces are 0, or JAIL_NAMESPACES_UNSAFE when
 * NAMESPACES_ALLOWED (layer seccomp off). A quota file the kernel lacks
 * is skipped. Returns 0 or a negative errno (the caller fails the job:
 * no jail runs with the user's whole quota).
 */
int jail_user_quotas(const char *dir_path, bool namespaces_allowed);

#endif
