/*
 * cmd_run.c: `stockade run [options] -- PROGRAM [ARGS...]`.
 *
 * Loads the policy, refuses if the kernel lacks user namespaces, opens or
 * makes the workspace, starts the launcher, puts the --put files in, runs
 * one job (jobrun.h), collects the --get files and reports it: by default
 * the program's output streams through and one summary line goes to
 * stderr; with --json nothing streams and exactly one JSON object goes to
 * stdout.
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
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "fsapi.h"
#include "fsname.h"
#include "fsutil.h"
#include "jobrun.h"
#include "log.h"
#include "plant.h"
#include "doctor.h"
#include "preflight.h"
#include "progress.h"
#include "result_json.h"
#include "runflags.h"
#include "supervisor.h"
#include "utf8.h"
#include "workspace.h"

#define EXIT_FILE 1 /* a --put or --get that failed (README.md) */

struct run_output {
	bool stream;            /* pass output through as it arrives */
	bool closed[3];         /* our stdout/stderr went away (EPIPE...) */
	bool tty[3];            /* that stream of ours is a terminal */
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
	if (o->tty[stream] &&
	    !(PLANTED(term_escape_stdout_only) && stream == 2)) {
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
				   len - at < PROTO_OUTPUT_CHUNK ?
				   len - at : PROTO_OUTPUT_CHUNK);
		free(rest);
	}
	/* The stream's end: a sequence it ended inside of is shown as
	 * U+FFFD, never left for the terminal to complete. */
	n = term_escape_end(&o->esc[stream], end);
	if (n > 0 && o->tty[stream] && !o->closed[stream] &&
	    write_all(stream, end, n) < 0)
		o->closed[stream] = true;
}

/*
 * The synopsis to F; to stdout (--help) also every option with its
 * meaning and its default, the limits' read from the embedded default
 * policy (policy/default.ini), so that they cannot drift from it.
 */
