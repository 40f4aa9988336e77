/*
 * cmd_policy.c: `stockade policy show [--policy FILE]` prints the
 * effective policy in canonical form, with where each line comes from;
 * `stockade policy default` prints the embedded default byte for byte;
 * `stockade policy check [--unsafe-evaluation] FILE` only validates, as
 * `stockade run` takes a policy: one with an evaluation-only key
 * (unsafe_*) is refused unless --unsafe-evaluation is given; so is one
 * whose job has no program to run (unless [policy] no_programs says so)
 * or that binds with ro_bind a path this host lacks, each named at its
 * line (policy_check_programs, policy_check_source); every [network] rule
 * it refuses is named, not only the first (policy_load_file_report).
 * Also the steps every command shares
 * (commands.h, *_or_complain): load the policy, open the workspace,
 * confine.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "log.h"
#include "preflight.h"
#include "stage.h"

/* The longest message log_msg prints whole (its line buffer, log.c). */
#define LOG_LINE_MAX 1023

/*
 * Logs ERR, the loader's complaint about FILE ("FILE:LINE: what" or
 * "FILE: what"). When it is longer than a log line (FILE a long path)
 * the path goes last, "line LINE: what (policy FILE)", so that the cut
 * falls in the path and never loses the key or the line.
 */
static void
log_policy_error(const char *err, const char *file)
{
	size_t flen = strlen(file);
	const char *what = err + flen + 1;
	char *end;
	unsigned long line;

	if (strlen(err) <= LOG_LINE_MAX || strncmp(err, file, flen) != 0 ||
	    err[flen] != ':') {
		log_error("%s", err);
		return;
	}
	if (*what >= '0' && *what <= '9') {
		line = strtoul(what, &end, 10);
		if (end[0] == ':' && end[1] == ' ') {
			log_error("line %lu: %s (policy %s)", line, end + 2,
			    file);
			return;
		}
	}
	log_error("%s (policy %s)", what + strspn(what, " "), file);
}

/* `stockade policy check`'s reporter: each error as the loader finds it
 * (ARG: the file's path). */
static void
report_policy_error(const char *msg, void *arg)
{
	log_policy_error(msg, arg);
}

/*
 * Loads FILE (NULL: the embedded default) into P. With EVERY (a file
 * only), each refused entry is reported as the loader finds it
 * (policy_load_file_report); otherwise the one error that ended the
 * reading is. Returns 0, EXIT_USAGE, or EXIT_SANDBOX when out of memory.
 */
static int
load_complaining(struct policy *p, const char *file, bool every)
{
	/* Room for the message after the path, however long the path. */
	size_t len = POLICY_ERR_MAX + (file != NULL ? strlen(file) : 0);
	char *err = malloc(len);
	int e;

	memset(p, 0, sizeof(*p));
	if (err == NULL) {
		log_error("cannot load the policy: %s", strerror(ENOMEM));
		return EXIT_SANDBOX;
	}
	if (file == NULL)
		e = policy_load_default(p, err, len);
	else if (every)
		e = policy_load_file_report(p, file, report_policy_error,
		    (void *)(uintptr_t)file, err, len);
	else
		e = policy_load_file(p, file, err, len);
	if (e < 0 && !every && file != NULL)
		log_policy_error(err, file);
	else if (e < 0 && !every)
		log_error("%s", err);
	free(err);
	return e < 0 ? EXIT_USAGE : 0;
}

int
load_policy_or_complain(struct policy *p, const char *file)
{
	return load_complaining(p, file, false);
}

int
open_workspace_or_complain(struct workspace *ws, const char *dir)
{
	char err[POLICY_ERR_MAX + 256];
	int e = workspace_open(ws, dir, err, sizeof(err));

	if (e == 0) {
		/* A commit a killed broker left: undone (or its finished
		 * journal removed) before anything reads the workspace. */
		if ((e = stage_recover(ws->fd, err, sizeof(err))) < 0) {
			log_error("refused: %s/%s holds a commit a broker left "
				  "unfinished, and it cannot be undone: %s "
				  "(remove it by hand once you have looked)",
			    ws->path, STAGE_JOURNAL, strerror(-e));
			workspace_close(ws, true);
			return EXIT_SANDBOX;
		}
		if (err[0] != '\0')
			log_warn("%s", err);
		return 0;
	}
	/* No openat2: refuse, never fall back (style.md rule 18). */
	log_error("%s%s", e == -ENOSYS ? "refused: " : "", err);
	return e == -ENOSYS ? EXIT_REFUSED : EXIT_USAGE;
}

int
confine_or_complain(const struct confine_rule *rules, size_t nrules)
{
	char err[512];
	int e = confine_broker(rules, nrules, err, sizeof(err));

	if (e == 0)
		return 0;
	log_error("%s%s", e == -EOPNOTSUPP ? "refused: " : "", err);
	return e == -EOPNOTSUPP ? EXIT_REFUSED : EXIT_SANDBOX;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: stockade policy show [--policy FILE]\n"
	    "       stockade policy default\n"
	    "       stockade policy check [--unsafe-evaluation] FILE\n");
}

