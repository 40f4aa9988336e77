/*
 * cmd_check.c: `stockade check [--json] [--only LAYER[,LAYER]]... [--list]
 * [--prefix DIR]` (check.h, docs/check.md), the program stockade-check:
 * runs the checks against the stockade that executed it (verify.h,
 * verify_find_broker), or the one under DIR (an installation prefix or
 * a build tree), and prints one line per check,
 * then the summary:
 *
 *     PASS  user_ns          user_ns.setgroups_denied  /proc/self/setgroups says "deny"
 *     ...
 *     stockade check: 64 checks, 64 passed, 0 failed, 0 skipped in 9.8 s
 *
 * Exit 0 when no check failed, 1 when one did, 2 for usage, 70 when the
 * checks could not be run at all (a binary missing, no scratch space).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "commands.h"
#include "config.h"
#include "install_path.h"
#include "verify.h"

const char *const check_layers[] = {
    "limits",
    "process_cleanup",
    "environment",
    "working_directory",
    "user_ns",
    "pid_ns",
    "mount_ns",
    "network_ns",
    "egress",
    "ipc_ns",
    "uts_ns",
    "terminal",
    "capabilities",
    "no_new_privs",
    "landlock",
    "seccomp",
    "file_api",
    "results",
    "boundary",
    "policy",
    NULL,
};

static const struct check *const groups[] = {
    checks_jail,
    checks_process,
    checks_privs,
    checks_seccomp,
    checks_confined,
    checks_fs,
    checks_fs_put,
    checks_fs_tree,
    checks_results,
    checks_policy,
    checks_boundary,
    checks_broker_side,
    checks_egress,
};
#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

/* After this long, milliseconds, the remaining checks fail unrun. */
#define CHECK_BUDGET_MS 100000

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: stockade check [--json] [--only LAYER[,LAYER...]]... "
	    "[--list] [--prefix DIR]\n"
	    "  --json         one JSON object on stdout instead of lines\n"
	    "  --only NAMES   only the checks of these layers (or checks "
	    "named so)\n"
	    "  --list         print the checks, run none\n"
	    "  --prefix DIR   check the stockade under DIR (an "
	    "installation prefix,\n"
	    "                 DIR/bin/stockade, or a build tree, "
	    "DIR/stockade)\n"
	    "Layers:");
	for (size_t i = 0; check_layers[i] != NULL; i++)
		fprintf(f, " %s", check_layers[i]);
	fprintf(f, "\n");
}

/* DST (4096 bytes) = DIR NAME; truncation leaves a path that does not
 * exist, which is_exe then refuses. */
static void
join(char *dst, const char *dir, const char *name)
{
	strlcpy(dst, dir, 4096);
	strlcat(dst, name, 4096);
}

