/*
 * cmd_mcp.c: `stockade mcp [--workspace DIR] [--keep] [--policy FILE]`,
 * the stdio transport of the Model Context Protocol server (mcp.h,
 * docs/mcp.md; MCP "Transports": stdio, one JSON-RPC message per line,
 * nothing else on stdout).
 *
 * Two threads. The reader owns standard input: it splits lines, answers
 * `ping` at once, acts on `notifications/cancelled` at once (a running
 * job is cancelled through jobrun_cancel; a request still queued is
 * dropped), sends the progress of a running job every second, and
 * queues everything else. The main thread handles the queue in order,
 * one request at a time, on the serve session (rpc.h), so requests are
 * carried out in the order they came. Both write whole lines to stdout
 * under one lock. The reader and the writes are in mcp_stdio.c; this
 * file is the command, the session's hooks and the main thread.
 *
 * The reader is started after the broker has confined itself (Landlock
 * and seccomp apply to the threads a thread makes afterwards), with
 * SIGINT, SIGTERM and SIGHUP blocked: they reach the main thread, whose
 * handler (jobrun.h) cancels a running job; the session then ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/landlock.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "doctor.h"
#include "fsapi.h"
#include "fsutil.h"
#include "jobrun.h"
#include "log.h"
#include "mcp.h"
#include "mcp_stdio.h"
#include "preflight.h"
#include "rpc.h"
#include "spawner.h"
#include "supervisor.h"
#include "workspace.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: stockade mcp [--workspace DIR] [--keep] "
	    "[--policy FILE]\n"
	    "A Model Context Protocol server on standard input and "
	    "output (docs/mcp.md):\none session, one workspace "
	    "(without --workspace a fresh private directory,\nremoved "
	    "at exit unless --keep). Diagnostics go to standard "
	    "error.\n");
}

/* ---- hooks of the session (main thread) ---- */

static void
hook_notify(void *arg, json_t *msg)
{
	mcp_stdio_write(arg, msg);
}

static void
hook_job_begin(void *arg, json_t *token, uint64_t limit_ms)
{
	struct mcp_stdio *sv = arg;

	pthread_mutex_lock(&sv->mu);
	json_decref(sv->token);
	sv->token = token != NULL ? json_deep_copy(token) : NULL;
	sv->job_start_ms = sv->last_tick_ms = spawner_now_ms();
	sv->job_limit_ms = limit_ms;
	pthread_mutex_unlock(&sv->mu);
	if (token != NULL)
		mcp_stdio_wake(sv);
}

static void
hook_job_end(void *arg)
{
	struct mcp_stdio *sv = arg;

	pthread_mutex_lock(&sv->mu);
	json_decref(sv->token);
	sv->token = NULL;
	pthread_mutex_unlock(&sv->mu);
}

static bool
hook_cancelled(void *arg)
{
	struct mcp_stdio *sv = arg;
	bool c;

	pthread_mutex_lock(&sv->mu);
	c = sv->cancelled;
	pthread_mutex_unlock(&sv->mu);
	return c;
}

/* ---- the main thread ---- */

/* Says on standard error that the request RESP answers was cancelled
 * and not answered, with its job's status and figures when it ran one
 * (structuredContent: the result object). */
static void
log_cancelled(json_t *resp)
{
	json_t *r = json_object_get(json_object_get(resp, "result"),
	    "structuredContent");
	json_t *st = json_object_get(r, "status");
	char *id = json_dumps(json_object_get(resp, "id"),
	    JSON_ENCODE_ANY | JSON_COMPACT);

	if (json_is_string(st))
		log_warn("mcp: request %s cancelled by the client, not "
			 "answered: its job ended %s after %lld ms (%lld ms "
			 "of CPU, %lld KiB at most)",
		    id != NULL ? id : "?", json_string_value(st),
		    (long long)json_integer_value(
			json_object_get(r, "wall_ms")),
		    (long long)json_integer_value(json_object_get(r, "cpu_ms")),
		    (long long)json_integer_value(
			json_object_get(r, "peak_memory_kb")));
	else
		log_warn("mcp: request %s cancelled by the client, not "
			 "answered",
		    id != NULL ? id : "?");
	free(id);
}

