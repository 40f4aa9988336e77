/*
 * cmd_fs.c: `stockade put`, `get`, `ls`, `stat`, `rm`, `mkdir` and `mv`:
 * the host file API (fsapi.h) on a workspace from the command line
 * (README.md, "Files in and out").
 *
 * The workspace is opened exactly as `stockade run` opens it
 * (workspace_open), and every sandbox path is resolved beneath that
 * descriptor only, under the quotas of the policy's [files] section
 * (struct fs_ctx). Host paths are the invoking user's own and are opened
 * as given. Names from the workspace are shown escaped (fsname.h), never
 * raw: a job may have named a file with a newline or a terminal escape
 * sequence.
 *
 * The process confines itself (confine.h) once it holds everything it
 * needs, before it touches the workspace's contents: the workspace
 * descriptor, the host file `put` reads, and for a `get` into a host file
 * the temporary file beside it and that directory (to rename the file into
 * place). Nothing after that opens a host path, so a bug in the API that
 * followed a job's link out of the workspace would still meet Landlock.
 *
 * This file parses every command's line, opens the workspace, confines
 * the process and runs the command; ls and stat are here, put and get in
 * cmd_fs_xfer.c, rm, mkdir and mv in cmd_fs_edit.c (cmd_fs.h).
 *
 * Exit status: 0, 1 for a named file error (or a host file that cannot be
 * read or written), 2 for usage, a bad policy or workspace, 69 when the
 * kernel lacks openat2 or Landlock, 70 when confinement fails otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd_fs.h"
#include "commands.h"
#include "confine.h"
#include "fsapi.h"
#include "fsname.h"
#include "fsreport.h"
#include "fsutil.h"
#include "log.h"
#include "preflight.h"
#include "progress.h"
#include "workspace.h"
#include "wspath.h"

/* The options a command takes (struct fs_cmd.opts). */
enum {
	OPT_OVERWRITE = 1 << 0,
	OPT_RECURSIVE = 1 << 1,
	OPT_LIMIT = 1 << 2,
	OPT_JSON = 1 << 3,
	OPT_PARENTS = 1 << 4,
	OPT_MODE = 1 << 5,
	OPT_SIZE = 1 << 6,
	OPT_NO_PROGRESS = 1 << 7,
};
struct fs_cmd {
	const char *name;
	unsigned opts; /* OPT_* it accepts */
	int min_args, max_args; /* operands */
	const char *usage; /* after "usage: stockade NAME " */
	/* Opens the host side before confinement; NULL: nothing to open. */
	int (*open)(const struct fs_args *, struct fs_host *);
	int (*fn)(const struct fs_args *, struct fs_ctx *, struct fs_host *);
};

/* The escaped form of NAME (fsname_escape), or a copy of "?" when out of
 * memory (then maybe NULL); the caller frees it. */
static char *
shown(const char *name)
{
	char *s = fsname_escape(name, strlen(name));

	return s != NULL ? s : strdup("?");
}

void
fs_complain(const struct fs_ctx *ctx, const char *path, enum fs_error why,
    const char *text)
{
	_cleanup_free_ char *p = shown(path);

	if (text == NULL)
		text = fsreport_explain(ctx, why, path, strlen(path), NULL, 0);
	fprintf(stderr, "stockade: %s: %s: %s\n", p != NULL ? p : "?",
	    fs_error_name(why), text);
}

/* An unsigned decimal (BASE 10) or octal (BASE 8) number up to MAX. */
static int
parse_number(const char *s, int base, unsigned long long max,
    unsigned long long *out)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0' || *out > max)
		return -EINVAL;
	return 0;
}

static void
usage(FILE *f, const struct fs_cmd *cmd)
{
	fprintf(f, "usage: stockade %s --workspace DIR [--policy FILE] %s\n",
	    cmd->name, cmd->usage);
	if (f == stdout && (cmd->opts & OPT_NO_PROGRESS) != 0)
		fputs("On a terminal, a transfer of 1 MiB or more (or of over "
		      "half a second) shows its\nprogress on stderr: bytes, "
		      "percentage, rate, elapsed time; --no-progress turns\n"
		      "it off. Nothing is shown when stdout or stderr is not "
		      "a terminal.\n",
		    f);
}

/* The value ARG of the option C: --limit ('n'), --mode ('m') or --size
 * ('S'), into ARGS. Returns 0 or -1 for a usage error (reported). */
