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
 * under one lock.
 *
 * The reader is started after the broker has confined itself (Landlock
 * and seccomp apply to the threads a thread makes afterwards), with
 * SIGINT, SIGTERM and SIGHUP blocked: they reach the main thread, whose
 * handler (jobrun.h) cancels a running job; the session then ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/landlock.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
#include "preflight.h"
#include "rpc.h"
#include "spawner.h"
#include "supervisor.h"
#include "workspace.h"

#define READ_CHUNK (64u << 10)
/* A running job's progress, every this many milliseconds. */
#define TICK_MS 1000u

struct queued {
	struct queued *next;
	json_t *msg;
};

struct server {
	pthread_mutex_t mu;     /* everything below but out_mu's */
	pthread_cond_t cv;      /* the queue grew, or input ended */
	struct queued *head, *tail;
	bool eof;               /* standard input ended (or broke) */
	bool broken;            /* a line over max_line, or output failed */
	size_t max_line;        /* the longest line, bytes (run_session) */
	bool stop;              /* the reader is to return */
	json_t *current;        /* id of the request being handled (owned) */
	bool cancelled;         /* ... and the client cancelled it */
	json_t *token;          /* the running job's progress token (owned) */
	uint64_t job_start_ms, job_limit_ms, last_tick_ms;
	int wake[2];            /* wakes the reader (job start, stop) */
	pthread_mutex_t out_mu; /* one line at a time on stdout */
	struct rpc_session rpc;
	struct mcp_session mcp;
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: stockade mcp [--workspace DIR] [--keep] "
		   "[--policy FILE]\n"
		   "A Model Context Protocol server on standard input and "
		   "output (docs/mcp.md):\none session, one workspace "
		   "(without --workspace a fresh private directory,\nremoved "
		   "at exit unless --keep). Diagnostics go to standard "
		   "error.\n");
}

static uint64_t
now_ms(void)
{
	return spawner_now_ms();
}

/* Should a write that cannot go on give up: a signal came, or the
 * session is ending? */
static bool
giving_up(struct server *sv)
{
	bool stop;

	if (jobrun_interrupted())
		return true;
	pthread_mutex_lock(&sv->mu);
	stop = sv->stop;
	pthread_mutex_unlock(&sv->mu);
	return stop;
}

/*
 * Writes BUF (LEN bytes) to standard output without ever blocking
 * beyond a poll that looks at giving_up every 200 ms: a client that no
 * longer reads must not keep the server from a signal or from its end.
 * A socket is written with MSG_DONTWAIT; a pipe in PIPE_BUF pieces once
 * poll says there is room for one (pipe(7)); anything else (a file, a
 * terminal) as it comes. Returns 0, -EINTR when it gave up, or a
 * negative errno.
 */
