/*
 * eval_judge.c: the rules of docs/evidence.md ("When an attack
 * succeeds") applied to one run of `stockade eval` once its job has
 * ended (eval_judge.h): what fired, with no secret in the evidence, and
 * the run's outcome.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "eval_canary.h"
#include "eval_decoy.h"
#include "eval_detect.h"
#include "eval_judge.h"
#include "fsutil.h"
#include "snapshot.h"

/* ---- small helpers ------------------------------------------------------ */

static void redact_as(char *s, size_t size, const char *needle,
    const char *name);

/* Replaces every TOKEN in S by "<token>" (in place, S of SIZE bytes). */
static void
redact(char *s, size_t size, const char *token)
{
	redact_as(s, size, token, "token");
}

/* The stopped-when check (enum eval_stop) a fired RULE at WHERE falls
 * under (docs/evidence.md, "What stopped means"). */
static unsigned
check_of(const char *rule, const char *where)
{
	if (strcmp(rule, "canary") == 0)
		return EVAL_STOP_CANARY;
	if (strcmp(rule, "pwned") == 0)
		return EVAL_STOP_PWNED;
	if (strcmp(rule, "outside") == 0)
		return strcmp(where, "decoy") == 0 ? EVAL_STOP_DECOY
						   : EVAL_STOP_FILES;
	if (strcmp(rule, "leftover") == 0)
		return EVAL_STOP_SURVIVOR;
	if (strcmp(rule, "flood") == 0)
		return EVAL_STOP_OUTPUT;
	if (strcmp(rule, "terminal") == 0)
		return EVAL_STOP_TERMINAL;
	return 0;
}

/* One fired rule added to V (eval_judge.h). */
void
eval_fired(struct eval_verdict *v, const char *token, const char *rule,
    const char *where, const char *fmt, ...)
{
	struct eval_evidence *e;
	va_list ap;

	if (v->nev >= EVAL_EVIDENCE_MAX)
		return;
	e = &v->ev[v->nev++];
	snprintf(e->rule, sizeof(e->rule), "%s", rule);
	snprintf(e->where, sizeof(e->where), "%s", where);
	e->declared = (v->declared & check_of(rule, where)) != 0;
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
	va_end(ap);
	redact(e->where, sizeof(e->where), token);
	redact(e->detail, sizeof(e->detail), token);
}

/* Replaces every NEEDLE in S (SIZE bytes) by "<NAME>". */
static void
redact_as(char *s, size_t size, const char *needle, const char *name)
{
	char *p = s;

	while ((p = strstr(p, needle)) != NULL) {
		char rest[1024];
		int n;

		snprintf(rest, sizeof(rest), "%s", p + strlen(needle));
		n = snprintf(p, size - (size_t)(p - s), "<%s>", name);
		if (n < 0 || (size_t)n >= size - (size_t)(p - s))
			break;
		p += n;
		snprintf(p, size - (size_t)(p - s), "%s", rest);
	}
}

/* Length of the run of lower-case hex digits at P. */
static size_t
hex_run(const char *p)
{
	size_t n = 0;

	while ((p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'f'))
		n++;
	return n;
}

/*
 * Replaces in S (SIZE bytes) what looks like another run's secret: a
 * canary prefix followed by 16 or more hex digits ("<ssh_key>"), and a
 * run of 32 or more hex digits ("<hex>", a token). Runs going on beside
 * this one have their own decoys, segments and leftovers, which a job
 * listing the host may print.
 */
static void
redact_shapes(char *s, size_t size)
{
	for (char *p = s; *p != '\0'; p++) {
		const char *name = NULL;
		size_t len = 0, n;
		char rest[1024];
		int w;

		for (int k = 0; k < EVAL_CANARY_N && name == NULL; k++) {
			const char *pre = eval_canary_prefix(
			    (enum eval_canary)k);
			size_t pl = strlen(pre);

			if (strncmp(p, pre, pl) == 0 && hex_run(p + pl) >= 16) {
				name = eval_canary_name((enum eval_canary)k);
				len = pl + hex_run(p + pl);
			}
		}
		if (name == NULL && (p == s || hex_run(p - 1) == 0) &&
		    (n = hex_run(p)) >= 32) {
			name = "hex";
			len = n;
		}
		if (name == NULL)
			continue;
		snprintf(rest, sizeof(rest), "%s", p + len);
		w = snprintf(p, size - (size_t)(p - s), "<%s>", name);
		if (w < 0 || (size_t)w >= size - (size_t)(p - s))
			break;
		snprintf(p + w, size - (size_t)(p - s) - (size_t)w, "%s", rest);
		p += w - 1;
	}
}

/* The first words of the job's stdout and stderr into V->output, with
 * no secret in them (eval_run.h). */
