/*
 * cmd_fs.c: `stockade put` and `stockade get`, files in and out of a
 * workspace through the host file API (fsapi.h; README.md, "Files in and
 * out").
 *
 * The workspace is opened exactly as `stockade run` opens it
 * (workspace_open), and every sandbox path is resolved beneath that
 * descriptor only. Host paths are the invoking user's own and are opened
 * as given. Exit status: 0, 1 for a named file error (or a host file that
 * cannot be read or written), 2 for usage, a bad policy or workspace, 69
 * when the kernel lacks openat2.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "fsapi.h"
#include "fsutil.h"
#include "log.h"
#include "preflight.h"
#include "utf8.h"
#include "workspace.h"
#include "wspath.h"

#define EXIT_FILE 1 /* a named file error (README.md, "Files in and out") */

/* "stockade: PATH: NAME: explanation", PATH shown escaped, never raw: it
 * may come from the job (a name with a newline or escape sequence). */
static void
complain(const char *path, enum fs_error why)
{
	char *p = utf8_sanitize(path, strlen(path), NULL);
	const char *text = fs_error_text(why);

	if (why == FS_INVALID_PATH)
		text = wspath_rule_text(wspath_why(path, strlen(path), NULL));
	fprintf(stderr, "stockade: %s: %s: %s\n", p != NULL ? p : "?",
		fs_error_name(why), text);
	free(p);
}

struct fs_args {
	const char *policy, *workspace;
	const char *a, *b;   /* the two operands */
	bool overwrite;
};

static int
parse(int argc, char **argv, bool put, struct fs_args *args)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"workspace", required_argument, NULL, 'w'},
		{"overwrite", no_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(args, 0, sizeof(*args));
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': args->policy = optarg; break;
		case 'w': args->workspace = optarg; break;
		case 'o':
			if (!put)
				return -1;
			args->overwrite = true;
			break;
		case 'h': return 1;
		default: return -1;
		}
	}
	if (args->workspace == NULL || argc - optind != 2)
		return -1;
	args->a = argv[optind];
	args->b = argv[optind + 1];
	return 0;
}

static void
usage(FILE *f, bool put)
{
	if (put)
		fprintf(f, "usage: stockade put --workspace DIR [--policy FILE] "
			   "[--overwrite] HOST_FILE SANDBOX_PATH\n");
	else
		fprintf(f, "usage: stockade get --workspace DIR [--policy FILE] "
			   "SANDBOX_PATH HOST_FILE|-\n");
}

/* Loads the policy and opens the workspace; returns 0 or an exit status. */
static int
setup(const struct fs_args *args, struct policy *pol, struct workspace *ws)
{
	char err[POLICY_ERR_MAX + 256];
	int rc, e;

	memset(pol, 0, sizeof(*pol));
	if ((rc = load_policy_or_complain(pol, args->policy)) != 0)
		return rc;
	if ((e = workspace_open(ws, args->workspace, err, sizeof(err))) < 0) {
		/* No openat2: refuse, never fall back (style.md rule 18). */
		log_error("%s%s", e == -ENOSYS ? "refused: " : "", err);
		policy_clear(pol);
		return e == -ENOSYS ? EXIT_REFUSED : EXIT_USAGE;
	}
	return 0;
}

static int
do_put(const struct fs_args *args, uint64_t max, int root)
{
	_cleanup_close_ int in = -1;
	enum fs_error why;
	struct stat st;
	mode_t mode = 0644;

	if (strcmp(args->a, "-") == 0) {
		in = dup(0);
	} else {
		in = open(args->a, O_RDONLY | O_NOCTTY | O_CLOEXEC);
		if (in >= 0 && fstat(in, &st) == 0)
			mode = st.st_mode & 0777;
	}
	if (in < 0) {
		log_error("%s: %s", args->a, strerror(errno));
		return EXIT_FILE;
	}
	if (fsapi_write(root, args->b, in, max, mode, args->overwrite, &why) <
	    0) {
		complain(args->b, why);
		return EXIT_FILE;
	}
	return 0;
}

/*
 * get into a host file: a temporary file next to it (mkstemp, in the
 * user's own directory) renamed over it once complete, so a failed get
 * leaves the host file as it was.
 */
static int
do_get(const struct fs_args *args, uint64_t max, int root)
{
	enum fs_error why;
	uint64_t copied;
	char *tmp;
	mode_t um;
	int fd, rc = 0;

	if (strcmp(args->b, "-") == 0) {
		if (fsapi_read(root, args->a, max, 1, &copied, &why) < 0) {
			complain(args->a, why);
			return EXIT_FILE;
		}
		return 0;
	}
	if (asprintf(&tmp, "%s.stockade-XXXXXX", args->b) < 0) {
		log_error("out of memory");
		return EXIT_SANDBOX;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		log_error("%s: %s", args->b, strerror(errno));
		free(tmp);
		return EXIT_FILE;
	}
	um = umask(0);
	umask(um);
	if (fsapi_read(root, args->a, max, fd, &copied, &why) < 0) {
		complain(args->a, why);
		rc = EXIT_FILE;
	} else if (fchmod(fd, 0666 & ~um) < 0) {
		log_error("%s: %s", args->b, strerror(errno));
		rc = EXIT_FILE;
	}
	/* close reports a delayed write error (NFS, quota): checked. */
	if (close(fd) < 0 && rc == 0) {
		log_error("%s: %s", args->b, strerror(errno));
		rc = EXIT_FILE;
	}
	if (rc == 0 && rename(tmp, args->b) < 0) {
		log_error("%s: %s", args->b, strerror(errno));
		rc = EXIT_FILE;
	}
	if (rc != 0)
		(void)unlink(tmp);
	free(tmp);
	return rc;
}

static int
cmd_fs(int argc, char **argv, bool put)
{
	struct fs_args args;
	struct policy pol;
	struct workspace ws;
	int rc, e;

	if ((rc = parse(argc, argv, put, &args)) != 0) {
		usage(rc > 0 ? stdout : stderr, put);
		return rc > 0 ? 0 : EXIT_USAGE;
	}
	if ((rc = setup(&args, &pol, &ws)) != 0)
		return rc;
	/* Per-file limit: the policy's file_size_mb (fsize_bytes). */
	rc = put ? do_put(&args, pol.limits.fsize_bytes, ws.fd) :
		   do_get(&args, pol.limits.fsize_bytes, ws.fd);
	if (fflush(stdout) != 0 && rc == 0) {
		log_error("cannot write to standard output");
		rc = EXIT_FILE;
	}
	if ((e = workspace_close(&ws, true)) < 0)
		log_warn("could not close the workspace %s: %s", ws.path,
			 strerror(-e));
	policy_clear(&pol);
	return rc;
}

int
cmd_put(int argc, char **argv)
{
	return cmd_fs(argc, argv, true);
}

int
cmd_get(int argc, char **argv)
{
	return cmd_fs(argc, argv, false);
}

/* TEMPORARY (scaffold): replaced by the real commands in this file. */
static int
not_yet(const char *what)
{
	log_error("%s: not built yet", what);
	return EXIT_USAGE;
}
int cmd_ls(int argc, char **argv) { return not_yet("ls"); }
int cmd_rm(int argc, char **argv) { return not_yet("rm"); }
int cmd_mkdir(int argc, char **argv) { return not_yet("mkdir"); }
int cmd_mv(int argc, char **argv) { return not_yet("mv"); }
int cmd_stat(int argc, char **argv) { return not_yet("stat"); }
