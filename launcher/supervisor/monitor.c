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
#include "plant.h"
#include "launcher.h"
#include "log.h"
#include "zygote.h"


static uint64_t
elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - start->tv_sec) * 1000u +
	       (uint64_t)((now.tv_nsec - start->tv_nsec) / 1000000);
}

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
		s->killed_ms = elapsed_ms(&s->jail.start);
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
		n = send(l->ipc, l->out, s->pending, MSG_DONTWAIT | MSG_NOSIGNAL);
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
 * (the broker keeps the head and the tail, broker/capture.h), so that the
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
	uint64_t cap = stream == 1 ? spec->limits.stdout_bytes :
				     spec->limits.stderr_bytes;
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


/*
 * Reads the records init and the payload left on the status pipe (its
 * write ends are all closed once init is reaped): the ending record into
 * REC, INIT_REC_SETUP_FAILED (or INIT_REC_BIND_FAILED) before any
 * INIT_REC_PAYLOAD_EXIT (a payload
 * whose set-up failed also exits, 127, after saying why), the
 * Landlock ABI the payload reported into *LANDLOCK_ABI, and the tasks
 * init counted as the payload ended into *TASKS (left alone when init
 * sent none). Returns 0 when an ending record came, -EBADMSG otherwise.
 */
static int
read_records(int fd, int32_t rec[3], int32_t *landlock_abi, int32_t *tasks)
{
	uint8_t raw[INIT_RECORD_SIZE];
	bool ended = false;
	int32_t got[3];
	struct rbuf r;
	ssize_t n;

	for (int i = 0; i < 8; i++) {
		do
			n = read(fd, raw, sizeof(raw));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(raw))
			break;
		rbuf_init(&r, raw, sizeof(raw));
		rbuf_get_i32(&r, &got[0]);
		rbuf_get_i32(&r, &got[1]);
		rbuf_get_i32(&r, &got[2]);
		if (got[0] == INIT_REC_LANDLOCK) {
			*landlock_abi = got[1];
			continue;
		}
		if (got[0] == INIT_REC_TASKS) {
			*tasks = got[1];
			continue;
		}
		if (ended && (rec[0] == INIT_REC_SETUP_FAILED ||
			      rec[0] == INIT_REC_BIND_FAILED))
			continue;
		memcpy(rec, got, sizeof(got));
		ended = true;
	}
	return ended ? 0 : -EBADMSG;
}

static int
send_result(struct launcher *l, struct job_result *r)
{
	int n = proto_encode_result(l->out, PROTO_MAX_MSG, r);

	if (n < 0)
		return n;
	return proto_send(l->ipc, l->out, (size_t)n, -1);
}

/* The jail could not even be cloned: no process exists. */
static int
clone_failed(struct launcher *l, const struct job_spec *spec, int e)
{
	char detail[256];
	struct job_result r = {.job_id = spec->job_id,
			       .status = JOB_SANDBOX_ERROR,
			       .exit_code = -1,
			       .enforcement = ENFORCE_MONITOR};

	if (e == -EPERM || e == -ENOSPC || e == -EINVAL || e == -EUSERS)
		fmt_words(detail, sizeof(detail),
			 "cannot create the jail's namespaces (%s): unprivileged "
			 "user namespaces are unavailable; run `stockade doctor`",
			 strerror(-e));
	else
		fmt_words(detail, sizeof(detail), "clone3: %s", strerror(-e));
	r.detail = detail;
	return send_result(l, &r);
}

/* Running as root without an id-mapped workspace: refuse, never fall back
 * to a payload that is host root. */
