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
 * Exit status: 0, 1 for a named file error (or a host file that cannot be
 * read or written), 2 for usage, a bad policy or workspace, 69 when the
 * kernel lacks openat2 or Landlock, 70 when confinement fails otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

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

#define EXIT_FILE 1 /* a named file error (README.md, "Files in and out") */

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

struct fs_args {
	const char *policy, *workspace;
	const char *a, *b;      /* the operands; B is NULL for one */
	bool overwrite, recursive, json, parents, no_progress;
	size_t limit;           /* ls --limit; 0: the quota's max_files */
	mode_t mode;            /* mkdir --mode; default 0755 */
	uint64_t size;          /* put --size, bytes; UINT64_MAX: not given */
	enum progress_mode progress; /* put, get: the meter (meter_mode) */
};

/* The host side of a command, opened before confinement. */
struct fs_host {
	int in;                 /* put: the host file or standard input */
	int out;                /* get: the temporary file, or -1 for stdout */
	int dirfd;              /* get: the host file's directory (O_PATH) */
	char *tmp;              /* get: the temporary file's path */
};

struct fs_cmd {
	const char *name;
	unsigned opts;          /* OPT_* it accepts */
	int min_args, max_args; /* operands */
	const char *usage;      /* after "usage: stockade NAME " */
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
		      "a terminal.\n", f);
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
	unsigned long long v;
	unsigned given = 0;
	int c, n;

	memset(args, 0, sizeof(*args));
	args->mode = 0755;
	args->size = UINT64_MAX;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': args->policy = optarg; break;
		case 'w': args->workspace = optarg; break;
		case 'o': given |= OPT_OVERWRITE; args->overwrite = true; break;
		case 'r': given |= OPT_RECURSIVE; args->recursive = true; break;
		case 'j': given |= OPT_JSON; args->json = true; break;
		case 'P': given |= OPT_PARENTS; args->parents = true; break;
		case 'N':
			given |= OPT_NO_PROGRESS;
			args->no_progress = true;
			break;
		case 'n':
			given |= OPT_LIMIT;
			if (parse_number(optarg, 10, SIZE_MAX, &v) < 0 ||
			    v == 0) {
				log_error("--limit: expected a number of "
					  "entries from 1, got \"%s\"", optarg);
				return -1;
			}
			args->limit = (size_t)v;
			break;
		case 'm':
			given |= OPT_MODE;
			if (parse_number(optarg, 8, 07777, &v) < 0) {
				log_error("--mode: expected octal permission "
					  "bits (0 to 7777), got \"%s\"",
					  optarg);
				return -1;
			}
			args->mode = (mode_t)v;
			break;
		case 'S':
			given |= OPT_SIZE;
			if (parse_number(optarg, 10, INT64_MAX, &v) < 0) {
				log_error("--size: expected a number of bytes "
					  "(0 to %" PRId64 "), got \"%s\"",
					  INT64_MAX, optarg);
				return -1;
			}
			args->size = (uint64_t)v;
			break;
		case 'h': return 1;
		default: return -1;
		}
	}
	if ((given & ~cmd->opts) != 0) {
		log_error("%s: an option this command does not take",
			  cmd->name);
		return -1;
	}
	n = argc - optind;
	if (args->workspace == NULL || n < cmd->min_args ||
	    n > cmd->max_args)
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

/* Sets M up for a transfer of TOTAL bytes (UINT64_MAX: unknown) and
 * hooks it to the file API's copies (fsapi_set_progress). */
static void
meter_start(struct progress *m, const struct fs_args *args, const char *verb,
	    uint64_t total)
{
	progress_begin(m, args->progress, STDERR_FILENO, verb, total);
	if (args->progress != PROGRESS_OFF)
		fsapi_set_progress(progress_add, m);
}

/* Unhooks M and erases its line, before a message or the end (the final
 * line is progress_end's). */
static void
meter_stop(struct progress *m)
{
	fsapi_set_progress(NULL, NULL);
	progress_clear(m);
}

/* put: opens the host file, or takes standard input ("-"). Returns 0 or
 * EXIT_FILE. */