static void
usage(FILE *f)
{
	struct policy d;
	char err[256];
	const struct job_limits *l = &d.limits;

	fprintf(f,
		"usage: stockade run [--policy FILE] [--workspace DIR] [--keep]\n"
		"                    [--timeout SECONDS] [--cpu-time SECONDS]\n"
		"                    [--memory MIB] [--processes N] [--file-size MIB]\n"
		"                    [--tmp-size MIB] [--output KIB]\n"
		"                    [--json | --format stream|json|text]\n"
		"                    [--unsafe-evaluation] [--no-progress]\n"
		"                    [--stdin FILE | --no-stdin] [--env NAME[=VALUE]]...\n"
		"                    [--put HOST:SANDBOX]... [--get SANDBOX:HOST]...\n"
		"                    -- PROGRAM [ARGS...]\n");
	if (f != stdout)
		return;
	memset(&d, 0, sizeof(d));
	if (policy_load_default(&d, err, sizeof(err)) < 0) {
		fprintf(f, "(the embedded default policy did not load: %s)\n",
			err);
		return;
	}
	fprintf(f,
		"\nRuns PROGRAM in a fresh jail with the workspace at /work "
		"and prints one result.\n\nOptions (defaults are the "
		"embedded default policy's; a --policy file's\nkeys replace "
		"them, and these flags replace both):\n"
		"  --policy FILE       the policy (stockade-policy(5)); default: "
		"the embedded one\n"
		"  --workspace DIR     the host directory mounted at /work; "
		"default: a fresh\n"
		"                      temporary one, removed after the job\n"
		"  --keep              keep that temporary workspace and print "
		"its path\n"
		"  --timeout SECONDS   wall-clock limit; default %llu.%03llu "
		"([limits] wall_time_ms)\n"
		"  --cpu-time SECONDS  CPU-time limit; default %llu.%03llu "
		"([limits] cpu_time_ms)\n"
		"  --memory MIB        memory limit; default %llu ([limits] "
		"memory_mb)\n"
		"  --processes N       processes and threads; default %u "
		"([limits] processes)\n"
		"  --file-size MIB     largest file the job may write; default "
		"%llu ([limits]\n                      file_size_mb)\n"
		"  --tmp-size MIB      size of the job's /tmp; default %llu "
		"([limits] tmp_mb)\n"
		"  --output KIB        cap of stdout and of stderr each; "
		"default %llu and %llu\n"
		"                      ([limits] stdout_kb, stderr_kb); past "
		"it the output is\n"
		"                      %s ([limits] on_output_limit)\n"
		"  --json              print the result as JSON "
		"(docs/result.schema.json)\n"
		"  --format FORMAT     stream (default: the output as it comes, "
		"then a summary\n"
		"                      on stderr), json, or text (the form a "
		"model reads)\n"
		"  --stdin FILE        the program's standard input from FILE; "
		"default:\n"
		"                      stockade's own when it is not a terminal, "
		"else /dev/null\n"
		"  --no-stdin          the program's standard input is "
		"/dev/null\n"
		"  --env NAME=VALUE    a variable over the policy's "
		"[environment] (repeatable;\n"
		"                      --env NAME passes stockade's own value); "
		"default: none,\n"
		"                      as far as [jail] client_env allows\n"
		"  --put HOST:SANDBOX  copy a host file into the workspace "
		"before the job\n"
		"                      (repeatable; missing directories are "
		"made)\n"
		"  --get SANDBOX:HOST  copy a workspace file out after the job "
		"(repeatable)\n"
		"  --no-progress       no \"running S s of LIMIT s\" line on "
		"a terminal; default:\n"
		"                      shown on a terminal after a second, never "
		"with --json\n"
		"  --unsafe-evaluation accept a policy that switches a layer "
		"off (unsafe_ keys),\n"
		"                      for measuring layers only; default: "
		"refused\n"
		"  --help              this text\n"
		"\nExit status: the program's own; 124 timeout; 125 another "
		"limit or a policy\nviolation; 128+N a crash by signal N, or "
		"cancelled (130 by SIGINT, 143 by\nSIGTERM); 69 a layer the "
		"kernel lacks; 70 a sandbox error; 2 usage; 1 a --put\nor "
		"--get that failed (README.md, \"Exit status\"; man "
		"stockade).\n",
		(unsigned long long)(l->wall_ms / 1000),
		(unsigned long long)(l->wall_ms % 1000),
		(unsigned long long)(l->cpu_ms / 1000),
		(unsigned long long)(l->cpu_ms % 1000),
		(unsigned long long)(l->memory_bytes >> 20), l->nproc,
		(unsigned long long)(l->fsize_bytes >> 20),
		(unsigned long long)(l->tmp_bytes >> 20),
		(unsigned long long)(l->stdout_bytes >> 10),
		(unsigned long long)(l->stderr_bytes >> 10),
		d.on_output_limit == OUTPUT_KILL ? "killed (output_limit)" :
		"truncated, head and tail kept");
	policy_clear(&d);
}

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
		       (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) ?
		       -1 : 0;
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
				  "to pass on (give --env %s=VALUE)", vars[i],
				  vars[i], vars[i]);
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

/*
 * One --put HOST:SANDBOX or --get SANDBOX:HOST. The sandbox side cannot
 * hold a ':' (--put splits at the last one, --get at the first), so a
 * host path may; `stockade put/get` take any sandbox path.
 */
struct xfer {
	const char *arg;        /* the option's argument, as given */
	char *host;             /* host path (owned) */
	char *sandbox;          /* sandbox path (owned) */
	const char *base;       /* --get: the last component of host */
	int fd;                 /* --put: the host file; --get: its directory */
	int out;                /* --get: the temporary file, made at open */
	char tmp[40];           /* --get: its name in fd; "" once renamed */
	mode_t mode;            /* --put: the host file's permission bits */
	bool done;              /* attempted */
	enum fs_error why;      /* FS_OK, or why it failed */
	int host_errno;         /* a failure on the host side (errno) */
	uint64_t size;          /* bytes copied */
};

