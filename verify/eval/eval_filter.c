/*
 * eval_filter.c: the code filter's numbers beside the sandbox's
 * (eval_filter.h; issue 6, item 5).
 *
 * The filter's side comes from
 * tests/verify/eval/codefilter/filter_report.py --json, whose
 * shape its docstring fixes: {"families": {slug: {"title", "total",
 * "bypassed", "rate", "files": [{"file", "allowed", ...}]}}, "hostile":
 * {"total", "bypassed", "rate"}, "ordinary": {"total", "blocked",
 * "rate"}}. The sandbox's side is M: each hostile program run in the
 * full product through the attack harness, matched to the report by its
 * file name.
 */
#include "eval_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "fsutil.h"
#include "log.h"

#define EXIT_FOUND 1
#define EXIT_SANDBOX 70
#define REPORT_MAX (16u << 20) /* bytes of the report read */

/* Runs PYTHON SCRIPT --json and returns its standard output parsed, or
 * NULL (said on stderr). */
static json_t *
run_report(const char *script)
{
	const char *python = access("/usr/bin/python3", X_OK) == 0
	    ? "/usr/bin/python3"
	    : "python3";
	const char *const argv[] = {python, script, "--json", NULL};
	_cleanup_free_ char *buf = malloc(REPORT_MAX);
	size_t len = 0;
	json_error_t jerr;
	json_t *o;
	int p[2], status;
	pid_t pid;

	if (buf == NULL || pipe2(p, O_CLOEXEC) < 0) {
		log_error("eval filter: %s", strerror(errno));
		return NULL;
	}
	if ((pid = fork()) < 0) {
		log_error("eval filter: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		if (dup2(p[1], 1) < 0)
			_exit(127);
		/* execvp(3) does not write its array; the cast is C's. */
		execvp(python, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t n = read(p[0], buf + len, REPORT_MAX - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (len += (size_t)n) == REPORT_MAX)
			break;
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		log_error("eval filter: %s %s --json failed (exit %d)", python,
		    script, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return NULL;
	}
	o = json_loadb(buf, len, 0, &jerr);
	if (!json_is_object(o)) {
		log_error("eval filter: %s --json: not a JSON object: %s",
		    script, jerr.text);
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The verdicts of the hostile program FILE in M, or NULL: the full
 * product's is the last, the bare one (when run) the first. */
static const struct eval_verdict *
runs_of(const struct eval_matrix *m, const char *file)
{
	for (size_t a = 0; file != NULL && a < m->corpus->n; a++)
		if (strcmp(m->corpus->v[a].file, file) == 0)
			return &m->v[a * m->ncfg];
	return NULL;
}

static long
get_int(json_t *o, const char *key)
{
	return (long)json_integer_value(json_object_get(o, key));
}

/* Whole percent of K in N ("-" for none). */
static void
percent(long k, long n, char *buf, size_t len)
{
	if (n <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%ld%%", (k * 100 + n / 2) / n);
}

/* The totals of the filter's table, over its families. */
struct filter_sums {
	long harm; /* harmful in the full product */
	long err; /* runs failed or not run */
	long matched; /* runs found in the filter's report */
	long bare; /* let through and harmful bare */
};

/*
 * One row of the filter's table: family SLUG (FAM, from the filter's
 * report) with the verdicts of its programs in M (BARE: M has the
 * no-sandbox column first), printed to OUT, appended to ROWS (NULL:
 * none) and added to SUM.
 */
static void
family_row(const struct eval_matrix *m, bool bare, const char *slug,
    json_t *fam, FILE *out, json_t *rows, struct filter_sums *sum)
{
	char pc[16];
	json_t *files = json_object_get(fam, "files"), *f;
	long total = get_int(fam, "total");
	long bypassed = get_int(fam, "bypassed"), harm = 0, err = 0;
	long harm_bare = 0;
	char bare_cell[24];
	const char *title = json_string_value(json_object_get(fam, "title"));
	size_t i;

	json_array_foreach(files, i, f)
	{
		const struct eval_verdict *v = runs_of(m,
		    json_string_value(json_object_get(f, "file")));

		if (v == NULL)
			continue;
		sum->matched++;
		/* The filter's real misses: let through, and
		 * harmful where nothing else stops them. */
		harm_bare += bare && v[0].outcome == EVAL_SUCCEEDED &&
		    json_is_true(json_object_get(f, "allowed"));
		v += m->ncfg - 1;
		harm += v->outcome == EVAL_SUCCEEDED;
		err += v->outcome == EVAL_ERROR || v->outcome == EVAL_NOT_RUN;
	}
	sum->harm += harm;
	sum->bare += harm_bare;
	sum->err += err;
	percent(bypassed, total, pc, sizeof(pc));
	snprintf(bare_cell, sizeof(bare_cell), bare ? "%ld" : "-", harm_bare);
	fprintf(out, "| %s | %ld | %ld | %s | %s | %ld%s |\n",
	    title != NULL ? title : slug, total, bypassed, pc, bare_cell, harm,
	    err > 0 ? " (runs failed: see the JSON)" : "");
	if (rows != NULL)
		json_array_append_new(rows,
		    json_pack("{s:s, s:s?, s:i, s:i, s:O?, s:o, s:i, s:i}",
			"family", slug, "title", title, "total", (int)total,
			"bypassed", (int)bypassed, "rate",
			json_object_get(fam, "rate"), "harm_bare",
			bare ? json_integer(harm_bare) : json_null(), "harm",
			(int)harm, "errors", (int)err));
}

/*
 * The filter table's last row and the lines under it, to OUT: the
 * totals of HOSTILE, the false positives of ORDINARY (both from the
 * filter's report), and the harm SUM counted over M (BARE: with a
 * no-sandbox column).
 */
static void
print_summary(const struct eval_matrix *m, bool bare, json_t *hostile,
    json_t *ordinary, const struct filter_sums *sum, FILE *out)
{
	char pc[16];

	percent(get_int(hostile, "bypassed"), get_int(hostile, "total"), pc,
	    sizeof(pc));
	{
		char bare_cell[24];

		snprintf(bare_cell, sizeof(bare_cell), bare ? "%ld" : "-",
		    sum->bare);
		fprintf(out, "| **all** | %ld | %ld | %s | %s | %ld |\n\n",
		    get_int(hostile, "total"), get_int(hostile, "bypassed"), pc,
		    bare_cell, sum->harm);
	}
	percent(get_int(ordinary, "blocked"), get_int(ordinary, "total"), pc,
	    sizeof(pc));
	fprintf(out,
	    "False positives: the filter refuses %ld of the %ld "
	    "ordinary programs (%s).\n\n",
	    get_int(ordinary, "blocked"), get_int(ordinary, "total"), pc);
	fprintf(out,
	    "Harm in the full product: %ld of the %zu hostile "
	    "programs (each run with the attack harness: canaries, "
	    "honeypot, decoy; must be 0).",
	    sum->harm, m->corpus->n);
	if (bare)
		fprintf(out,
		    " With no sandbox (every layer off), %ld of the "
		    "programs the filter let through did harm.\n",
		    sum->bare);
	else
		fprintf(out,
		    " Run as root, the eval does not run them with "
		    "no sandbox (-): run it as an unprivileged user for that "
		    "column.\n");
}

int
eval_filter_report(const char *eval_dir, const struct eval_matrix *m, FILE *out,
    json_t **json)
{
	char script[4096];
	json_t *rep, *fams, *hostile, *ordinary, *fam, *rows;
	const char *slug;
	struct filter_sums sum = {0, 0, 0, 0};
	bool bare = m->ncfg == 2;
	int rc = 0;

	*json = NULL;
	snprintf(script, sizeof(script), "%s/filter_report.py", eval_dir);
	if ((rep = run_report(script)) == NULL)
		return EXIT_SANDBOX;
	fams = json_object_get(rep, "families");
	hostile = json_object_get(rep, "hostile");
	ordinary = json_object_get(rep, "ordinary");
	if (!json_is_object(fams) || !json_is_object(hostile) ||
	    !json_is_object(ordinary)) {
		log_error("eval filter: %s --json: no families, hostile or "
			  "ordinary",
		    script);
		json_decref(rep);
		return EXIT_SANDBOX;
	}
	rows = json_array();
	fprintf(out,
	    "Generated by `%s` (stockade %s); regenerate it with "
	    "that command, do not edit it.\n\n",
	    m->command, STOCKADE_VERSION);
	fprintf(out,
	    "| obfuscation family | programs | let through by the "
	    "filter | bypass rate | of those, harmful with no sandbox | "
	    "harm in the sandbox |\n|---|--:|--:|--:|--:|--:|\n");
	json_object_foreach(fams, slug, fam)
	    family_row(m, bare, slug, fam, out, rows, &sum);
	print_summary(m, bare, hostile, ordinary, &sum, out);
	if (sum.matched != (long)m->corpus->n)
		fprintf(out,
		    "\nNote: %zu programs ran, %ld of them are in the "
		    "filter's report.\n",
		    m->corpus->n, sum.matched);
	if (sum.harm > 0)
		rc = EXIT_FOUND;
	else if (sum.err > 0 || sum.matched != (long)m->corpus->n)
		rc = EXIT_SANDBOX;
	/* The report's absolute paths name this machine's checkout: the
	 * committed JSON keeps file names only. */
	{
		json_t *f;
		size_t i;

		json_array_foreach(json_object_get(ordinary, "files"), i, f)
		    json_object_del(f, "path");
	}
	*json = json_pack("{s:s, s:s, s:s, s:o, s:O, s:O, s:i, s:o}", "eval",
	    "filter", "command", m->command, "version", STOCKADE_VERSION,
	    "families", rows != NULL ? rows : json_null(), "hostile", hostile,
	    "ordinary", ordinary, "harm", (int)sum.harm, "sandbox",
	    eval_matrix_json(m));
	json_decref(rep);
	if (fflush(out) != 0 || ferror(out))
		rc = EXIT_SANDBOX;
	return rc;
}
