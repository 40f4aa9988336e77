/*
 * supervisor.c: starting, talking to and restarting stockade-launcher.
 *
 * Who may send what, when, on the broker's side (style.md rule 3):
 *
 *   phase                 accepted from the launcher
 *   after HELLO           HELLO_REPLY (no fd)
 *   while a job runs      OUTPUT (no fd, this job's id), RESULT (no fd,
 *                         this job's id; ends the job), NET (2 fds, this
 *                         job's id, a job with a proxy port, at most once;
 *                         to net_fn), STAGE (1 fd, this job's id, a job
 *                         with a stage (job_spec_staged), at most once; to
 *                         stage_fn)
 *   otherwise             nothing
 *
 * Anything else (unknown type, wrong phase, a descriptor, another job's
 * id, a malformed body) is a protocol violation: the launcher is killed
 * and the job in flight ends as sandbox_error.
 *
 * Silence is a failure too: every wait has a deadline
 * (SUPERVISOR_HELLO_MS for HELLO_REPLY, the job's wall-clock limit plus
 * SUPERVISOR_GRACE_MS for its RESULT), after which the launcher is taken
 * for hung, killed and reaped. The launcher enforces the wall-clock
 * limit itself, so a live one answers well within the grace. Time the
 * broker spends in its own output callback (a slow terminal or pipe) is
 * not the launcher's silence and does not count.
 *
 * Where launchers come from: forked here (fork_launcher), or, for a
 * broker that confines itself, from the spawner it forked before
 * (spawner.h, supervisor_use_spawner). Either way the launcher is our
 * child, reaped here, with the same descriptors, arguments and
 * environment (spawner_exec_launcher).
 */
#include "utf8.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "fsutil.h"
#include "install_path.h"
#include "log.h"
#include "stage.h"
#include "supervisor_internal.h"

#define LAUNCHER_NAME SPAWNER_LAUNCHER_NAME

/* After closing the socket, how long supervisor_stop waits for the
 * launcher to exit before killing it, milliseconds. */
#define STOP_GRACE_MS 5000u

/*
 * recv_expect's answer when the launcher closed its socket with a message
 * of ours still unread in it: a unix stream or seqpacket socket closed
 * with data queued makes its peer's next read fail with ECONNRESET, one
 * closed after reading everything reads as end of file (the kernel's
 * unix_release_sock; unix(7)). Messages are read in order and, unless
 * the caller sent CANCEL (jobrun.c), RUN is the last the broker sends,
 * so during a job this means the launcher died without ever reading the
 * job's RUN (supervisor.h, run_unread).
 */
#define LAUNCHER_UNREAD (-ECONNABORTED)

/* BASE + ADD, saturating (a policy may give a huge wall_ms). */
static uint64_t
add_ms(uint64_t base, uint64_t add)
{
	return add > UINT64_MAX - base ? UINT64_MAX : base + add;
}

static int
supervisor_alloc(struct supervisor *s)
{
	memset(s, 0, sizeof(*s));
	s->exe_fd = s->pidfd = s->sock = s->tty_fd = -1;
	s->next_job_id = 1;
	spawner_clear(&s->spawner);
	s->msg = malloc(PROTO_MAX_MSG);
	return s->msg == NULL ? -ENOMEM : 0;
}

int
supervisor_init_path(struct supervisor *s, const char *path, char *err,
    size_t errlen)
{
	int fd;

	if (supervisor_alloc(s) < 0)
		return -ENOMEM;
	fd = install_open_exe(path);
	if (fd < 0) {
		snprintf(err, errlen, "cannot use %s as the launcher: %s", path,
		    strerror(-fd));
		return fd;
	}
	s->exe_fd = fd;
	return 0;
}

int
supervisor_init(struct supervisor *s, char *err, size_t errlen)
{
	char tried[3 * PATH_MAX];
	int fd;

	if (supervisor_alloc(s) < 0)
		return -ENOMEM;
	fd = install_open_helper(NULL, LAUNCHER_NAME, true, NULL, 0, tried,
	    sizeof(tried));
	if (fd < 0) {
		snprintf(err, errlen, "cannot find %s (tried %s): %s",
		    LAUNCHER_NAME, tried, strerror(-fd));
		return fd;
	}
	s->exe_fd = fd;
	return 0;
}