static int
setup_refused(struct launcher *l, const struct job_spec *spec, int e)
{
	char detail[300];
	struct job_result r = {.job_id = spec->job_id,
			       .status = JOB_SANDBOX_ERROR,
			       .exit_code = -1,
			       .enforcement = ENFORCE_MONITOR};

	if (e == -EPERM)
		fmt_words(detail, sizeof(detail),
			 "running as root, stockade refuses a workspace owned by "
			 "uid or gid 0: give the job a directory owned by an "
			 "ordinary user, or run stockade as that user");
	else
		fmt_words(detail, sizeof(detail),
			 "running as root, stockade maps the job to uid %u and "
			 "needs an id-mapped mount of the workspace, which failed "
			 "(%s): put the workspace on a file system with idmapped "
			 "mounts (ext4, xfs, btrfs, tmpfs) or run stockade as an "
			 "ordinary user", (unsigned)l->outer_uid, strerror(-e));
	r.detail = detail;
	return send_result(l, &r);
}

/* The spec asks for limits this host cannot hold: refuse the job. */
static int
limits_refused(struct launcher *l, const struct job_spec *spec,
	       const char *why)
{
	char detail[JOB_MAX_DETAIL];
	struct job_result r = {.job_id = spec->job_id,
			       .status = JOB_SANDBOX_ERROR,
			       .exit_code = -1,
			       .enforcement = ENFORCE_MONITOR};

	fmt_words(detail, sizeof(detail), "%s", why);
	r.detail = detail;
	return send_result(l, &r);
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
	uint64_t spent = elapsed_ms(&m->jail->start);
	uint64_t left = spent < m->wall_ms ? m->wall_ms - spent : 1;

	m->l->zygote.reply_wait_ms = left > UINT32_MAX ? UINT32_MAX :
							  (uint32_t)left;
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
	return wall_cut(zygote_measure(&m->l->zygote, m->jail->token,
				       max_procs, bytes, &fallbacks, resident),
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

int
launcher_run_job(struct launcher *l, const struct job_spec *spec, int wsfd,
		 int tty_fd)
{
	struct job_state s;
	struct job_result r;
	int32_t rec[3] = {0, 0, 0}, tasks_at_exit = 0;
	enum job_enforcement mode;
	char leaf_name[64], why[JOB_MAX_DETAIL];
	bool have_rec;
	int e = 0;
	struct zygote_reply zr;
	bool poolable;
	int warm, stdin_pipe;
	struct measure_ctx mctx = {.l = l};

	memset(&s, 0, sizeof(s));
	s.zygote = &l->zygote;
	s.job_id = spec->job_id;
	s.cg_leaf = -1;
	s.den.listener = -1;
	s.enf.ws_fd = -1;
	snprintf(leaf_name, sizeof(leaf_name), "stockade-%d-job-%llu",
		 (int)getpid(), (unsigned long long)spec->job_id);
	if (enforce_choose(l, spec, leaf_name, &mode, &s.cg_leaf, why,
			   sizeof(why)) < 0) {
		close(wsfd);
		if (tty_fd >= 0)
			close(tty_fd);
		return limits_refused(l, spec, why);
	}
	if (denials_init(&s.den, false) < 0) {
		close(wsfd);
		if (tty_fd >= 0)
			close(tty_fd);
		if (s.cg_leaf >= 0) {
			close(s.cg_leaf);
			(void)cg_leaf_remove(l->cg_parent, leaf_name);
		}
		return limits_refused(l, spec, "out of memory");
	}
	/* A warm jail when the pool has one built for this kind of job
	 * (pool.h); else the zygote builds it now (zygote.h): this process
	 * is confined and could not. Its filter is the monitor's unless a
	 * cgroup leaf holds the limits. */
	memset(&zr, 0, sizeof(zr));
	/* A job's stdin pipe goes to a waiting jail with its RUN (pool.h);
	 * the caller's terminal needs a jail built with it (no setsid). */
	poolable = (tty_fd < 0 || (spec->flags & JOB_F_STDIN) != 0) &&
		   s.cg_leaf < 0;
	stdin_pipe = (spec->flags & JOB_F_STDIN) != 0 ? tty_fd : -1;
	warm = poolable ? pool_take(&l->pool, &l->zygote, spec, stdin_pipe,
				    &s.jail, &zr.kill_on_denial) : 0;
	/* A jail being prepared answers before any new request: take it
	 * (it may be the one this job can have). */
	if (warm == 0 && l->zygote.prepare_pending) {
		warm = pool_refill_finish(&l->pool, &l->zygote);
		if (warm == 0 && poolable)
			warm = pool_take(&l->pool, &l->zygote, spec,
					 stdin_pipe, &s.jail,
					 &zr.kill_on_denial);
	}
	if (warm < 0) {
		e = warm;
	} else if (warm == 0) {
		e = zygote_start_jail(&l->zygote, spec, wsfd, s.cg_leaf, tty_fd,
				      &s.jail, &zr);
	}
	s.den.kill = zr.kill_on_denial;
	if (tty_fd >= 0)
		close(tty_fd);
	if (e < 0 || zr.refusal != ZYGOTE_OK) {
		close(wsfd);
		denials_free(&s.den);
		if (s.cg_leaf >= 0) {
			close(s.cg_leaf);
			(void)cg_leaf_remove(l->cg_parent, leaf_name);
		}
		if (e < 0) {
			log_error("the zygote is gone or broken: %s",
				  strerror(-e));
			return e;
		}
		switch (zr.refusal) {
		case ZYGOTE_ROOT_WORKSPACE:
			return setup_refused(l, spec, -EPERM);
		case ZYGOTE_IDMAP:
			return setup_refused(l, spec, -zr.err);
		case ZYGOTE_FILTER:
		case ZYGOTE_LAYERS:
			return limits_refused(l, spec, zr.why);
		case ZYGOTE_CLONE:
			return clone_failed(l, spec, -zr.err);
		case ZYGOTE_OK:
		case ZYGOTE_BAD_REQUEST:
		case ZYGOTE_NOT_SESSION:
			break;
		}
		/* A job the launcher decoded, or one that asks for what the
		 * session's first did not: the launcher is not itself. */
		log_error("the zygote refused the job (%s)",
			  zr.refusal == ZYGOTE_NOT_SESSION ?
				  "not what the session's first job fixed" :
				  "malformed");
		return -EPROTO;
	}
	/* The enforcer keeps its own duplicate of the workspace, to watch
	 * its size; init holds its own reference for the mount. */
	e = enforcer_init(&s.enf, &spec->limits, mode, s.cg_leaf, s.jail.pid,
			  l->proc_fd, wsfd, spec->workspace_allow,
			  elapsed_ms(&s.jail.start),
			  job_spec_layer_off(spec, JOB_LAYER_LIMITS));
	mctx.jail = &s.jail;
	mctx.wall_ms = spec->limits.wall_ms;
	s.enf.measure_pss = measure_by_zygote;
	s.enf.measure_kobj = kobj_by_zygote;
	s.enf.measure_arg = &mctx;
	/* The pool's next jails are built like this one, once it is over
	 * (the refill waits for the session to be idle). */
	if (poolable &&
	    (warm = pool_remember(&l->pool, &l->zygote, spec, wsfd)) < 0)
		log_warn("warm pool: %s", strerror(-warm));
	close(wsfd);
	if (e < 0) {
		/* Unwatched is unlimited: end it (a sandbox_error). */
		log_error("cannot watch the jail: %s", strerror(-e));
		kill_jail(spec, &s);
		e = 0;
	}

	while (!s.exited || !s.eof[1] || !s.eof[2] || s.pending > 0) {
		/* While an OUTPUT waits for the broker, the pipes are not read
		 * (the payload blocks on a full pipe), but the deadline is
		 * still kept. */
		bool wait_out = s.pending > 0;
		struct pollfd p[7] = {
			{.fd = s.exited ? -1 : s.jail.pidfd, .events = POLLIN},
			{.fd = s.eof[1] || wait_out ? -1 : s.jail.out_fd,
			 .events = POLLIN},
			{.fd = s.eof[2] || wait_out ? -1 : s.jail.err_fd,
			 .events = POLLIN},
			{.fd = l->peer_gone ? -1 : l->ipc,
			 .events = POLLIN | (wait_out ? POLLOUT : 0)},
			/* The payload's seccomp listener, then its calls. */
			{.fd = s.exited || s.den.listener >= 0 ? -1 :
								 s.jail.notify_sock,
			 .events = POLLIN},
			{.fd = s.exited || s.listener_hup ? -1 : s.den.listener,
			 .events = POLLIN},
			/* The zygote says nothing unasked: anything here is
			 * its end (F3 of the review: notice it at once). */
			{.fd = l->zygote.sock, .events = POLLIN},
		};
		uint64_t spent = elapsed_ms(&s.jail.start);
		int timeout = -1, ready, hold = 0;

		/* Past the rate of answers (denials.h), the listener rests:
		 * the job's refused calls wait in the kernel, asleep. */
		if (p[5].fd >= 0 && (hold = denials_hold_ms(&s.den, spent)) > 0)
			p[5].fd = -1;
		if (!s.exited && !s.killed) {
			int tick = enforcer_wait_ms(&s.enf, spent);

			timeout = spent >= spec->limits.wall_ms ? 0 :
				(int)(spec->limits.wall_ms - spent);
			if (tick < timeout)
				timeout = tick;
		} else if (!s.exited && !s.hard_killed) {
			uint64_t at = s.killed_ms + JAIL_KILL_GRACE_MS;

			timeout = spent >= at ? 0 : (int)(at - spent);
		}
		/* Once init is reaped every process of the jail is dead, and
		 * what is in the pipes is all there will be: do not wait for
		 * an EOF that a write end passed away in an unreachable
		 * SCM_RIGHTS cycle could delay until the kernel's garbage
		 * collection of unix sockets happens to run. */
		if (s.exited && !wait_out)
			timeout = 0;
		if (hold > 0 && (timeout < 0 || hold < timeout))
			timeout = hold;
		ready = poll(p, 7, timeout);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			e = -errno;
			kill_jail(spec, &s);
			break;
		}
		if (s.exited && !wait_out && !p[1].revents && !p[2].revents)
			s.eof[1] = s.eof[2] = true;
		/* The reply to the pool's prepare request may come during a
		 * job (pool.h); anything else is the zygote's end. */
		if (p[6].revents != 0 && !s.zygote_gone &&
		    l->zygote.prepare_pending &&
		    pool_refill_finish(&l->pool, &l->zygote) == 0)
			p[6].revents = 0;
		/* Or a measure's reply that came after its wait ended. */
		if (p[6].revents != 0 && !s.zygote_gone &&
		    !l->zygote.prepare_pending &&
		    zygote_drop_late(&l->zygote) == 0)
			p[6].revents = 0;
		if (p[6].revents != 0 || s.zygote_gone) {
			/* Without its zygote the launcher cannot kill a jail:
			 * end the session; our exit kills the jail (init has
			 * PR_SET_PDEATHSIG). */
			log_error("the zygote is gone");
			s.zygote_gone = true;
			e = -EPIPE;
			break;
		}
		spent = elapsed_ms(&s.jail.start);
		if (!s.exited && !s.killed && spent >= spec->limits.wall_ms) {
			s.timed_out = true;
			kill_jail(spec, &s);
		}
		hard_kill(&s, spent, false);
		if (!s.exited && !s.killed &&
		    enforcer_tick(&s.enf, spent) != ENF_NONE)
			kill_jail(spec, &s);
		if ((p[4].revents & POLLIN) &&
		    denials_take_listener(&s.den, s.jail.notify_sock) < 0)
			kill_jail(spec, &s); /* unanswered calls would hang it */
		/* The payload is gone and the filter with it: do not spin
		 * on the listener's hang-up until init is reaped. */
		if ((p[5].revents & (POLLHUP | POLLERR)) &&
		    !(p[5].revents & POLLIN))
			s.listener_hup = true;
		if (p[5].revents & POLLIN) {
			if (denials_answer(&s.den, spent) < 0)
				kill_jail(spec, &s);
			if (s.den.ended)
				kill_jail(spec, &s);
		}
		if (wait_out && (p[3].revents & POLLOUT) &&
		    (e = flush_pending(l, &s)) < 0)
			break;
		if (p[1].revents && (e = pump(l, spec, &s, 1)) < 0)
			break;
		if (p[2].revents && (e = pump(l, spec, &s, 2)) < 0)
			break;
		if (p[3].revents & (POLLIN | POLLHUP | POLLERR)) {
			int d = launcher_dispatch_one(l);

			if (d <= 0) {
				/* Broker gone or a violation: kill, end. */
				e = d < 0 ? d : -EPIPE;
				kill_jail(spec, &s);
				break;
			}
			if (l->cancel_requested && !s.cancelled) {
				s.cancelled = true;
				s.cancel_reason = l->cancel_reason;
				kill_jail(spec, &s);
			}
		}
		if (p[0].revents) {
			memset(&s.info, 0, sizeof(s.info));
			if (syscall(SYS_waitid, P_PIDFD, s.jail.pidfd, &s.info,
				    WEXITED, &s.ru) == 0)
				s.exited = true;
		}
	}
	if (!s.exited) {
		/* Leaving on error: reap what we killed; init without a pid
		 * namespace gets its grace to end the job's processes. A
		 * launcher without its zygote cannot kill: it leaves, and its
		 * exit kills the jail (init's parent-death signal). */
		struct pollfd gone = {.fd = s.jail.pidfd, .events = POLLIN};

		kill_jail(spec, &s);
		if (!s.zygote_gone && !s.hard_killed &&
		    poll(&gone, 1, (int)JAIL_KILL_GRACE_MS) <= 0)
			hard_kill(&s, 0, true);
		if (!s.zygote_gone)
			syscall(SYS_waitid, P_PIDFD, s.jail.pidfd, &s.info,
				WEXITED, &s.ru);
	}
	enforcer_finish(&s.enf, &s.ru);

	memset(&r, 0, sizeof(r));
	have_rec = read_records(s.jail.status_fd, rec, &r.landlock_abi,
				&tasks_at_exit) == 0;
	if (tasks_at_exit > 0)
		enforcer_tasks_at_exit(&s.enf, (uint32_t)tasks_at_exit);
	r.job_id = spec->job_id;
	r.wall_ms = elapsed_ms(&s.jail.start);
	r.cpu_ms = s.enf.cpu_ms;
	r.peak_memory_kb = s.enf.peak_rss_bytes / 1024u;
	r.peak_processes = s.enf.peak_tasks;
	r.memory_measure = s.enf.peak_measure;
	/* A limit reached while the program went on: the result says so
	 * whatever the status (its output may lack what a refused fork
	 * would have done). */
	if (s.enf.pids_hit && !job_spec_layer_off(spec, JOB_LAYER_LIMITS) &&
	    !PLANTED(limits_reached_unreported)) {
		r.reached[0].limit = JOB_REACHED_PROCESSES;
		r.reached[0].times = s.enf.pids_episodes > 0 ?
					     s.enf.pids_episodes : 1;
		r.nreached = 1;
	}
	r.enforcement = mode;
	denials_result(&s.den, &r);
	r.stdout_bytes = s.bytes[1];
	r.stderr_bytes = s.bytes[2];
	if (have_rec && rec[0] == INIT_REC_PAYLOAD_EXIT &&
	    r.peak_processes < 2)
		r.peak_processes = 2;
	monitor_classify(spec, &s, rec, have_rec, &r);
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
	if (e < 0)
		return e;
	e = send_result(l, &r);
	if (e < 0)
		log_error("cannot send RESULT: %s", strerror(-e));
	return e;
}
