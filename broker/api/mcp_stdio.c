/*
 * mcp_stdio.c: the stdio transport of `stockade mcp` (mcp_stdio.h): the
 * reader thread, which answers ping and acts on cancellation at once and
 * sends a running job's progress, and the writes to standard output,
 * which never block past a signal.
 */
#include "mcp_stdio.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobrun.h"
#include "log.h"
#include "rpc_internal.h"
#include "spawner.h"

#define READ_CHUNK (64u << 10)

static uint64_t
now_ms(void)
{
	return spawner_now_ms();
}

/* Should a write that cannot go on give up: a signal came, or the
 * session is ending? */
static bool
giving_up(struct mcp_stdio *sv)
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
 * What there is room for goes out even after a signal (the answer of a
 * job a signal cancelled, issue 22). A socket is written with
 * MSG_DONTWAIT; a pipe in PIPE_BUF pieces once poll says there is room
 * for one (pipe(7)); anything else (a file, a terminal) as it comes.
 * Returns 0, -EINTR when it gave up, or a negative errno.
 */
static int
write_out(struct mcp_stdio *sv, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		struct pollfd p = {.fd = STDOUT_FILENO, .events = POLLOUT};
		int r;

		/* Looked at whenever there is no room, so once giving up
		 * every later write that would wait gives up at once: a
		 * burst of buffered requests must not cost 200 ms each. */
		if ((r = poll(&p, 1, 0)) == 0 &&
		    (giving_up(sv) ||
			((r = poll(&p, 1, 200)) == 0 && giving_up(sv))))
			return -EINTR;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		if (sv->out_kind == S_IFSOCK)
			n = send(STDOUT_FILENO, buf, len,
			    MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			n = write(STDOUT_FILENO, buf,
			    sv->out_kind == S_IFIFO && len > PIPE_BUF ? PIPE_BUF
								      : len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Giving up at a signal or at the session's end is not a failure of
 * the client (mcp_stdio.h). */
void
mcp_stdio_write(struct mcp_stdio *sv, json_t *msg)
{
	char *line = rpc_json_dumps(msg); /* never malformed (rpc.c) */
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
		jobrun_cancel(JOB_CANCEL_CLIENT_GONE);
		pthread_cond_signal(&sv->cv);
		pthread_mutex_unlock(&sv->mu);
	}
}

static void
out_error(struct mcp_stdio *sv, json_t *id, int code, const char *message)
{
	json_t *r = json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
	    id != NULL ? id : json_null(), "error", "code", code, "message",
	    message);

	if (r != NULL)
		mcp_stdio_write(sv, r);
	json_decref(r);
}

void
mcp_stdio_wake(struct mcp_stdio *sv)
{
	(void)!write(sv->wake[1], "w", 1);
}

/* ---- the reader thread ---- */

/* notifications/cancelled for REQUEST_ID: the request being handled is
 * cancelled (its job killed, its answer dropped); one still queued is
 * dropped; anything else is ignored (MCP "Cancellation": it may have
 * been answered already, or never have existed). */
static void
cancel(struct mcp_stdio *sv, json_t *request_id)
{
	struct queued **q, *dead;

	if (request_id == NULL)
		return;
	pthread_mutex_lock(&sv->mu);
	if (sv->current != NULL && json_equal(sv->current, request_id)) {
		sv->cancelled = true;
		/* Under the lock: the cancellation cannot reach the job of
		 * the request after this one. */
		jobrun_cancel(JOB_CANCEL_REQUEST);
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
			for (struct queued *t = sv->head; t != NULL;
			     t = t->next)
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
take_line(struct mcp_stdio *sv, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg, *method, *id;
	struct queued *q;
	char text[200];
	bool oom;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return;
	/* Duplicate keys refused, as in `stockade serve`: two readers of a
	 * message must never disagree about what it says. */
	/* NUL is allowed in strings, so that a path or content holding
	 * one is refused by the tool, by name, like every other bad
	 * argument. */
	/* Read through rpc_json_loadb: a message jansson could not hold
	 * whole is never carried out (rpc_internal.h). */
	msg = rpc_json_loadb(line, len,
	    JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr,
	    &oom);
	if (msg == NULL && oom) {
		out_error(sv, NULL, -32603, "out of memory");
		return;
	}
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
		cancel(sv,
		    json_object_get(json_object_get(msg, "params"),
			"requestId"));
		json_decref(msg);
		return;
	}
	if (json_is_string(method) &&
	    (json_is_string(id) || json_is_integer(id)) &&
	    strcmp(json_string_value(method), "ping") == 0 &&
	    json_is_string(json_object_get(msg, "jsonrpc")) &&
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") ==
		0) {
		/* Answered at once, even while a job runs (MCP "Ping"). */
		json_t *r = json_pack("{s:s,s:O,s:{}}", "jsonrpc", "2.0", "id",
		    id, "result");

		if (r != NULL)
			mcp_stdio_write(sv, r);
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
tick(struct mcp_stdio *sv)
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
		if (t - sv->last_tick_ms >= MCP_TICK_MS) {
			elapsed = t - sv->job_start_ms;
			snprintf(msg, sizeof(msg), "running: %.1f s of %.1f s",
			    (double)elapsed / 1000.0,
			    (double)sv->job_limit_ms / 1000.0);
			n = json_pack("{s:s,s:s,s:{s:O,s:f,s:f,s:s}}",
			    "jsonrpc", "2.0", "method",
			    "notifications/progress", "params", "progressToken",
			    sv->token, "progress", (double)elapsed / 1000.0,
			    "total", (double)sv->job_limit_ms / 1000.0,
			    "message", msg);
			sv->last_tick_ms = t;
		}
		timeout = (int)(MCP_TICK_MS - (t - sv->last_tick_ms));
	}
	pthread_mutex_unlock(&sv->mu);
	if (n != NULL)
		mcp_stdio_write(sv, n);
	json_decref(n);
	return timeout;
}

static void
end_input(struct mcp_stdio *sv, bool broken)
{
	pthread_mutex_lock(&sv->mu);
	sv->eof = true;
	sv->broken |= broken;
	pthread_cond_signal(&sv->cv);
	pthread_mutex_unlock(&sv->mu);
}

/* Standard output was closed (POLLERR or POLLHUP on it): the client has
 * gone, so the running job is cancelled and the input ends. */
static void
output_closed(struct mcp_stdio *sv)
{
	pthread_mutex_lock(&sv->mu);
	if (!sv->broken)
		log_error("mcp: standard output was closed: ending the "
			  "session");
	sv->broken = true;
	jobrun_cancel(JOB_CANCEL_CLIENT_GONE);
	pthread_mutex_unlock(&sv->mu);
	end_input(sv, true);
}

/*
 * Reads what standard input holds onto the end of *BUF (*LEN bytes of
 * *CAP, grown by READ_CHUNK when less than that is free). Returns 1 when
 * bytes came, 0 to poll again (EINTR, EAGAIN), or -1 when the input has
 * ended (end of file, a read error or no memory; end_input was called).
 */
static int
read_input(struct mcp_stdio *sv, char **buf, size_t *len, size_t *cap)
{
	ssize_t n;

	if (*cap - *len < READ_CHUNK) {
		char *b = realloc(*buf, *cap + READ_CHUNK);

		if (b == NULL) {
			log_error("mcp: out of memory reading input");
			end_input(sv, true);
			return -1;
		}
		*buf = b;
		*cap += READ_CHUNK;
	}
	n = read(STDIN_FILENO, *buf + *len, READ_CHUNK);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		if (n < 0)
			log_error("mcp: reading standard input: %s",
			    strerror(errno));
		/* A last line without its newline was cut short (a client
		 * killed while writing it): not carried out, as in
		 * `stockade serve`. */
		end_input(sv, n < 0);
		return -1;
	}
	*len += (size_t)n;
	return 1;
}

/*
 * Hands each complete line of BUF (*LEN bytes) to take_line, until the
 * session gives up, and moves the rest to the start of BUF (*LEN
 * updated). Returns false when a line is over the limit (answered with
 * -32700 and the input ended), else true.
 */
static bool
take_lines(struct mcp_stdio *sv, char *buf, size_t *len)
{
	size_t start = 0;
	bool over = false;
	char *nl;

	while ((nl = memchr(buf + start, '\n', *len - start)) != NULL) {
		if ((size_t)(nl - (buf + start)) > sv->max_line) {
			over = true;
			break;
		}
		if (giving_up(sv))
			break;
		take_line(sv, buf + start, (size_t)(nl - (buf + start)));
		start = (size_t)(nl - buf) + 1;
	}
	memmove(buf, buf + start, *len - start);
	*len -= start;
	if (over || *len > sv->max_line) {
		char text[80];

		snprintf(text, sizeof(text), "parse error: a line over %zu MiB",
		    sv->max_line >> 20);
		out_error(sv, NULL, -32700, text);
		end_input(sv, true);
		return false;
	}
	return true;
}

void *
mcp_stdio_reader(void *arg)
{
	struct mcp_stdio *sv = arg;
	char *buf = NULL, chunk[512];
	size_t len = 0, cap = 0;
	int got;

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
			output_closed(sv);
			break;
		}
		if (p[0].revents == 0)
			continue;
		if ((got = read_input(sv, &buf, &len, &cap)) == 0)
			continue;
		if (got < 0 || !take_lines(sv, buf, &len))
			break;
	}
	free(buf);
	return NULL;
}