static int
parse_value(int c, const char *arg, struct fs_args *args)
{
	unsigned long long v;

	switch (c) {
	case 'n':
		if (parse_number(arg, 10, SIZE_MAX, &v) < 0 || v == 0) {
			log_error("--limit: expected a number of entries "
				  "from 1, got \"%s\"",
			    arg);
			return -1;
		}
		args->limit = (size_t)v;
		break;
	case 'm':
		if (parse_number(arg, 8, 07777, &v) < 0) {
			log_error("--mode: expected octal permission bits "
				  "(0 to 7777), got \"%s\"",
			    arg);
			return -1;
		}
		args->mode = (mode_t)v;
		break;
	default:
		if (parse_number(arg, 10, INT64_MAX, &v) < 0) {
			log_error("--size: expected a number of bytes (0 to "
				  "%" PRId64 "), got \"%s\"",
			    INT64_MAX, arg);
			return -1;
		}
		args->size = (uint64_t)v;
		break;
	}
	return 0;
}

/* Returns 0, 1 for --help, or -1 for a usage error (reported). */
static int
parse(int argc, char **argv, const struct fs_cmd *cmd, struct fs_args *args)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"workspace", required_argument, NULL, 'w'},
	    {"overwrite", no_argument, NULL, 'o'},
	    {"recursive", no_argument, NULL, 'r'},
	    {"limit", required_argument, NULL, 'n'},
	    {"json", no_argument, NULL, 'j'},
	    {"parents", no_argument, NULL, 'P'},
	    {"mode", required_argument, NULL, 'm'},
	    {"size", required_argument, NULL, 'S'},
	    {"no-progress", no_argument, NULL, 'N'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	unsigned given = 0;
	int c, n;

	memset(args, 0, sizeof(*args));
	args->mode = 0755;
	args->size = UINT64_MAX;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			args->policy = optarg;
			break;
		case 'w':
			args->workspace = optarg;
			break;
		case 'o':
			given |= OPT_OVERWRITE;
			args->overwrite = true;
			break;
		case 'r':
			given |= OPT_RECURSIVE;
			args->recursive = true;
			break;
		case 'j':
			given |= OPT_JSON;
			args->json = true;
			break;
		case 'P':
			given |= OPT_PARENTS;
			args->parents = true;
			break;
		case 'N':
			given |= OPT_NO_PROGRESS;
			args->no_progress = true;
			break;
		case 'n':
		case 'm':
		case 'S':
			given |= c == 'n' ? OPT_LIMIT
			    : c == 'm'	  ? OPT_MODE
					  : OPT_SIZE;
			if (parse_value(c, optarg, args) < 0)
				return -1;
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	if ((given & ~cmd->opts) != 0) {
		log_error("%s: an option this command does not take",
		    cmd->name);
		return -1;
	}
	n = argc - optind;
	if (args->workspace == NULL || n < cmd->min_args || n > cmd->max_args)
		return -1;
	args->a = n > 0 ? argv[optind] : ".";
	args->b = n > 1 ? argv[optind + 1] : NULL;
	return 0;
}

/* Loads the policy and opens the workspace; returns 0 or an exit status. */
static int
setup(const struct fs_args *args, struct policy *pol, struct workspace *ws)
{
	int rc;

	memset(pol, 0, sizeof(*pol));
	if ((rc = load_policy_or_complain(pol, args->policy)) != 0)
		return rc;
	if ((rc = open_workspace_or_complain(ws, args->workspace)) != 0)
		policy_clear(pol);
	return rc;
}

/*
 * The meter of a put or get (progress.h), decided before confinement:
 * off with --no-progress, or when the terminal is the data itself (a get
 * to standard output; a put from a standard input that is a terminal,
 * someone typing), and for every other command.
 */
static enum progress_mode
meter_mode(const struct fs_cmd *cmd, const struct fs_args *args)
{
	bool off = (cmd->opts & OPT_NO_PROGRESS) == 0 || args->no_progress ||
	    args->json;

	if (strcmp(cmd->name, "put") == 0 && strcmp(args->a, "-") == 0 &&
	    isatty(STDIN_FILENO) == 1)
		off = true;
	if (strcmp(cmd->name, "get") == 0 && strcmp(args->b, "-") == 0)
		off = true;
	return progress_mode(off);
}

/* Prints E as one JSON object, no newline. Returns 0 or -ENOMEM/-EIO. */
static int
print_entry_json(const struct fs_entry *e, bool nlink)
{
	json_t *o = fsreport_entry(e, nlink);
	int r;

	if (o == NULL)
		return -ENOMEM;
	r = json_dumpf(o, stdout, JSON_COMPACT);
	json_decref(o);
	return r == 0 ? 0 : -EIO;
}

