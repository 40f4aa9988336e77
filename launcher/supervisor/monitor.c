/*
 * monitor.c: one job from clone to RESULT. The launcher waits on the
 * jail's pidfd, never on a pid alone; it forwards the payload's output as
 * OUTPUT messages; it enforces the wall-clock limit, the output caps when
 * the policy says kill (JOB_F_OUTPUT_KILL; else it drains the pipes), and
 * through the enforcer (enforce.c) memory, CPU, processes and the
 * workspace quota, by killing jail init (SIGKILL, sent by its zygote on
 * request, zygote_kill: the launcher signals nothing itself; and
 * cgroup.kill with cgroup2), which makes the kernel kill every process
 * of the jail's pid namespace (pid_namespaces(7)). A jail without a pid
 * namespace (layer pid_ns off) is ended by JAIL_KILL_SIGNAL to init,
 * which kills the job's processes itself (jail.h), then by SIGKILL if
 * init is still there JAIL_KILL_GRACE_MS later. With layer limits off
 * only the wall-clock limit is kept (a backstop), and output is not
 * capped.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "utf8.h"
#include "buf.h"
#include "cgroup.h"
#include "denials.h"
#include "enforce.h"
#include "jail.h"
#include "monitor_internal.h"
#include "fsutil.h"
#include "launcher.h"
#include "log.h"
#include "zygote.h"

/*
 * Ends the jail of SPEC: SIGKILL to init, whose death ends its pid
 * namespace, and cgroup.kill of the job's leaf; without a pid namespace,
 * JAIL_KILL_SIGNAL (the SIGKILL follows in hard_kill). cgroup.kill is
 * left out with layer process_group off: it would end the leftovers that
 * layer is about.
 */
static void
kill_jail(const struct job_spec *spec, struct job_state *s)
{
	bool pidns = !job_spec_layer_off(spec, JOB_LAYER_PID_NS);

	if (!s->killed && !s->exited) {
		/* The launcher may signal nothing (confine.h): its zygote
		 * sends the signal. */
		if (zygote_kill(s->zygote, s->jail.token,
			pidns ? SIGKILL : JAIL_KILL_SIGNAL) < 0)
			s->zygote_gone = true;
		if (s->cg_leaf >= 0 &&
		    !job_spec_layer_off(spec, JOB_LAYER_PROCESS_GROUP))
			(void)cg_leaf_kill(s->cg_leaf);
		s->killed = true;
		s->hard_killed = pidns;
		s->killed_ms = job_elapsed_ms(&s->jail.start);
	}
}

/* SIGKILL to an init that JAIL_KILL_SIGNAL has not ended within
 * JAIL_KILL_GRACE_MS (NOW_MS, the job's clock), or at once with NOW. */
static void
hard_kill(struct job_state *s, uint64_t now_ms, bool now)
{
	if (!s->killed || s->exited || s->hard_killed)
		return;
	if (!now && now_ms < s->killed_ms + JAIL_KILL_GRACE_MS)
		return;
	if (zygote_kill(s->zygote, s->jail.token, SIGKILL) < 0)
		s->zygote_gone = true;
	s->hard_killed = true;
}

/*
 * Sends the OUTPUT message waiting in l->out without blocking: a broker
 * that does not read must not stop this loop, or the wall-clock limit
 * with it. Returns 0 (sent, or still pending) or a negative errno.
 */
