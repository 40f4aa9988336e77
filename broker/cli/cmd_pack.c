/*
 * cmd_pack.c: `stockade unpack` and `stockade pack`: a tar archive into
 * or out of a workspace in one command (README.md, "Files in and out";
 * fs_tar.h does the work, as for fs.unpack and fs.pack).
 *
 *   stockade unpack --workspace DIR [--policy FILE] [--overwrite]
 *                   ARCHIVE|- [SANDBOX_DIR]
 *   stockade pack --workspace DIR [--policy FILE] [SANDBOX_PATH] ARCHIVE|-
 *
 * As `stockade put` and `get` (cmd_fs.c): the workspace opened as `run`
 * opens it, the host side (the archive, or for a pack into a host file a
 * temporary file beside it and its directory) opened before the process
 * confines itself, nothing opened by path after that. A pack into a host
 * file goes to a temporary name renamed over ARCHIVE once complete, so a
 * failed pack leaves ARCHIVE as it was.
 *
 * Exit status: 0; 1 for a named file error (or a host file that cannot
 * be read or written); 2 for usage, a bad policy or workspace; 69 when
 * the kernel lacks openat2 or Landlock; 70 when confinement fails.
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
#include <unistd.h>

#include "commands.h"
#include "fs_tar.h"
#include "fsutil.h"
#include "log.h"

#define EXIT_FILE 1

struct tar_args {
	bool pack, overwrite;
	const char *policy, *workspace;
	const char *archive; /* host file, or "-" */
	const char *path; /* sandbox directory or path; "." default */
};

static void
usage(FILE *f, bool pack)
{
	if (pack)
		fputs("usage: stockade pack --workspace DIR [--policy FILE] "
		      "[SANDBOX_PATH] ARCHIVE|-\n"
		      "Writes SANDBOX_PATH (default: the whole workspace) as "
		      "a POSIX tar archive\nto ARCHIVE, or to stdout with -. "
		      "Symbolic links and special files are left\nout and "
		      "counted.\n",
		    f);
	else
		fputs("usage: stockade unpack --workspace DIR [--policy FILE] "
		      "[--overwrite] ARCHIVE|-\n"
		      "       [SANDBOX_DIR]\n"
		      "Unpacks the tar archive ARCHIVE (or stdin with -; "
		      "uncompressed) into\nSANDBOX_DIR (default: the "
		      "workspace). Only files and directories are\n"
		      "unpacked; --overwrite replaces files that exist.\n",
		    f);
}

/* Returns 0, 1 for --help, or -1 for a usage error (reported). */
static int
parse(int argc, char **argv, struct tar_args *args)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"workspace", required_argument, NULL, 'w'},
	    {"overwrite", no_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, n;

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
			if (args->pack) {
				log_error("pack: an option this command does "
					  "not take");
				return -1;
			}
			args->overwrite = true;
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	n = argc - optind;
	if (args->workspace == NULL || n < 1 || n > 2)
		return -1;
	args->path = ".";
	if (args->pack) {
		args->archive = argv[optind + n - 1];
		if (n == 2)
			args->path = argv[optind];
	} else {
		args->archive = argv[optind];
		if (n == 2)
			args->path = argv[optind + 1];
	}
	return 0;
}

/* The host side, opened before confinement. */
struct tar_host {
	int fd; /* the archive: read (unpack) or written */
	int dirfd; /* pack into a file: its directory, O_PATH */
	char *tmp; /* pack into a file: the temporary name */
};

/* Opens the archive: stdin or stdout for "-", the file to read, or a
 * temporary file beside the one to write. Returns 0 or an exit status. */