static bool
is_exe(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

/*
 * Finds the helper NAME of the broker in BINDIR the way the broker finds
 * its launcher (install_open_helper, install_path.h: beside it, then by
 * the relative path bindir -> libexecdir, then, with BUILTIN,
 * STOCKADE_LIBEXECDIR) into DST (4096 bytes). Returns 0, or prints the
 * places tried and returns -1.
 */
static int
locate_helper(char *dst, const char *bindir, const char *name, bool builtin)
{
	char tried[3 * PATH_MAX];
	int fd = install_open_helper(bindir, name, builtin, dst, PATH_MAX,
	    tried, sizeof(tried));

	if (fd >= 0) {
		close(fd);
		if (is_exe(dst))
			return 0;
		fprintf(stderr,
		    "stockade check: %s: not executable by this "
		    "user\n",
		    dst);
		return -1;
	}
	fprintf(stderr,
	    "stockade check: %s: no executable file in %s; give "
	    "the installation or build tree with --prefix DIR\n",
	    name, tried);
	return -1;
}

/*
 * Finds the three binaries: under PREFIX (a build tree holds them side by
 * side; an installation has PREFIX/STOCKADE_PREFIX_TO_BIN/stockade and
 * its helpers where that broker finds them, never this one's compiled-in
 * STOCKADE_LIBEXECDIR), else the broker that executed this program
 * (verify_find_broker, verify.h: the one the user ran as `stockade
 * check`) and the helpers from its directory in the launcher's own search
 * order (supervisor_init). Returns 0 or
 * prints why not and returns -1.
 */
static int
locate(struct check_ctx *c, const char *prefix)
{
	char dir[PATH_MAX], self[PATH_MAX];
	int e;

	if (prefix != NULL) {
		if (realpath(prefix, dir) == NULL) {
			fprintf(stderr, "stockade check: --prefix %s: %s\n",
			    prefix, strerror(errno));
			return -1;
		}
		join(c->stockade, dir, "/stockade");
		if (!is_exe(c->stockade)) {
			join(c->stockade, dir, "/" STOCKADE_PREFIX_TO_BIN);
			if (realpath(c->stockade, dir) == NULL)
				join(dir, c->stockade, "");
			join(c->stockade, dir, "/stockade");
		}
		if (!is_exe(c->stockade)) {
			fprintf(stderr,
			    "stockade check: %s: not an executable "
			    "file; give the installation or build tree "
			    "with --prefix DIR\n",
			    c->stockade);
			return -1;
		}
	} else {
		char tried[3 * PATH_MAX + 64], *slash;

		if ((e = verify_find_broker(self, sizeof(self), tried,
			 sizeof(tried))) < 0 ||
		    realpath(self, c->stockade) == NULL) {
			fprintf(stderr,
			    "stockade check: no stockade to check "
			    "in %s; run `stockade check`, or give the "
			    "installation or build tree with --prefix DIR"
			    "\n",
			    tried);
			return -1;
		}
		join(dir, c->stockade, "");
		if ((slash = strrchr(dir, '/')) != NULL && slash != dir)
			*slash = '\0';
	}
	if (locate_helper(c->launcher, dir, "stockade-launcher",
		prefix == NULL) < 0 ||
	    locate_helper(c->probe, dir, "stockade-probe", prefix == NULL) < 0)
		return -1;
	return 0;
}

/* Removes PATH and all beneath it, making directories writable first (a
 * job may leave one mode 0). Errors are ignored: scratch space. */
static void
remove_tree(int parent, const char *name)
{
	int fd = openat(parent, name,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	if (fd < 0) {
		unlinkat(parent, name, 0);
		return;
	}
	fchmod(fd, 0700);
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type == DT_DIR)
			remove_tree(dirfd(d), de->d_name);
		else
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

static bool
selected(const struct check *k, char **only, size_t nonly)
{
	if (nonly == 0)
		return true;
	for (size_t i = 0; i < nonly; i++)
		if (strcmp(only[i], k->layer) == 0 ||
		    strcmp(only[i], k->name) == 0)
			return true;
	return false;
}

/*
 * Writes the checks into OUT (at most MAX) in the order they print: by
 * layer (check_layers), then group, then their place in the group.
 * Returns how many.
 */
static size_t
ordered(const struct check **out, size_t max)
{
	size_t n = 0;

	for (size_t l = 0; check_layers[l] != NULL; l++)
		for (size_t g = 0; g < NGROUPS; g++)
			for (const struct check *k = groups[g]; k->name != NULL;
			     k++)
				if (strcmp(k->layer, check_layers[l]) == 0 &&
				    n < max)
					out[n++] = k;
	return n;
}

static void
on_signal(int sig)
{
	check_interrupted = sig;
}

/* An --only word must name a layer or a check. */
static bool
known(const char *w)
{
	for (size_t i = 0; check_layers[i] != NULL; i++)
		if (strcmp(w, check_layers[i]) == 0)
			return true;
	for (size_t g = 0; g < NGROUPS; g++)
		for (const struct check *k = groups[g]; k->name != NULL; k++)
			if (strcmp(w, k->name) == 0)
				return true;
	return false;
}

static const char *
verdict_name(enum check_verdict v)
{
	switch (v) {
	case CHECK_PASS:
		return "PASS";
	case CHECK_FAIL:
		return "FAIL";
	case CHECK_SKIP:
		return "SKIP";
	}
	return "?";
}

/* The environment of every process a check starts: a fixed PATH and the
 * caller's TMPDIR (where stockade makes its temporary workspaces). */
static char **
make_env(void)
{
	static char path[] = "PATH=/usr/local/bin:/usr/bin:/bin";
	static char *env[4];
	static char tmp[4200];
	size_t n = 0;
	const char *t = getenv("TMPDIR");

	env[n++] = path;
	if (t != NULL && *t == '/' && strlen(t) < 4000) {
		snprintf(tmp, sizeof(tmp), "TMPDIR=%s", t);
		env[n++] = tmp;
	}
	env[n] = NULL;
	return env;
}

/* What the command line of `stockade check` asks (parse_args). */
struct check_args {
	char *only[64]; /* --only's layers and checks, borrowed
				 * from argv (strtok'd in place) */
	size_t nonly;
	bool json, list;
	const char *prefix; /* --prefix, or NULL */
};

/* The verdicts counted over a run of the checks. */
struct check_counts {
	size_t pass, fail, skip;
};

/*
 * The options of `stockade check` (ARGC, ARGV; ARGV's --only values are
 * cut in place) into A. Returns -1 to go on, or the command's exit
 * status: 0 after --help, EXIT_USAGE on a bad option, an unknown --only
 * name or a stray argument (the error on stderr).
 */
static int
parse_args(int argc, char **argv, struct check_args *a)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"only", required_argument, NULL, 'o'},
	    {"list", no_argument, NULL, 'l'},
	    {"prefix", required_argument, NULL, 'p'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			a->json = true;
			break;
		case 'o':
			for (char *w = strtok(optarg, ","); w != NULL;
			     w = strtok(NULL, ",")) {
				if (!known(w)) {
					fprintf(stderr,
					    "stockade check: "
					    "--only %s: no such layer or "
					    "check (stockade check "
					    "--list)\n",
					    w);
					return EXIT_USAGE;
				}
				if (a->nonly < 64)
					a->only[a->nonly++] = w;
			}
			break;
		case 'l':
			a->list = true;
			break;
		case 'p':
			a->prefix = optarg;
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
	return -1;
}

/*
 * The scratch directory of a run, C->tmpdir: made 0711 under $TMPDIR
 * (an absolute one) or /tmp. Returns 0, or -1 with the error on stderr.
 */
static int
make_scratch(struct check_ctx *c)
{
	const char *t = getenv("TMPDIR");

	snprintf(c->tmpdir, sizeof(c->tmpdir), "%s/stockade-check-XXXXXX",
	    t != NULL && *t == '/' ? t : "/tmp");
	if (mkdtemp(c->tmpdir) == NULL || chmod(c->tmpdir, 0711) < 0) {
		fprintf(stderr, "stockade check: %s: %s\n", c->tmpdir,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* C->tmpdir removed with all it holds (C->tmpdir is cut to its parent). */
static void
remove_scratch(struct check_ctx *c)
{
	char *slash = strrchr(c->tmpdir, '/');

	*slash = '\0';
	int dfd = open(c->tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd >= 0) {
		remove_tree(dfd, slash + 1);
		close(dfd);
	}
}

/*
 * Runs the checks ALL[0..NALL) that A selects, in order, on C, from
 * START (check_now_ms) on, counting into N, until the end or a signal
 * (check_interrupted). Each verdict is printed as a line, or, with
 * A->json, appended to ARR (the caller's). Past CHECK_BUDGET_MS the
 * rest are failed unrun.
 */
static void
run_checks(struct check_ctx *c, const struct check *const *all, size_t nall,
    struct check_args *a, int64_t start, json_t *arr, struct check_counts *n)
{
	for (size_t i = 0; i < nall && !check_interrupted; i++) {
		const struct check *k = all[i];
		struct check_result r;

		if (!selected(k, a->only, a->nonly))
			continue;
		memset(&r, 0, sizeof(r));
		/* A stockade that hangs at every job would cost each
		 * check its deadline: past the budget the rest are
		 * failed unrun, so a run ends in about 2 minutes. */
		if (check_now_ms() - start > CHECK_BUDGET_MS)
			check_fail(&r,
			    "not run: the checks before it "
			    "used up the %d s budget (jobs that "
			    "hang until their deadline)",
			    CHECK_BUDGET_MS / 1000);
		else
			k->fn(c, &r);
		if (check_interrupted)
			break;
		n->pass += r.verdict == CHECK_PASS;
		n->fail += r.verdict == CHECK_FAIL;
		n->skip += r.verdict == CHECK_SKIP;
		if (a->json) {
			json_array_append_new(arr,
			    json_pack("{s:s,s:s,s:s,s:s,s:s}", "name", k->name,
				"layer", k->layer, "verdict",
				verdict_name(r.verdict), "observed", r.observed,
				"expected", k->expect));
		} else {
			printf("%s  %-17s %-44s %s\n", verdict_name(r.verdict),
			    k->layer, k->name, r.observed);
			fflush(stdout);
		}
	}
}

/*
 * The totals of a run of the checks, N in SECS seconds by the stockade
 * of C, on stdout: one JSON object holding ARR (whose reference it
 * takes) with JSON, a line without. Returns the command's exit status:
 * 1 when a check failed, 0, or EXIT_SANDBOX when the JSON could not be
 * made or written.
 */
static int
print_totals(const struct check_ctx *c, bool json, json_t *arr,
    const struct check_counts *n, double secs)
{
	size_t npass = n->pass, nfail = n->fail, nskip = n->skip;

	if (json) {
		json_t *o = json_pack("{s:s,s:i,s:o,s:i,s:i,s:i,s:i,s:f}",
		    "stockade", c->stockade, "uid", (json_int_t)geteuid(),
		    "checks", arr, "total", (json_int_t)(npass + nfail + nskip),
		    "passed", (json_int_t)npass, "failed", (json_int_t)nfail,
		    "skipped", (json_int_t)nskip, "seconds", secs);

		if (o == NULL || json_dumpf(o, stdout, JSON_INDENT(1)) < 0)
			return EXIT_SANDBOX;
		putchar('\n');
		json_decref(o);
	} else {
		printf("stockade check: %zu checks, %zu passed, %zu failed, "
		       "%zu skipped in %.1f s\n",
		    npass + nfail + nskip, npass, nfail, nskip, secs);
	}
	return nfail > 0 ? 1 : 0;
}

int
cmd_check(int argc, char **argv)
{
	struct check_ctx c;
	struct check_args a;
	struct check_counts n = {0, 0, 0};
	json_t *arr = NULL;
	const struct check *all[512];
	size_t nall;
	int64_t start;
	int rc;

	memset(&c, 0, sizeof(c));
	memset(&a, 0, sizeof(a));
	if ((rc = parse_args(argc, argv, &a)) >= 0)
		return rc;
	nall = ordered(all, sizeof(all) / sizeof(all[0]));
	if (a.list) {
		for (size_t i = 0; i < nall; i++)
			if (selected(all[i], a.only, a.nonly))
				printf("%-17s %-44s %s\n", all[i]->layer,
				    all[i]->name, all[i]->expect);
		return 0;
	}
	if (locate(&c, a.prefix) < 0)
		return EXIT_SANDBOX;
	c.root = geteuid() == 0;
	c.envp = make_env();
	if (make_scratch(&c) < 0)
		return EXIT_SANDBOX;
	if (a.json && (arr = json_array()) == NULL)
		return EXIT_SANDBOX;
	if (!a.json) {
		printf("stockade check: %s as uid %u\n", c.stockade,
		    (unsigned)geteuid());
		fflush(stdout);
	}
	/* Interrupted, a check's process group is killed (check_exec) and
	 * the scratch directory removed before we exit. */
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	start = check_now_ms();
	run_checks(&c, all, nall, &a, start, arr, &n);
	remove_scratch(&c);
	double secs = (double)(check_now_ms() - start) / 1000.0;
	if (check_interrupted) {
		fprintf(stderr,
		    "stockade check: interrupted (%s) after %zu "
		    "checks\n",
		    strsignal(check_interrupted), n.pass + n.fail + n.skip);
		return 128 + check_interrupted;
	}
	return print_totals(&c, a.json, arr, &n, secs);
}