/* MTIME_NS as ISO 8601 UTC to the second ("2024-05-01T12:00:00Z"). */
static void
iso_time(int64_t mtime_ns, char *buf, size_t size)
{
	int64_t s = mtime_ns / 1000000000;
	time_t t;
	struct tm tm;

	if (mtime_ns % 1000000000 < 0)
		s--; /* floor: before the epoch */
	t = (time_t)s;
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "?");
}

/* One line of `ls`: type, mode, size, mtime, escaped path. */
static int
print_entry_line(const struct fs_entry *e)
{
	_cleanup_free_ char *p = fsname_escape(e->path, strlen(e->path));
	char when[64];

	if (p == NULL)
		return -ENOMEM;
	iso_time(e->mtime_ns, when, sizeof(when));
	if (printf("%c %04o %12" PRIu64 " %s %s\n", (char)e->type,
		(unsigned)e->mode, e->size, when, p) < 0)
		return -EIO;
	return 0;
}

struct ls_state {
	bool json;
	size_t n; /* entries printed */
};

static int
ls_one(void *arg, const struct fs_entry *e)
{
	struct ls_state *st = arg;

	if (!st->json)
		return print_entry_line(e);
	/* The object is opened with the first entry: a listing refused
	 * before any entry prints nothing on standard output. */
	if (fputs(st->n++ == 0 ? "{\"entries\":[" : ",", stdout) == EOF)
		return -EIO;
	return print_entry_json(e, false);
}

/*
 * `ls`: one line per entry (or the fs.list result object with --json),
 * entries streamed as the walk reports them, so memory does not grow
 * with the listing. A listing cut at the limit says so: "truncated" in
 * JSON, a note on standard error otherwise (the exit status stays 0).
 */
static int
do_ls(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h)
{
	struct ls_state st = {.json = args->json};
	size_t limit = args->limit;
	enum fs_error why;
	bool truncated = false;
	int e;

	/* The listing's ceiling is the policy's max_files (protocol.md). */
	if (ctx->quota.max_files > 0 &&
	    (limit == 0 || limit > ctx->quota.max_files))
		limit = ctx->quota.max_files > SIZE_MAX
		    ? SIZE_MAX
		    : (size_t)ctx->quota.max_files;
	e = fsapi_list(ctx, args->a, args->recursive, limit, ls_one, &st,
	    &truncated, &why);
	if (args->json && (e == 0 || st.n > 0)) {
		/* A walk stopped midway still closes its JSON, as truncated. */
		if (st.n == 0)
			fputs("{\"entries\":[", stdout);
		printf("],\"truncated\":%s}\n",
		    truncated || e < 0 ? "true" : "false");
	}
	if (e < 0) {
		fs_complain(ctx, args->a, why, NULL);
		return EXIT_FILE;
	}
	if (!args->json && truncated) {
		_cleanup_free_ char *p = shown(args->a);

		/* Cut at the limit, or at max_depth levels. */
		fprintf(stderr,
		    "stockade: %s: listing truncated (at %zu "
		    "entries, or at max_depth levels)\n",
		    p != NULL ? p : "?", limit);
	}
	return 0;
}

static int
do_stat(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h)
{
	struct fs_entry e;
	enum fs_error why;
	_cleanup_free_ char *p = NULL;
	char when[64];

	if (fsapi_stat(ctx, args->a, &e, &why) < 0) {
		fs_complain(ctx, args->a, why, NULL);
		return EXIT_FILE;
	}
	if (args->json) {
		if (print_entry_json(&e, true) < 0)
			return EXIT_SANDBOX;
		putchar('\n');
		return 0;
	}
	if ((p = fsname_escape(e.path, strlen(e.path))) == NULL)
		return EXIT_SANDBOX;
	iso_time(e.mtime_ns, when, sizeof(when));
	printf("path: %s\ntype: %s\nsize: %" PRIu64 "\nmode: %04o\n"
	       "mtime: %s\nnlink: %" PRIu64 "\n",
	    p, fs_type_name(e.type), e.size, (unsigned)e.mode, when, e.nlink);
	return 0;
}