static int
write_out(struct server *sv, const char *buf, size_t len)
{
	struct stat st;
	bool sock = false, pipe_ = false;
	ssize_t n;

	if (fstat(STDOUT_FILENO, &st) == 0) {
		sock = S_ISSOCK(st.st_mode);
		pipe_ = S_ISFIFO(st.st_mode);
	}
	while (len > 0) {
		struct pollfd p = {.fd = STDOUT_FILENO, .events = POLLOUT};
		int r = poll(&p, 1, 200);

		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0) {
			if (giving_up(sv))
				return -EINTR;
			continue;
		}
		if (sock)
			n = send(STDOUT_FILENO, buf, len,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			n = write(STDOUT_FILENO, buf,
				  pipe_ && len > PIPE_BUF ? PIPE_BUF : len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (giving_up(sv))
				return -EINTR;
			continue;
		}
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes MSG as one line. A failure marks the session broken and
 * cancels a running job: nobody will read its result. Giving up at a
 * signal or at the session's end is not a failure of the client. */
static void
out_write(struct server *sv, json_t *msg)
{
	char *line = json_dumps(msg, JSON_COMPACT);
	size_t n;
	int e;

	if (line == NULL) {
		log_error("mcp: out of memory writing a message");
		return;
	}
	n = strlen(line);
	line[n] = '\n'; /* over the NUL; written by length */
	pthread_mutex_lock(&sv->out_mu);
	e = write_out(sv, line, n + 1);
	pthread_mutex_unlock(&sv->out_mu);
	free(line);
	if (e < 0 && e != -EINTR) {
		pthread_mutex_lock(&sv->mu);
		if (!sv->broken)
			log_error("mcp: cannot write to standard output: %s",
				  strerror(-e));
		sv->broken = true;
		jobrun_cancel();
		pthread_cond_signal(&sv->cv);
		pthread_mutex_unlock(&sv->mu);
	}
}

static void
out_error(struct server *sv, json_t *id, int code, const char *message)
{
	json_t *r = json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
			      id != NULL ? id : json_null(), "error", "code",
			      code, "message", message);

	if (r != NULL)
		out_write(sv, r);
	json_decref(r);
}

static void
wake_reader(struct server *sv)
{
	(void)!write(sv->wake[1], "w", 1);
}

/* ---- hooks of the session (main thread) ---- */

static void
hook_notify(void *arg, json_t *msg)
{
	out_write(arg, msg);
}

static void
hook_job_begin(void *arg, json_t *token, uint64_t limit_ms)
{
	struct server *sv = arg;

	pthread_mutex_lock(&sv->mu);
	json_decref(sv->token);
	sv->token = token != NULL ? json_deep_copy(token) : NULL;
	sv->job_start_ms = sv->last_tick_ms = now_ms();
	sv->job_limit_ms = limit_ms;
	pthread_mutex_unlock(&sv->mu);
	if (token != NULL)
		wake_reader(sv);
}

static void
hook_job_end(void *arg)
{
	struct server *sv = arg;

	pthread_mutex_lock(&sv->mu);
	json_decref(sv->token);
	sv->token = NULL;
	pthread_mutex_unlock(&sv->mu);
}

static bool
hook_cancelled(void *arg)
{
	struct server *sv = arg;
	bool c;

	pthread_mutex_lock(&sv->mu);
	c = sv->cancelled;
	pthread_mutex_unlock(&sv->mu);
	return c;
}

/* ---- the reader thread ---- */

/* notifications/cancelled for REQUEST_ID: the request being handled is
 * cancelled (its job killed, its answer dropped); one still queued is
 * dropped; anything else is ignored (MCP "Cancellation": it may have
 * been answered already, or never have existed). */
static void
cancel(struct server *sv, json_t *request_id)
{
	struct queued **q, *dead;

	if (request_id == NULL)
		return;
	pthread_mutex_lock(&sv->mu);
	if (sv->current != NULL && json_equal(sv->current, request_id)) {
		sv->cancelled = true;
		/* Under the lock: the cancellation cannot reach the job of
		 * the request after this one. */
		jobrun_cancel();
	}
	for (q = &sv->head; *q != NULL; q = &(*q)->next) {
		json_t *m = (*q)->msg, *method = json_object_get(m, "method");

		if (!json_equal(json_object_get(m, "id"), request_id) ||
		    (json_is_string(method) &&
		     strcmp(json_string_value(method), "initialize") == 0))
			continue;
		dead = *q;
		*q = dead->next;
		if (sv->tail == dead) {
			sv->tail = NULL;
			for (struct queued *t = sv->head; t != NULL; t = t->next)
				sv->tail = t;
		}
		json_decref(dead->msg);
		free(dead);
		break;
	}
	pthread_mutex_unlock(&sv->mu);
}

/* One complete line from the client. */
static void
take_line(struct server *sv, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg, *method, *id;
	struct queued *q;
	char text[200];

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return;
	/* Duplicate keys refused, as in `stockade serve`: two readers of a
	 * message must never disagree about what it says. */
	/* NUL is allowed in strings, so that a path or content holding
	 * one is refused by the tool, by name, like every other bad
	 * argument. */
	msg = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY |
				    JSON_ALLOW_NUL, &jerr);
	if (msg == NULL) {
		snprintf(text, sizeof(text), "parse error: %s (column %d)",
			 jerr.text, jerr.column);
		out_error(sv, NULL, -32700, text);
		return;
	}
	method = json_object_get(msg, "method");
	id = json_object_get(msg, "id");
	if (json_is_string(method) && id == NULL &&
	    strcmp(json_string_value(method), "notifications/cancelled") == 0) {
		cancel(sv, json_object_get(json_object_get(msg, "params"),
					   "requestId"));
		json_decref(msg);
		return;
	}
	if (json_is_string(method) && (json_is_string(id) ||
					json_is_integer(id)) &&
	    strcmp(json_string_value(method), "ping") == 0 &&
	    json_is_string(json_object_get(msg, "jsonrpc")) &&
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")),
		   "2.0") == 0) {
		/* Answered at once, even while a job runs (MCP "Ping"). */
		json_t *r = json_pack("{s:s,s:O,s:{}}", "jsonrpc", "2.0", "id",
				      id, "result");

		if (r != NULL)
			out_write(sv, r);
		json_decref(r);
		json_decref(msg);
		return;
	}
	if ((q = calloc(1, sizeof(*q))) == NULL) {
		json_decref(msg);
		out_error(sv, id, -32603, "out of memory");
		return;
	}
	q->msg = msg;
	pthread_mutex_lock(&sv->mu);
	if (sv->tail != NULL)
		sv->tail->next = q;
	else
		sv->head = q;
	sv->tail = q;
	pthread_cond_signal(&sv->cv);
	pthread_mutex_unlock(&sv->mu);
}

