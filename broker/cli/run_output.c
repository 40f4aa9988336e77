/*
 * run_output.c: the output of `stockade run`'s job and its result. In
 * the stream format (the default) the program's output passes through as
 * it arrives, escaped on a terminal, with a status line on stderr while
 * the job runs; then one summary line goes to stderr. With --json (or
 * --format text) nothing streams and exactly one result goes to stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd_run.h"
#include "commands.h"
#include "fsutil.h"
#include "fsname.h"
#include "jobrun.h"
#include "log.h"
#include "progress.h"
#include "result_json.h"
#include "utf8.h"

struct run_output {
	bool stream; /* pass output through as it arrives */
	bool closed[3]; /* our stdout/stderr went away (EPIPE...) */
	bool tty[3]; /* that stream of ours is a terminal */
	/* On a terminal, a UTF-8 sequence a chunk of that stream ended in
	 * (term_escape_chunk): a C1 control split across two writes is
	 * escaped as one written whole (issue 23). */
	struct term_escape_state esc[3];
	/* Past the first half of a stream's cap, what is shown when the job
	 * ends: the last half, after the marker when bytes were dropped
	 * (capture_init_tail; the stream's cap as the result's). */
	struct capture rest[3];
	struct progress_run status; /* "running 12.3 s of 30 s" (progress.h) */
};

/* Writes DATA[0..LEN) (at most PROTO_OUTPUT_CHUNK bytes) of the job's
 * stream STREAM to ours. */
static void
pass_chunk(struct run_output *o, int stream, const uint8_t *data, size_t len)
{
	if (len == 0 || o->closed[stream])
		return;
	/* On a terminal, the job's control sequences are shown, not obeyed
	 * (term_escape): no OSC 52 clipboard writes, no forged replies. The
	 * status line steps aside for them. */
	if (o->tty[stream]) {
		char buf[4 * PROTO_OUTPUT_CHUNK + 12];
		size_t n;

		if (len > PROTO_OUTPUT_CHUNK)
			len = PROTO_OUTPUT_CHUNK;
		n = term_escape_chunk(&o->esc[stream], data, len, buf);
		progress_run_hold(&o->status);
		if (write_all(stream, buf, n) < 0)
			o->closed[stream] = true;
		progress_run_release(&o->status, data, len);
		return;
	}
	/* A reader that went away (SIGPIPE is ignored in main) stops the
	 * pass-through of that stream, not the job or its clean-up. */
	if (write_all(stream, data, len) < 0)
		o->closed[stream] = true;
}

/*
 * The pass-through of the job's output (jobrun.tee); jobrun captures.
 * The first half of the stream's cap goes through as it comes; the rest
 * is kept (its last half) for pass_rest, so that what is shown is what
 * the result holds and a program that prints without end fills neither
 * our memory nor the file our output goes to.
 */
static void
on_output(void *arg, int stream, const uint8_t *data, size_t len)
{
	struct run_output *o = arg;
	size_t live;

	if (!o->stream)
		return;
	live = capture_head_room(&o->rest[stream]);
	capture_add(&o->rest[stream], data, len);
	pass_chunk(o, stream, data, live < len ? live : len);
}

/* Once the job has ended: what on_output kept of stream STREAM, after
 * the truncation marker when bytes were dropped. */
static void
pass_rest(struct run_output *o, int stream)
{
	size_t len;
	uint8_t *rest = capture_collect(&o->rest[stream], RESULT_TRUNC_MARKER,
	    &len);
	char end[12];
	size_t n;

	if (rest == NULL) {
		log_warn("out of memory: the end of the job's %s is not shown",
		    stream == 1 ? "stdout" : "stderr");
	} else {
		for (size_t at = 0; at < len; at += PROTO_OUTPUT_CHUNK)
			pass_chunk(o, stream, rest + at,
			    len - at < PROTO_OUTPUT_CHUNK ? len - at
							  : PROTO_OUTPUT_CHUNK);
		free(rest);
	}
	/* The stream's end: a sequence it ended inside of is shown as
	 * U+FFFD, never left for the terminal to complete. */
	n = term_escape_end(&o->esc[stream], end);
	if (n > 0 && o->tty[stream] && !o->closed[stream] &&
	    write_all(stream, end, n) < 0)
		o->closed[stream] = true;
}

