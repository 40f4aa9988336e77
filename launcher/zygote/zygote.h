/*
 * zygote.h: the process that makes the launcher's jails.
 *
 * The launcher confines itself once started (confine.h), but jail init
 * cannot be a clone of a confined process: it would inherit the
 * launcher's seccomp filter, whose ERRNO answers outrank the jail
 * filter's USER_NOTIF and would hide the payload's denials (seccomp(2),
 * "the return value with the highest precedence"), and its Landlock
 * domain, in which mount and pivot_root are refused (landlock(7)). So
 * before confining itself the launcher forks a zygote that keeps the
 * privileges to build jails and does nothing else:
 *  - it holds only its end of a SOCK_SEQPACKET pair with the launcher and
 *    a pidfd of the launcher (for jail init's parent check); never the
 *    broker's socket;
 *  - it dies with the launcher (PR_SET_PDEATHSIG) and ends at EOF;
 *  - for each request (one RUN message exactly as the broker sent it,
 *    forwarded by the launcher byte for byte and decoded again with the
 *    protocol's own decoder, the workspace descriptor
 *    and optionally the job's cgroup leaf), it makes the id-mapped
 *    workspace when it runs as root (idmap.c), builds or reuses the
 *    seccomp filter (seccomp.c), clones jail init with CLONE_PARENT so
 *    that init is the LAUNCHER's child (the launcher reaps it and waits
 *    on its pidfd), writes the id maps, releases init, and hands the
 *    launcher init's pidfd and the read ends of its pipes (SCM_RIGHTS),
 *    keeping nothing;
 *  - it kills a jail when the launcher asks (zygote_kill, naming the
 *    jail by the token the zygote gave it), through a pidfd it keeps
 *    until that jail's init exits: the launcher itself may send no
 *    signal (confine.h);
 *  - it prepares jails for the launcher's warm pool the same way
 *    (zygote_prepare_jail): same checks, same authority, and an init
 *    that, once the jail is built, waits for its job (jail.h);
 *  - Authority: the session's first request fixes what every later one
 *    may ask: the same payload ids, flags, hostname, user, home, seccomp
 *    profile, bind mounts and proxy port (network or none), the same
 *    workspace directory (device and inode), and a cgroup leaf under the
 *    same parent or none. That first
 *    request comes before any job has run, so before anything a payload
 *    controls has reached the launcher; a launcher compromised later
 *    through a job cannot use the zygote to open other directories, bind
 *    other host paths, drop the seccomp filter or move a jail to another
 *    cgroup (ZYGOTE_NOT_SESSION, and the launcher ends the session);
 *  - run as root it keeps only CAP_SYS_ADMIN (open_tree,
 *    mount_setattr for the id-mapped workspace), CAP_SETUID and
 *    CAP_SETGID (id maps to "nobody"), the bounding set emptied;
 *    capabilities(7). A jail's init gets a full set in its own new user
 *    namespace whatever the zygote kept (user_namespaces(7));
 *  - no no_new_privs of its own: it never executes anything, and the
 *    flag cannot be cleared, so it would reach every jail, and layer
 *    caps_nnp could not be switched off for an evaluation; every payload
 *    sets it itself before its exec (payload.c).
 */
#ifndef STOCKADE_ZYGOTE_H
#define STOCKADE_ZYGOTE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "jail.h"
#include "proto.h"
#include "usage.h"

/* The launcher's handle on its zygote. */
/* The most the launcher waits for a measure's or a count's reply, ms. */
#define ZYGOTE_REPLY_WAIT_MS 10000u

struct zygote {
	pid_t pid; /* the zygote, a child of the launcher */
	int sock; /* the launcher's end of the pair */
	uint8_t *buf; /* WIRE_MAX_MSG bytes, owned */
	bool prepare_pending; /* a prepare request's reply is still to come
			       * (zygote_prepare_recv) */
	uint32_t measure_seq; /* the last measure request's number */
	uint32_t late_replies; /* measure replies not waited for to the end:
				* dropped when they come (zygote_drop_late) */
	uint32_t reply_wait_ms; /* the most a measure or count waits for
				 * its reply, ms (0, or more than
				 * ZYGOTE_REPLY_WAIT_MS: that); the job's wall
				 * clock left, set before each (monitor.c) */
};

