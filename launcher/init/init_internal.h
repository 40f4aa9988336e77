/*
 * init_internal.h: what jail init's files share (jail_init.c, netns.c,
 * egress.c, reaper.c). Not for other callers.
 */
#ifndef STOCKADE_INIT_INTERNAL_H
#define STOCKADE_INIT_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "jail.h"

/* What jail init knows of its job while it builds the jail and reaps. */
struct init_ctx {
	const struct job_spec *spec;
	const struct jail_host *h;
	int status_fd; /* the write end of the status pipe */
	bool userns; /* layer user_ns on */
	bool pidns; /* layer pid_ns on */
	bool mountns; /* layer mount_ns on */
	bool group; /* layer process_group on */
	int tmp_fd; /* /tmp and home, held to tell disk_full, or -1 */
	int home_fd;
	int proc_fd; /* the host's /proc without a pid namespace, or -1 */
	/* With a proxy port (issue 25): the proxy's listener and the
	 * packet socket, made while the jail is built (egress.c), held
	 * until they are sent just before the payload starts; or -1. */
	int egress_listener;
	int egress_packet;
	/* With a stage (job_spec_staged, issue 26): the root of the job's stage
	 * tmpfs (mounts.c, stage.c), an O_RDONLY directory descriptor
	 * above 2 (close-on-exec), sent just before the payload starts and
	 * kept to tell disk_full when it ends; or -1. */
	int stage_fd;
};

/* What init's set-up steps share: its context and the descriptors
 * jail_init_main was given for them. */
struct init_setup {
	struct init_ctx *c;
	int sync_fd; /* the zygote says on it the id maps are written */
	int wsfd; /* the workspace directory */
	int work_tree_fd; /* its id-mapped copy, or -1 */
	int landlock_rs; /* the payload's Landlock ruleset, or -1 */
	int landlock_abi; /* its ABI */
};

/*
 * Reports the failed set-up step STAGE (enum job_stage) with ERR (an
 * errno value, either sign) on STATUS_FD as INIT_REC_SETUP_FAILED and
 * ends init with status 1. Never returns.
 */
_Noreturn void setup_failed(int status_fd, int stage, int err);

/*
 * FD (a result: a negative errno passes through) moved to 3 or above
 * with the fcntl(2) command CMD (F_DUPFD_CLOEXEC): init has closed 0, 1
 * and 2, which the payload's standard streams will take. Returns the new
 * descriptor (FD itself is closed when it was moved), or a negative errno
 * with errno set too.
 */
int above_stdio(int fd, int cmd);

/*
 * A warm pool's jail, built for TEMPLATE: waits on GO_FD for the job's
 * WIRE_GO message from the launcher (shared/wire.h: its RUN message, and
 * its stdin pipe by role) and returns the RUN decoded (leaked: init execs
 * nothing and exits after its payload). The launcher discarding the jail
 * (EOF) ends init quietly; a message that does not decode, or a job that
 * asks for what the jail was not built for (jail_pool_compatible: a
 * launcher is not trusted to widen a jail), is a set-up failure
 * (STAGE_POOL_JOB). The message carries the stdin pipe role exactly when
 * the spec has JOB_F_STDIN, and then the read end of a pipe (else it is
 * a set-up failure too, EPERM); it is stored in
 * *STDIN_FD, numbered above 2 and close-on-exec (the caller owns it).
 * GO_FD is closed once the job is read. A failure is reported on
 * STATUS_FD and ends init (pool_job.c). Signals are blocked: the wait
 * is not interrupted, and the kernel's SIGKILL still ends it.
 */
const struct job_spec *jail_init_take_job(const struct job_spec *template,
    int go_fd, int status_fd, int *stdin_fd);

/*
 * Starts S's payload (payload_start.c) with OUT_FD and ERR_FD as its
 * stdout and stderr, NOTIFY_FD for its seccomp listener, and closes
 * init's copies of them and of the Landlock ruleset (all owned).
 *   - A warm pool's jail with a mount namespace (GO_FD >= 0; issue 27;
 *     handover.h): makes the hand-over socketpair and forks the payload,
 *     which confines itself for the jail's template and waits
 *     (jail_wait_payload); then waits on GO_FD for the job
 *     (jail_init_take_job, which checks it and may end init) and sends
 *     the payload its exec block with the job's stdin pipe. If the
 *     payload ends first (its set-up failed and said so on the status
 *     pipe), returns at once with S->c->spec left the template, for the
 *     reaper to report its end. A failed hand-over is STAGE_POOL_JOB.
 *   - A warm jail without a mount namespace: takes the job first, then
 *     as a cold jail.
 *   - A cold jail (GO_FD -1): forks the payload, which runs S->c->spec
 *     at once with stdin IN_FD (owned; -1: /dev/null; jail_exec_payload).
 * S->c->spec becomes the job. A failed fork is STAGE_FORK_PAYLOAD.
 * Returns the payload's pid.
 */
pid_t jail_init_start_payload(struct init_setup *s, int go_fd, int out_fd,
    int err_fd, int notify_fd, int in_fd);

/*
 * TCP's buffer autotuning in the jail's network namespace capped at the
 * socket defaults (netns.c). Returns 0 or -errno.
 */
int jail_init_tcp_buffers(void);

/*
 * Brings up lo, the only interface of the jail's new network namespace
 * (netns.c). Returns 0 or -errno.
 */
