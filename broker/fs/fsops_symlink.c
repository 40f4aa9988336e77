/*
 * fsops_symlink.c: making a symlink in the host file API under a
 * session's quotas (fsapi.h: fsapi_symlink), for a checkpoint's restore
 * (checkpoint.h) and a staged commit (stage.h). The link is made in its
 * parent's descriptor, resolved once beneath the workspace; its target
 * is stored as bytes and never followed by the broker.
 */
#include "fsapi.h"
#include "fsapi_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"

int
fsapi_symlink(struct fs_ctx *ctx, const char *path, const char *target,
    enum fs_error *why)
{
	const struct wspath_limits lim = fsapi_path_limits(ctx);
	_cleanup_close_ int dirfd = -1;
	const char *name;
	size_t tlen = target != NULL ? strlen(target) : 0;
	int e;

	*why = FS_OK;
	/* symlink(7): a target is at most PATH_MAX - 1 bytes, never empty. */
	if (tlen == 0 || tlen >= 4096)
		return fsapi_fail(why, FS_INVALID_PATH, -EINVAL);
	if ((e = fsapi_may_add(ctx, path, &lim, why)) < 0)
		return e;
	if (ctx->used_entries >= ctx->quota.max_files)
		return fsapi_fail(why, FS_QUOTA_EXCEEDED, -EDQUOT);
	dirfd = fsapi_open_parent(ctx->root, path, &lim, &name, why);
	if (dirfd < 0)
		return dirfd;
	if ((e = fsapi_before_change(ctx, path, why)) < 0)
		return e;
	/* symlinkat never replaces: EEXIST for anything at NAME. */
	if (symlinkat(target, dirfd, name) < 0)
		return fsapi_fail(why, fs_error_from_errno(errno), -errno);
	if (ctx->usage_valid)
		ctx->used_entries++;
	return 0;
}