static int
host_open(const struct tar_args *args, struct tar_host *h)
{
	char *copy;

	if (strcmp(args->archive, "-") == 0) {
		if (args->pack && isatty(STDOUT_FILENO) == 1) {
			log_error("pack: refusing to write an archive to a "
				  "terminal (give a file, or redirect)");
			return EXIT_USAGE;
		}
		h->fd = fcntl(args->pack ? 1 : 0, F_DUPFD_CLOEXEC, 3);
	} else if (!args->pack) {
		h->fd = open(args->archive, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	} else {
		if (asprintf(&h->tmp, "%s.stockade-XXXXXX", args->archive) <
			0 ||
		    (copy = strdup(args->archive)) == NULL) {
			log_error("out of memory");
			return EXIT_SANDBOX;
		}
		h->dirfd = open(dirname(copy),
		    O_PATH | O_DIRECTORY | O_CLOEXEC);
		free(copy);
		h->fd = h->dirfd < 0 ? -1 : mkostemp(h->tmp, O_CLOEXEC);
		if (h->fd < 0) {
			free(h->tmp);
			h->tmp = NULL;
		}
	}
	if (h->fd < 0) {
		log_error("%s: %s", args->archive, strerror(errno));
		return EXIT_FILE;
	}
	return 0;
}

/* Puts a packed temporary file in place (OK) or removes it; returns the
 * exit status RC, or EXIT_FILE when that fails. */
static int
host_close(const struct tar_args *args, struct tar_host *h, int rc)
{
	mode_t um;

	if (h->tmp != NULL && rc == 0) {
		um = umask(0);
		umask(um);
		/* close reports a delayed write error (NFS, quota). */
		if (fchmod(h->fd, 0666 & ~um) < 0 || close(h->fd) < 0 ||
		    rename(h->tmp, args->archive) < 0) {
			log_error("%s: %s", args->archive, strerror(errno));
			rc = EXIT_FILE;
		}
		h->fd = -1;
	}
	if (h->fd >= 0)
		close(h->fd);
	if (h->tmp != NULL && rc != 0)
		(void)unlink(h->tmp);
	if (h->dirfd >= 0)
		close(h->dirfd);
	free(h->tmp);
	return rc;
}

/* Says what F names, and how far the request got. */
static void
complain(const struct fs_ctx *ctx, const struct tar_args *args,
    const struct fstar_fail *f, const struct fstar_counts *n)
{
	fs_complain(ctx, f->entry != NULL ? f->entry : args->path, f->why,
	    f->text[0] != '\0' ? f->text : NULL);
	fprintf(stderr, "stockade: %s stopped after %" PRIu64 " entries\n",
	    args->pack ? "pack" : "unpack", n->files + n->directories);
}

static int
cmd_tar(int argc, char **argv, bool pack)
{
	struct tar_args args = {.pack = pack};
	struct tar_host host = {.fd = -1, .dirfd = -1, .tmp = NULL};
	struct confine_rule rules[2];
	struct fstar_counts n;
	struct fstar_fail f;
	struct workspace ws;
	struct policy pol;
	struct fs_ctx ctx;
	int rc, e;

	if ((rc = parse(argc, argv, &args)) != 0) {
		usage(rc > 0 ? stdout : stderr, pack);
		return rc > 0 ? 0 : EXIT_USAGE;
	}
	memset(&pol, 0, sizeof(pol));
	if ((rc = load_policy_or_complain(&pol, args.policy)) != 0)
		return rc;
	if ((rc = open_workspace_or_complain(&ws, args.workspace)) != 0) {
		policy_clear(&pol);
		return rc;
	}
	rules[0] = (struct confine_rule){.fd = ws.fd, .access = CONFINE_ALL};
	rules[1] = (struct confine_rule){.fd = -1,
	    .access = LANDLOCK_ACCESS_FS_MAKE_REG |
		LANDLOCK_ACCESS_FS_REMOVE_FILE};
	if ((rc = host_open(&args, &host)) == 0) {
		rules[1].fd = host.dirfd;
		rc = confine_or_complain(rules, host.dirfd >= 0 ? 2 : 1);
	}
	if (rc == 0) {
		/* Quotas: the policy's [files] (policy.h, struct fs_quota). */
		fsapi_ctx_init(&ctx, ws.fd, &pol.files);
		e = pack
		    ? fstar_pack(&ctx, args.path, host.fd, UINT64_MAX, &n, &f)
		    : fstar_unpack(&ctx, args.path, host.fd, NULL, 0,
			  args.overwrite, &n, &f);
		if (e < 0) {
			complain(&ctx, &args, &f, &n);
			rc = EXIT_FILE;
		} else if (n.skipped > 0) {
			fprintf(stderr,
			    "stockade: pack: %" PRIu64 " entries "
			    "left out (symbolic links, special or "
			    "hard-linked files, directories past max_depth "
			    "or not readable)\n",
			    n.skipped);
		}
		fstar_fail_free(&f);
	}
	rc = host_close(&args, &host, rc);
	if ((e = workspace_close(&ws, true)) < 0)
		log_warn("could not close the workspace %s: %s", ws.path,
		    strerror(-e));
	policy_clear(&pol);
	return rc;
}

int
cmd_unpack(int argc, char **argv)
{
	return cmd_tar(argc, argv, false);
}

int
cmd_pack(int argc, char **argv)
{
	return cmd_tar(argc, argv, true);
}