struct xfers {
	struct xfer *v;
	size_t n;
};

static int
xfer_parse(struct xfer *x, const char *arg, bool put)
{
	const char *colon = put ? strrchr(arg, ':') : strchr(arg, ':');
	const char *host, *sb, *slash;
	size_t hlen, slen;

	memset(x, 0, sizeof(*x));
	x->arg = arg;
	x->fd = -1;
	x->out = -1;
	if (colon == NULL)
		return -EINVAL;
	host = put ? arg : colon + 1;
	hlen = put ? (size_t)(colon - arg) : strlen(colon + 1);
	sb = put ? colon + 1 : arg;
	slen = put ? strlen(colon + 1) : (size_t)(colon - arg);
	if (hlen == 0 || slen == 0)
		return -EINVAL;
	x->host = strndup(host, hlen);
	x->sandbox = strndup(sb, slen);
	if (x->host == NULL || x->sandbox == NULL)
		return -ENOMEM;
	if (!put) {
		slash = strrchr(x->host, '/');
		x->base = slash != NULL ? slash + 1 : x->host;
		if (x->base[0] == '\0' || strcmp(x->base, ".") == 0 ||
		    strcmp(x->base, "..") == 0)
			return -EINVAL;
	}
	return 0;
}

static void
xfers_free(struct xfers *xs)
{
	for (size_t i = 0; i < xs->n; i++) {
		if (xs->v[i].out >= 0)
			close(xs->v[i].out);
		/* A --get that did not complete leaves no temporary file. */
		if (xs->v[i].tmp[0] != '\0' && xs->v[i].fd >= 0)
			(void)unlinkat(xs->v[i].fd, xs->v[i].tmp, 0);
		if (xs->v[i].fd >= 0)
			close(xs->v[i].fd);
		free(xs->v[i].host);
		free(xs->v[i].sandbox);
	}
	free(xs->v);
	memset(xs, 0, sizeof(*xs));
}

static void
complain_host(const struct xfer *x)
{
	_cleanup_free_ char *h = fsname_escape(x->host, strlen(x->host));

	fprintf(stderr, "stockade: %s: %s\n", h != NULL ? h : "?",
		strerror(x->host_errno));
}

/*
 * Opens every host file of the --put list and every host directory of
 * the --get list before anything runs, so that a typo costs no job and
 * the broker holds what it needs before it could be confined. Returns
 * false after complaining.
 */
/*
 * Makes the temporary file of a --get in the host directory DIRFD: a
 * random name ".stockade-get-<16 hex>" (into TMP, SIZE >= 31 bytes),
 * created O_EXCL | O_NOFOLLOW with mode 0600 until complete. Made before
 * the broker confines itself, which leaves it only the rename into place
 * and the removal in that directory. Returns the descriptor, or -1 with
 * errno set.
 */
static int
make_get_tmp(int dirfd, char *tmp, size_t size)
{
	uint64_t rnd;
	int fd = -1;

	errno = EIO;
	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -1;
		snprintf(tmp, size, ".stockade-get-%016llx",
			 (unsigned long long)rnd);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
				O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		tmp[0] = '\0';
	return fd;
}

static bool
xfers_open(struct xfers *puts, struct xfers *gets)
{
	struct stat st;

	for (size_t i = 0; i < puts->n; i++) {
		struct xfer *x = &puts->v[i];

		x->fd = open(x->host, O_RDONLY | O_NOCTTY | O_CLOEXEC);
		if (x->fd < 0 || fstat(x->fd, &st) < 0) {
			x->host_errno = errno;
			complain_host(x);
			return false;
		}
		x->mode = st.st_mode & 0777;
	}
	for (size_t i = 0; i < gets->n; i++) {
		struct xfer *x = &gets->v[i];
		_cleanup_free_ char *dir = NULL;

		if (x->base == x->host)
			dir = strdup(".");
		else if (x->base == x->host + 1)
			dir = strdup("/");
		else
			dir = strndup(x->host, (size_t)(x->base - x->host - 1));
		if (dir == NULL) {
			x->host_errno = ENOMEM;
			complain_host(x);
			return false;
		}
		x->fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (x->fd < 0 || (x->out = make_get_tmp(x->fd, x->tmp,
							sizeof(x->tmp))) < 0) {
			x->host_errno = errno;
			complain_host(x);
			return false;
		}
	}
	return true;
}