static void
excerpt(struct run *r, const char *out, size_t olen, const char *err,
    size_t elen)
{
	char part[2][1024];
	const char *text[2] = {out, err};
	size_t len[2] = {olen, elen};

	/* Each redacted first, then cut: a secret cut in two would not be
	 * recognised. 1024 bytes leave no secret across the 120th. */
	for (int i = 0; i < 2; i++) {
		snprintf(part[i], sizeof(part[i]), "%.*s",
		    (int)(len[i] < 1023 ? len[i] : 1023), text[i]);
		for (char *p = part[i]; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20)
				*p = ' ';
		redact_as(part[i], sizeof(part[i]), r->s.token, "token");
		for (int k = 0; k < EVAL_CANARY_N; k++)
			redact_as(part[i], sizeof(part[i]), r->s.canary[k],
			    eval_canary_name((enum eval_canary)k));
		redact_shapes(part[i], sizeof(part[i]));
	}
	snprintf(r->v->output, sizeof(r->v->output), "%.120s%s%.120s", part[0],
	    part[0][0] && part[1][0] ? " | " : "", part[1]);
}

/*
 * Looks in BUF (LEN bytes, the job's stdout or stderr) for the run's
 * markers: "ATTEMPTED <token>" sets V->attempted; the first "CANNOT
 * <token> REASON" line puts REASON (at most 120 bytes, control
 * characters as spaces, secrets redacted) into R->cannot.
 */
static void
find_markers(struct run *r, const char *buf, size_t len)
{
	char mark[64];
	size_t ml;
	const char *p;

	if (buf == NULL || len == 0)
		return;
	ml = (size_t)snprintf(mark, sizeof(mark), "%s%s", EVAL_MARK_ATTEMPTED,
	    r->s.token);
	if (memmem(buf, len, mark, ml) != NULL)
		r->v->attempted = true;
	ml = (size_t)snprintf(mark, sizeof(mark), "%s%s", EVAL_MARK_CANNOT,
	    r->s.token);
	if (r->cannot[0] == '\0' && (p = memmem(buf, len, mark, ml)) != NULL) {
		const char *why = p + ml, *end = buf + len;
		size_t n = 0;

		while (why < end && *why == ' ')
			why++;
		while (why + n < end && why[n] != '\n' && n < 120)
			n++;
		snprintf(r->cannot, sizeof(r->cannot), "%.*s", (int)n, why);
		for (char *q = r->cannot; *q != '\0'; q++)
			if ((unsigned char)*q < 0x20)
				*q = ' ';
		redact(r->cannot, sizeof(r->cannot), r->s.token);
		for (int k = 0; k < EVAL_CANARY_N; k++)
			redact_as(r->cannot, sizeof(r->cannot), r->s.canary[k],
			    eval_canary_name((enum eval_canary)k));
		redact_shapes(r->cannot, sizeof(r->cannot));
		if (r->cannot[0] == '\0')
			snprintf(r->cannot, sizeof(r->cannot),
			    "no reason given");
	}
}

/* Rules on the job's result: canaries and PWNED in its output, flood;
 * the markers (find_markers). */
/* Rules on the result O of R's job (a JSON object, borrowed): canaries
 * and PWNED in its stdout and stderr, their markers and excerpt, flood
 * past 4 times the stdout cap. */
static void
judge_json(struct run *r, json_t *o)
{
	struct eval_verdict *v = r->v;
	int which;
	const char *st = json_string_value(json_object_get(o, "status"));
	json_t *so = json_object_get(o, "stdout");
	json_t *se = json_object_get(o, "stderr");
	/* What reached the caller is the stdout the result keeps,
	 * not stdout_bytes: past the cap that counts what the
	 * program wrote and stockade drained (on_output_limit =
	 * truncate). */
	json_int_t ob = json_is_string(so) ? (json_int_t)json_string_length(so)
					   : 0;

	snprintf(v->status, sizeof(v->status), "%s", st != NULL ? st : "");
	v->wall_ms = json_is_integer(json_object_get(o, "wall_ms"))
	    ? json_integer_value(json_object_get(o, "wall_ms"))
	    : -1;
	if (json_is_string(so) &&
	    (which = eval_find(json_string_value(so), json_string_length(so),
		 r->nd, EVAL_CANARY_N + 1)) >= 0)
		eval_fired(v, r->s.token,
		    which == EVAL_CANARY_N ? "pwned" : "canary", "stdout", "%s",
		    r->nd[which].name);
	if (json_is_string(se) &&
	    (which = eval_find(json_string_value(se), json_string_length(se),
		 r->nd, EVAL_CANARY_N + 1)) >= 0)
		eval_fired(v, r->s.token,
		    which == EVAL_CANARY_N ? "pwned" : "canary", "stderr", "%s",
		    r->nd[which].name);
	if (json_is_string(so))
		find_markers(r, json_string_value(so), json_string_length(so));
	if (json_is_string(se))
		find_markers(r, json_string_value(se), json_string_length(se));
	excerpt(r, json_is_string(so) ? json_string_value(so) : "",
	    json_is_string(so) ? json_string_length(so) : 0,
	    json_is_string(se) ? json_string_value(se) : "",
	    json_is_string(se) ? json_string_length(se) : 0);
	if (ob > 0 && (uint64_t)ob > 4 * r->ctx->stdout_cap)
		eval_fired(v, r->s.token, "flood", "stdout",
		    "%lld bytes reached the caller (cap %llu)", (long long)ob,
		    (unsigned long long)r->ctx->stdout_cap);
}

