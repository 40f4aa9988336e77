/*
 * cmd_run.c: `stockade run [options] -- PROGRAM [ARGS...]`.
 *
 * Loads the policy, refuses if the kernel lacks user namespaces, opens or
 * makes the workspace, starts the launcher, puts the --put files in, runs
 * one job (jobrun.h), collects the --get files and reports it: by default
 * the program's output streams through and one summary line goes to
 * stderr; with --json nothing streams and exactly one JSON object goes to
 * stdout. This file parses the command line and runs those steps; the
 * help is run_usage.c's, the --put and --get files run_xfer.c's, the
 * output and the result run_output.c's (cmd_run.h).
 *
 * A policy with an evaluation-only key ([jail] unsafe_layers_off,
 * unsafe_no_seccomp, [filesystem] unsafe_ro_bind_no_landlock;
 * docs/layers.md) is an evaluation's: refused unless --unsafe-evaluation
 * is given, and then run under a warning on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cmd_run.h"
#include "commands.h"
#include "fsapi.h"
#include "fsutil.h"
#include "jobrun.h"
#include "log.h"
#include "doctor.h"
#include "preflight.h"
#include "progress.h"
#include "runflags.h"
#include "supervisor.h"
#include "workspace.h"

#define EXIT_FILE 1 /* a --put or --get that failed (README.md) */

/*
 * The job's standard input (README.md, "Standard input"): FILE when
 * given (opened before confinement; a directory is refused), else
 * stockade's own stdin unless it is a terminal, closed, /dev/null itself
 * (character device 1:3, the kernel's devices.txt: the job's own
 * /dev/null does as well, with no pipe) or NO (--no-stdin). Returns the descriptor to feed (0, or FILE's, which *OWNED then holds),
 * -1 for none (/dev/null), or -2 after complaining.
 */
