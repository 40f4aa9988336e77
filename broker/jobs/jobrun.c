/* jobrun.c: see jobrun.h. */
#include "jobrun.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "jobspec.h"
#include "result_json.h"

/*
 * Interruption: SIGINT, SIGTERM or SIGHUP while a job runs sends CANCEL
 * (encoded beforehand, one message per reason; send is
 * async-signal-safe) so the launcher kills the jail and answers with the
 * job's RESULT, status cancelled. A second signal kills the broker at
 * once (SA_RESETHAND), and the launcher and its jail die with it
 * (PR_SET_PDEATHSIG). These are the only file-scope variables: a signal
 * handler can reach nothing else. cancel_sock is set last when arming
 * and first when disarming, so the handler never sees a socket with a
 * half-written message.
 */
static volatile sig_atomic_t interrupted;
static volatile sig_atomic_t cancel_sock = -1;
static uint8_t cancel_msg[JOB_CANCEL_MAX + 1][64];
static size_t cancel_len[JOB_CANCEL_MAX + 1];
/* jobrun_cancel from another thread (mcp: a client's cancellation). The
 * request and the socket are C11 atomics (lock-free for int, hence safe
 * in a handler too), so that of a request made while a job is being
 * armed, either the canceller sees the socket or jobrun_exec sees the
 * request (both sequentially consistent). cancel_requested holds the
 * reason of the first request (enum job_cancel_reason; 0 none): every
 * CANCEL sent carries that one, so the launcher and the result agree. */
static atomic_int cancel_requested;
static atomic_int cancel_sock_mt = -1;

/* Records REASON unless a request came first; returns the reason in
 * force. Async-signal-safe. */
static int
request_cancel(int reason)
{
	int none = 0;

	if (!atomic_compare_exchange_strong(&cancel_requested, &none, reason))
		return none;
	return reason;
}

/* Sends the CANCEL of REASON on SOCK (nothing when it could not be
 * encoded: the job then runs without a way to cancel it).
 * Async-signal-safe. */
