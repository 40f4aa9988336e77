/*
 * jobrun_stage.c: a job's stage (issue 26): its size, the descriptor of
 * the stage tmpfs the launcher sends while it runs (PROTO_STAGE:
 * jobrun_stage_arm), and its staged writes after it ran (jobrun.h,
 * jobrun_settle): read, held back, committed or kept.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jobrun.h"

_Static_assert(STAGE_TOKEN_BYTES == PROTO_STAGE_TOKEN_BYTES,
    "the stage token has one size");

void
jobrun_stage_size(const struct jobrun *jr, const struct fs_ctx *fs,
    uint64_t *bytes, uint64_t *files)
{
	uint64_t b = fs->quota.workspace_bytes;

	if (jr->limits.memory_bytes != 0 && jr->limits.memory_bytes < b)
		b = jr->limits.memory_bytes;
	*bytes = b;
	*files = fs->quota.max_files;
}

/* Whether the stage of ST had less than a page or no inode left: the
 * job ran into its allowance (the tmpfs answered ENOSPC). */
static bool
stage_full(const struct stage_scan *sc)
{
	return sc->stage_bytes - sc->upper_bytes < 4096 ||
	    sc->upper_files >= sc->stage_files;
}

/* A job that failed with its stage full: disk_full with the figures. */
static void
full_status(struct jobrun *jr)
{
	const struct stage_scan *sc = &jr->staged.scan;
	char why[256];

	if ((jr->res.status != JOB_EXIT_NONZERO &&
		jr->res.status != JOB_CRASH) ||
	    !stage_full(sc))
		return;
	if (sc->upper_files >= sc->stage_files)
		snprintf(why, sizeof(why),
		    "the job created %llu files and directories, its "
		    "allowance ([files] max_files)",
		    (unsigned long long)sc->stage_files);
	else
		snprintf(why, sizeof(why),
		    "the job wrote %.1f MiB to /work, its allowance of "
		    "%.1f MiB (the smaller of [files] workspace_mb and "
		    "[limits] memory_mb)",
		    (double)sc->upper_bytes / 1048576.0,
		    (double)sc->stage_bytes / 1048576.0);
	jobrun_restatus(jr, JOB_DISK_FULL, why);
}

void
jobrun_stage_figures(const struct jobrun *jr, char *why, size_t len)
{
	const struct stage_scan *sc = &jr->staged.scan;
	size_t at = strlen(why);

	if (at + 1 >= len)
		return;
	snprintf(why + at, len - at,
	    "; /work's stage held %.1f MiB of the job's allowance of %.1f "
	    "MiB (the smaller of [files] workspace_mb and [limits] "
	    "memory_mb) and %llu of %llu entries ([files] max_files) at its "
	    "end: a file deleted while still open counts until it is closed",
	    (double)sc->upper_bytes / 1048576.0,
	    (double)sc->stage_bytes / 1048576.0,
	    (unsigned long long)sc->upper_files,
	    (unsigned long long)sc->stage_files);
}

/* A commit refused for a full workspace (bytes or entries, whichever
 * the change set would take past the quota): disk_full, the changes
 * kept (a session) or dropped (a run). */
static void
commit_full_status(struct jobrun *jr, const struct fs_ctx *fs)
{
	const struct staged *st = &jr->staged;
	uint64_t created = 0;
	char why[384];

	for (size_t i = 0; i < st->ch.n; i++)
		created += st->ch.c[i].kind == CHANGE_CREATED;
	if (fs->used_entries + created > fs->quota.max_files)
		snprintf(why, sizeof(why),
		    "the job's changes add %llu entries to a workspace "
		    "holding %llu of its %llu ([files] max_files); %s",
		    (unsigned long long)created,
		    (unsigned long long)fs->used_entries,
		    (unsigned long long)fs->quota.max_files,
		    st->id != 0 ? "they are kept staged"
				: "nothing was written back");
	else if (fs->used_bytes + st->scan.upper_bytes <=
	    fs->quota.workspace_bytes)
		snprintf(why, sizeof(why),
		    "the workspace's file system is full: the job's changes "
		    "(%.1f MiB staged) could not be written back; %s",
		    (double)st->scan.upper_bytes / 1048576.0,
		    st->id != 0 ? "they are kept staged"
				: "nothing was written back");
	else
		snprintf(why, sizeof(why),
		    "the job's changes (%.1f MiB staged) do not fit in the "
		    "workspace: it holds %.1f MiB of its quota of %.1f MiB "
		    "([files] workspace_mb); %s",
		    (double)st->scan.upper_bytes / 1048576.0,
		    (double)fs->used_bytes / 1048576.0,
		    (double)fs->quota.workspace_bytes / 1048576.0,
		    st->id != 0 ? "they are kept staged"
				: "nothing was written back");
	jobrun_restatus(jr, JOB_DISK_FULL, why);
}

/* Closes JR's stage unless its change set still holds changes for the
 * client: a tmpfs held open is memory, and a session keeps the sets of
 * its last jobs (what they say stays, for fs.changes). */
static void
release_unless_held(struct jobrun *jr)
{
	if (!staged_holds(&jr->staged))
		staged_release(&jr->staged);
}

void
jobrun_settle(struct jobrun *jr, struct fs_ctx *fs)
{
	int fd = jr->stage_fd;

	jr->stage_fd = -1;
	jr->staged_valid = true;
	if (staged_open(&jr->staged, fd, jr->stage_token, fs->root, &fs->quota,
		jr->writeback, jr->stage_id, jobrun_interrupted) < 0) {
		staged_release(&jr->staged);
		return;
	}
	full_status(jr);
	if (jr->commit == COMMIT_KEEP)
		return;
	if (jr->commit == COMMIT_ON_OK && jr->res.status != JOB_OK) {
		staged_rollback(&jr->staged);
		release_unless_held(jr);
		return;
	}
	/* A change set the scan could not read whole (truncated: a
	 * directory the job locked away from a broker that is not root, a
	 * bound of the scan) is refused as quota_exceeded too, but the
	 * workspace is not full. */
	if (staged_commit(&jr->staged, fs, NULL, 0, NULL) < 0 &&
	    !jr->staged.commit.conflict && !jr->staged.ch.truncated &&
	    jr->staged.commit.why == FS_QUOTA_EXCEEDED)
		commit_full_status(jr, fs);
	release_unless_held(jr);
}

/* The supervisor's STAGE receiver (supervisor.h, stage_fn) while a job
 * of JR (ARG) runs: the descriptor kept in JR->stage_fd, owned, and its
 * TOKEN in JR->stage_token. */
static void
on_stage(void *arg, uint64_t job_id, int stage, const uint8_t *token)
{
	struct jobrun *jr = arg;

	if (job_id != jr->spec.job_id || jr->stage_fd >= 0) {
		close(stage);
		return;
	}
	jr->stage_fd = stage;
	memcpy(jr->stage_token, token, sizeof(jr->stage_token));
}

void
jobrun_stage_arm(struct jobrun *jr, struct supervisor *sup)
{
	if (jr->stage_fd >= 0)
		close(jr->stage_fd);
	jr->stage_fd = -1;
	memset(jr->stage_token, 0, sizeof(jr->stage_token));
	sup->stage_fn = on_stage;
	sup->stage_arg = jr;
}

void
jobrun_stage_end(struct supervisor *sup)
{
	sup->stage_fn = NULL;
	sup->stage_arg = NULL;
}