static int
open_put(const struct fs_args *args, struct fs_host *h)
{
	if (strcmp(args->a, "-") == 0)
		h->in = fcntl(0, F_DUPFD_CLOEXEC, 3);
	else
		h->in = open(args->a, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (h->in < 0) {
		log_error("%s: %s", args->a, strerror(errno));
		return EXIT_FILE;
	}
	return 0;
}

/*
 * put --size: makes IN hold exactly ARGS->size bytes, or says why not
 * (io_error for fewer, too_large for more: as fs.write's "size",
 * docs/protocol.md) with nothing written. A regular file is checked on
 * its size from its offset; anything else (a pipe) is staged first into
 * an unnamed file (fsapi_stage), so that a producer that died early is
 * told from a short file before any name exists. *STAGED gets the staged
 * file (or stays -1): the caller puts from it and closes it. Returns 0 or
 * EXIT_FILE. The meter M runs while a pipe is staged, not for the put of
 * the staged copy that follows (a local copy: counted once).
 */
static int
put_sized(const struct fs_args *args, struct fs_ctx *ctx, int in,
	  int *staged, struct progress *m)
{
	enum fs_error why;
	struct stat st;
	uint64_t got;
	off_t off;

	if (args->size > ctx->quota.file_bytes) {
		fs_complain(ctx, args->b, FS_TOO_LARGE, NULL);
		return EXIT_FILE;
	}
	if (fstat(in, &st) == 0 && S_ISREG(st.st_mode)) {
		off = lseek(in, 0, SEEK_CUR);
		got = off >= 0 && st.st_size > off ?
			      (uint64_t)(st.st_size - off) : 0;
	} else {
		*staged = fsapi_stage(ctx->root, in, args->size, &got, &why);
		meter_stop(m);
		if (*staged < 0) {
			fs_complain(ctx, args->b, why, NULL);
			return EXIT_FILE;
		}
	}
	if (got != args->size) {
		/* A pipe is read to at most SIZE + 1 bytes: "more". */
		bool more = got > args->size && *staged >= 0;
		char text[160];

		snprintf(text, sizeof(text), "%s %s%s %" PRIu64 " bytes, "
			 "--size said %" PRIu64 ": nothing written",
			 strcmp(args->a, "-") == 0 ? "standard input" :
			 "the host file", *staged >= 0 ? "gave" : "holds",
			 more ? " more than" : "", more ? args->size : got,
			 args->size);
		fs_complain(ctx, args->b, got > args->size ? FS_TOO_LARGE :
			    FS_IO_ERROR, text);
		return EXIT_FILE;
	}
	return 0;
}

/* The bytes a put from IN will move, for the meter: --size, else what a
 * regular file holds past its offset; UINT64_MAX for a pipe. */
static uint64_t
put_total(const struct fs_args *args, int in)
{
	struct stat st;
	off_t off;

	if (args->size != UINT64_MAX)
		return args->size;
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		return UINT64_MAX;
	off = lseek(in, 0, SEEK_CUR);
	return off >= 0 && st.st_size > off ? (uint64_t)(st.st_size - off) : 0;
}

static int
do_put(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h)
{
	_cleanup_close_ int staged = -1;
	struct progress meter;
	enum fs_error why;
	struct stat st;
	mode_t mode = 0644;
	int rc, e;

	if (strcmp(args->a, "-") != 0 && fstat(h->in, &st) == 0)
		mode = st.st_mode & 0777;
	meter_start(&meter, args, "put", put_total(args, h->in));
	if (args->size != UINT64_MAX &&
	    (rc = put_sized(args, ctx, h->in, &staged, &meter)) != 0) {
		meter_stop(&meter);
		progress_end(&meter, false);
		return rc;
	}
	/* A missing parent is made, as MCP's write_file does. */
	e = fsapi_mkdir_parents_of(ctx, args->b, &why);
	if (e == 0)
		e = fsapi_put(ctx, args->b, staged >= 0 ? staged : h->in, mode,
			      args->overwrite, NULL, &why);
	meter_stop(&meter);
	progress_end(&meter, e == 0);
	if (e < 0) {
		fs_complain(ctx, args->b, why, NULL);
		return EXIT_FILE;
	}
	return 0;
}

/*
 * get into a host file: a temporary file next to it (mkstemp, in the
 * user's own directory) renamed over it once complete, so a failed get
 * leaves the host file as it was. Made before confinement, with a
 * descriptor of the directory for the Landlock rule that lets the rename
 * (and the removal on failure) happen there and nowhere else. Returns 0,
 * EXIT_FILE or EXIT_SANDBOX.
 */
static int
open_get(const struct fs_args *args, struct fs_host *h)
{
	char *copy;

	if (strcmp(args->b, "-") == 0)
		return 0;
	if (asprintf(&h->tmp, "%s.stockade-XXXXXX", args->b) < 0) {
		h->tmp = NULL;
		log_error("out of memory");
		return EXIT_SANDBOX;
	}
	if ((copy = strdup(args->b)) == NULL) {
		log_error("out of memory");
		return EXIT_SANDBOX;
	}
	h->dirfd = open(dirname(copy), O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (h->dirfd < 0 || (h->out = mkostemp(h->tmp, O_CLOEXEC)) < 0) {
		log_error("%s: %s", args->b, strerror(errno));
		free(h->tmp);
		h->tmp = NULL;
		return EXIT_FILE;
	}
	return 0;
}

/* The size of the workspace file PATH for the meter of a get (a stat
 * for the display only: the get decides on its own descriptor), or
 * UINT64_MAX. */
static uint64_t
get_total(const struct fs_args *args, struct fs_ctx *ctx)
{
	struct fs_entry e;
	enum fs_error why;

	if (args->progress == PROGRESS_OFF ||
	    fsapi_stat(ctx, args->a, &e, &why) < 0 || e.type != FS_T_FILE)
		return UINT64_MAX;
	return e.size;
}

static int
do_get(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h)
{
	struct progress meter;
	enum fs_error why;
	uint64_t copied;
	mode_t um;
	int rc = 0, e;

	if (h->tmp == NULL) {
		if (fsapi_get(ctx, args->a, 0, UINT64_MAX, 1, &copied, &why) <
		    0) {
			fs_complain(ctx, args->a, why, NULL);
			return EXIT_FILE;
		}
		return 0;
	}
	um = umask(0);
	umask(um);
	meter_start(&meter, args, "get", get_total(args, ctx));
	e = fsapi_get(ctx, args->a, 0, UINT64_MAX, h->out, &copied, &why);
	meter_stop(&meter);
	if (e < 0) {
		fs_complain(ctx, args->a, why, NULL);
		rc = EXIT_FILE;
	} else if (fchmod(h->out, 0666 & ~um) < 0) {
		log_error("%s: %s", args->b, strerror(errno));
		rc = EXIT_FILE;
	}
	/* close reports a delayed write error (NFS, quota): checked. */
	if (close(h->out) < 0 && rc == 0) {
		log_error("%s: %s", args->b, strerror(errno));
		rc = EXIT_FILE;
	}
	h->out = -1;
	if (rc == 0 && rename(h->tmp, args->b) < 0) {
		log_error("%s: %s", args->b, strerror(errno));
		rc = EXIT_FILE;
	}
	if (rc != 0)
		(void)unlink(h->tmp);
	free(h->tmp);
	h->tmp = NULL;
	/* The final line once the file is in place. */
	progress_end(&meter, rc == 0);
	return rc;
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
	size_t n;       /* entries printed */
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
do_ls(const struct fs_args *args, struct fs_ctx *ctx,
      struct fs_host *h)
{
	struct ls_state st = {.json = args->json};
	size_t limit = args->limit;
	enum fs_error why;
	bool truncated = false;
	int e;

	/* The listing's ceiling is the policy's max_files (protocol.md). */
	if (ctx->quota.max_files > 0 &&
	    (limit == 0 || limit > ctx->quota.max_files))
		limit = ctx->quota.max_files > SIZE_MAX ?
				SIZE_MAX :
				(size_t)ctx->quota.max_files;
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
		fprintf(stderr, "stockade: %s: listing truncated (at %zu "
				"entries, or at max_depth levels)\n",
			p != NULL ? p : "?", limit);
	}
	return 0;
}

static int
do_stat(const struct fs_args *args, struct fs_ctx *ctx,
        struct fs_host *h)
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
	       p, fs_type_name(e.type), e.size, (unsigned)e.mode, when,
	       e.nlink);
	return 0;
}