static void
send_cancel(int sock, int reason)
{
	if (sock >= 0 && reason >= 1 && reason <= JOB_CANCEL_MAX &&
	    cancel_len[reason] > 0)
		(void)send(sock, cancel_msg[reason], cancel_len[reason],
		    MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The cancellation reason of signal SIG. */
static int
signal_reason(int sig)
{
	return sig == SIGINT ? JOB_CANCEL_SIGINT
	    : sig == SIGHUP  ? JOB_CANCEL_SIGHUP
			     : JOB_CANCEL_SIGTERM;
}

static void
on_signal(int sig)
{
	int saved = errno;
	int sock = cancel_sock;
	int reason = request_cancel(signal_reason(sig));

	if (interrupted == 0)
		interrupted = sig;
	send_cancel(sock, reason);
	errno = saved;
}

void
jobrun_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void
jobrun_default_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}

int
jobrun_interrupted(void)
{
	return interrupted;
}

/* Prepares CANCEL, one message per reason, for the job SUP runs next;
 * false when it cannot be encoded (the job then runs without a way to
 * cancel it). */
static bool
arm_cancel(const struct supervisor *sup)
{
	int reason;

	for (int r = 1; r <= JOB_CANCEL_MAX; r++) {
		int n = proto_encode_cancel(cancel_msg[r],
		    sizeof(cancel_msg[r]), sup->next_job_id, (uint32_t)r);

		if (n < 0)
			return false;
		cancel_len[r] = (size_t)n;
	}
	cancel_sock = sup->sock;
	atomic_store(&cancel_sock_mt, sup->sock);
	if ((reason = atomic_load(&cancel_requested)) != 0)
		send_cancel(sup->sock, reason);
	return true;
}

static void
disarm_cancel(void)
{
	atomic_store(&cancel_sock_mt, -1);
	cancel_sock = -1;
}

void
jobrun_cancel(enum job_cancel_reason why)
{
	int reason = request_cancel((int)why);

	send_cancel(atomic_load(&cancel_sock_mt), reason);
}

void
jobrun_cancel_reset(void)
{
	atomic_store(&cancel_requested, 0);
}

bool
jobrun_cancel_requested(void)
{
	return atomic_load(&cancel_requested) != 0;
}

/* -EMSGSIZE when SPEC no longer fits in one RUN message. */
static int
check_fits(const struct job_spec *spec)
{
	uint8_t *msg = malloc(PROTO_MAX_MSG);
	int n;

	if (msg == NULL)
		return -ENOMEM;
	n = proto_encode_run(msg, PROTO_MAX_MSG, spec);
	free(msg);
	return n == -ENOBUFS ? -EMSGSIZE : n < 0 ? n : 0;
}

int
jobrun_check_fits(const struct jobrun *jr)
{
	return check_fits(&jr->spec);
}

int
jobrun_init(struct jobrun *jr, const struct policy *pol, int argc, char **argv,
    const struct jobrun_overrides *ov)
{
	int e;

	memset(jr, 0, sizeof(*jr));
	jr->tty_fd = -1;
	jr->stage_fd = -1;
	staged_init(&jr->staged);
	jr->commit = pol->commit;
	jr->writeback = &pol->writeback;
	jr->feed = NULL;
	if ((e = jobspec_from_policy(&jr->spec, pol, argc, argv)) < 0)
		return e;
	jr->spec.layers_off = policy_layers_off(pol);
	if (job_spec_layer_off(&jr->spec, JOB_LAYER_SCRUBBED_ENV) &&
	    ((e = jobrun_inherit_environment(&jr->spec)) < 0 ||
		(e = check_fits(&jr->spec)) < 0)) {
		jobrun_free(jr);
		return e;
	}
	jr->limits = pol->limits;
	if (ov != NULL) {
		struct job_limits *l = &jr->limits;

		l->wall_ms = ov->wall_ms ? ov->wall_ms : l->wall_ms;
		l->cpu_ms = ov->cpu_ms ? ov->cpu_ms : l->cpu_ms;
		l->memory_bytes = ov->memory_bytes ? ov->memory_bytes
						   : l->memory_bytes;
		l->fsize_bytes = ov->fsize_bytes ? ov->fsize_bytes
						 : l->fsize_bytes;
		l->tmp_bytes = ov->tmp_bytes ? ov->tmp_bytes : l->tmp_bytes;
		l->nproc = ov->nproc ? ov->nproc : l->nproc;
		if (ov->output_bytes != 0) {
			l->stdout_bytes = l->stderr_bytes = ov->output_bytes;
		}
	}
	jr->spec.limits = jr->limits;
	if (capture_init(&jr->cap[1], jobrun_output_cap(jr, 1)) < 0 ||
	    capture_init(&jr->cap[2], jobrun_output_cap(jr, 2)) < 0) {
		jobrun_free(jr);
		return -ENOMEM;
	}
	return 0;
}

size_t
jobrun_output_cap(const struct jobrun *jr, int stream)
{
	if (job_spec_layer_off(&jr->spec, JOB_LAYER_LIMITS))
		return SIZE_MAX;
	return stream == 1 ? (size_t)jr->limits.stdout_bytes
			   : (size_t)jr->limits.stderr_bytes;
}

int
jobrun_shrink_captures(struct jobrun *jr, size_t cap)
{
	for (int i = 1; i <= 2; i++) {
		capture_free(&jr->cap[i]);
		if (capture_init(&jr->cap[i], cap) < 0)
			return -ENOMEM;
	}
	return 0;
}

char *
jobrun_spec_error(int e, char *buf, size_t len)
{
	if (e == -E2BIG)
		snprintf(buf, len,
		    "the command line is too long: at most %u "
		    "arguments of at most %u bytes each",
		    JOB_MAX_ARGS, JOB_MAX_STR);
	else if (e == -EMSGSIZE)
		snprintf(buf, len,
		    "the command line is too long: with the "
		    "policy's environment and mounts it must fit in %u "
		    "bytes",
		    PROTO_MAX_BODY);
	else if (e == -EINVAL)
		snprintf(buf, len, "the program name is empty");
	else if (e == -EOVERFLOW)
		snprintf(buf, len,
		    "with layer scrubbed_env off the job gets "
		    "stockade's whole environment, which must hold at "
		    "most %u variables (the policy's included) of at most "
		    "%u bytes each",
		    JOB_MAX_ENV, JOB_MAX_STR);
	else
		snprintf(buf, len, "cannot build the job: %s", strerror(-e));
	return buf;
}

static void
on_output(void *arg, int stream, const uint8_t *data, size_t len)
{
	struct jobrun *jr = arg;

	if (stream != 1 && stream != 2)
		return;
	capture_add(&jr->cap[stream], data, len);
	if (jr->tee != NULL)
		jr->tee(jr->tee_arg, stream, data, len);
}

/* The bytes a job may add to FS before the workspace quota is reached:
 * 0 when it is full or cannot be counted (fail closed). */
static uint64_t
workspace_allowance(struct fs_ctx *fs)
{
	if (!fs->usage_valid && fsapi_usage(fs) < 0)
		return 0;
	if (fs->used_entries > fs->quota.max_files ||
	    fs->used_bytes >= fs->quota.workspace_bytes)
		return 0;
	return fs->quota.workspace_bytes - fs->used_bytes;
}

void
jobrun_restatus(struct jobrun *jr, enum job_status s, const char *why)
{
	char *d = strdup(why);

	if (d == NULL)
		return;
	free(jr->res.detail);
	jr->res.detail = d;
	jr->res.status = s;
}

/* Runs JR's job on SUP (its input JR's feed or terminal, its workspace
 * FS's root) with CANCEL armed, once more on a new launcher when the one
 * it went to died before reading it. Returns supervisor_run's answer. */
static int
run_job(struct jobrun *jr, struct supervisor *sup, struct fs_ctx *fs)
{
	int e;

	sup->tty_fd = jr->feed != NULL ? -1 : jr->tty_fd;
	sup->feed = jr->feed;
	jobrun_net_arm(jr, sup);
	jobrun_stage_arm(jr, sup);
	e = supervisor_run(sup, &jr->spec, fs->root, on_output, jr, &jr->res);
	/* The launcher died before it read the job (killed between
	 * jobs, just as this one came): nothing of it ran, so it
	 * runs once more on a new launcher, with CANCEL armed for
	 * that one. Not after a CANCEL: the message the launcher
	 * left unread may be the CANCEL of a job it did read. */
	if (e == 0 && sup->run_unread && !interrupted &&
	    !atomic_load(&cancel_requested) &&
	    (jr->feed == NULL || stdin_feed_restartable(jr->feed))) {
		disarm_cancel();
		job_result_clear(&jr->res);
		memset(&jr->res, 0, sizeof(jr->res));
		if ((e = supervisor_start(sup)) == 0) {
			(void)arm_cancel(sup);
			e = supervisor_run(sup, &jr->spec, fs->root, on_output,
			    jr, &jr->res);
		}
	}
	jobrun_net_end(jr, sup);
	jobrun_stage_end(sup);
	sup->tty_fd = -1;
	sup->feed = NULL;
	return e;
}

/* Makes JR's result the sandbox_error of a job that did not start: E, a
 * negative errno, says why (-ETIMEDOUT, -EINTR, -EPROTO, -E2BIG, ...). */
static void
set_start_failure(struct jobrun *jr, int e)
{
	char err[256];

	memset(&jr->res, 0, sizeof(jr->res));
	jr->res.status = JOB_SANDBOX_ERROR;
	jr->res.exit_code = -1;
	if (e == -ETIMEDOUT)
		snprintf(err, sizeof(err),
		    "cannot start the launcher: "
		    "it did not answer within %u ms",
		    SUPERVISOR_HELLO_MS);
	else if (e == -EINTR)
		snprintf(err, sizeof(err),
		    "the broker was interrupted "
		    "before the job started");
	else if (e == -EPROTO)
		snprintf(err, sizeof(err),
		    "cannot start the launcher: "
		    "its answer to HELLO broke protocol version "
		    "%u (a stockade-launcher of another version?)",
		    PROTO_VERSION);
	else
		snprintf(err, sizeof(err), "cannot start the launcher: %s",
		    e == -E2BIG ? "the job does not fit in one message"
				: strerror(-e));
	jr->res.detail = strdup(err);
}

int
jobrun_exec(struct jobrun *jr, struct supervisor *sup, struct fs_ctx *fs,
    bool catch_signals)
{
	char err[256];
	int e;

	job_result_clear(&jr->res);
	memset(&jr->res, 0, sizeof(jr->res));
	if (!job_spec_staged(&jr->spec))
		jr->spec.workspace_allow = workspace_allowance(fs);
	else
		jobrun_stage_size(jr, fs, &jr->spec.workspace_allow,
		    &jr->spec.stage_files);
	if (!catch_signals && interrupted)
		e = -EINTR;
	else if (jr->start_error < 0)
		e = jr->start_error;
	else
		e = supervisor_start(sup);
	if (e == 0) {
		(void)arm_cancel(sup);
		if (catch_signals)
			jobrun_catch_signals();
		else if (interrupted)
			/* Caught between the check above and the arming:
			 * the job is cancelled as soon as it starts. */
			on_signal(interrupted);
		e = run_job(jr, sup, fs);
		disarm_cancel();
		/* The reason every CANCEL of this job carried (the first
		 * request's), for `stockade run`'s exit status. */
		if (e == 0 && jr->res.status == JOB_CANCELLED)
			jr->res.cancel_reason = (uint32_t)atomic_load(
			    &cancel_requested);
		if (catch_signals)
			jobrun_default_signals();
		if (jr->stage_fd >= 0)
			jobrun_settle(jr, fs);
		else
			fs->usage_valid = false;
		if (e == 0)
			jobrun_refine_status(jr, fs);
		/* Its input cut short by a read error: never ok (jobrun.h). */
		if (e == 0 && jr->feed != NULL && jr->feed->error != 0 &&
		    jr->res.status != JOB_SANDBOX_ERROR) {
			snprintf(err, sizeof(err),
			    "stockade could not read the "
			    "job's standard input: %s (the program got "
			    "only the first %llu bytes)",
			    strerror(jr->feed->error),
			    (unsigned long long)jr->feed->sent);
			jobrun_restatus(jr, JOB_SANDBOX_ERROR, err);
		}
	}
	if (e < 0)
		set_start_failure(jr, e);
	jr->res.layers_off = job_spec_layers_off(&jr->spec);
	return e;
}

void
jobrun_free(struct jobrun *jr)
{
	job_result_clear(&jr->res);
	capture_free(&jr->cap[1]);
	capture_free(&jr->cap[2]);
	job_spec_clear(&jr->spec);
	egress_job_clear(&jr->net);
	free(jr->net_report);
	if (jr->stage_fd >= 0)
		close(jr->stage_fd);
	staged_free(&jr->staged);
	memset(jr, 0, sizeof(*jr));
	jr->tty_fd = -1;
	jr->stage_fd = -1;
	staged_init(&jr->staged);
}