static int
flush_pending(struct launcher *l, struct job_state *s)
{
	ssize_t n;

	if (s->pending == 0)
		return 0;
	do
		n = send(l->ipc, l->out, s->pending,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	if ((size_t)n != s->pending)
		return -EIO;
	s->pending = 0;
	return 0;
}

/*
 * Reads one chunk of stream STREAM, if nothing is waiting to be sent, and
 * queues it as an OUTPUT message. Past the stream's cap, with
 * JOB_F_OUTPUT_KILL the jail is killed (output_limit) and the stream is
 * read no more; without it every byte is read and forwarded to the end
 * (the broker keeps the head and the tail, broker/jobs/capture.h), so that the
 * program never blocks on a full pipe and ends by its own exit or its
 * other limits. Memory stays one message either way. Returns 0 or a
 * negative errno when the broker cannot be written to.
 */
static int
pump(struct launcher *l, const struct job_spec *spec, struct job_state *s,
    int stream)
{
	uint8_t chunk[PROTO_OUTPUT_CHUNK];
	int fd = stream == 1 ? s->jail.out_fd : s->jail.err_fd;
	uint64_t cap = stream == 1 ? spec->limits.stdout_bytes
				   : spec->limits.stderr_bytes;
	ssize_t n;
	int m;

	if (s->pending > 0)
		return 0;
	do
		n = read(fd, chunk, sizeof(chunk));
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0) {
		s->eof[stream] = true;
		return 0;
	}
	s->bytes[stream] += (uint64_t)n;
	m = proto_encode_output(l->out, PROTO_MAX_MSG, spec->job_id,
	    (uint8_t)stream, chunk, (size_t)n);
	if (m < 0)
		return m;
	s->pending = (size_t)m;
	if (s->bytes[stream] > cap && (spec->flags & JOB_F_OUTPUT_KILL) &&
	    !job_spec_layer_off(spec, JOB_LAYER_LIMITS)) {
		s->over_output = true;
		kill_jail(spec, s);
		s->eof[stream] = true; /* read no more of it */
	}
	return flush_pending(l, s);
}

/* The enforcer's measure_pss (enforce.h) for the job of
 * measure_ctx: its zygote measures (zygote_measure), once any pending
 * prepare reply is taken (the pool's: pool.h). */
struct measure_ctx {
	struct launcher *l;
	const struct jail *jail;
	uint64_t wall_ms; /* the job's wall-clock limit */
};

/*
 * Sets the zygote's reply wait to the job's wall-clock time left (at
 * least 1 ms), so that no measure holds the launcher's loop past the
 * job's timeout (it measured 587 ms past it with the zygote's 10 s);
 * returns that wait, ms.
 */
static uint32_t
wait_for_wall(struct measure_ctx *m)
{
	uint64_t spent = job_elapsed_ms(&m->jail->start);
	uint64_t left = spent < m->wall_ms ? m->wall_ms - spent : 1;

	m->l->zygote.reply_wait_ms = left > UINT32_MAX ? UINT32_MAX
						       : (uint32_t)left;
	return m->l->zygote.reply_wait_ms;
}

/* -ETIME for -ETIMEDOUT when the wait was cut to the wall clock left
 * (the job is over by its timeout, ENFORCE_NO_FIGURE), else R. */
static int
wall_cut(int r, uint32_t wait_ms)
{
	return r == -ETIMEDOUT && wait_ms < ZYGOTE_REPLY_WAIT_MS ? -ETIME : r;
}

static int
measure_by_zygote(void *arg, uint32_t max_procs, uint64_t *bytes,
    uint64_t *resident)
{
	struct measure_ctx *m = arg;
	uint32_t fallbacks, wait_ms;

	if (m->l->zygote.prepare_pending)
		(void)pool_refill_finish(&m->l->pool, &m->l->zygote);
	wait_ms = wait_for_wall(m);
	return wall_cut(zygote_measure(&m->l->zygote, m->jail->token, max_procs,
			    bytes, &fallbacks, resident),
	    wait_ms);
}

/* The enforcer's measure_kobj (enforce.h): the zygote counts
 * (zygote_kernel_objects), as measure_by_zygote. */
static int
kobj_by_zygote(void *arg, uint32_t max_procs, uint64_t cap,
    struct kernel_objects *k)
{
	struct measure_ctx *m = arg;
	uint32_t wait_ms;

	if (m->l->zygote.prepare_pending)
		(void)pool_refill_finish(&m->l->pool, &m->l->zygote);
	wait_ms = wait_for_wall(m);
	return wall_cut(zygote_kernel_objects(&m->l->zygote, m->jail->token,
			    max_procs, cap, k),
	    wait_ms);
}

/*
 * Sets the enforcer on S's started jail (enforcement MODE) with its
 * measures through the zygote (M, which must outlive the job), and, when
 * POOLABLE, the pool's pattern for its next jails; closes WSFD (the
 * enforcer keeps its own duplicate of the workspace, to watch its size;
 * init holds its own reference for the mount). A jail that cannot be
 * watched is killed: unwatched is unlimited (a sandbox_error follows).
 */
static void
job_watch(struct launcher *l, const struct job_spec *spec, int wsfd,
    struct job_state *s, enum job_enforcement mode, bool poolable,
    struct measure_ctx *m)
{
	int e, x;

