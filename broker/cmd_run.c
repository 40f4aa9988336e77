/*
 * cmd_run.c: `stockade run [options] -- PROGRAM [ARGS...]`.
 *
 * Loads the policy, refuses if the kernel lacks user namespaces, opens or
 * makes the workspace, starts the launcher, runs one job and reports it:
 * by default the program's output streams through and one summary line
 * goes to stderr; with --json nothing streams and exactly one JSON object
 * goes to stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "capture.h"
#include "commands.h"
#include "fsutil.h"
#include "jobspec.h"
#include "log.h"
#include "preflight.h"
#include "result_json.h"
#include "supervisor.h"
#include "utf8.h"
#include "workspace.h"

/*
 * Interruption: SIGINT, SIGTERM or SIGHUP while the job runs sends CANCEL
 * (encoded beforehand; sendmsg is async-signal-safe) so the launcher kills
 * the jail and answers with the job's RESULT; the broker then cleans up and
 * exits 128+N. A second signal kills the broker at once (SA_RESETHAND),
 * and the launcher and its jail die with it (PR_SET_PDEATHSIG). These are
 * the only file-scope variables: a signal handler can reach nothing else.
 */
static volatile sig_atomic_t interrupted;
static int cancel_sock = -1;
static uint8_t cancel_msg[64];
static size_t cancel_len;

static void
on_signal(int sig)
{
	int saved = errno;

	interrupted = sig;
	if (cancel_sock >= 0)
		(void)send(cancel_sock, cancel_msg, cancel_len,
			   MSG_NOSIGNAL | MSG_DONTWAIT);
	errno = saved;
}

static void
arm_cancel(const struct supervisor *sup)
{
	struct sigaction sa;
	int n = proto_encode_cancel(cancel_msg, sizeof(cancel_msg),
				    sup->next_job_id);

	if (n < 0)
		return;
	cancel_len = (size_t)n;
	cancel_sock = sup->sock;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void
disarm_cancel(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	cancel_sock = -1;
}

struct run_output {
	bool stream;            /* pass output through as it arrives */
	bool closed[3];         /* our stdout/stderr went away (EPIPE...) */
	bool tty[3];            /* that stream of ours is a terminal */
	struct capture cap[3];  /* [1] stdout, [2] stderr */
};

static void
on_output(void *arg, int stream, const uint8_t *data, size_t len)
{
	struct run_output *o = arg;

	capture_add(&o->cap[stream], data, len);
	if (!o->stream || o->closed[stream])
		return;
	/* On a terminal, the job's control sequences are shown, not obeyed
	 * (term_escape): no OSC 52 clipboard writes, no forged replies. */
	if (o->tty[stream]) {
		char buf[4 * PROTO_OUTPUT_CHUNK];
		size_t n;

		if (len > PROTO_OUTPUT_CHUNK)
			len = PROTO_OUTPUT_CHUNK;
		n = term_escape(data, len, buf);
		if (write_all(stream, buf, n) < 0)
			o->closed[stream] = true;
		return;
	}
	/* A reader that went away (SIGPIPE is ignored in main) stops the
	 * pass-through of that stream, not the job or its clean-up. */
	if (write_all(stream, data, len) < 0)
		o->closed[stream] = true;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: stockade run [--policy FILE] [--workspace DIR] [--keep]\n"
		"                    [--timeout SECONDS] [--memory MB] [--json]\n"
		"                    -- PROGRAM [ARGS...]\n");
}

/* A positive decimal number of seconds (fractions allowed) into ms. */
static int
parse_seconds(const char *s, uint64_t *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0) ||
	    v > 86400.0)
		return -EINVAL;
	*ms = (uint64_t)ceil(v * 1000.0);
	return 0;
}

static int
parse_mb(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < 16 ||
	    v > 1048576)
		return -EINVAL;
	*bytes = (uint64_t)v << 20;
	return 0;
}

static void
print_summary(const struct job_result *r, const struct job_limits *lim)
{
	char hint[512];
	const char *sig = r->signal ? signal_name(r->signal) : NULL;

	fprintf(stderr, "stockade: %s", job_status_name(r->status));
	if (r->exit_code >= 0)
		fprintf(stderr, " (exit %d)", r->exit_code);
	else if (sig != NULL)
		fprintf(stderr, " (%s)", sig);
	fprintf(stderr, ", wall %llu ms, cpu %llu ms, peak %llu KiB\n",
		(unsigned long long)r->wall_ms, (unsigned long long)r->cpu_ms,
		(unsigned long long)r->peak_memory_kb);
	if (r->status != JOB_OK) {
		/* The hint quotes the launcher's detail: valid UTF-8 only on
		 * a terminal (the decoder already refused control bytes). */
		char *text;

		job_hint(r, lim, hint, sizeof(hint));
		text = utf8_sanitize(hint, strlen(hint), NULL);
		if (text != NULL)
			fprintf(stderr, "stockade: hint: %s\n", text);
		free(text);
	}
}

