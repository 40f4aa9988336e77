/*
 * monitor_internal.h: one job's state as monitor.c follows it, shared with
 * classify.c, which turns it into the job's status, and with job_begin.c
 * and job_end.c, the job's first and last phases. Not for other callers.
 */
#ifndef STOCKADE_MONITOR_INTERNAL_H
#define STOCKADE_MONITOR_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include "denials.h"
#include "enforce.h"
#include "jail.h"
#include "proto.h"
#include "zygote.h"

struct job_state {
	struct jail jail;
	uint64_t bytes[3]; /* by stream: [1] stdout, [2] stderr */
	bool eof[3];
	bool exited;
	bool timed_out;
	bool over_output;
	bool cancelled;
	uint32_t cancel_reason; /* enum job_cancel_reason, when cancelled */
	bool killed;
	/* Without a pid namespace (layer pid_ns off) the jail is ended by
	 * JAIL_KILL_SIGNAL to init, SIGKILL only if init has not exited
	 * JAIL_KILL_GRACE_MS after it (killed_ms, the job's clock). */
	uint64_t killed_ms;
	bool hard_killed;
	bool zygote_gone; /* its zygote cannot be reached: the jail
			      * cannot be killed, the session must end */
	struct zygote *zygote; /* kills the jail (zygote_kill) */
	uint64_t job_id;
	int cg_leaf; /* the job's cgroup v2 leaf, or -1 */
	struct enforcer enf; /* memory, CPU, processes, workspace */
	struct denial_log den; /* the seccomp filter's refusals */
	bool listener_hup; /* every task under the filter is gone: its
			      * listener only says POLLHUP from now on */
	bool notify_eof; /* the notify socket is closed: poll it no more */
	bool net_sent; /* the proxy's sockets went to the broker (NET) */
	bool stage_sent; /* the stage went to the broker (STAGE) */
	int mnt_ns; /* the jail's mount namespace, held until RESULT is
		     * sent (wire.h, WIRE_FD_MNT_NS), or -1 */
	size_t pending; /* an OUTPUT message in l->out not yet sent */
	siginfo_t info;
	struct rusage ru;
};

/*
 * Sets RES's status, exit code, signal and detail from what the job did:
 * the ending record init sent (REC, when HAVE_REC), and the launcher's
 * own reasons in S (timeout, output cap, cancel, the enforcer's limits,
 * the seccomp filter's refusals), which win over what init saw. RES's
 * figures (cpu_ms, ...) must be set before. The detail points into a
 * static buffer (the launcher runs one job at a time).
 */
void monitor_classify(const struct job_spec *spec, struct job_state *s,
    int32_t rec[3], bool have_rec, struct job_result *r);

struct launcher;

/*
 * Reads one message from S's jail's notify socket (notify.c; the notify
 * channel of shared/wire.h), which must be non-blocking: init's
 * WIRE_NET_SOCKETS, for a SPEC with a proxy port, at most once and
 * before the listener, is checked (job_net_sockets_ok) and forwarded to
 * the broker on L->ipc as PROTO_NET with both descriptors
 * (S->net_sent); init's WIRE_STAGE, for a SPEC with a stage (job_spec_staged),
 * at most once, after the NET and before the listener, is checked (a
 * tmpfs directory open for reading) and forwarded as PROTO_STAGE with
 * its descriptor (S->stage_sent; issue 26); the payload's
 * WIRE_SECCOMP_LISTENER, at most once, goes into S->den.listener (owned
 * by S). Every received descriptor not kept is closed. Returns 1 (a
 * message handled), 0 (nothing waiting, or the socket closed,
 * S->notify_eof set), or a negative errno: a message out of its place or
 * that fails a check (-EPROTO), or the broker's socket failing; the
 * caller must then kill the jail (fail closed).
 */
int job_notify_read(struct launcher *l, const struct job_spec *spec,
    struct job_state *s);

/*
 * After init is reaped, before the RESULT: what is still waiting on S's
 * notify socket (job_loop stops polling it once init exits, and a short
 * job's init may exit before the STAGE it sent was read) read with
 * job_notify_read, so that the broker gets the job's STAGE before its
 * RESULT. A failure is logged by job_notify_read; the job is over.
 */
void job_notify_drain(struct launcher *l, const struct job_spec *spec,
    struct job_state *s);

/*
 * Whether LISTENER is a listening TCP socket bound to 127.0.0.1:PORT
 * and PACKET an AF_PACKET SOCK_DGRAM socket (fstat S_ISSOCK,
 * getsockopt SO_DOMAIN, SO_TYPE, SO_ACCEPTCONN; getsockname). Both
 * borrowed.
 */
bool job_net_sockets_ok(int listener, int packet, uint16_t port);

/* Milliseconds since START (CLOCK_MONOTONIC), job_end.c. */
uint64_t job_elapsed_ms(const struct timespec *start);

/*
 * The first phase of a job (job_begin.c): chooses the enforcement into
 * *MODE (the cgroup leaf LEAF_NAME into S->cg_leaf, when one is used),
 * makes S's denial log, and takes or starts the jail into S->jail;
 * *POOLABLE says whether the pool may hold such a jail. S must be zeroed
 * with its descriptors at -1. TTY_FD is closed either way. Returns true
 * when the jail runs (WSFD still the caller's); false when not, with WSFD
 * closed, S's leaf removed and *RET what launcher_run_job returns: 0 or
 * a negative errno of the RESULT sent for the refusal, or the negative
 * errno that ends the session (the zygote gone, broken or refusing what
 * it must not).
 */
bool job_begin(struct launcher *l, const struct job_spec *spec, int wsfd,
    int tty_fd, struct job_state *s, const char *leaf_name,
    enum job_enforcement *mode, bool *poolable, int *ret);

/*
 * Encodes R and sends it to the broker as RESULT (job_end.c). Returns 0
 * or a negative errno (encoding, or the socket).
 */
int job_send_result(struct launcher *l, struct job_result *r);

/*
 * The last phase of a job (job_end.c), once init is reaped and the
 * enforcer finished: reads init's records from S's status pipe and fills
 * *R with the job's figures, limits reached, enforcement MODE, denials,
 * output counts and status (monitor_classify). R's detail may point into
 * a static buffer (monitor_classify).
 */
void job_result(const struct job_spec *spec, struct job_state *s,
    enum job_enforcement mode, struct job_result *r);

#endif