/* Sends the running job's progress when a tick is due; returns the poll
 * timeout until the next one (-1: no job with a progress token). */
static int
tick(struct server *sv)
{
	uint64_t t, elapsed;
	json_t *n = NULL;
	char msg[96];
	int timeout = -1;

	pthread_mutex_lock(&sv->mu);
	/* Read under the lock: hook_job_begin sets last_tick_ms under it,
	 * so it is never after T. */
	t = now_ms();
	if (sv->token != NULL) {
		if (t - sv->last_tick_ms >= TICK_MS) {
			elapsed = t - sv->job_start_ms;
			snprintf(msg, sizeof(msg), "running: %.1f s of %.1f s",
				 (double)elapsed / 1000.0,
				 (double)sv->job_limit_ms / 1000.0);
			n = json_pack("{s:s,s:s,s:{s:O,s:f,s:f,s:s}}",
				      "jsonrpc", "2.0", "method",
				      "notifications/progress", "params",
				      "progressToken", sv->token, "progress",
				      (double)elapsed / 1000.0, "total",
				      (double)sv->job_limit_ms / 1000.0,
				      "message", msg);
			sv->last_tick_ms = t;
		}
		timeout = (int)(TICK_MS - (t - sv->last_tick_ms));
	}
	pthread_mutex_unlock(&sv->mu);
	if (n != NULL)
		out_write(sv, n);
	json_decref(n);
	return timeout;
}

static void
end_input(struct server *sv, bool broken)
{
	pthread_mutex_lock(&sv->mu);
	sv->eof = true;
	sv->broken |= broken;
	pthread_cond_signal(&sv->cv);
	pthread_mutex_unlock(&sv->mu);
}

static void *
reader(void *arg)
{
	struct server *sv = arg;
	char *buf = NULL, *nl, chunk[512];
	size_t len = 0, cap = 0, start;
	bool over;
	ssize_t n;

	for (;;) {
		/* Standard output too, for no event: POLLERR or POLLHUP
		 * there (pipe(7): no reader is left) means the client has
		 * gone, and a running job's result would reach nobody. */
		struct pollfd p[3] = {{.fd = STDIN_FILENO, .events = POLLIN},
				      {.fd = sv->wake[0], .events = POLLIN},
				      {.fd = STDOUT_FILENO, .events = 0}};
		int timeout = tick(sv);
		bool stop;

		if (poll(p, 3, timeout) < 0 && errno != EINTR) {
			log_error("mcp: poll: %s", strerror(errno));
			end_input(sv, true);
			break;
		}
		if (p[1].revents != 0)
			while (read(sv->wake[0], chunk, sizeof(chunk)) > 0)
				;
		pthread_mutex_lock(&sv->mu);
		stop = sv->stop;
		pthread_mutex_unlock(&sv->mu);
		if (stop)
			break;
		if (p[2].revents & (POLLERR | POLLHUP)) {
			pthread_mutex_lock(&sv->mu);
			if (!sv->broken)
				log_error("mcp: standard output was closed: "
					  "ending the session");
			sv->broken = true;
			jobrun_cancel();
			pthread_mutex_unlock(&sv->mu);
			end_input(sv, true);
			break;
		}
		if (p[0].revents == 0)
			continue;
		if (cap - len < READ_CHUNK) {
			char *b = realloc(buf, cap + READ_CHUNK);

			if (b == NULL) {
				log_error("mcp: out of memory reading input");
				end_input(sv, true);
				break;
			}
			buf = b;
			cap += READ_CHUNK;
		}
		n = read(STDIN_FILENO, buf + len, READ_CHUNK);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			if (n < 0)
				log_error("mcp: reading standard input: %s",
					  strerror(errno));
			/* A last line without its newline was cut short
			 * (a client killed while writing it): not carried
			 * out, as in `stockade serve`. */
			end_input(sv, n < 0);
			break;
		}
		len += (size_t)n;
		start = 0;
		over = false;
		while ((nl = memchr(buf + start, '\n', len - start)) != NULL) {
			if ((size_t)(nl - (buf + start)) > sv->max_line) {
				over = true;
				break;
			}
			take_line(sv, buf + start, (size_t)(nl - (buf + start)));
			start = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (over || len > sv->max_line) {
			char text[80];

			snprintf(text, sizeof(text), "parse error: a line over "
				 "%zu MiB", sv->max_line >> 20);
			out_error(sv, NULL, -32700, text);
			end_input(sv, true);
			break;
		}
	}
	free(buf);
	return NULL;
}

