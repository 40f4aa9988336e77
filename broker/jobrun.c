/* jobrun.c: see jobrun.h. */
#include "jobrun.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "jobspec.h"
#include "result_json.h"

/*
 * Interruption: SIGINT, SIGTERM or SIGHUP while a job runs sends CANCEL
 * (encoded beforehand; send is async-signal-safe) so the launcher kills
 * the jail and answers with the job's RESULT. A second signal kills the
 * broker at once (SA_RESETHAND), and the launcher and its jail die with
 * it (PR_SET_PDEATHSIG). These are the only file-scope variables: a
 * signal handler can reach nothing else. cancel_sock is set last when
 * arming and first when disarming, so the handler never sees a socket
 * with a half-written message.
 */
static volatile sig_atomic_t interrupted;
static volatile sig_atomic_t cancel_sock = -1;
static uint8_t cancel_msg[64];
static size_t cancel_len;

static void
on_signal(int sig)
{
	int saved = errno;
	int sock = cancel_sock;

	if (interrupted == 0)
		interrupted = sig;
	if (sock >= 0)
		(void)send(sock, cancel_msg, cancel_len,
			   MSG_NOSIGNAL | MSG_DONTWAIT);
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

/* Prepares CANCEL for the job SUP runs next; false when it cannot be
 * encoded (the job then runs without a way to cancel it). */
static bool
arm_cancel(const struct supervisor *sup)
{
	int n = proto_encode_cancel(cancel_msg, sizeof(cancel_msg),
				    sup->next_job_id);

	if (n < 0)
		return false;
	cancel_len = (size_t)n;
	cancel_sock = sup->sock;
	return true;
}

static void
disarm_cancel(void)
{
	cancel_sock = -1;
}

int
jobrun_init(struct jobrun *jr, const struct policy *pol, int argc,
	    char **argv, const struct jobrun_overrides *ov)
{
	int e;

	memset(jr, 0, sizeof(*jr));
	if ((e = jobspec_from_policy(&jr->spec, pol, argc, argv)) < 0)
		return e;
	jr->limits = pol->limits;
	if (ov != NULL && ov->wall_ms != 0)
		jr->limits.wall_ms = ov->wall_ms;
	if (ov != NULL && ov->memory_bytes != 0)
		jr->limits.memory_bytes = ov->memory_bytes;
	jr->spec.limits = jr->limits;
	if (capture_init(&jr->cap[1], jr->limits.stdout_bytes) < 0 ||
	    capture_init(&jr->cap[2], jr->limits.stderr_bytes) < 0) {
		jobrun_free(jr);
		return -ENOMEM;
	}
	return 0;
}

char *
jobrun_spec_error(int e, char *buf, size_t len)
{
	if (e == -E2BIG)
		snprintf(buf, len, "the command line is too long: at most %u "
			 "arguments of at most %u bytes each",
			 JOB_MAX_ARGS, JOB_MAX_STR);
	else if (e == -EMSGSIZE)
		snprintf(buf, len, "the command line is too long: with the "
			 "policy's environment and mounts it must fit in %u "
			 "bytes", PROTO_MAX_BODY);
	else if (e == -EINVAL)
		snprintf(buf, len, "the program name is empty");
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

int
jobrun_exec(struct jobrun *jr, struct supervisor *sup, int wsfd,
	    bool catch_signals)
{
	char err[256];
	int e;

	job_result_clear(&jr->res);
	memset(&jr->res, 0, sizeof(jr->res));
	if (!catch_signals && interrupted)
		e = -EINTR;
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
		e = supervisor_run(sup, &jr->spec, wsfd, on_output, jr,
				   &jr->res);
		disarm_cancel();
		if (catch_signals)
			jobrun_default_signals();
	}
	if (e < 0) {
		memset(&jr->res, 0, sizeof(jr->res));
		jr->res.status = JOB_SANDBOX_ERROR;
		jr->res.exit_code = -1;
		if (e == -ETIMEDOUT)
			snprintf(err, sizeof(err), "cannot start the launcher: "
				 "it did not answer within %u ms",
				 SUPERVISOR_HELLO_MS);
		else if (e == -EINTR)
			snprintf(err, sizeof(err), "the broker was interrupted "
				 "before the job started");
		else
			snprintf(err, sizeof(err), "cannot start the launcher: %s",
				 e == -E2BIG ? "the job does not fit in one message" :
					       strerror(-e));
		jr->res.detail = strdup(err);
	}
	return e;
}

json_t *
jobrun_result_json(const struct jobrun *jr)
{
	return result_to_json(&jr->res, &jr->limits, &jr->cap[1], &jr->cap[2]);
}

void
jobrun_free(struct jobrun *jr)
{
	job_result_clear(&jr->res);
	capture_free(&jr->cap[1]);
	capture_free(&jr->cap[2]);
	jobspec_release(&jr->spec);
	memset(jr, 0, sizeof(*jr));
}