/* Handles the queue until input ends and the queue is empty, a signal
 * came, or the session broke. */
static void
serve_queue(struct mcp_stdio *sv)
{
	for (;;) {
		struct queued *q;
		json_t *resp;
		bool drop;

		pthread_mutex_lock(&sv->mu);
		while (sv->head == NULL && !sv->eof && !sv->broken &&
		    !jobrun_interrupted()) {
			struct timespec ts;

			/* A signal does not wake a condition wait for sure:
			 * look at the flag every 200 ms. */
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 200 * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&sv->cv, &sv->mu, &ts);
		}
		q = sv->head;
		if (q == NULL || sv->broken || jobrun_interrupted()) {
			pthread_mutex_unlock(&sv->mu);
			return;
		}
		sv->head = q->next;
		if (sv->head == NULL)
			sv->tail = NULL;
		jobrun_cancel_reset();
		sv->cancelled = false;
		sv->current = json_incref(json_object_get(q->msg, "id"));
		pthread_mutex_unlock(&sv->mu);

		resp = mcp_handle(&sv->mcp, q->msg);

		pthread_mutex_lock(&sv->mu);
		drop = sv->cancelled;
		json_decref(sv->current);
		sv->current = NULL;
		pthread_mutex_unlock(&sv->mu);
		/* A cancelled request is not answered (MCP "Cancellation");
		 * what became of its job is said on standard error. */
		if (resp != NULL && !drop)
			mcp_stdio_write(sv, resp);
		else if (resp != NULL)
			log_cancelled(resp);
		json_decref(resp);
		json_decref(q->msg);
		free(q);
	}
}

static void
server_free(struct mcp_stdio *sv)
{
	struct queued *q;

	while ((q = sv->head) != NULL) {
		sv->head = q->next;
		json_decref(q->msg);
		free(q);
	}
	json_decref(sv->token);
	close_fdp(&sv->wake[0]);
	close_fdp(&sv->wake[1]);
	pthread_mutex_destroy(&sv->mu);
	pthread_mutex_destroy(&sv->out_mu);
	pthread_cond_destroy(&sv->cv);
}

/* Serves the session on standard input and output after the broker is
 * confined, its jobs' network through PX (borrowed; NULL: none), its
 * checkpoints in CD (checkpoint.h; the session's from here, CD cleared).
 * Returns the exit status. */
static int
run_session(struct mcp_stdio *sv, const struct policy *pol, int root,
    struct supervisor *sup, struct egress_proxy *px, struct ckpt_dir *cd)
{
	const struct mcp_hooks hooks = {
	    .notify = hook_notify,
	    .job_begin = hook_job_begin,
	    .job_end = hook_job_end,
	    .cancelled = hook_cancelled,
	    .arg = sv,
	};
	sigset_t block, old;
	struct stat st;
	pthread_t th;
	bool broken;
	int e;

	/* A write_file or stdin of the policy's inline limit must fit in
	 * one line: JSON escapes a control byte in six ("\u001b"). */
	sv->max_line = pol->files.inline_bytes * 6 + (1u << 20);
	sv->max_line = sv->max_line < RPC_MAX_LINE ? RPC_MAX_LINE
						   : sv->max_line;
	/* Standard output's kind, asked once (mcp_stdio.c writes by it). */
	sv->out_kind = fstat(STDOUT_FILENO, &st) == 0
	    ? (unsigned)(st.st_mode & S_IFMT)
	    : 0;
	rpc_session_init(&sv->rpc, root, pol, sup);
	rpc_session_take_ckpt_dir(&sv->rpc, cd);
	sv->rpc.proxy = px;
	if (mcp_session_init(&sv->mcp, &sv->rpc, pol, &hooks) < 0) {
		log_error("mcp: out of memory");
		rpc_session_free(&sv->rpc);
		return EXIT_SANDBOX;
	}
	/* The reader inherits a mask that blocks the signals; the main
	 * thread lets them in (jobrun's handler, without SA_RESTART). */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	e = pthread_create(&th, NULL, mcp_stdio_reader, sv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		log_error("mcp: cannot start the reader thread: %s",
		    strerror(e));
		mcp_session_free(&sv->mcp);
		rpc_session_free(&sv->rpc);
		return EXIT_SANDBOX;
	}
	serve_queue(sv);
	pthread_mutex_lock(&sv->mu);
	sv->stop = true;
	broken = sv->broken;
	pthread_mutex_unlock(&sv->mu);
	mcp_stdio_wake(sv);
	pthread_join(th, NULL);
	mcp_session_free(&sv->mcp);
	rpc_session_free(&sv->rpc);
	return broken ? 1 : 0;
}