int jail_init_loopback(void);

/* Controlled egress (issue 25; egress.c). */
#define JAIL_EGRESS_BACKLOG 128 /* the proxy's listener's listen(2) */
#define JAIL_EGRESS_SNAP 1024u /* bytes of a packet the filter keeps */
#define JAIL_EGRESS_RCVBUF (256 * 1024) /* the packet socket's SO_RCVBUF */

struct sock_fprog;

/*
 * In the calling process's network namespace, where it holds
 * CAP_NET_ADMIN: "local 0.0.0.0/0 dev lo table local" and "local ::/0
 * dev lo table local" (AnyIP, rtnetlink(7) RTM_NEWROUTE, RTN_LOCAL in
 * RT_TABLE_LOCAL), so that every address is lo's: a connect(2) to any
 * port nobody listens on is ECONNREFUSED at once, and a UDP datagram
 * gets ICMP port unreachable. lo must be up. 0 or a negative errno
 * (-EEXIST when a route is there already).
 */
int jail_egress_routes(void);

/*
 * A TCP socket bound to 127.0.0.1:PORT (host order, not 0) and listening
 * (JAIL_EGRESS_BACKLOG), close-on-exec and non-blocking, numbered above
 * 2. The caller owns it. The descriptor or a negative errno.
 */
int jail_egress_listener(uint16_t port);

/*
 * The packet socket's classic BPF program, into PROG (static storage,
 * borrowed): for a SOCK_DGRAM AF_PACKET socket (the packet starts at its
 * network header), it keeps the first JAIL_EGRESS_SNAP bytes of an
 * outgoing (PACKET_OUTGOING, SKF_AD_PKTTYPE) IPv4 or IPv6 packet that is
 * a TCP segment with SYN set and ACK clear (IPv4: the first fragment
 * only) or a UDP datagram (IPv6: with no extension header), and drops
 * everything else: the echo lo delivers, answers, and the traffic of
 * connections already open (the proxy's own relay).
 */
void jail_egress_filter(struct sock_fprog *prog);

/*
 * An AF_PACKET SOCK_DGRAM socket bound to lo (ETH_P_ALL), with
 * jail_egress_filter's program attached before the bind and locked
 * (SO_LOCK_FILTER), SO_RCVBUF JAIL_EGRESS_RCVBUF, close-on-exec and
 * non-blocking, numbered above 2; needs CAP_NET_RAW in the user
 * namespace that owns the network namespace (packet(7)). The caller
 * owns it. The descriptor or a negative errno.
 */
int jail_egress_packet_socket(void);

/*
 * The three above for PORT (not 0, else -EINVAL): the routes, then the
 * listener into *LISTENER and the packet socket into *PACKET (both -1 on
 * failure, nothing left open). 0 or a negative errno.
 */
int jail_egress_make(uint16_t port, int *listener, int *packet);

/*
 * Sends *LISTENER and *PACKET to the launcher's supervisor on NOTIFY_FD
 * as WIRE_NET_SOCKETS with PORT (shared/wire.h), then closes both and
 * sets them to -1, sent or not. 0 or wire_send's negative errno.
 */
int jail_egress_send(int notify_fd, uint16_t port, int *listener, int *packet);

/*
 * Init's set-up step for a job with a proxy port (S->c->spec->proxy_port
 * not 0; else nothing): jail_egress_make into S->c->egress_listener and
 * egress_packet, in the jail's network namespace while init still holds
 * CAP_NET_ADMIN and CAP_NET_RAW there. A warm jail makes them for its
 * template, whose port every job it takes has (jail_same_authority). A
 * failure is STAGE_EGRESS (setup_failed: init ends). egress.c.
 */
void jail_init_make_egress(struct init_setup *s);

/*
 * Just before the payload starts: C's egress sockets sent on NOTIFY_FD
 * (jail_egress_send) and init's copies closed, so that none reaches the
 * payload; nothing for a job without a port and without sockets. A job
 * with a port and no sockets, sockets for a job without a port, or a
 * failed send is STAGE_EGRESS (fail closed: init ends). egress.c.
 */
void jail_init_send_egress(struct init_ctx *c, int notify_fd);

/*
 * Just before the payload starts, after jail_init_send_egress: C's stage
 * (C->stage_fd) sent on NOTIFY_FD as WIRE_STAGE, init's copy kept (the
 * payload closes every descriptor it is not given before its exec:
 * payload.c); nothing for a job without one (job_spec_staged).
 * A job with a stage and no descriptor, or a failed send, is
 * STAGE_WORK_STAGE (fail closed: init ends). egress.c.
 */
void jail_init_send_stage(struct init_ctx *c, int notify_fd);

/*
 * Jail init's last part (reaper.c), once the payload PAYLOAD runs: reaps
 * every process of the jail with every signal blocked (ALL, waited for
 * with sigwaitinfo), forwards the termination signals to the payload,
 * and when the payload exits sends INIT_REC_TASKS (in a pid namespace of
 * its own with its own /proc) and INIT_REC_PAYLOAD_EXIT on
 * C->status_fd and exits 0; on JAIL_KILL_SIGNAL it ends the job
 * (jail_kill_tree with layer process_group on and no pid namespace, else
 * the payload alone) and exits 0. Never returns.
 */
_Noreturn void jail_init_reap(const struct init_ctx *c, pid_t payload,
    const sigset_t *all);

#endif