int
supervisor_use_spawner(struct supervisor *s)
{
	int e;

	if (s->use_spawner)
		return 0;
	if (s->exe_fd < 0)
		return -EBADF;
	if ((e = spawner_start(&s->spawner, s->exe_fd)) < 0)
		return e;
	s->use_spawner = true;
	close_fdp(&s->exe_fd);
	/* A confined broker reads its jobs' stages through it (issue 26). */
	stage_set_opener(spawner_stage_opener, &s->spawner);
	return 0;
}

/* Forks a launcher ourselves: 0 with *SOCK, *PIDFD and *PID set, or a
 * negative errno. */
static int
fork_launcher(struct supervisor *s, int *sock, int *pidfd, pid_t *pid)
{
	int sv[2], e;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	*pid = (pid_t)syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, pidfd, 0, 0);
	if (*pid < 0) {
		e = -errno;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (*pid == 0)
		spawner_exec_launcher(sv[1], s->exe_fd);
	close(sv[1]);
	*sock = sv[0];
	return 0;
}

static void
kill_launcher(struct supervisor *s)
{
	spawner_end_child(&s->pid, &s->pidfd, &s->sock, 0);
}

/* Has the launcher exited (its pidfd is readable)? */
static bool
launcher_exited(struct supervisor *s)
{
	struct pollfd p = {.fd = s->pidfd, .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

/* Waits until the launcher's socket is readable by the CLOCK_MONOTONIC
 * time DEADLINE (ms), serving meanwhile W when it is not NULL (struct
 * supervisor_watch: the client, whose cancel may come during a job) and
 * S's stdin feed when there is one (stdin_feed.h: the job's standard
 * input moved into its pipe as the pipe drains, so that a program that
 * stops reading never blocks the broker). Returns 0, -ETIMEDOUT or a
 * negative errno. */
static int
wait_launcher(struct supervisor *s, struct supervisor_watch *w,
    uint64_t deadline)
{
	const bool watch = w != NULL && w->fn != NULL;

	if (!watch && s->feed == NULL)
		return spawner_wait_readable(s->sock, deadline);
	for (;;) {
		struct pollfd p[2 + SUPERVISOR_WATCH_FDS];
		uint64_t now = spawner_now_ms();
		uint64_t left = now >= deadline ? 0 : deadline - now;
		size_t np = 1, feed_at = 0;
		bool any = false;
		int n;

		p[0] = (struct pollfd){.fd = s->sock, .events = POLLIN};
		for (size_t i = 0; watch && i < SUPERVISOR_WATCH_FDS; i++) {
			p[np] = w->fds[i];
			p[np++].revents = 0;
		}
		if (s->feed != NULL && stdin_feed_pollfd(s->feed, &p[np]))
			feed_at = np++;
		n = poll(p, (nfds_t)np, left > INT_MAX ? INT_MAX : (int)left);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0 && left <= INT_MAX)
			return -ETIMEDOUT;
		if (n <= 0)
			continue;
		for (size_t i = 0; watch && i < SUPERVISOR_WATCH_FDS; i++) {
			w->fds[i].revents = p[1 + i].revents;
			any = any || p[1 + i].revents != 0;
		}
		if (any)
			w->fn(w);
		if (feed_at != 0 && p[feed_at].revents != 0)
			stdin_feed_step(s->feed, &p[feed_at]);
		if (p[0].revents != 0)
			return 0;
	}
}

/* Closes the N descriptors FDS. */
static void
close_all(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

/* Receives one message of a type in ALLOWED (header checked) by the
 * CLOCK_MONOTONIC time DEADLINE (ms), serving W meanwhile (may be NULL).
 * Only a NET may carry descriptors, exactly two, and a STAGE exactly
 * one, and only when FDS is not NULL: they go into FDS[0, 2) (the
 * caller's), else any descriptor is a violation. Returns the body length, -ETIMEDOUT when nothing came
 * in time, or another negative errno (every descriptor closed); 0-length
 * bodies are fine. */
static int
recv_expect(struct supervisor *s, struct supervisor_watch *w,
    const uint16_t *allowed, size_t nallowed, uint64_t deadline, uint16_t *type,
    const uint8_t **body, int *fds)
{
	int got[PROTO_MAX_FDS], n, e;
	size_t len, nfds = 0;

	if ((e = wait_launcher(s, w, deadline)) < 0)
		return e;
	n = proto_recv_fds(s->sock, s->msg, PROTO_MAX_MSG, got, PROTO_MAX_FDS,
	    &nfds);
	if (n == 0)
		return -ECONNRESET;
	if (n == -ECONNRESET)
		return LAUNCHER_UNREAD;
	if (n < 0)
		return n;
	if ((e = proto_decode_header(s->msg, (size_t)n, type, body, &len)) <
	    0) {
		close_all(got, nfds);
		return e;
	}
	if (nfds != supervisor_fds_of(*type) || (nfds != 0 && fds == NULL)) {
		close_all(got, nfds);
		log_debug("the launcher sent %zu descriptors with %s", nfds,
		    proto_msg_name(*type));
		return -EPROTO;
	}
	for (size_t i = 0; i < nallowed; i++)
		if (allowed[i] == *type) {
			if (nfds != 0)
				memcpy(fds, got, nfds * sizeof(got[0]));
			return (int)len;
		}
	close_all(got, nfds);
	log_debug("unexpected %s from the launcher", proto_msg_name(*type));
	return -EPROTO;
}

int
supervisor_start(struct supervisor *s)
{
	static const uint16_t hello_ok[] = {PROTO_HELLO_REPLY};
	uint8_t buf[64];
	const uint8_t *body;
	uint16_t type;
	uint32_t version, lpid;
	uint64_t deadline;
	int sock = -1, pidfd = -1, n, e;
	bool other_version;
	pid_t pid = 0;

	if (s->pid > 0) {
		if (!launcher_exited(s))
			return 0;
		/* It died between jobs: none of ours was in flight, so the
		 * next runs on a new launcher instead of failing. */
		kill_launcher(s);
		s->restarts++;
	}
	deadline = add_ms(spawner_now_ms(), SUPERVISOR_HELLO_MS);
	if (s->use_spawner)
		e = spawner_launch(&s->spawner, deadline, &sock, &pidfd, &pid);
	else
		e = fork_launcher(s, &sock, &pidfd, &pid);
	if (e < 0)
		return e;
	s->pid = pid;
	s->pidfd = pidfd;
	s->sock = sock;

	n = proto_encode_hello(buf, sizeof(buf), PROTO_VERSION);
	if (n < 0 || (e = proto_send(s->sock, buf, (size_t)n, -1)) < 0) {
		e = n < 0 ? n : e;
		goto fail;
	}
	n = recv_expect(s, NULL, hello_ok, 1, deadline, &type, &body, NULL);
	if (n < 0) {
		e = n == LAUNCHER_UNREAD ? -ECONNRESET : n;
		goto fail;
	}
	if ((e = proto_decode_hello_reply(body, (size_t)n, &version, &lpid)) <
	    0)
		goto fail;
	other_version = version != PROTO_VERSION;
	if (other_version || lpid != (uint32_t)pid) {
		e = -EPROTO;
		goto fail;
	}
	/* Every launcher of a session, restarted ones too, keeps the
	 * session's pool (launcher/supervisor/pool.h). */
	if (s->pool_size > 0 &&
	    ((n = proto_encode_pool(buf, sizeof(buf), s->pool_size)) < 0 ||
		(e = proto_send(s->sock, buf, (size_t)n, -1)) < 0)) {
		e = n < 0 ? n : e;
		goto fail;
	}
	return 0;
fail:
	kill_launcher(s);
	return e;
}

/* Kills the launcher and makes RES the job's sandbox_error: E says why,
 * WAITED_MS how long it was given when E is -ETIMEDOUT. */
static void
launcher_failed(struct supervisor *s, struct job_result *res, uint64_t id,
    int e, uint64_t waited_ms)
{
	char detail[200];

	kill_launcher(s);
	s->restarts++;
	memset(res, 0, sizeof(*res));
	res->job_id = id;
	res->status = JOB_SANDBOX_ERROR;
	res->exit_code = -1;
	res->enforcement = ENFORCE_MONITOR;
	res->wall_ms = s->run_started_ms ? spawner_now_ms() - s->run_started_ms
					 : 0;
	if (e == -ETIMEDOUT)
		fmt_words(detail, sizeof(detail),
		    "the launcher did not answer within %llu ms",
		    (unsigned long long)waited_ms);
	else
		fmt_words(detail, sizeof(detail), "%s (%s)",
		    e == -ECONNRESET || e == -EPIPE || e == LAUNCHER_UNREAD
			? "the launcher died during the job"
			: "the launcher broke the protocol",
		    strerror(e == LAUNCHER_UNREAD ? ECONNRESET : -e));
	res->detail = strdup(detail);
}

/* Sends the RUN of SPEC to the launcher with the workspace WSFD and the
 * job's standard input (s->tty_fd, or s->feed's pipe). Returns 1 once it
 * is sent; 0 when the job will not run, RES its sandbox_error; or a
 * negative errno, nothing sent (-E2BIG: SPEC does not fit one message). */
static int
send_run(struct supervisor *s, const struct job_spec *spec, int wsfd,
    struct job_result *res)
{
	uint8_t *buf;
	int in = s->tty_fd, n, e;

	buf = malloc(PROTO_MAX_MSG);
	if (buf == NULL)
		return -ENOMEM;
	n = proto_encode_run(buf, PROTO_MAX_MSG, spec);
	if (n < 0) {
		free(buf);
		return n == -ENOBUFS ? -E2BIG : n;
	}
	if (s->feed != NULL && (e = stdin_feed_start(s->feed, &in)) < 0) {
		/* Nothing was sent: the launcher is fine, the job is not run. */
		char detail[128];

		free(buf);
		snprintf(detail, sizeof(detail),
		    "cannot make the pipe of the "
		    "job's standard input: %s",
		    strerror(-e));
		res->job_id = spec->job_id;
		res->status = JOB_SANDBOX_ERROR;
		res->exit_code = -1;
		res->enforcement = ENFORCE_MONITOR;
		res->detail = strdup(detail);
		return 0;
	}
	s->run_started_ms = spawner_now_ms();
	{
		int fds[2] = {wsfd, in};

		e = proto_send_fds(s->sock, buf, (size_t)n, fds,
		    in >= 0 ? 2 : 1);
	}
	/* Ours is closed at once: the jail's is then the only reader, and
	 * its end is the program's end (EPIPE, stdin_feed_step). */
	if (s->feed != NULL)
		close_fdp(&in);
	free(buf);
	if (e < 0) {
		/* EPIPE: its socket was closed before the RUN went (it died
		 * after supervisor_start looked): it never saw the job. */
		s->run_unread = e == -EPIPE || e == -ECONNRESET;
		launcher_failed(s, res, spec->job_id, e, 0);
		if (s->feed != NULL)
			stdin_feed_stop(s->feed);
		return 0;
	}
	return 1;
}

/* OUTPUT (BODY of LEN bytes) of SPEC's job handed to OUT (with ARG),
 * when not NULL, *DEADLINE pushed back by the time OUT took. 0, or a
 * negative errno (malformed, another job's). */
static int
take_output(const struct job_spec *spec, const uint8_t *body, size_t len,
    output_fn out, void *arg, uint64_t *deadline)
{
	const uint8_t *data;
	uint64_t id, t0;
	uint8_t stream;
	size_t dlen;
	int e;

	e = proto_decode_output(body, len, &id, &stream, &data, &dlen);
	if (e < 0 || id != spec->job_id)
		return e < 0 ? e : -EPROTO;
	if (out != NULL) {
		t0 = spawner_now_ms();
		out(arg, stream, data, dlen);
		*deadline = add_ms(*deadline, spawner_now_ms() - t0);
	}
	return 0;
}

/* Hands the job's OUTPUT to OUT (with ARG) until its RESULT, which fills
 * RES, comes by DEADLINE (ms, spawner_now_ms; pushed back by the time OUT
 * takes); a launcher that dies, breaks the protocol or is late past
 * ALLOWED ms makes RES a sandbox_error. Returns 0. */
static int
await_result(struct supervisor *s, const struct job_spec *spec, output_fn out,
    void *arg, uint64_t allowed, uint64_t deadline, struct job_result *res)
{
	static const uint16_t running_ok[] = {PROTO_OUTPUT, PROTO_RESULT,
	    PROTO_NET, PROTO_STAGE};
	uint32_t seen = 0; /* the NET and STAGE that came */
	bool foreign;
	int n, e, fds[2];

	/* What the session read before the job may already cancel it. */
	if (s->watch != NULL && s->watch->fn != NULL) {
		for (size_t i = 0; i < SUPERVISOR_WATCH_FDS; i++)
			s->watch->fds[i].revents = 0;
		s->watch->fn(s->watch);
	}
	for (;;) {
		const uint8_t *body;
		uint16_t type;

		n = recv_expect(s, s->watch, running_ok, 4, deadline, &type,
		    &body, fds);
		if (n < 0) {
			s->run_unread = n == LAUNCHER_UNREAD;
			launcher_failed(s, res, spec->job_id, n, allowed);
			if (s->feed != NULL)
				stdin_feed_stop(s->feed);
			return 0;
		}
		if (supervisor_fds_of(type) != 0) {
			if ((e = supervisor_take_fds(s, spec, type, body,
				 (size_t)n, fds, &seen)) < 0) {
				launcher_failed(s, res, spec->job_id, e, 0);
				if (s->feed != NULL)
					stdin_feed_stop(s->feed);
				return 0;
			}
			continue;
		}
		if (type == PROTO_OUTPUT) {
			if ((e = take_output(spec, body, (size_t)n, out, arg,
				 &deadline)) < 0) {
				launcher_failed(s, res, spec->job_id, e, 0);
				if (s->feed != NULL)
					stdin_feed_stop(s->feed);
				return 0;
			}
			continue;
		}
		if (s->feed != NULL)
			stdin_feed_stop(s->feed);
		e = proto_decode_result(body, (size_t)n, res);
		foreign = res->job_id != spec->job_id;
		if (e < 0 || foreign) {
			job_result_clear(res);
			launcher_failed(s, res, spec->job_id,
			    e < 0 ? e : -EPROTO, 0);
		}
		return 0;
	}
}

int
supervisor_run(struct supervisor *s, struct job_spec *spec, int wsfd,
    output_fn out, void *arg, struct job_result *res)
{
	uint64_t allowed, deadline;
	int e;

	memset(res, 0, sizeof(*res));
	s->run_started_ms = 0;
	s->run_unread = false;
	/* supervisor_start replaces one that died between jobs. */
	if ((e = supervisor_start(s)) < 0)
		return e;
	spec->job_id = s->next_job_id++;
	if (s->feed != NULL)
		spec->flags |= JOB_F_STDIN;
	else
		spec->flags &= ~JOB_F_STDIN;
	if ((e = send_run(s, spec, wsfd, res)) <= 0)
		return e;
	/* The launcher kills the job at wall_ms: its RESULT, and any
	 * OUTPUT before it, must come by then plus the grace. */
	allowed = add_ms(spec->limits.wall_ms, SUPERVISOR_GRACE_MS);
	deadline = add_ms(spawner_now_ms(), allowed);
	return await_result(s, spec, out, arg, allowed, deadline, res);
}

void
supervisor_stop(struct supervisor *s)
{
	if (s->pid > 0)
		spawner_end_child(&s->pid, &s->pidfd, &s->sock, STOP_GRACE_MS);
}

void
supervisor_free(struct supervisor *s)
{
	supervisor_stop(s);
	if (stage_opener_is(spawner_stage_opener, &s->spawner))
		stage_set_opener(NULL, NULL);
	spawner_stop(&s->spawner);
	close_fdp(&s->exe_fd);
	free(s->msg);
	s->msg = NULL;
}