void
run_exec_passing(struct jobrun *jr, struct supervisor *sup, struct fs_ctx *ctx,
    enum run_format fmt, enum progress_mode pm)
{
	struct run_output out;
	int e;

	memset(&out, 0, sizeof(out));
	out.stream = fmt == RUN_FORMAT_STREAM;
	capture_init_tail(&out.rest[1], jobrun_output_cap(jr, 1));
	capture_init_tail(&out.rest[2], jobrun_output_cap(jr, 2));
	out.tty[1] = isatty(1) == 1;
	out.tty[2] = isatty(2) == 1;
	jr->tee = on_output;
	jr->tee_arg = &out;
	if ((e = progress_run_start(&out.status, pm, STDERR_FILENO,
		 jr->limits.wall_ms)) < 0)
		log_debug("no status line: %s", strerror(-e));
	(void)jobrun_exec(jr, sup, ctx, true);
	/* Stopped and joined: nothing of it writes after this. */
	progress_run_stop(&out.status);
	if (out.stream) {
		pass_rest(&out, 1);
		pass_rest(&out, 2);
	}
	capture_free(&out.rest[1]);
	capture_free(&out.rest[2]);
}

/*
 * The lines `stockade run` prints on OUT after a streamed job about its
 * change set ST under MODE: every change held back (with its rule), and
 * for a dry run (keep) every change, then what was applied.
 */
static void
run_print_staged(const struct staged *st, enum commit_mode mode, FILE *out)
{
	static const char *const kinds[] = {"created", "modified", "deleted"};

	for (size_t i = 0; i < st->ch.n; i++) {
		const char *raw = st->ch.c[i].entry->path;
		char *p = fsname_escape(raw, strlen(raw));

		if (p == NULL)
			continue;

		if (st->rule[i] != NULL)
			fprintf(out,
			    "stockade: held back (%s by rule \"%s\"): %s\n",
			    st->state[i] == STAGED_REFUSED ? "refused"
							   : "quarantined",
			    st->rule[i]->pattern, p);
		else if (mode == COMMIT_KEEP)
			fprintf(out, "stockade: dry run: %s %s\n",
			    kinds[st->ch.c[i].kind], p);
		free(p);
	}
	if (mode == COMMIT_KEEP)
		fprintf(out,
		    "stockade: dry run: %zu changes, nothing applied to "
		    "the workspace\n",
		    st->ch.n);
	else if (staged_count(st, STAGED_ROLLED_BACK) > 0)
		fprintf(out,
		    "stockade: rolled back: %zu changes (the job did not "
		    "end ok)\n",
		    staged_count(st, STAGED_ROLLED_BACK));
	else if (st->commit_failed)
		fprintf(out,
		    "stockade: the job's changes were not written back: "
		    "%s\n",
		    st->commit.conflict ? "conflict"
					: fs_error_name(st->commit.why));
}

int
run_report(struct jobrun *jr, enum run_format fmt, const struct xfers *puts,
    const struct xfers *gets)
{
	json_t *o;
	int rc;

	if (fmt == RUN_FORMAT_STREAM) {
		struct result_net net = jobrun_net_of(jr);

		result_print_summary(&jr->res, &jr->limits, &jr->cap[2],
		    jr->net_report != NULL ? &net : NULL, stderr);
		if (jr->staged_valid)
			run_print_staged(&jr->staged, jr->commit, stderr);
		return job_exit_status(&jr->res);
	}
	o = jobrun_result_json(jr);
	if (o != NULL && jr->staged_valid && jr->commit == COMMIT_KEEP &&
	    json_object_set_new(o, "changes", staged_json(&jr->staged)) < 0) {
		json_decref(o);
		o = NULL;
	}
	if (o != NULL && (puts->n > 0 || gets->n > 0) &&
	    !run_add_files(o, puts, gets)) {
		json_decref(o);
		o = NULL;
	}
	if (o == NULL ||
	    (fmt == RUN_FORMAT_JSON ? json_dumpf(o, stdout, JSON_COMPACT)
				    : result_print_text(o, stdout)) < 0) {
		log_error("cannot write the result");
		rc = EXIT_SANDBOX;
	} else {
		if (fmt == RUN_FORMAT_JSON)
			fputc('\n', stdout);
		rc = job_exit_status(&jr->res);
	}
	json_decref(o);
	return rc;
}