static int
open_stdin(const char *file, bool no, int *owned)
{
	struct stat st;
	int fd;

	*owned = -1;
	if (no)
		return -1;
	if (file == NULL)
		return isatty(0) || fstat(0, &st) < 0 ||
			(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
		    ? -1
		    : 0;
	fd = open(file, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		log_error("--stdin %s: %s", file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -2;
	}
	if (S_ISDIR(st.st_mode)) {
		log_error("--stdin %s: is a directory", file);
		close(fd);
		return -2;
	}
	*owned = fd;
	return fd;
}

/*
 * Lays the --env arguments VARS (N of them: "NAME=VALUE", or "NAME" for
 * stockade's own value of NAME) over JR's environment under POL's
 * [jail] client_env (jobrun_set_env). Returns 0, or an exit status after
 * complaining.
 */
static int
apply_env(struct jobrun *jr, const struct policy *pol, char **vars, size_t n)
{
	char why[512], name[JOBENV_MAX_NAME + 2];
	const char *eq, *value;
	enum jobenv_error je;
	bool oom;
	size_t nlen;
	int e;

	for (size_t i = 0; i < n; i++) {
		eq = strchr(vars[i], '=');
		nlen = eq != NULL ? (size_t)(eq - vars[i]) : strlen(vars[i]);
		if (nlen >= sizeof(name))
			nlen = sizeof(name) - 1; /* too long: refused below */
		memcpy(name, vars[i], nlen);
		name[nlen] = '\0';
		value = eq != NULL ? eq + 1 : getenv(name);
		if (value == NULL) {
			log_error("--env %s: stockade's environment has no %s "
				  "to pass on (give --env %s=VALUE)",
			    vars[i], vars[i], vars[i]);
			return EXIT_USAGE;
		}
		je = jobrun_set_env(jr, pol, name, value, strlen(value), &oom,
		    why, sizeof(why));
		if (oom) {
			log_error("out of memory");
			return EXIT_SANDBOX;
		}
		if (je != JOBENV_OK) {
			log_error("--env: %s", why);
			return EXIT_USAGE;
		}
	}
	if (n > 0 && (e = jobrun_check_fits(jr)) < 0) {
		log_error("%s", jobrun_spec_error(e, why, sizeof(why)));
		return e == -ENOMEM ? EXIT_SANDBOX : EXIT_USAGE;
	}
	return 0;
}

/* The confinement of `stockade run` (above its call); 0 or an exit
 * status, reported. */
static int
confine_run(const struct workspace *ws, const struct xfers *gets)
{
	struct confine_rule *rules;
	size_t n = 0;
	int rc;

	rules = calloc(gets->n + 2, sizeof(*rules));
	if (rules == NULL) {
		log_error("out of memory");
		return EXIT_SANDBOX;
	}
	rules[n++] = (struct confine_rule){ws->fd, CONFINE_ALL};
	if (ws->temporary)
		rules[n++] = (struct confine_rule){ws->parent_fd,
		    LANDLOCK_ACCESS_FS_REMOVE_DIR};
	for (size_t i = 0; i < gets->n; i++)
		rules[n++] = (struct confine_rule){gets->v[i].fd,
		    LANDLOCK_ACCESS_FS_MAKE_REG |
			LANDLOCK_ACCESS_FS_REMOVE_FILE};
	rc = confine_or_complain(rules, n);
	free(rules);
	return rc;
}

/* The launcher of `stockade run`, through a spawner: one job needs no
 * restart, but a confined broker reads the job's stage through the
 * spawner (issue 26; spawner.h). A launcher that does not start is the
 * job's sandbox_error (JR). 0 or EXIT_SANDBOX, reported. */
static int
start_launcher(struct supervisor *sup, struct jobrun *jr)
{
	int e;

	if ((e = supervisor_use_spawner(sup)) < 0) {
		log_error("cannot start the launcher spawner: %s",
		    strerror(-e));
		return EXIT_SANDBOX;
	}
	if ((e = supervisor_start(sup)) < 0) {
		log_debug("the launcher did not start: %s", strerror(-e));
		jr->start_error = e;
	}
	return 0;
}

/*
 * A policy with any evaluation-only key ("unsafe_": [jail]
 * unsafe_layers_off, unsafe_no_seccomp, [filesystem]
 * unsafe_ro_bind_no_landlock) runs only as an evaluation: with UNSAFE
 * (--unsafe-evaluation), after a warning on stderr for each; otherwise it
 * is refused, naming what it weakens (docs/layers.md). Returns 0 or
 * EXIT_USAGE, reported.
 */
static int
check_unsafe(const struct policy *pol, bool unsafe)
{
	uint32_t off = policy_layers_off(pol);
	const struct mount_entry *m = policy_unsafe_mount(pol);
	char names[256];

	if (off == 0 && m == NULL)
		return 0;
	job_layers_format(off, names, sizeof(names));
	if (!unsafe) {
		if (off != 0)
			log_error(
			    "refused: the policy switches layers off (%s): "
			    "only `stockade eval` or `stockade run "
			    "--unsafe-evaluation` may run it",
			    names);
		if (m != NULL)
			log_error(
			    "refused: the policy binds %s with "
			    "unsafe_ro_bind_no_landlock (no Landlock rule "
			    "for it): only `stockade eval` or `stockade run "
			    "--unsafe-evaluation` may run it",
			    m->target);
		return EXIT_USAGE;
	}
	if (off != 0)
		fprintf(stderr,
		    "stockade: WARNING: unsafe evaluation: layers "
		    "off: %s; this job is not isolated\n",
		    names);
	if (m != NULL)
		fprintf(stderr,
		    "stockade: WARNING: unsafe evaluation: "
		    "unsafe_ro_bind_no_landlock binds %s with no Landlock "
		    "rule; this job is not isolated\n",
		    m->target);
	return 0;
}

/* What the command line of `stockade run` asked for (run_parse). */
struct run_args {
	const char *policy_file, *workspace, *stdin_file;
	bool keep, unsafe, quiet, no_stdin;
	bool rollback_on_failure; /* commit on_ok (jobrun.h) */
	bool dry_run; /* commit keep: show the change set, apply nothing */
	char **envs; /* the --env arguments (argv's); owned array */
	size_t nenvs;
	enum run_format fmt;
	struct jobrun_overrides ov; /* the limit flags (runflags.h) */
	struct xfers puts, gets;
	int prog; /* argv's index of PROGRAM */
};

/* Adds the --env ARG (argv's) to A, whose array has room for ARGC.
 * Returns 0 or EXIT_SANDBOX, reported. */
static int
add_env(struct run_args *a, int argc, char *arg)
{
	if (a->envs == NULL &&
	    (a->envs = calloc((size_t)argc, sizeof(*a->envs))) == NULL) {
		log_error("out of memory");
		return EXIT_SANDBOX;
	}
	a->envs[a->nenvs++] = arg;
	return 0;
}

/* Adds the --put (C 'P') or --get (C 'G') ARG to A. Returns 0 or an exit
 * status, reported. */
static int
parse_xfer(struct run_args *a, int c, const char *arg, int argc)
{
	int e = run_xfer_add(c == 'P' ? &a->puts : &a->gets, (size_t)argc, arg,
	    c == 'P');

	if (e == -ENOMEM) {
		log_error("out of memory");
		return EXIT_SANDBOX;
	}
	if (e < 0) {
		log_error("--%s: expected %s, got \"%s\"",
		    c == 'P' ? "put" : "get",
		    c == 'P' ? "HOST:SANDBOX" : "SANDBOX:HOST (HOST a file)",
		    arg);
		return EXIT_USAGE;
	}
	return 0;
}

/* The options of `stockade run` beside the run flags (runflags.h). */
static const struct option run_own_options[] = {
    {"policy", required_argument, NULL, 'p'},
    {"workspace", required_argument, NULL, 'w'},
    {"keep", no_argument, NULL, 'k'},
    {"json", no_argument, NULL, 'j'},
    {"put", required_argument, NULL, 'P'},
    {"get", required_argument, NULL, 'G'},
    {"unsafe-evaluation", no_argument, NULL, 'U'},
    {"no-progress", no_argument, NULL, 'N'},
    {"stdin", required_argument, NULL, 'I'},
    {"no-stdin", no_argument, NULL, 'n'},
    {"env", required_argument, NULL, 'E'},
    {"rollback-on-failure", no_argument, NULL, 'R'},
    {"dry-run", no_argument, NULL, 'D'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
/*
 * Parses the command line into A (zeroed by the caller). Returns -1 to go
 * on (A->prog then names PROGRAM), or the exit status to end with: 0
 * after --help, EXIT_USAGE or EXIT_SANDBOX after complaining. A holds
 * what it allocated either way (cmd_run frees it).
 */
static int
run_parse(int argc, char **argv, struct run_args *a)
{
	struct option opts[RUNFLAGS_N +
	    sizeof(run_own_options) / sizeof(run_own_options[0])];
	char err[POLICY_ERR_MAX + 256];
	int c, rc;

	memcpy(opts, runflags_options, sizeof(runflags_options));
	memcpy(opts + RUNFLAGS_N, run_own_options, sizeof(run_own_options));
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c >= RUNFLAG_TIMEOUT && c <= RUNFLAG_FORMAT) {
			if (runflags_apply(c, optarg, &a->ov, &a->fmt, err,
				sizeof(err)) < 0) {
				log_error("%s", err);
				return EXIT_USAGE;
			}
			continue;
		}
		switch (c) {
		case 'p':
			a->policy_file = optarg;
			break;
		case 'w':
			a->workspace = optarg;
			break;
		case 'k':
			a->keep = true;
			break;
		case 'j':
			a->fmt = RUN_FORMAT_JSON;
			break;
		case 'U':
			a->unsafe = true;
			break;
		case 'N':
			a->quiet = true;
			break;
		case 'I':
			a->stdin_file = optarg;
			break;
		case 'n':
			a->no_stdin = true;
			break;
		case 'E':
			if ((rc = add_env(a, argc, optarg)) != 0)
				return rc;
			break;
		case 'R': /* --rollback-on-failure */
		case 'D': /* --dry-run */
			*(c == 'R' ? &a->rollback_on_failure
				   : &a->dry_run) = true;
			break;
		case 'P':
		case 'G':
			if ((rc = parse_xfer(a, c, optarg, argc)) != 0)
				return rc;
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			run_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		run_usage(stderr);
		return EXIT_USAGE;
	}
	if (a->stdin_file != NULL && a->no_stdin) {
		log_error("--stdin and --no-stdin: give one");
		return EXIT_USAGE;
	}
	a->prog = optind;
	return -1;
}

/*
 * Makes the job JR of PROGRAM [ARGS...] (ARGV from A->prog) under POL and
 * A's flags, checked against what RUN can carry before anything is made
 * or started (jobspec.h): its environment, its standard input (FEED, or
 * the terminal; a --stdin file's descriptor into *IN_OWNED), and, when
 * streamed, captures cut to what the status needs. Returns 0 or an exit
 * status, reported; JR is to be freed either way.
 */
static int
run_job_init(struct jobrun *jr, const struct policy *pol,
    const struct run_args *a, int argc, char **argv, struct stdin_feed *feed,
    int *in_owned)
{
	char err[POLICY_ERR_MAX + 256];
	int in_fd, rc, e;

	if ((e = jobrun_init(jr, pol, argc - a->prog, argv + a->prog, &a->ov)) <
	    0) {
		log_error("%s", jobrun_spec_error(e, err, sizeof(err)));
		return e == -ENOMEM ? EXIT_SANDBOX : EXIT_USAGE;
	}
	if ((rc = apply_env(jr, pol, a->envs, a->nenvs)) != 0)
		return rc;
	if (a->dry_run)
		jr->commit = COMMIT_KEEP;
	else if (a->rollback_on_failure)
		jr->commit = COMMIT_ON_OK;
	/* Layer no_terminal off: the payload reads our terminal, when
	 * stdin is one (the launcher accepts nothing else). */
	if (job_spec_layer_off(&jr->spec, JOB_LAYER_NO_TERMINAL) && isatty(0) &&
	    a->stdin_file == NULL && !a->no_stdin)
		jr->tty_fd = 0;
	else if ((in_fd = open_stdin(a->stdin_file, a->no_stdin, in_owned)) ==
	    -2) {
		return EXIT_USAGE;
	} else if (in_fd >= 0) {
		/* Streamed through a pipe of the broker's (stdin_feed.h). */
		if (stdin_feed_init_fd(feed, in_fd) < 0) {
			log_error("out of memory");
			return EXIT_SANDBOX;
		}
		jr->feed = feed;
	}
	/* Streamed, the output is printed as it comes and no result holds
	 * it: keep only what the status needs (stderr's last words). */
	if (a->fmt == RUN_FORMAT_STREAM &&
	    jobrun_shrink_captures(jr, 8192) < 0) {
		log_error("out of memory");
		return EXIT_SANDBOX;
	}
	return 0;
}

/*
 * The run itself, in the open workspace WS: starts the launcher, confines
 * the broker, puts the --put files in, runs the job JR (POL's) with its
 * output, collects the --get files and reports the result. Returns the
 * exit status; the launcher is stopped (supervisor_free), WS left to the
 * caller.
 */
static int
run_in_workspace(struct run_args *a, struct policy *pol, struct workspace *ws,
    struct jobrun *jr)
{
	struct supervisor sup;
	struct egress_proxy px;
	struct fs_ctx ctx;
	enum progress_mode pm;
	char err[POLICY_ERR_MAX + 256];
	bool got = true;
	int rc, e;

	egress_proxy_init(&px);
	if (supervisor_init(&sup, err, sizeof(err)) < 0) {
		log_error("%s", err);
		rc = EXIT_SANDBOX;
		goto out;
	}
	/* The job's egress proxy, when the policy allows hosts: started
	 * before the broker confines itself, as the launcher is. */
	if ((rc = session_start_proxy(pol, &px)) != 0)
		goto out;
	if (policy_has_network(pol) &&
	    (e = jobrun_use_network(jr, &px, &pol->net, NULL, NULL)) < 0) {
		log_error("cannot give the job its network: %s", strerror(-e));
		rc = EXIT_SANDBOX;
		goto out;
	}
	/*
	 * The launcher is started now, while the broker may still exec, and
	 * then the broker confines itself (confine.h): every right beneath
	 * the workspace; for a temporary workspace, the removal of that one
	 * directory from $TMPDIR at the end; for each --get, making the file
	 * and removing the temporary one in its host directory.
	 */
	if ((rc = start_launcher(&sup, jr)) != 0)
		goto out;
	/* The status line (progress.h), asked of the terminal before
	 * confinement; not for a job that reads the terminal itself. */
	pm = progress_mode(
	    a->quiet || a->fmt != RUN_FORMAT_STREAM || jr->tty_fd >= 0);
	if ((rc = confine_run(ws, &a->gets)) != 0)
		goto out;
	fsapi_ctx_init(&ctx, ws->fd, &pol->files);
	if (!run_puts(&a->puts, &ctx)) {
		rc = EXIT_FILE;
		goto out;
	}

	run_exec_passing(jr, &sup, &ctx, a->fmt, pm);

	/* Collected whatever the job's status (its files may explain a
	 * failure), but not after an interruption: the user wants out. */
	for (size_t i = 0; i < a->gets.n && !jobrun_interrupted(); i++)
		got = run_get(&a->gets.v[i], &ctx) && got;

	rc = run_report(jr, a->fmt, &a->puts, &a->gets);
	/* The job's status decides; a failed --get only turns an ok into 1. */
	if (rc == 0 && !got)
		rc = EXIT_FILE;
	if (fflush(stdout) != 0)
		rc = EXIT_SANDBOX;
	if (jobrun_interrupted())
		rc = 128 + jobrun_interrupted();
out:
	supervisor_free(&sup);
	egress_proxy_stop(&px);
	return rc;
}

int
cmd_run(int argc, char **argv)
{
	struct run_args a;
	struct stdin_feed feed;
	int in_owned = -1;
	struct policy pol;
	struct workspace ws;
	struct jobrun jr;
	char err[POLICY_ERR_MAX + 256];
	int rc, e;

	memset(&a, 0, sizeof(a));
	a.fmt = RUN_FORMAT_STREAM;
	stdin_feed_init_data(&feed, "", 0);
	if ((rc = run_parse(argc, argv, &a)) >= 0)
		goto out_args;

	memset(&pol, 0, sizeof(pol));
	if ((rc = load_policy_or_complain(&pol, a.policy_file)) != 0)
		goto out_args;
	if ((rc = check_unsafe(&pol, a.unsafe)) != 0) {
		policy_clear(&pol);
		goto out_args;
	}
	if ((rc = run_job_init(&jr, &pol, &a, argc, argv, &feed, &in_owned)) !=
	    0)
		goto out_jr;
	if (doctor_cached_verdict(err, sizeof(err)) < 0) {
		log_error("refused: %s", err);
		rc = EXIT_REFUSED;
		goto out_jr;
	}
	if (!run_xfers_open(&a.puts, &a.gets)) {
		rc = EXIT_FILE;
		goto out_jr;
	}
	if ((rc = open_workspace_or_complain(&ws, a.workspace)) != 0)
		goto out_jr;
	rc = run_in_workspace(&a, &pol, &ws, &jr);
	if (ws.temporary && a.keep)
		fprintf(stderr, "stockade: workspace kept at %s\n", ws.path);
	if ((e = workspace_close(&ws, a.keep)) < 0)
		log_warn("could not remove the workspace %s: %s", ws.path,
		    strerror(-e));
out_jr:
	jobrun_free(&jr);
	policy_clear(&pol);
out_args:
	stdin_feed_free(&feed);
	if (in_owned >= 0)
		close(in_owned);
	free(a.envs);
	run_xfers_free(&a.puts);
	run_xfers_free(&a.gets);
	return rc;
}