/* As `stockade serve`: launchers come from a spawner, and the broker
 * confines itself to the workspace WS (and, for a temporary one, the
 * removal of it at the end) before it reads a message. Returns 0 or an
 * exit status (session_confine). */
static int
mcp_confine(struct supervisor *sup, const struct workspace *ws,
    const struct ckpt_dir *cd)
{
	struct confine_rule rules[4] = {{.fd = ws->fd, .access = CONFINE_ALL}};
	size_t n = 1;

	if (ws->temporary)
		rules[n++] = (struct confine_rule){ws->parent_fd,
		    LANDLOCK_ACCESS_FS_REMOVE_DIR};
	/* The checkpoint store, as serve.c's. */
	if (cd->fd >= 0) {
		rules[n++] = (struct confine_rule){cd->fd, CONFINE_ALL};
		rules[n++] = (struct confine_rule){cd->parent_fd,
		    LANDLOCK_ACCESS_FS_REMOVE_DIR};
	}
	return session_confine(sup, rules, n);
}

int
cmd_mcp(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"workspace", required_argument, NULL, 'w'},
	    {"keep", no_argument, NULL, 'k'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *policy_file = NULL, *workspace = NULL;
	struct mcp_stdio sv;
	struct policy pol;
	struct workspace ws;
	struct ckpt_dir cd = {-1, -1, ""};
	struct supervisor sup;
	struct egress_proxy px;
	bool keep = false;
	int c, rc, e;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy_file = optarg;
			break;
		case 'w':
			workspace = optarg;
			break;
		case 'k':
			keep = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((rc = session_prepare("mcp", policy_file, workspace, &pol, &ws,
		 &sup, &px)) != 0)
		return rc;
	if (ws.temporary)
		fprintf(stderr, "stockade: mcp: workspace %s (%s at exit)\n",
		    ws.path, keep ? "kept" : "removed");
	memset(&sv, 0, sizeof(sv));
	sv.wake[0] = sv.wake[1] = -1;
	pthread_mutex_init(&sv.mu, NULL);
	pthread_mutex_init(&sv.out_mu, NULL);
	pthread_cond_init(&sv.cv, NULL);
	if (pipe2(sv.wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		log_error("mcp: pipe: %s", strerror(errno));
		rc = EXIT_SANDBOX;
		goto out;
	}
	session_ckpt_dir(&pol, &cd);
	if ((rc = mcp_confine(&sup, &ws, &cd)) != 0)
		goto out;
	jobrun_catch_signals();
	/* A transfer blocked on a descriptor stops at a signal (fsapi.h). */
	fsapi_set_interrupted(jobrun_interrupted);
	rc = run_session(&sv, &pol, ws.fd, &sup,
	    policy_has_network(&pol) ? &px : NULL, &cd);
	/* One more signal now must not cut the clean-up short. */
	session_block_end_signals(NULL);
out:
	ckpt_dir_remove(&cd);
	supervisor_free(&sup);
	egress_proxy_stop(&px);
	server_free(&sv);
	if ((e = workspace_close(&ws, keep)) < 0)
		log_warn("could not close the workspace %s: %s", ws.path,
		    strerror(-e));
	policy_clear(&pol);
	return rc;
}