	/* The workspace is watched only when the job writes it directly
	 * (no stage: job_spec_staged); else its stage holds the allowance. */
	e = enforcer_init(&s->enf, &spec->limits, mode, s->cg_leaf, s->jail.pid,
	    l->proc_fd, job_spec_staged(spec) ? -1 : wsfd,
	    spec->workspace_allow, job_elapsed_ms(&s->jail.start),
	    job_spec_layer_off(spec, JOB_LAYER_LIMITS));
	m->jail = &s->jail;
	m->wall_ms = spec->limits.wall_ms;
	s->enf.measure_pss = measure_by_zygote;
	s->enf.measure_kobj = kobj_by_zygote;
	s->enf.measure_arg = m;
	/* The pool's next jails are built like this one, once it is over
	 * (the refill waits for the session to be idle). */
	if (poolable &&
	    (x = pool_remember(&l->pool, &l->zygote, spec, l->run, l->run_len,
		 wsfd)) < 0)
		log_warn("warm pool: %s", strerror(-x));
	close(wsfd);
	if (e < 0) {
		/* Unwatched is unlimited: end it (a sandbox_error). */
		log_error("cannot watch the jail: %s", strerror(-e));
		kill_jail(spec, s);
	}
}

/*
 * Fills P with the seven descriptors the job's loop polls: init's pidfd,
 * the payload's stdout and stderr, the broker's socket, the payload's
 * seccomp notify socket then its listener, the zygote's socket (-1 for
 * those not to be polled now; WAIT_OUT: an OUTPUT waits for the broker).
 * Returns the poll's timeout, ms (-1: none): the wall-clock limit, the
 * enforcer's next sample, a killed init's grace, or the listener's rest.
 */
static int
loop_poll_set(struct launcher *l, const struct job_spec *spec,
    struct job_state *s, bool wait_out, struct pollfd p[7])
{
	const struct pollfd set[7] = {
	    {.fd = s->exited ? -1 : s->jail.pidfd, .events = POLLIN},
	    {.fd = s->eof[1] || wait_out ? -1 : s->jail.out_fd,
		.events = POLLIN},
	    {.fd = s->eof[2] || wait_out ? -1 : s->jail.err_fd,
		.events = POLLIN},
	    {.fd = l->peer_gone ? -1 : l->ipc,
		.events = POLLIN | (wait_out ? POLLOUT : 0)},
	    /* The payload's seccomp listener, then its calls. */
	    {.fd = s->exited || s->den.listener >= 0 || s->notify_eof
		    ? -1
		    : s->jail.notify_sock,
		.events = POLLIN},
	    {.fd = s->exited || s->listener_hup ? -1 : s->den.listener,
		.events = POLLIN},
	    /* The zygote says nothing unasked: anything here is
		 * its end (F3 of the review: notice it at once). */
	    {.fd = l->zygote.sock, .events = POLLIN},
	};
	uint64_t spent = job_elapsed_ms(&s->jail.start);
	int timeout = -1, hold = 0;

	memcpy(p, set, sizeof(set));
	/* Past the rate of answers (denials.h), the listener rests:
	 * the job's refused calls wait in the kernel, asleep. */
	if (p[5].fd >= 0 && (hold = denials_hold_ms(&s->den, spent)) > 0)
		p[5].fd = -1;
	if (!s->exited && !s->killed) {
		int tick = enforcer_wait_ms(&s->enf, spent);

		timeout = spent >= spec->limits.wall_ms
		    ? 0
		    : (int)(spec->limits.wall_ms - spent);
		if (tick < timeout)
			timeout = tick;
	} else if (!s->exited && !s->hard_killed) {
		uint64_t at = s->killed_ms + JAIL_KILL_GRACE_MS;

		timeout = spent >= at ? 0 : (int)(at - spent);
	}
	/* Once init is reaped every process of the jail is dead, and
	 * what is in the pipes is all there will be: do not wait for
	 * an EOF that a write end passed away in an unreachable
	 * SCM_RIGHTS cycle could delay until the kernel's garbage
	 * collection of unix sockets happens to run. */
	if (s->exited && !wait_out)
		timeout = 0;
	if (hold > 0 && (timeout < 0 || hold < timeout))
		timeout = hold;
	return timeout;
}

