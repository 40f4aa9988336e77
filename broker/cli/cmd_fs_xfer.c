/*
 * cmd_fs_xfer.c: `stockade put` and `stockade get` (cmd_fs.h): a host
 * file, or standard input or output, into or out of a workspace, with a
 * meter on a terminal (progress.h).
 *
 * The host side is opened before the process confines itself: the file
 * put reads, or for a get into a host file the temporary file beside it
 * (renamed over it once complete, so a failed get leaves it as it was)
 * and its directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_fs.h"
#include "commands.h"
#include "fsapi.h"
#include "fsutil.h"
#include "log.h"
#include "progress.h"

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
int
fscli_open_put(const struct fs_args *args, struct fs_host *h)
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
put_sized(const struct fs_args *args, struct fs_ctx *ctx, int in, int *staged,
    struct progress *m)
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
		got = off >= 0 && st.st_size > off
		    ? (uint64_t)(st.st_size - off)
		    : 0;
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

		snprintf(text, sizeof(text),
		    "%s %s%s %" PRIu64 " bytes, "
		    "--size said %" PRIu64 ": nothing written",
		    strcmp(args->a, "-") == 0 ? "standard input"
					      : "the host file",
		    *staged >= 0 ? "gave" : "holds", more ? " more than" : "",
		    more ? args->size : got, args->size);
		fs_complain(ctx, args->b,
		    got > args->size ? FS_TOO_LARGE : FS_IO_ERROR, text);
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

int
fscli_put(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h)
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
int
fscli_open_get(const struct fs_args *args, struct fs_host *h)
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

int
fscli_get(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h)
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