/* What the launcher lends the zygote at the fork (copied). */
struct zygote_config {
	bool as_root; /* map payloads to OUTER ids, id-mapped /work */
	uid_t outer_uid;
	gid_t outer_gid;
	int launcher_pidfd; /* a pidfd of the launcher, kept by the zygote */
};

/*
 * Forks the zygote of C into Z. The launcher must still be a single
 * thread and unconfined. The zygote closes every descriptor but its
 * socket, C->launcher_pidfd and standard error, names itself
 * "stockade-zygote" (prctl PR_SET_NAME, what ps shows), and serves until
 * EOF. Returns 0, or a negative errno (socketpair, fork, out of memory);
 * Z is then unusable.
 */
int zygote_start(const struct zygote_config *c, struct zygote *z);

/* Why the zygote did not start a jail (enum values are on the wire). */
enum zygote_refusal {
	ZYGOTE_OK = 0,
	ZYGOTE_ROOT_WORKSPACE = 1, /* as root: the workspace is uid/gid 0's */
	ZYGOTE_IDMAP = 2, /* as root: the id-mapped mount failed */
	ZYGOTE_FILTER = 3, /* the seccomp profile cannot be built */
	ZYGOTE_CLONE = 4, /* clone3 failed: no process exists */
	ZYGOTE_BAD_REQUEST = 5, /* the request did not decode */
	ZYGOTE_LAYERS = 6, /* these layers cannot be switched off
				    * together here (jail_layers_refusal) */
	ZYGOTE_NOT_SESSION = 7, /* it asks for what the session's first
				    * request did not (see "Authority") */
};
#define ZYGOTE_REFUSAL_MAX ZYGOTE_NOT_SESSION

/* The zygote's answer. */
struct zygote_reply {
	enum zygote_refusal refusal;
	int err; /* positive errno with the refusal */
	bool kill_on_denial; /* the profile's denied = kill */
	char why[JOB_MAX_DETAIL]; /* ZYGOTE_FILTER, ZYGOTE_LAYERS: why,
				   * NUL-terminated */
};

/*
 * Asks Z to start the jail for SPEC, the job of the RUN message RUN of
 * RUN_LEN bytes (header and body, as the broker sent it and the launcher
 * decoded it into SPEC: the zygote gets these bytes, not a new
 * encoding), whose workspace is the directory
 * WSFD, whose cgroup v2 leaf is CGROUP_FD (-1: none, and then the
 * filter is the monitor's, jail.h jail_seccomp_build), and whose payload
 * reads the caller's terminal TTY_FD (-1: none; only with layer
 * no_terminal off). The descriptors are borrowed (the zygote gets
 * copies). Blocks until the zygote answers. -EBUSY while a prepare
 * request is pending: zygote_prepare_recv first (replies come in order).
 * Returns 0 with *R filled: when R->refusal is ZYGOTE_OK, J holds jail
 * init (pid, pidfd, pipes, start time; jail.h), owned by the caller.
 * Returns a negative errno when the zygote cannot be reached or answers
 * nonsense (it is then gone or broken: the session must end).
 */
int zygote_start_jail(struct zygote *z, const struct job_spec *spec,
    const uint8_t *run, size_t run_len, int wsfd, int cgroup_fd, int tty_fd,
    struct jail *j, struct zygote_reply *r);

/*
 * Asks Z for a jail for the warm pool (launcher/supervisor/pool.h) built for
 * the job of the RUN message RUN (RUN_LEN bytes, sent as they are), the
 * job the session ran last (its argv, environment and limits other
 * than the sizes of /tmp and home are the next job's), with the
 * workspace WSFD (borrowed): no cgroup leaf (a pool holds jails whose
 * limits the monitor keeps) and no terminal. Does not wait: the reply
 * (zygote_prepare_recv) comes when the zygote has cloned init and
 * written its id maps, and Z->sock is readable then; init builds the
 * jail on its own (namespaces, mounts, pivot_root, hostname, loopback,
 * capabilities dropped, the Landlock ruleset), then waits on
 * J->go_fd for the job's WIRE_GO message (shared/wire.h; pool_take).
 * One at a time:
 * -EBUSY while one is pending. Returns 0 or a negative errno (the
 * zygote is gone).
 */
int zygote_prepare_send(struct zygote *z, const uint8_t *run, size_t run_len,
    int wsfd);

/*
 * Receives the pending prepare request's reply (blocking until it
 * comes) into J and R, as zygote_start_jail does, J->go_fd set too.
 * -EINVAL when none is pending.
 */