static const struct fs_cmd commands[] = {
    {"put", OPT_OVERWRITE | OPT_SIZE | OPT_NO_PROGRESS, 2, 2,
	"[--overwrite] [--size BYTES] [--no-progress] HOST_FILE|- "
	"SANDBOX_PATH",
	fscli_open_put, fscli_put},
    {"get", OPT_NO_PROGRESS, 2, 2, "[--no-progress] SANDBOX_PATH HOST_FILE|-",
	fscli_open_get, fscli_get},
    {"ls", OPT_RECURSIVE | OPT_LIMIT | OPT_JSON, 0, 1,
	"[--recursive] [--limit N] [--json] [PATH]", NULL, do_ls},
    {"stat", OPT_JSON, 1, 1, "[--json] PATH", NULL, do_stat},
    {"rm", OPT_RECURSIVE, 1, 1, "[--recursive] PATH", NULL, fscli_rm},
    {"mkdir", OPT_PARENTS | OPT_MODE, 1, 1, "[--parents] [--mode OCTAL] PATH",
	NULL, fscli_mkdir},
    {"mv", OPT_OVERWRITE, 2, 2, "[--overwrite] FROM TO", NULL, fscli_mv},
};

/*
 * Confines the process (confine.h) to the workspace WSFD, with every
 * right, and, for a get into a host file, to the rights the rename into
 * place and the removal of the temporary file need in that directory
 * (same directory: no LANDLOCK_ACCESS_FS_REFER). Returns 0 or an exit
 * status (reported): 69 when the kernel has no Landlock (a refusal, as a
 * missing openat2: style.md rule 18), 70 otherwise.
 */
static int
confine_cli(int wsfd, const struct fs_host *h)
{
	struct confine_rule rules[2] = {
	    {.fd = wsfd, .access = CONFINE_ALL},
	    {.fd = h->dirfd,
		.access = LANDLOCK_ACCESS_FS_MAKE_REG |
		    LANDLOCK_ACCESS_FS_REMOVE_FILE},
	};

	return confine_or_complain(rules, h->dirfd >= 0 ? 2 : 1);
}

/* Closes what fscli_open_put/fscli_open_get opened; removes a temporary
 * file left. */
static void
host_close(struct fs_host *h)
{
	if (h->in >= 0)
		close(h->in);
	if (h->out >= 0)
		close(h->out);
	if (h->dirfd >= 0)
		close(h->dirfd);
	if (h->tmp != NULL)
		(void)unlink(h->tmp);
	free(h->tmp);
}

/* Runs the command COMMANDS[I] with its argv (argv[0] its name). */
static int
cmd_fs(int argc, char **argv, size_t i)
{
	const struct fs_cmd *cmd = &commands[i];
	struct fs_host host = {.in = -1, .out = -1, .dirfd = -1};
	struct fs_args args;
	struct policy pol;
	struct workspace ws;
	struct fs_ctx ctx;
	int rc, e;

	if ((rc = parse(argc, argv, cmd, &args)) != 0) {
		usage(rc > 0 ? stdout : stderr, cmd);
		return rc > 0 ? 0 : EXIT_USAGE;
	}
	if ((rc = setup(&args, &pol, &ws)) != 0)
		return rc;
	/* Asked of the terminal now, before confinement (progress.h). */
	args.progress = meter_mode(cmd, &args);
	if ((cmd->open == NULL || (rc = cmd->open(&args, &host)) == 0) &&
	    (rc = confine_cli(ws.fd, &host)) == 0) {
		/* Quotas: the policy's [files] (policy.h, struct fs_quota). */
		fsapi_ctx_init(&ctx, ws.fd, &pol.files);
		rc = cmd->fn(&args, &ctx, &host);
		if (fflush(stdout) != 0 && rc == 0) {
			log_error("cannot write to standard output");
			rc = EXIT_FILE;
		}
	}
	host_close(&host);
	if ((e = workspace_close(&ws, true)) < 0)
		log_warn("could not close the workspace %s: %s", ws.path,
		    strerror(-e));
	policy_clear(&pol);
	return rc;
}

int
cmd_put(int argc, char **argv)
{
	return cmd_fs(argc, argv, 0);
}

int
cmd_get(int argc, char **argv)
{
	return cmd_fs(argc, argv, 1);
}

int
cmd_ls(int argc, char **argv)
{
	return cmd_fs(argc, argv, 2);
}

int
cmd_stat(int argc, char **argv)
{
	return cmd_fs(argc, argv, 3);
}

int
cmd_rm(int argc, char **argv)
{
	return cmd_fs(argc, argv, 4);
}

int
cmd_mkdir(int argc, char **argv)
{
	return cmd_fs(argc, argv, 5);
}

int
cmd_mv(int argc, char **argv)
{
	return cmd_fs(argc, argv, 6);
}
