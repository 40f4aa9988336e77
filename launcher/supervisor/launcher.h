/* launcher.h: the launcher's session state (one per process). */
#ifndef STOCKADE_LAUNCHER_H
#define STOCKADE_LAUNCHER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool.h"
#include "proto.h"
#include "zygote.h"

enum launcher_phase {
	PHASE_HELLO = 1u << 0, /* waiting for HELLO */
	PHASE_READY = 1u << 1, /* idle, between jobs */
	PHASE_RUNNING = 1u << 2, /* a job is in flight */
};

struct launcher {
	int ipc; /* the socketpair end, fd 3 at start-up */
	enum launcher_phase phase;
	uint64_t last_job_id; /* job ids must increase */
	uint64_t running_job_id; /* valid in PHASE_RUNNING */
	bool cancel_requested; /* CANCEL seen for the running job */
	uint32_t cancel_reason; /* the first such CANCEL's reason
				   * (enum job_cancel_reason) */
	bool peer_gone; /* the broker closed its end */
	int self_pidfd; /* pidfd of this process, for jail init */
	bool as_root; /* euid 0: payloads map to outer_uid, and
				   * the workspace is id-mapped (idmap.c) */
	uid_t outer_uid; /* host ids every payload maps to */
	gid_t outer_gid;
	struct zygote zygote; /* makes the jails (zygote.h) */
	int proc_fd; /* /proc, for the monitor (usage.c) */
	/* The delegated cgroup v2 job leaves are made under (cgroup.c),
	 * looked up at the first job that may use one: cg_parent is its
	 * descriptor or -1, cg_path the path it was looked up for, cg_why
	 * why it is unusable. */
	int cg_parent;
	char *cg_path;
	char cg_why[512];
	struct pool pool; /* warm jails (pool.h); initialised by
				   * POOL, all zero without one */
	uint8_t *msg; /* PROTO_MAX_MSG bytes, receive buffer */
	/* The RUN message of the job being started, header and body as the
	 * broker sent it: points into msg, set by handle_run for
	 * launcher_run_job, which forwards these bytes to the zygote and to
	 * a waiting jail (no new encoding) before it receives anything else
	 * into msg; NULL between jobs. */
	const uint8_t *run;
	size_t run_len;
	uint8_t *out; /* PROTO_MAX_MSG bytes, send buffer */
};

/*
 * Receives and dispatches one message through the phase table
 * (dispatch.c). Returns 1 when handled, 0 when the broker closed the
 * connection, or a negative errno for a protocol violation or a failed
 * handler: either ends the session.
 */
int launcher_dispatch_one(struct launcher *l);

/*
 * Runs SPEC in a new jail with the workspace WSFD and TTY_FD as the
 * payload's stdin (-1: none, /dev/null): the read end of the job's
 * stdin pipe (JOB_F_STDIN) or, with layer no_terminal off, the caller's
 * terminal, as handle_run checked; it takes both and closes them once the jail
 * holds its own references (before RESULT), streaming OUTPUT and sending
 * exactly one RESULT (monitor.c). Returns 0, or a negative errno when the
 * session must end (broker gone, protocol violation while running); the jail is
 * dead either way.
 */
int launcher_run_job(struct launcher *l, const struct job_spec *spec, int wsfd,
    int tty_fd);

#endif