/* Puts every --put file in (overwriting); false at the first failure,
 * after complaining. */
static bool
do_puts(struct xfers *puts, struct fs_ctx *ctx)
{
	for (size_t i = 0; i < puts->n; i++) {
		struct xfer *x = &puts->v[i];

		x->done = true;
		/* A missing parent is made, as MCP's write_file does. */
		if (fsapi_mkdir_parents_of(ctx, x->sandbox, &x->why) < 0 ||
		    fsapi_put(ctx, x->sandbox, x->fd, x->mode, true, &x->size,
			      &x->why) < 0) {
			fs_complain(ctx, x->sandbox, x->why, NULL);
			return false;
		}
		close(x->fd);
		x->fd = -1;
	}
	return true;
}

/*
 * Collects one --get: the file goes to its temporary file in the host
 * directory (make_get_tmp) and is renamed over HOST once complete, so a
 * failed get leaves HOST as it was (xfers_free removes the temporary).
 * Returns false after complaining.
 */
static bool
do_get(struct xfer *x, struct fs_ctx *ctx)
{
	mode_t um;

	x->done = true;
	um = umask(0);
	umask(um);
	if (fsapi_get(ctx, x->sandbox, 0, UINT64_MAX, x->out, &x->size,
		      &x->why) < 0) {
		fs_complain(ctx, x->sandbox, x->why, NULL);
	} else if (fchmod(x->out, 0666 & ~um) < 0) {
		x->host_errno = errno;
	}
	/* close reports a delayed write error (NFS, quota): checked. */
	if (close(x->out) < 0 && x->why == FS_OK && x->host_errno == 0)
		x->host_errno = errno;
	x->out = -1;
	if (x->why == FS_OK && x->host_errno == 0) {
		if (renameat(x->fd, x->tmp, x->fd, x->base) == 0)
			x->tmp[0] = '\0';
		else
			x->host_errno = errno;
	}
	if (x->why == FS_OK && x->host_errno != 0) {
		x->why = FS_IO_ERROR;
		complain_host(x);
	}
	return x->why == FS_OK;
}

/* Adds NAME: S (any bytes) to O, escaped when not plain (fsname.h). */
static bool
put_name(json_t *o, const char *key, const char *s)
{
	_cleanup_free_ char *e = fsname_escape(s, strlen(s));

	return e != NULL && json_object_set_new(o, key, json_string(e)) == 0;
}

/* The per-file outcomes of XS as a JSON array (README.md, "--put and
 * --get"): the transfers attempted, in order; NULL on ENOMEM. */