int
cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"workspace", required_argument, NULL, 'w'},
		{"keep", no_argument, NULL, 'k'},
		{"timeout", required_argument, NULL, 't'},
		{"memory", required_argument, NULL, 'm'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *policy_file = NULL, *workspace = NULL;
	const char *timeout = NULL, *memory = NULL;
	bool keep = false, json = false;
	struct policy pol;
	struct workspace ws;
	struct supervisor sup;
	struct job_spec spec;
	struct job_result res;
	struct run_output out;
	char err[POLICY_ERR_MAX + 256];
	int c, rc, e;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': policy_file = optarg; break;
		case 'w': workspace = optarg; break;
		case 'k': keep = true; break;
		case 't': timeout = optarg; break;
		case 'm': memory = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}

	memset(&pol, 0, sizeof(pol));
	if ((rc = load_policy_or_complain(&pol, policy_file)) != 0)
		return rc;
	if (timeout != NULL && parse_seconds(timeout, &pol.limits.wall_ms) < 0) {
		log_error("--timeout: expected seconds between 0.001 and 86400, "
			  "got \"%s\"", timeout);
		policy_clear(&pol);
		return EXIT_USAGE;
	}
	if (memory != NULL &&
	    parse_mb(memory, &pol.limits.memory_bytes) < 0) {
		log_error("--memory: expected MiB between 16 and 1048576, got "
			  "\"%s\"", memory);
		policy_clear(&pol);
		return EXIT_USAGE;
	}

	/* The command line is checked against what RUN can carry before
	 * anything is made or started (jobspec.h). */
	if ((e = jobspec_from_policy(&spec, &pol, argc - optind,
				     argv + optind)) < 0) {
		if (e == -E2BIG)
			log_error("the command line is too long: at most %u "
				  "arguments of at most %u bytes each",
				  JOB_MAX_ARGS, JOB_MAX_STR);
		else if (e == -EMSGSIZE)
			log_error("the command line is too long: with the "
				  "policy's environment and mounts it must fit "
				  "in %u bytes", PROTO_MAX_BODY);
		else if (e == -EINVAL)
			log_error("the program name is empty");
		else
			log_error("cannot build the job: %s", strerror(-e));
		policy_clear(&pol);
		return e == -ENOMEM ? EXIT_SANDBOX : EXIT_USAGE;
	}
	if (preflight_userns(err, sizeof(err)) < 0) {
		log_error("refused: %s", err);
		jobspec_release(&spec);
		policy_clear(&pol);
		return EXIT_REFUSED;
	}
	if ((e = workspace_open(&ws, workspace, err, sizeof(err))) < 0) {
		/* No openat2: refuse, never fall back (style.md rule 18). */
		if (e == -ENOSYS)
			log_error("refused: %s", err);
		else
			log_error("%s", err);
		jobspec_release(&spec);
		policy_clear(&pol);
		return e == -ENOSYS ? EXIT_REFUSED : EXIT_USAGE;
	}
	if (supervisor_init(&sup, err, sizeof(err)) < 0) {
		log_error("%s", err);
		supervisor_free(&sup);
		rc = EXIT_SANDBOX;
		goto out_ws;
	}
	memset(&out, 0, sizeof(out));
	out.stream = !json;
	out.tty[1] = isatty(1) == 1;
	out.tty[2] = isatty(2) == 1;
	if (capture_init(&out.cap[1], pol.limits.stdout_bytes) < 0 ||
	    capture_init(&out.cap[2], pol.limits.stderr_bytes) < 0) {
		log_error("out of memory");
		rc = EXIT_SANDBOX;
		goto out_cap;
	}

	e = supervisor_start(&sup);
	if (e == 0) {
		arm_cancel(&sup);
		e = supervisor_run(&sup, &spec, ws.fd, on_output, &out, &res);
		disarm_cancel();
	}
	if (e < 0) {
		memset(&res, 0, sizeof(res));
		res.status = JOB_SANDBOX_ERROR;
		res.exit_code = -1;
		if (e == -ETIMEDOUT)
			snprintf(err, sizeof(err), "cannot start the launcher: "
				 "it did not answer within %u ms",
				 SUPERVISOR_HELLO_MS);
		else
			snprintf(err, sizeof(err), "cannot start the launcher: %s",
				 e == -E2BIG ? "the job does not fit in one message" :
					       strerror(-e));
		res.detail = strdup(err);
	}
	if (json) {
		json_t *o = result_to_json(&res, &pol.limits, &out.cap[1],
					   &out.cap[2]);

		if (o == NULL || json_dumpf(o, stdout, JSON_COMPACT) < 0) {
			log_error("cannot write the result");
			rc = EXIT_SANDBOX;
		} else {
			fputc('\n', stdout);
			rc = job_exit_status(&res);
		}
		json_decref(o);
	} else {
		print_summary(&res, &pol.limits);
		rc = job_exit_status(&res);
	}
	if (fflush(stdout) != 0)
		rc = EXIT_SANDBOX;
	if (interrupted)
		rc = 128 + interrupted;
	job_result_clear(&res);
out_cap:
	capture_free(&out.cap[1]);
	capture_free(&out.cap[2]);
	supervisor_free(&sup);
out_ws:
	if (ws.temporary && keep)
		fprintf(stderr, "stockade: workspace kept at %s\n", ws.path);
	if ((e = workspace_close(&ws, keep)) < 0)
		log_warn("could not remove the workspace %s: %s", ws.path,
			 strerror(-e));
	jobspec_release(&spec);
	policy_clear(&pol);
	return rc;
}