static int
do_rm(const struct fs_args *args, struct fs_ctx *ctx,
      struct fs_host *h)
{
	enum fs_error why;

	if (fsapi_remove(ctx, args->a, args->recursive, &why) < 0) {
		fs_complain(ctx, args->a, why, NULL);
		return EXIT_FILE;
	}
	return 0;
}

static int
do_mkdir(const struct fs_args *args, struct fs_ctx *ctx,
         struct fs_host *h)
{
	enum fs_error why;

	if (fsapi_mkdir(ctx, args->a, args->mode, args->parents, &why) < 0) {
		/* The generic text of exists suggests --overwrite. */
		fs_complain(ctx, args->a, why,
			    why == FS_EXISTS ? "the name is taken" : NULL);
		return EXIT_FILE;
	}
	return 0;
}

/*
 * Which operand of a failed rename to name in the message: renameat2
 * says only what went wrong, not where. Invalid is whichever breaks a
 * rule; exists, is_a_directory and not_empty are about the target; for
 * the errors of resolution (not_found, not_a_directory, symlink_refused,
 * escapes_workspace), FROM when a stat of it fails the same way, else TO.
 * The stat is for the message only: the rename has already failed, and
 * nothing is done with what it finds.
 */
static const char *
mv_culprit(const struct fs_args *args, struct fs_ctx *ctx,
	   enum fs_error why)
{
	struct wspath_limits lim = fsapi_path_limits(ctx);
	struct fs_entry e;
	enum fs_error w2;