/*
 * Writes the evaluation-only keys P sets ("unsafe_layers_off (pid_ns),
 * unsafe_ro_bind_no_landlock (/srv)") into BUF (LEN > 0 bytes,
 * truncated). Returns true when there is any: `stockade run` refuses
 * such a policy without --unsafe-evaluation and `stockade serve` always
 * (docs/layers.md).
 */
static bool
unsafe_keys(const struct policy *p, char *buf, size_t len)
{
	char names[256];
	size_t at = 0;

	buf[0] = '\0';
	if (p->layers_off != 0)
		at += (size_t)snprintf(buf + at, len - at,
		    "unsafe_layers_off (%s)",
		    job_layers_format(p->layers_off, names, sizeof(names)));
	if (p->unsafe_no_seccomp && at < len)
		at += (size_t)snprintf(buf + at, len - at,
		    "%sunsafe_no_seccomp", at ? ", " : "");
	if (policy_unsafe_mount(p) != NULL && at < len)
		at += (size_t)snprintf(buf + at, len - at,
		    "%sunsafe_ro_bind_no_landlock (%s)", at ? ", " : "",
		    policy_unsafe_mount(p)->target);
	return at > 0;
}

/*
 * `stockade policy check`'s questions about the job P describes beyond
 * the language: it has a program to run, and every ro_bind source is on
 * this host (what the launcher would otherwise refuse at job time, as
 * sandbox_error). Logs each problem as "FILE:LINE: what"; returns true
 * when there is none.
 */
static bool
job_ready(const struct policy *p, const char *file)
{
	size_t len = POLICY_ERR_MAX + strlen(file) + PATH_MAX;
	char *err = malloc(len);
	bool ok = true;

	if (err == NULL) {
		log_error("cannot check the policy: %s", strerror(ENOMEM));
		return false;
	}
	if (policy_check_programs(p, err, len) < 0) {
		log_policy_error(err, file);
		ok = false;
	}
	for (size_t i = 0; i < p->nmounts; i++)
		if (policy_check_source(p, i, err, len) < 0) {
			log_policy_error(err, file);
			ok = false;
		}
	free(err);
	return ok;
}

int
cmd_policy(int argc, char **argv)
{
	struct policy p;
	const char *file = NULL;
	char keys[1024];
	bool unsafe = false;
	int rc;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* `stockade policy [show|default|check] --help`: the usage on
	 * stdout, exit 0, as every command's --help. */
	if (strcmp(argv[argc - 1], "--help") == 0 && argc <= 3) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "default") == 0 && argc == 2) {
		fputs(policy_default_text, stdout);
		return fflush(stdout) == 0 ? 0 : EXIT_SANDBOX;
	}
	if (strcmp(argv[1], "show") == 0) {
		if (argc == 4 && strcmp(argv[2], "--policy") == 0)
			file = argv[3];
		else if (argc != 2) {
			usage(stderr);
			return EXIT_USAGE;
		}
	} else if (strcmp(argv[1], "check") == 0 && argc == 3) {
		file = argv[2];
	} else if (strcmp(argv[1], "check") == 0 && argc == 4 &&
	    strcmp(argv[2], "--unsafe-evaluation") == 0) {
		file = argv[3];
		unsafe = true;
	} else {
		usage(stderr);
		return EXIT_USAGE;
	}
	rc = strcmp(argv[1], "check") == 0
	    ? load_complaining(&p, argv[argc - 1], true)
	    : load_policy_or_complain(&p, file);
	if (rc != 0)
		return rc;
	if (strcmp(argv[1], "show") == 0 && policy_show(&p, stdout) < 0) {
		rc = EXIT_SANDBOX;
	} else if (strcmp(argv[1], "check") == 0 && !unsafe &&
	    unsafe_keys(&p, keys, sizeof(keys))) {
		/* The path last: a long one must not cut off the keys. */
		log_error("refused: the policy sets evaluation-only keys: %s; "
			  "`stockade run` refuses it without "
			  "--unsafe-evaluation and `stockade serve` always "
			  "(`stockade policy check --unsafe-evaluation` checks "
			  "an evaluation's policy): %s",
		    keys, file);
		rc = EXIT_USAGE;
	} else if (strcmp(argv[1], "check") == 0 && !job_ready(&p, file)) {
		rc = EXIT_USAGE;
	} else if (strcmp(argv[1], "check") == 0) {
		printf("%s: ok%s\n", file,
		    unsafe && unsafe_keys(&p, keys, sizeof(keys))
			? " for an evaluation only"
			: "");
	}
	policy_clear(&p);
	return rc;
}
