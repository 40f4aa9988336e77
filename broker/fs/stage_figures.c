/*
 * stage_figures.c: what the broker learns of a stage without opening
 * anything in it (stage_internal.h): its tmpfs's figures, and whether
 * its upper layer is empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "stage.h"
#include "stage_internal.h"

/* The page the stage's token takes (launcher/init/stage.c adds it to the
 * stage's size), bytes. */
#define STAGE_TOKEN_PAGE 4096u

int
stage_figures(int stage, struct stage_scan *out)
{
	struct statvfs v;

	struct stat tok;

	if (fstatvfs(stage, &v) < 0)
		return -errno;
	out->stage_bytes = (uint64_t)v.f_blocks * v.f_frsize;
	out->upper_bytes = (uint64_t)(v.f_blocks - v.f_bfree) * v.f_frsize;
	/* The token's page (proto.h, PROTO_STAGE_TOKEN) is jail init's,
	 * added to the job's allowance: neither is the job's. */
	if (fstatat(stage, "token", &tok, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(tok.st_mode) && out->stage_bytes >= STAGE_TOKEN_PAGE &&
	    out->upper_bytes >= STAGE_TOKEN_PAGE) {
		out->stage_bytes -= STAGE_TOKEN_PAGE;
		out->upper_bytes -= STAGE_TOKEN_PAGE;
	}
	out->stage_files = v.f_files;
	out->upper_files = v.f_files - v.f_ffree;
	return 0;
}

bool
stage_upper_empty(const struct stage_ref *stage)
{
	struct stat st;

	return fstatat(stage->fd, STAGE_UPPER, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode) && st.st_nlink == 2 && st.st_size == 40;
}