/* Rules on R's job when it gave no result: its output as it came,
 * searched raw; the job's stderr is not in it, so no search for a
 * canary is complete. Without evidence, V->outcome is EVAL_ERROR. */
static void
judge_raw(struct run *r)
{
	struct eval_verdict *v = r->v;
	struct eval_job *j = &r->job;
	int which;

	r->unsure |= EVAL_STOP_CANARY | EVAL_STOP_PWNED;
	if (j->out.len > 0)
		find_markers(r, (const char *)j->out.data, j->out.len);
	if (j->out.len > 0 &&
	    (which = eval_find(j->out.data, j->out.len, r->nd,
		 EVAL_CANARY_N + 1)) >= 0)
		eval_fired(v, r->s.token,
		    which == EVAL_CANARY_N ? "pwned" : "canary", "stdout", "%s",
		    r->nd[which].name);
	if (j->out.total > 4 * r->ctx->stdout_cap)
		eval_fired(v, r->s.token, "flood", "stdout",
		    "%llu bytes reached the caller (cap %llu)",
		    (unsigned long long)j->out.total,
		    (unsigned long long)r->ctx->stdout_cap);
	if (v->nev == 0) {
		size_t l = j->err.len < 200 ? j->err.len : 200;

		v->outcome = EVAL_ERROR;
		snprintf(v->error, sizeof(v->error),
		    "stockade run gave no result (exit %d): %.*s", v->exit_code,
		    (int)l,
		    j->err.data != NULL ? (const char *)j->err.data : "");
	}
}

void
eval_judge_result(struct run *r)
{
	struct eval_verdict *v = r->v;
	struct eval_job *j = &r->job;
	json_t *o = NULL;
	json_error_t jerr;

	v->exit_code = j->exited && WIFEXITED(j->status)
	    ? WEXITSTATUS(j->status)
	    : -1;
	if (j->out.len > 0 && j->out.total == j->out.len)
		o = json_loadb((const char *)j->out.data, j->out.len, 0, &jerr);
	if (o != NULL && json_is_object(o))
		judge_json(r, o);
	else
		judge_raw(r);
	json_decref(o);
}

static void
on_token_file(void *arg, const char *dir, const char *name)
{
	struct run *r = arg;
	_cleanup_close_ int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	eval_fired(r->v, r->s.token, "outside", dir, "%s written", name);
	/* Ours to remove: its name holds this run's token. */
	if (d >= 0)
		(void)remove_tree_at(d, name);
}

/* Rules on everything outside the workspace (eval_judge.h). */
void
eval_judge_outside(struct run *r)
{
	const char *dirs[] = {"/tmp", "/var/tmp", "/dev/shm", "/usr/local/bin",
	    "/etc", r->ctx->user_home};
	size_t ndirs = r->ctx->user_home != NULL ? 6 : 5;
	struct snapshot after;
	struct changes ch = {0};
	struct eval_file_state tmp_after;
	char what[128];

	if (eval_snap_outside(r, &after) == 0 &&
	    snapshot_diff(&r->before, &after, &ch) == 0) {
		for (size_t i = 0; i < ch.n && i < 2; i++) {
			const char *p = ch.c[i].entry->path;

			eval_fired(r->v, r->s.token, "outside",
			    strncmp(p, "home", 4) == 0 ? "home" : "userfiles",
			    "%s %s",
			    ch.c[i].kind == CHANGE_CREATED	 ? "created"
				: ch.c[i].kind == CHANGE_DELETED ? "deleted"
								 : "modified",
			    p);
		}
	} else {
		eval_fired(r->v, r->s.token, "outside", "home",
		    "the fake home or the user's files cannot be read");
	}
	changes_free(&ch);
	snapshot_free(&after);
	if (eval_file_state(r->hosttmp, &tmp_after) < 0 ||
	    eval_file_changed(&r->tmp_before, &tmp_after))
		eval_fired(r->v, r->s.token, "outside", "hosttmp",
		    "the host /tmp canary file changed");
	if (eval_decoy_check(&r->decoy, what, sizeof(what)) == 1)
		eval_fired(r->v, r->s.token, "outside", "decoy", "%s", what);
	if (eval_token_files(dirs, ndirs, r->s.token, on_token_file, r) < 0)
		r->unsure |= EVAL_STOP_FILES;
}

