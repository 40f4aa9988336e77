/*
 * cmd_fs_edit.c: `stockade rm`, `mkdir` and `mv` (cmd_fs.h): the
 * commands that change a workspace's tree, with nothing to open on the
 * host.
 */
#include <string.h>

#include "cmd_fs.h"
#include "commands.h"
#include "fsapi.h"
#include "wspath.h"

int
fscli_rm(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h)
{
	enum fs_error why;

	if (fsapi_remove(ctx, args->a, args->recursive, &why) < 0) {
		fs_complain(ctx, args->a, why, NULL);
		return EXIT_FILE;
	}
	return 0;
}

int
fscli_mkdir(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h)
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
mv_culprit(const struct fs_args *args, struct fs_ctx *ctx, enum fs_error why)
{
	struct wspath_limits lim = fsapi_path_limits(ctx);
	struct fs_entry e;
	enum fs_error w2;

	switch (why) {
	case FS_INVALID_PATH:
		return wspath_why(args->a, strlen(args->a), &lim) != WSPATH_OK
		    ? args->a
		    : args->b;
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

int
fscli_mv(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h)
{
	enum fs_error why;

	if (fsapi_rename(ctx, args->a, args->b, args->overwrite, &why) < 0) {
		fs_complain(ctx, mv_culprit(args, ctx, why), why, NULL);
		return EXIT_FILE;
	}
	return 0;
}