/*
 * Whether the zygote's socket, polled as ZP, says the zygote is gone
 * (S->zygote_gone is then set): a reply to the pool's prepare request
 * (pool.h) or a measure's reply that came after its wait ended is taken
 * and is no such sign.
 */
static bool
loop_zygote_gone(struct launcher *l, struct job_state *s, struct pollfd *zp)
{
	/* The reply to the pool's prepare request may come during a
	 * job (pool.h); anything else is the zygote's end. */
	if (zp->revents != 0 && !s->zygote_gone && l->zygote.prepare_pending &&
	    pool_refill_finish(&l->pool, &l->zygote) == 0)
		zp->revents = 0;
	/* Or a measure's reply that came after its wait ended. */
	if (zp->revents != 0 && !s->zygote_gone && !l->zygote.prepare_pending &&
	    zygote_drop_late(&l->zygote) == 0)
		zp->revents = 0;
	if (zp->revents != 0 || s->zygote_gone) {
		/* Without its zygote the launcher cannot kill a jail:
		 * end the session; our exit kills the jail (init has
		 * PR_SET_PDEATHSIG). */
		log_error("the zygote is gone");
		s->zygote_gone = true;
		return true;
	}
	return false;
}

/*
 * The job's clocks and limits, then the jail's notify socket and the
 * payload's seccomp traffic (P as loop_poll_set filled it): past the
 * wall-clock limit, a killed init's grace or a limit of the enforcer the
 * jail is ended; the proxy's sockets are sent to the broker, the
 * listener is taken from the payload and its refused calls answered (a
 * failure there, or denied = kill, ends the jail too).
 */
static void
loop_limits(struct launcher *l, const struct job_spec *spec,
    struct job_state *s, const struct pollfd p[7])
{
	uint64_t spent = job_elapsed_ms(&s->jail.start);

	if (!s->exited && !s->killed && spent >= spec->limits.wall_ms) {
		s->timed_out = true;
		kill_jail(spec, s);
	}
	hard_kill(s, spent, false);
	if (!s->exited && !s->killed &&
	    enforcer_tick(&s->enf, spent) != ENF_NONE)
		kill_jail(spec, s);
	/* The proxy's sockets, then the listener (notify.c): a failure
	 * there ends the job, which must not run with network it should
	 * not have, nor with calls nobody answers. */
	if (p[4].revents != 0 && job_notify_read(l, spec, s) < 0)
		kill_jail(spec, s);
	/* The payload is gone and the filter with it: do not spin
	 * on the listener's hang-up until init is reaped. */
	if ((p[5].revents & (POLLHUP | POLLERR)) && !(p[5].revents & POLLIN))
		s->listener_hup = true;
	if (p[5].revents & POLLIN) {
		if (denials_answer(&s->den, spent) < 0)
			kill_jail(spec, s);
		if (s->den.ended)
			kill_jail(spec, s);
	}
}

/*
 * The job's traffic after a poll (P as loop_poll_set filled it): the
 * waiting OUTPUT sent, the payload's output read, the broker's message
 * dispatched (a CANCEL ends the jail), init's exit collected. Returns 0
 * or a negative errno that ends the job's loop and the session (the
 * broker gone or in violation: the jail is killed).
 */
static int
loop_io(struct launcher *l, const struct job_spec *spec, struct job_state *s,
    const struct pollfd p[7], bool wait_out)
{
	int e;

	if (wait_out && (p[3].revents & POLLOUT) &&
	    (e = flush_pending(l, s)) < 0)
		return e;
	if (p[1].revents && (e = pump(l, spec, s, 1)) < 0)
		return e;
	if (p[2].revents && (e = pump(l, spec, s, 2)) < 0)
		return e;
	if (p[3].revents & (POLLIN | POLLHUP | POLLERR)) {
		int d = launcher_dispatch_one(l);

		if (d <= 0) {
			/* Broker gone or a violation: kill, end. */
			kill_jail(spec, s);
			return d < 0 ? d : -EPIPE;
		}
		if (l->cancel_requested && !s->cancelled) {
			s->cancelled = true;
			s->cancel_reason = l->cancel_reason;
			kill_jail(spec, s);
		}
	}
	if (p[0].revents) {
		memset(&s->info, 0, sizeof(s->info));
		if (syscall(SYS_waitid, P_PIDFD, s->jail.pidfd, &s->info,
			WEXITED, &s->ru) == 0)
			s->exited = true;
	}
	return 0;
}

