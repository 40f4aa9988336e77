/*
 * jobrun_stage.c: a job's stage (issue 26; jobrun.h, stage_fd): the
 * inodes its writes may take (RUN's stage_files) and the descriptor of
 * the stage tmpfs the launcher sends with PROTO_STAGE (supervisor.h,
 * stage_fn), kept in the jobrun for broker/fs/stage.h to read.
 */
#include <unistd.h>

#include "jobrun.h"

/* The supervisor's STAGE receiver (supervisor.h, stage_fn) while a job
 * of JR (ARG) runs: the descriptor kept in JR->stage_fd, owned. */
static void
on_stage(void *arg, uint64_t job_id, int stage)
{
	struct jobrun *jr = arg;

	if (job_id != jr->spec.job_id || jr->stage_fd >= 0) {
		close(stage);
		return;
	}
	jr->stage_fd = stage;
}

/* The entries a job may add to FS before its quota's max_files: 0 when
 * it is full or was not counted (fail closed), as workspace_allowance
 * (jobrun.c) says of bytes. */
static uint64_t
stage_files_of(const struct fs_ctx *fs)
{
	if (!fs->usage_valid || fs->used_entries >= fs->quota.max_files)
		return 0;
	return fs->quota.max_files - fs->used_entries;
}

void
jobrun_stage_arm(struct jobrun *jr, struct supervisor *sup,
    const struct fs_ctx *fs)
{
	if (jr->stage_fd >= 0)
		close(jr->stage_fd);
	jr->stage_fd = -1;
	jr->spec.stage_files = stage_files_of(fs);
	sup->stage_fn = on_stage;
	sup->stage_arg = jr;
}

void
jobrun_stage_end(struct supervisor *sup)
{
	sup->stage_fn = NULL;
	sup->stage_arg = NULL;
}