	switch (why) {
	case FS_INVALID_PATH:
		return wspath_why(args->a, strlen(args->a), &lim) !=
				       WSPATH_OK ?
			       args->a :
			       args->b;
	case FS_EXISTS:
	case FS_IS_A_DIRECTORY:
	case FS_NOT_EMPTY:
		return args->b;
	case FS_NOT_FOUND:
	case FS_NOT_A_DIRECTORY:
	case FS_SYMLINK_REFUSED:
	case FS_ESCAPES_WORKSPACE:
		if (fsapi_stat(ctx, args->a, &e, &w2) < 0 && w2 == why)
			return args->a;
		return args->b;
	case FS_OK:
	case FS_NOT_REGULAR_FILE:
	case FS_HARDLINKED_FILE:
	case FS_TOO_LARGE:
	case FS_QUOTA_EXCEEDED:
	case FS_IO_ERROR:
		break;
	}
	return args->a;
}

static int
do_mv(const struct fs_args *args, struct fs_ctx *ctx,
      struct fs_host *h)
{
	enum fs_error why;

	if (fsapi_rename(ctx, args->a, args->b, args->overwrite, &why) < 0) {
		fs_complain(ctx, mv_culprit(args, ctx, why), why, NULL);
		return EXIT_FILE;
	}
	return 0;
}

static const struct fs_cmd commands[] = {
	{"put", OPT_OVERWRITE | OPT_SIZE | OPT_NO_PROGRESS, 2, 2,
	 "[--overwrite] [--size BYTES] [--no-progress] HOST_FILE|- "
	 "SANDBOX_PATH", open_put, do_put},
	{"get", OPT_NO_PROGRESS, 2, 2,
	 "[--no-progress] SANDBOX_PATH HOST_FILE|-", open_get, do_get},
	{"ls", OPT_RECURSIVE | OPT_LIMIT | OPT_JSON, 0, 1,
	 "[--recursive] [--limit N] [--json] [PATH]", NULL, do_ls},
	{"stat", OPT_JSON, 1, 1, "[--json] PATH", NULL, do_stat},
	{"rm", OPT_RECURSIVE, 1, 1, "[--recursive] PATH", NULL, do_rm},
	{"mkdir", OPT_PARENTS | OPT_MODE, 1, 1,
	 "[--parents] [--mode OCTAL] PATH", NULL, do_mkdir},
	{"mv", OPT_OVERWRITE, 2, 2, "[--overwrite] FROM TO", NULL, do_mv},
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
		{.fd = h->dirfd, .access = LANDLOCK_ACCESS_FS_MAKE_REG |
					  LANDLOCK_ACCESS_FS_REMOVE_FILE},
	};

	return confine_or_complain(rules, h->dirfd >= 0 ? 2 : 1);
}

/* Closes what open_put/open_get opened; removes a temporary file left. */
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