/*
 * The job's loop, from a watched jail until init is reaped and its
 * output is all sent: output forwarded, clocks and limits kept, denials
 * answered, the broker's messages dispatched. Returns 0, or a negative
 * errno when the session must end (the broker or the zygote gone, a
 * violation, poll failing); init may then be unreaped (job_reap).
 */
static int
job_loop(struct launcher *l, const struct job_spec *spec, struct job_state *s)
{
	int e = 0;

	while (!s->exited || !s->eof[1] || !s->eof[2] || s->pending > 0) {
		/* While an OUTPUT waits for the broker, the pipes are not read
		 * (the payload blocks on a full pipe), but the deadline is
		 * still kept. */
		bool wait_out = s->pending > 0;
		struct pollfd p[7];
		int timeout = loop_poll_set(l, spec, s, wait_out, p);

		if (poll(p, 7, timeout) < 0) {
			if (errno == EINTR)
				continue;
			e = -errno;
			kill_jail(spec, s);
			break;
		}
		if (s->exited && !wait_out && !p[1].revents && !p[2].revents)
			s->eof[1] = s->eof[2] = true;
		if (loop_zygote_gone(l, s, &p[6])) {
			e = -EPIPE;
			break;
		}
		loop_limits(l, spec, s, p);
		if ((e = loop_io(l, spec, s, p, wait_out)) < 0)
			break;
	}
	return e;
}

/*
 * Leaving the loop on an error with init alive: kills the jail and reaps
 * init; init without a pid namespace gets its grace to end the job's
 * processes. A launcher without its zygote cannot kill: it leaves, and
 * its exit kills the jail (init's parent-death signal).
 */
static void
job_reap(const struct job_spec *spec, struct job_state *s)
{
	struct pollfd gone = {.fd = s->jail.pidfd, .events = POLLIN};

	kill_jail(spec, s);
	if (!s->zygote_gone && !s->hard_killed &&
	    poll(&gone, 1, (int)JAIL_KILL_GRACE_MS) <= 0)
		hard_kill(s, 0, true);
	if (!s->zygote_gone)
		syscall(SYS_waitid, P_PIDFD, s->jail.pidfd, &s->info, WEXITED,
		    &s->ru);
}

int
launcher_run_job(struct launcher *l, const struct job_spec *spec, int wsfd,
    int tty_fd)
{
	struct job_state s;
	struct job_result r;
	struct measure_ctx mctx = {.l = l};
	enum job_enforcement mode;
	char leaf_name[64];
	bool poolable;
	int e;

	memset(&s, 0, sizeof(s));
	s.zygote = &l->zygote;
	s.job_id = spec->job_id;
	s.cg_leaf = -1;
	s.mnt_ns = -1;
	s.den.listener = -1;
	s.enf.ws_fd = -1;
	snprintf(leaf_name, sizeof(leaf_name), "stockade-%d-job-%llu",
	    (int)getpid(), (unsigned long long)spec->job_id);
	if (!job_begin(l, spec, wsfd, tty_fd, &s, leaf_name, &mode, &poolable,
		&e))
		return e;
	job_watch(l, spec, wsfd, &s, mode, poolable, &mctx);
	e = job_loop(l, spec, &s);
	if (!s.exited)
		job_reap(spec, &s);
	if (e == 0)
		job_notify_drain(l, spec, &s);
	enforcer_finish(&s.enf, &s.ru);
	job_result(spec, &s, mode, &r);
	jail_close(&s.jail);
	enforcer_free(&s.enf);
	denials_free(&s.den);
	if (s.cg_leaf >= 0) {
		int x;

		close(s.cg_leaf);
		if ((x = cg_leaf_remove(l->cg_parent, leaf_name)) < 0)
			log_warn("cannot remove the cgroup leaf %s: %s",
			    leaf_name, strerror(-x));
	}
	if (e == 0 && (e = job_send_result(l, &r)) < 0)
		log_error("cannot send RESULT: %s", strerror(-e));
	/* Last: the namespace's tear-down comes after the result. */
	close_fdp(&s.mnt_ns);
	return e;
}