/* Rules after the job on the host's side (eval_judge.h). */
void
eval_judge_host(struct run *r)
{
	struct eval_verdict *v = r->v;
	char cmd[256], where[4200];
	int which;

	/* The caller's terminal: bytes with the token came back. */
	if (r->job.pty.fd >= 0)
		eval_sink_read(&r->job.pty);
	if (r->job.pty.len > 0 &&
	    memmem(r->job.pty.data, r->job.pty.len, r->s.token,
		EVAL_TOKEN_LEN) != NULL)
		eval_fired(v, r->s.token, "terminal", "pty",
		    "the token came back from the caller's terminal");

	if (eval_honeypot_sync(r->ctx->hp) != 0)
		r->unsure |= EVAL_STOP_CANARY | EVAL_STOP_PWNED;
	else if (eval_honeypot_find(r->ctx->hp, r->mark, r->nd,
		     EVAL_CANARY_N + 1, &which, cmd, sizeof(cmd)) == 1) {
		snprintf(where, sizeof(where), "honeypot %s", cmd);
		eval_fired(v, r->s.token,
		    which == EVAL_CANARY_N ? "pwned" : "canary", where, "%s",
		    r->nd[which].name);
	}

	{
		_cleanup_close_ int w = openat(r->dirfd, "w",
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		int found = w >= 0
		    ? eval_scan_tree(w, r->nd, EVAL_CANARY_N + 1, SCAN_BYTES,
			  &which, where, sizeof(where))
		    : -EBADF;

		if (found == 1)
			eval_fired(v, r->s.token,
			    which == EVAL_CANARY_N ? "pwned" : "canary",
			    "workspace", "%s in %s", r->nd[which].name, where);
		else if (found < 0)
			r->unsure |= EVAL_STOP_CANARY | EVAL_STOP_PWNED;
	}
}

/* The run's outcome (eval_judge.h). */
void
eval_judge_outcome(struct run *r, int grace_s)
{
	struct eval_verdict *v = r->v;
	const struct eval_attack *a = r->a;

	v->checked = EVAL_STOP_ALL & ~r->unsure;
	if (v->nev > 0) {
		/* Harm is harm, declared or not, attempted or not. */
		v->outcome = EVAL_SUCCEEDED;
	} else if (strcmp(v->status, "sandbox_error") == 0 ||
	    (strcmp(v->status, "exit_nonzero") == 0 &&
		strstr(v->output, "stockade: cannot execute") != NULL)) {
		/* The attack never ran (the jail was refused or failed, or
		 * its program could not be executed): no evidence is not
		 * "stopped" (review F2). */
		v->outcome = EVAL_ERROR;
		snprintf(v->error, sizeof(v->error),
		    "the attack did not run: "
		    "%s, exit %d: %.160s",
		    v->status, v->exit_code, v->output);
	} else if (r->job.killed) {
		v->outcome = EVAL_ERROR;
		snprintf(v->error, sizeof(v->error),
		    "stockade run did not end "
		    "within the wall clock and %d s: killed",
		    grace_s);
	} else if (a->attempted_when == EVAL_ATTEMPT_MARKER &&
	    (!v->attempted || r->cannot[0] != '\0')) {
		/* No harm, but no attempt either: the attack failed for a
		 * reason of its own (a tool missing, a fork refused before
		 * the harmful step, a kernel without the interface it
		 * tries), which is not the layer stopping it (issue 23
		 * point 9). A CANNOT line wins over ATTEMPTED: the attack
		 * saw its try come to nothing for such a reason. */
		v->outcome = EVAL_NOT_RUN;
		if (r->cannot[0] != '\0')
			snprintf(v->error, sizeof(v->error),
			    "the attack could "
			    "not try: %s",
			    r->cannot);
		else
			snprintf(v->error, sizeof(v->error),
			    "no ATTEMPTED "
			    "marker: %s, exit %d: %.160s",
			    v->status[0] ? v->status : "no status",
			    v->exit_code, v->output);
	} else if ((a->stopped_when & ~v->checked) != 0) {
		unsigned miss = a->stopped_when & ~v->checked;
		size_t n;

		v->outcome = EVAL_ERROR;
		n = (size_t)snprintf(v->error, sizeof(v->error),
		    "a declared "
		    "check could not be made:");
		for (unsigned bit = 1; bit <= EVAL_STOP_ALL; bit <<= 1)
			if ((miss & bit) && n < sizeof(v->error))
				n += (size_t)snprintf(v->error + n,
				    sizeof(v->error) - n, " %s",
				    eval_stop_name(bit));
	}
}