/* ---- the main thread ---- */

/* Handles the queue until input ends and the queue is empty, a signal
 * came, or the session broke. */
static void
serve_queue(struct server *sv)
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
		/* A cancelled request is not answered (MCP "Cancellation"). */
		if (resp != NULL && !drop)
			out_write(sv, resp);
		json_decref(resp);
		json_decref(q->msg);
		free(q);
	}
}

static void
server_free(struct server *sv)
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
 * confined. Returns the exit status. */
static int
run_session(struct server *sv, const struct policy *pol, int root,
	    struct supervisor *sup)
{
	const struct mcp_hooks hooks = {
		.notify = hook_notify, .job_begin = hook_job_begin,
		.job_end = hook_job_end, .cancelled = hook_cancelled,
		.arg = sv,
	};
	sigset_t block, old;
	pthread_t th;
	bool broken;
	int e;

	/* A write_file or stdin of the policy's inline limit must fit in
	 * one line: JSON escapes a control byte in six ("\u001b"). */
	sv->max_line = pol->files.inline_bytes * 6 + (1u << 20);
	if (sv->max_line < RPC_MAX_LINE)
		sv->max_line = RPC_MAX_LINE;
	rpc_session_init(&sv->rpc, root, pol, sup);
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
	e = pthread_create(&th, NULL, reader, sv);
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
	wake_reader(sv);
	pthread_join(th, NULL);
	mcp_session_free(&sv->mcp);
	rpc_session_free(&sv->rpc);
	return broken ? 1 : 0;
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
	struct server sv;
	struct policy pol;
	struct workspace ws;
	struct supervisor sup;
	bool keep = false;
	int c, rc, e;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': policy_file = optarg; break;
		case 'w': workspace = optarg; break;
		case 'k': keep = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((rc = session_prepare("mcp", policy_file, workspace, &pol, &ws,
				  &sup)) != 0)
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
	/* As `stockade serve`: launchers come from a spawner, and the
	 * broker confines itself to the workspace (and, for a temporary
	 * one, the removal of it at the end) before it reads a message. */
	{
		struct confine_rule rules[2] = {
			{.fd = ws.fd, .access = CONFINE_ALL},
			{.fd = ws.parent_fd,
			 .access = LANDLOCK_ACCESS_FS_REMOVE_DIR},
		};

		if ((rc = session_confine(&sup, rules,
					  ws.temporary ? 2 : 1)) != 0)
			goto out;
	}
	jobrun_catch_signals();
	/* A transfer blocked on a descriptor stops at a signal (fsapi.h). */
	fsapi_set_interrupted(jobrun_interrupted);
	rc = run_session(&sv, &pol, ws.fd, &sup);
	/* One more signal now must not cut the clean-up short. */
	{
		sigset_t block;

		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGHUP);
		pthread_sigmask(SIG_BLOCK, &block, NULL);
	}
out:
	supervisor_free(&sup);
	server_free(&sv);
	if ((e = workspace_close(&ws, keep)) < 0)
		log_warn("could not close the workspace %s: %s", ws.path,
			 strerror(-e));
	policy_clear(&pol);
	return rc;
}