static json_t *
xfers_json(const struct xfers *xs)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < xs->n && xs->v[i].done; i++) {
		const struct xfer *x = &xs->v[i];
		bool failed = x->why != FS_OK;
		json_t *o = json_object();
		bool ok = o != NULL && put_name(o, "host", x->host) &&
			  put_name(o, "path", x->sandbox);

		ok = ok && json_object_set_new(o, "size", failed ? json_null() :
				json_integer((json_int_t)x->size)) == 0;
		ok = ok && json_object_set_new(o, "error", failed ?
				json_string(fs_error_name(x->why)) :
				json_null()) == 0;
		if (ok && x->host_errno != 0)
			ok = json_object_set_new(o, "message",
				json_string(strerror(x->host_errno))) == 0;
		if (!ok)
			json_decref(o);
		/* json_array_append_new takes O even when it fails. */
		if (!ok || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* Adds "files": {"put": [...], "get": [...]} to the result O. */
static bool
add_files(json_t *o, const struct xfers *puts, const struct xfers *gets)
{
	json_t *files = json_object();

	if (files == NULL || json_object_set_new(o, "files", files) < 0)
		return false;
	return json_object_set_new(files, "put", xfers_json(puts)) == 0 &&
	       json_object_set_new(files, "get", xfers_json(gets)) == 0;
}

static int
xfer_add(struct xfers *xs, size_t cap, const char *arg, bool put)
{
	int e;

	if (xs->v == NULL && (xs->v = calloc(cap, sizeof(*xs->v))) == NULL)
		return -ENOMEM;
	e = xfer_parse(&xs->v[xs->n++], arg, put);
	return e;
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
		rules[n++] = (struct confine_rule){
			ws->parent_fd, LANDLOCK_ACCESS_FS_REMOVE_DIR};
	for (size_t i = 0; i < gets->n; i++)
		rules[n++] = (struct confine_rule){
			gets->v[i].fd, LANDLOCK_ACCESS_FS_MAKE_REG |
					       LANDLOCK_ACCESS_FS_REMOVE_FILE};
	rc = confine_or_complain(rules, n);
	free(rules);
	return rc;
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

	if (PLANTED(unsafe_ro_bind_missed_by_run_refusal))
		m = NULL;
	if (off == 0 && m == NULL)
		return 0;
	job_layers_format(off, names, sizeof(names));
	if (!unsafe) {
		if (off != 0)
			log_error("refused: the policy switches layers off (%s): "
				  "only `stockade eval` or `stockade run "
				  "--unsafe-evaluation` may run it", names);
		if (m != NULL)
			log_error("refused: the policy binds %s with "
				  "unsafe_ro_bind_no_landlock (no Landlock rule "
				  "for it): only `stockade eval` or `stockade run "
				  "--unsafe-evaluation` may run it", m->target);
		return EXIT_USAGE;
	}
	if (off != 0)
		fprintf(stderr, "stockade: WARNING: unsafe evaluation: layers "
			"off: %s; this job is not isolated\n", names);
	if (m != NULL)
		fprintf(stderr, "stockade: WARNING: unsafe evaluation: "
			"unsafe_ro_bind_no_landlock binds %s with no Landlock "
			"rule; this job is not isolated\n", m->target);
	return 0;
}

int
cmd_run(int argc, char **argv)
{
	static const struct option own[] = {
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
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option opts[RUNFLAGS_N + sizeof(own) / sizeof(own[0])];
	const char *policy_file = NULL, *workspace = NULL, *stdin_file = NULL;
	bool keep = false, got = true, unsafe = false, quiet = false;
	bool no_stdin = false;
	struct stdin_feed feed;
	char **envs = NULL;
	size_t nenvs = 0;
	int in_fd, in_owned = -1;
	enum progress_mode pm;
	enum run_format fmt = RUN_FORMAT_STREAM;
	struct jobrun_overrides ov;
	struct xfers puts = {NULL, 0}, gets = {NULL, 0};
	struct policy pol;
	struct workspace ws;
	struct supervisor sup;
	struct jobrun jr;
	struct run_output out;
	struct fs_ctx ctx;
	char err[POLICY_ERR_MAX + 256];
	int c, rc, e;

	memcpy(opts, runflags_options, sizeof(runflags_options));
	memcpy(opts + RUNFLAGS_N, own, sizeof(own));
	memset(&ov, 0, sizeof(ov));
	stdin_feed_init_data(&feed, "", 0);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c >= RUNFLAG_TIMEOUT && c <= RUNFLAG_FORMAT) {
			if (runflags_apply(c, optarg, &ov, &fmt, err,
					   sizeof(err)) < 0) {
				log_error("%s", err);
				rc = EXIT_USAGE;
				goto out_args;
			}
			continue;
		}
		switch (c) {
		case 'p': policy_file = optarg; break;
		case 'w': workspace = optarg; break;
		case 'k': keep = true; break;
		case 'j': fmt = RUN_FORMAT_JSON; break;
		case 'U': unsafe = true; break;
		case 'N': quiet = true; break;
		case 'I': stdin_file = optarg; break;
		case 'n': no_stdin = true; break;
		case 'E':
			if (envs == NULL &&
			    (envs = calloc((size_t)argc, sizeof(*envs))) == NULL) {
				log_error("out of memory");
				rc = EXIT_SANDBOX;
				goto out_args;
			}
			envs[nenvs++] = optarg;
			break;
		case 'P':
		case 'G':
			e = xfer_add(c == 'P' ? &puts : &gets, (size_t)argc,
				     optarg, c == 'P');
			if (e == -ENOMEM) {
				log_error("out of memory");
				rc = EXIT_SANDBOX;
				goto out_args;
			}
			if (e < 0) {
				log_error("--%s: expected %s, got \"%s\"",
					  c == 'P' ? "put" : "get",
					  c == 'P' ? "HOST:SANDBOX" :
						     "SANDBOX:HOST (HOST a file)",
					  optarg);
				rc = EXIT_USAGE;
				goto out_args;
			}
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto out_args;
		default:
			usage(stderr);
			rc = EXIT_USAGE;
			goto out_args;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		rc = EXIT_USAGE;
		goto out_args;
	}
	if (stdin_file != NULL && no_stdin) {
		log_error("--stdin and --no-stdin: give one");
		rc = EXIT_USAGE;
		goto out_args;
	}

	memset(&pol, 0, sizeof(pol));
	if ((rc = load_policy_or_complain(&pol, policy_file)) != 0)
		goto out_args;
	if ((rc = check_unsafe(&pol, unsafe)) != 0) {
		policy_clear(&pol);
		goto out_args;
	}

	/* The command line is checked against what RUN can carry before
	 * anything is made or started (jobspec.h). */
	if ((e = jobrun_init(&jr, &pol, argc - optind, argv + optind, &ov)) <
	    0) {
		log_error("%s", jobrun_spec_error(e, err, sizeof(err)));
		rc = e == -ENOMEM ? EXIT_SANDBOX : EXIT_USAGE;
		goto out_jr;
	}
	if ((rc = apply_env(&jr, &pol, envs, nenvs)) != 0)
		goto out_jr;
	/* Layer no_terminal off: the payload reads our terminal, when
	 * stdin is one (the launcher accepts nothing else). */
	if (job_spec_layer_off(&jr.spec, JOB_LAYER_NO_TERMINAL) && isatty(0) &&
	    stdin_file == NULL && !no_stdin)
		jr.tty_fd = 0;
	else if ((in_fd = open_stdin(stdin_file, no_stdin, &in_owned)) == -2) {
		rc = EXIT_USAGE;
		goto out_jr;
	} else if (in_fd >= 0) {
		/* Streamed through a pipe of the broker's (stdin_feed.h). */
		if (stdin_feed_init_fd(&feed, in_fd) < 0) {
			log_error("out of memory");
			rc = EXIT_SANDBOX;
			goto out_jr;
		}
		jr.feed = &feed;
	}
	/* Streamed, the output is printed as it comes and no result holds
	 * it: keep only what the status needs (stderr's last words). */
	if (fmt == RUN_FORMAT_STREAM && jobrun_shrink_captures(&jr, 8192) < 0) {
		log_error("out of memory");
		rc = EXIT_SANDBOX;
		goto out_jr;
	}
	if (doctor_cached_verdict(err, sizeof(err)) < 0) {
		log_error("refused: %s", err);
		rc = EXIT_REFUSED;
		goto out_jr;
	}
	if (!xfers_open(&puts, &gets)) {
		rc = EXIT_FILE;
		goto out_jr;
	}
	if ((rc = open_workspace_or_complain(&ws, workspace)) != 0)
		goto out_jr;
	if (supervisor_init(&sup, err, sizeof(err)) < 0) {
		log_error("%s", err);
		rc = EXIT_SANDBOX;
		goto out_sup;
	}
	/*
	 * The launcher is started now, while the broker may still exec, and
	 * then the broker confines itself (confine.h): every right beneath
	 * the workspace; for a temporary workspace, the removal of that one
	 * directory from $TMPDIR at the end; for each --get, making the file
	 * and removing the temporary one in its host directory. One job
	 * needs no restart, so no spawner (docs/decisions.md).
	 */
	if ((e = supervisor_start(&sup)) < 0) {
		log_debug("the launcher did not start: %s", strerror(-e));
		jr.start_error = e; /* the job's sandbox_error says why */
	}
	/* The status line (progress.h), asked of the terminal before
	 * confinement; not for a job that reads the terminal itself. */
	pm = progress_mode(quiet || fmt != RUN_FORMAT_STREAM ||
			   jr.tty_fd >= 0);
	if ((rc = confine_run(&ws, &gets)) != 0)
		goto out_sup;
	fsapi_ctx_init(&ctx, ws.fd, &pol.files);
	if (!do_puts(&puts, &ctx)) {
		rc = EXIT_FILE;
		goto out_sup;
	}

	memset(&out, 0, sizeof(out));
	out.stream = fmt == RUN_FORMAT_STREAM;
	capture_init_tail(&out.rest[1], jobrun_output_cap(&jr, 1));
	capture_init_tail(&out.rest[2], jobrun_output_cap(&jr, 2));
	out.tty[1] = isatty(1) == 1;
	out.tty[2] = isatty(2) == 1;
	jr.tee = on_output;
	jr.tee_arg = &out;
	if ((e = progress_run_start(&out.status, pm, STDERR_FILENO,
				    jr.limits.wall_ms)) < 0)
		log_debug("no status line: %s", strerror(-e));
	(void)jobrun_exec(&jr, &sup, &ctx, true);
	/* Stopped and joined: nothing of it writes after this. */
	progress_run_stop(&out.status);
	if (out.stream) {
		pass_rest(&out, 1);
		pass_rest(&out, 2);
	}
	capture_free(&out.rest[1]);
	capture_free(&out.rest[2]);

	/* Collected whatever the job's status (its files may explain a
	 * failure), but not after an interruption: the user wants out. */
	for (size_t i = 0; i < gets.n && !jobrun_interrupted(); i++)
		got = do_get(&gets.v[i], &ctx) && got;

	if (fmt != RUN_FORMAT_STREAM) {
		json_t *o = jobrun_result_json(&jr);

		if (o != NULL && (puts.n > 0 || gets.n > 0) &&
		    !add_files(o, &puts, &gets)) {
			json_decref(o);
			o = NULL;
		}
		if (o == NULL || (fmt == RUN_FORMAT_JSON ?
				  json_dumpf(o, stdout, JSON_COMPACT) :
				  result_print_text(o, stdout)) < 0) {
			log_error("cannot write the result");
			rc = EXIT_SANDBOX;
		} else {
			if (fmt == RUN_FORMAT_JSON)
				fputc('\n', stdout);
			rc = job_exit_status(&jr.res);
		}
		json_decref(o);
	} else {
		result_print_summary(&jr.res, &jr.limits, &jr.cap[2], stderr);
		rc = job_exit_status(&jr.res);
	}
	/* The job's status decides; a failed --get only turns an ok into 1. */
	if (rc == 0 && !got)
		rc = EXIT_FILE;
	if (fflush(stdout) != 0)
		rc = EXIT_SANDBOX;
	if (jobrun_interrupted())
		rc = 128 + jobrun_interrupted();
out_sup:
	supervisor_free(&sup);
	if (ws.temporary && keep)
		fprintf(stderr, "stockade: workspace kept at %s\n", ws.path);
	if ((e = workspace_close(&ws, keep)) < 0)
		log_warn("could not remove the workspace %s: %s", ws.path,
			 strerror(-e));
out_jr:
	jobrun_free(&jr);
	policy_clear(&pol);
out_args:
	stdin_feed_free(&feed);
	if (in_owned >= 0)
		close(in_owned);
	free(envs);
	xfers_free(&puts);
	xfers_free(&gets);
	return rc;
}
