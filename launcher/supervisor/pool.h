/*
 * pool.h: the warm jail pool of a session (issue 9).
 *
 * A session broker (`stockade serve`, `stockade mcp`) tells its launcher
 * how many jails to keep built and waiting (POOL, proto.h; the policy's
 * [jail] pool_size). After a job, the launcher asks its zygote for jails
 * built like that job (zygote_prepare_jail): init makes the namespaces,
 * the mounts, pivot_root, the hostname and loopback, drops every
 * capability, and waits for its job on a socket of its own. The next job
 * whose authority and tmpfs sizes match (jail_pool_compatible) takes one:
 * the launcher sends it the job's RUN message and init hands it to its
 * payload, which has waited confined since the jail was built (every
 * step but the exec: docs/layers.md, "A warm jail's payload"), so the
 * job costs a recvmsg and an execve. A job whose rlimits differ from the
 * template's is not such a job. The pool refills one jail at a time when a job has ended,
 * without waiting: the zygote's reply (it clones init and writes the id
 * maps, a millisecond or two) is taken when it comes, so a RUN that
 * arrives meanwhile takes a waiting jail at once.
 *
 * What a pool does not change:
 *  - a jail is used for exactly one job: a fresh /tmp, home, pid and
 *    every other namespace, fresh accounting; a jail whose job ended is
 *    never reused, and one the pool drops is killed;
 *  - init checks the job against what its jail was built for (a launcher
 *    is not trusted to widen a jail), and the zygote checks the prepare
 *    request against the session's first job, as it checks every job;
 *  - the job's clock (wall_ms and the wall-clock limit) starts when its
 *    RUN is sent to init, so a warm job is not charged for a set-up it
 *    did not wait for; its CPU time is init's and the payload's, as for a
 *    cold jail;
 *  - a job's stdin pipe (JOB_F_STDIN) goes with its RUN to init, which
 *    checks it as the launcher does and gives it to the payload;
 *  - an idle pool costs no CPU: each init blocks in recv(2).
 * Jobs are built cold when the pool is empty or was built for another
 * kind of job, when the job's limits are held by a cgroup v2 leaf (a
 * leaf is made per job; docs/decisions.md), and with the caller's
 * terminal (layer no_terminal off).
 */
#ifndef STOCKADE_POOL_H
#define STOCKADE_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "jail.h"
#include "proto.h"
#include "zygote.h"

/* One jail built and waiting. */
struct pool_jail {
	struct jail jail; /* go_fd set; owned */
	bool kill_on_denial; /* the profile's denied = kill (zygote) */
};

struct pool {
	uint32_t size; /* wanted, 0..PROTO_MAX_POOL; 0: no pool */
	bool have_template;
	struct job_spec template; /* what the waiting jails were built for,
				   * decoded from buf */
	int wsfd; /* the session's workspace (a duplicate), -1 */
	struct pool_jail ready[PROTO_MAX_POOL];
	uint32_t n; /* ready[0..n) */
	bool stalled; /* a prepare was refused or a waiting jail's
			       * set-up failed: no refill until the next job
			       * (pool_remember) */
	uint8_t *buf; /* PROTO_MAX_MSG bytes: the template's RUN
			       * message, as the broker sent it (the prepare
			       * requests carry it); NULL until POOL came
			       * (pool_init) */
	size_t template_len; /* its length, bytes */
	uint8_t *go; /* WIRE_MAX_MSG bytes: a WIRE_GO message being sent
			       * (pool_take); NULL until pool_init */
};

/* Sets P empty, with no size. Returns 0 or -ENOMEM. */
int pool_init(struct pool *p);

/*
 * Remembers SPEC, a job that just ran in a jail the pool could have
 * given it (no cgroup leaf, no terminal), decoded from the RUN message
 * RUN of RUN_LEN bytes (borrowed; copied, and decoded again into the
 * template, which owns its strings), as the kind of jail to keep,
 * and WSFD (borrowed; duplicated the first time) as the workspace to
 * build them with, and ends a stall. A SPEC the waiting jails were not
 * built for drops them (pool_drain). Returns 0 or a negative errno
 * (-ENOMEM, the zygote gone while dropping).
 */
int pool_remember(struct pool *p, struct zygote *z, const struct job_spec *spec,
    const uint8_t *run, size_t run_len, int wsfd);

/* Whether P has fewer jails waiting than it should, and may refill. */
bool pool_short(const struct pool *p);

/*
 * Reaps the waiting jails whose init has exited (a set-up that failed
 * before the job came: a bind source gone, a full memory), logging each
 * one's stage and error, and stalls P until the next job: a cold jail
 * then fails the same way and says why in the job's result. Returns 0 or
 * -EPIPE when the zygote is gone.
 */
int pool_reap_failed(struct pool *p, struct zygote *z);

/*
 * Asks Z for one more jail (zygote_prepare_send) when P is short and
 * none is being prepared; Z->prepare_pending says one is then. Returns 0
 * or a negative errno when the zygote is gone (the session must end).
 */
int pool_refill_start(struct pool *p, struct zygote *z);

/*
 * Takes the reply to the prepare request pending on Z (blocking until it
 * comes; call it when Z->sock is readable to not block): the jail joins
 * P, or, when the zygote refused (a slot or descriptor shortage), P
 * stalls until the next job (the jails already waiting stay usable) and
 * the refusal is logged. Nothing
 * pending: nothing to do. Returns 0 or a negative errno when the zygote
 * is gone.
 */
int pool_refill_finish(struct pool *p, struct zygote *z);

/*
 * Gives SPEC a waiting jail built for its kind: sends SPEC's RUN message
 * RUN (RUN_LEN bytes, as the broker sent it) to that jail's init as a
 * WIRE_GO message (shared/wire.h), with STDIN_FD (borrowed; the job's
 * stdin pipe when SPEC has JOB_F_STDIN, else -1) under its role, moves
 * the jail into *J (owned by the caller then; go_fd closed, start set to
 * now) and *KILL_ON_DENIAL. Returns 1 when it did, 0 when no waiting
 * jail fits or is alive (the caller builds one cold), or a negative errno
 * when the zygote is gone.
 */
int pool_take(struct pool *p, struct zygote *z, const struct job_spec *spec,
    const uint8_t *run, size_t run_len, int stdin_fd, struct jail *j,
    bool *kill_on_denial);

/*
 * Drops every waiting jail, the one being prepared too: SIGKILL through
 * Z (they have no payload yet), then reaps each. Returns 0 or -EPIPE
 * when the zygote is gone (the launcher's exit then kills them: init's
 * parent-death signal).
 */
int pool_drain(struct pool *p, struct zygote *z);

#endif