int zygote_prepare_recv(struct zygote *z, struct jail *j,
    struct zygote_reply *r);

/*
 * Asks Z to send SIG to the init of the jail named TOKEN (jail.token,
 * given by the zygote when it made the jail): SIGKILL (with a
 * pid namespace the kernel then kills the whole namespace), or, without
 * one, JAIL_KILL_SIGNAL, on which init ends the job's processes itself
 * (jail.h); any other signal is ignored. The launcher signals nothing itself
 * (confine.h); the zygote holds a pidfd of every jail it made until it
 * exits. Does not wait: the launcher sees the death on its own pidfd.
 * A job not alive (any more) is no error. Returns 0, or a negative errno
 * when the zygote cannot be reached: it is gone, so the caller must end
 * the session (exiting kills its jails: their init has the launcher as
 * parent and PR_SET_PDEATHSIG).
 */
int zygote_kill(struct zygote *z, uint64_t token, int sig);

/*
 * Asks Z for the memory of the jail named TOKEN counted with each shared
 * page once: the sum of the proportional set sizes of init and every
 * descendant (usage_walk_pss, walking at most MAX_PROCS processes, >= 1),
 * into *BYTES, into *FALLBACKS the processes counted by their
 * resident set instead, and into *RESIDENT the resident sum the same
 * walk read (each process's beside its share). The zygote measures because the
 * launcher may not: smaps_rollup needs ptrace read access, which the launcher's
 * Landlock domain is refused for the payload's (landlock(7)). Waits
 * for the reply up to Z->reply_wait_ms (0: 10 s; the launcher's loop
 * waits with it, so the monitor sets it to the job's wall-clock time
 * left). Returns 0 (*BYTES, *FALLBACKS set), -E2BIG
 * (more than MAX_PROCS: a lower bound), -EAGAIN (processes came and went
 * through 3 walks: no measure; usage_pss_settled), -ESRCH (no such live
 * jail),
 * -EBUSY while a prepare reply is pending (zygote_prepare_recv first),
 * -ETIMEDOUT (no reply within the wait; a late reply is dropped by the
 * next request), -EPROTO, or the errno of the socket (the zygote is
 * gone). On any error the caller keeps its upper bound (fail closed).
 */
int zygote_measure(struct zygote *z, uint64_t token, uint32_t max_procs,
    uint64_t *bytes, uint32_t *fallbacks, uint64_t *resident);

/*
 * Takes one message from Z's socket when a measure's reply came after
 * its wait ended (Z->late_replies > 0) and drops it. Returns 0 when one
 * was dropped, -EAGAIN when none is late or the message was no measure
 * reply (then it is lost: the caller ends the session, the zygote's
 * messages being out of order), -EPIPE at EOF (the zygote is gone), or
 * the errno of the socket.
 */
int zygote_drop_late(struct zygote *z);

/*
 * Asks Z for the kernel objects of the jail named TOKEN (init and every
 * descendant, at most MAX_PROCS processes; usage_kernel_objects,
 * counting up to CAP bytes' worth) into *K: epoll watches, memory maps,
 * file locks, files in flight, unreadable processes. The zygote counts
 * because the launcher may not read /proc/PID/maps nor fdinfo of the
 * payload (ptrace read access, refused to its Landlock domain:
 * landlock(7)). Waits for the reply as zygote_measure does (10 s).
 * Returns 0, -E2BIG (more than MAX_PROCS, or CAP reached: a lower bound,
 * *K set), -ESRCH, -EBUSY, -ETIMEDOUT, -EPROTO, another errno of the
 * zygote's reads, or of the socket.
 */
int zygote_kernel_objects(struct zygote *z, uint64_t token, uint32_t max_procs,
    uint64_t cap, struct kernel_objects *k);

/*
 * Closes Z's socket (the zygote reads EOF and exits), waits for the
 * zygote to exit and reaps it, and frees Z. The zygote is the launcher's
 * child: unreaped, it would stay a zombie of whatever reaps orphans
 * after the launcher (a container's pid 1 without an init, a child
 * subreaper), one per session (issue 23, point 5). The wait is bounded
 * by the request the zygote is serving: it reads its socket between
 * requests and exits at EOF (zygote_main). Never fails.
 */
void zygote_stop(struct zygote *z);

#endif
