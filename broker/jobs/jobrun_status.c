/*
 * jobrun_status.c: a job's status refined from what it left (jobrun.h,
 * jobrun_refine_status): the workspace against its quota when the job
 * wrote it itself, then the program's own words for a limit.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobrun.h"

/* True when TAIL (LEN bytes) contains NEEDLE. */
static bool
says(const uint8_t *tail, size_t len, const char *needle)
{
	return memmem(tail, len, needle, strlen(needle)) != NULL;
}

/*
 * The program's own words for a limit it ran into, in the tail of its
 * stderr, by the status they mean. Only consulted for a job that exited
 * non-zero or aborted: a program that reports and handles the error and
 * exits 0 is ok. Words pick the kind only when the jail's figures back
 * it (words_backed). Sources: Python's MemoryError and OSError texts
 * (strerror of ENOMEM, EFBIG, ENOSPC, EDQUOT in glibc), C++'s
 * std::bad_alloc, Go's and the JVM's out-of-memory messages.
 */
static const struct {
	const char *text;
	const char *also; /* must appear too, or NULL */
	enum job_status status;
} limit_words[] = {
    {"MemoryError", NULL, JOB_MEMORY_LIMIT},
    {"Cannot allocate memory", NULL, JOB_MEMORY_LIMIT},
    {"std::bad_alloc", NULL, JOB_MEMORY_LIMIT},
    {"fatal error: runtime: out of memory", NULL, JOB_MEMORY_LIMIT},
    {"java.lang.OutOfMemoryError", NULL, JOB_MEMORY_LIMIT},
    {"File too large", NULL, JOB_FILE_SIZE_LIMIT},
    {"File size limit exceeded", NULL, JOB_FILE_SIZE_LIMIT},
    {"No space left on device", NULL, JOB_DISK_FULL},
    {"Disk quota exceeded", NULL, JOB_DISK_FULL},
    /* EAGAIN from fork or clone at RLIMIT_NPROC; EAGAIN alone is also
	 * a non-blocking read, so the failing call must show too. */
    {"Cannot fork", NULL, JOB_PROCESS_LIMIT},
    {"fork: retry", NULL, JOB_PROCESS_LIMIT},
    {"can't start new thread", NULL, JOB_PROCESS_LIMIT},
    {"Resource temporarily unavailable", "fork", JOB_PROCESS_LIMIT},
    {"Resource temporarily unavailable", "Popen", JOB_PROCESS_LIMIT},
    {"Resource temporarily unavailable", "spawn", JOB_PROCESS_LIMIT},
};

/*
 * Whether the jail's own figures back a limit status S picked from the
 * program's words (issue 23, point 7: a status from evidence, not from
 * words): for memory_limit, the memory seen at half the limit or more
 * (under the monitor the only ENOMEM the jail causes is RLIMIT_DATA's,
 * at twice the limit, payload.c; a program far below it that says
 * "MemoryError" failed of its own request, not of the jail's limit);
 * for process_limit, the jail seen at its process limit (the monitor's
 * sample or pids.events: the result's limits_reached) or a peak at it.
 * Other kinds (file size, disk) keep their words. When not backed,
 * writes why into WHY (LEN bytes) for the detail.
 */
static bool
words_backed(const struct jobrun *jr, enum job_status s, const char *text,
    char *why, size_t len)
{
	const struct job_result *r = &jr->res;
	const struct job_limits *lim = &jr->spec.limits;
	bool at_nproc = r->peak_processes >= lim->nproc;

	for (uint32_t i = 0; i < r->nreached; i++)
		if (r->reached[i].limit == JOB_REACHED_PROCESSES)
			at_nproc = true;
	if (s == JOB_MEMORY_LIMIT &&
	    r->peak_memory_kb * 1024u * 2u < lim->memory_bytes) {
		snprintf(why, len,
		    "the program said \"%s\" at a peak of %.1f "
		    "MiB, under half its memory limit of %.1f MiB: its own "
		    "failure, not the sandbox's limit",
		    text, (double)r->peak_memory_kb / 1024.0,
		    (double)lim->memory_bytes / 1048576.0);
		return false;
	}
	if (s == JOB_PROCESS_LIMIT && !at_nproc) {
		snprintf(why, len,
		    "the program said \"%s\" with at most %u "
		    "processes and threads seen, under the limit of %u: "
		    "not seen at the sandbox's limit",
		    text, r->peak_processes, lim->nproc);
		return false;
	}
	return true;
}

void
jobrun_refine_status(struct jobrun *jr, struct fs_ctx *fs)
{
	uint8_t *err, *tail;
	size_t len;
	struct job_result *r = &jr->res;
	char why[256];
	int e;

	if (r->status == JOB_SANDBOX_ERROR || r->status == JOB_CANCELLED ||
	    job_spec_layer_off(&jr->spec, JOB_LAYER_LIMITS))
		return;
	/* The workspace as the job left it, against the quota: exact,
	 * where the launcher's watch during the job samples. */
	e = jr->stage_fd >= 0 || jr->staged_valid ? -1 : fsapi_usage(fs);
	if (e == 0 && fs->used_disk > fs->quota.workspace_bytes &&
	    r->status != JOB_DISK_FULL) {
		snprintf(why, sizeof(why),
		    "the job left /work taking %.1f MiB "
		    "of disk, over its quota of %.1f MiB",
		    (double)fs->used_disk / 1048576.0,
		    (double)fs->quota.workspace_bytes / 1048576.0);
		jobrun_restatus(jr, JOB_DISK_FULL, why);
		return;
	}
	if (r->status != JOB_EXIT_NONZERO &&
	    !(r->status == JOB_CRASH && r->signal == SIGABRT))
		return;
	/* The last 4 KiB of stderr, collected once for every phrase. */
	if ((err = capture_collect(&jr->cap[2], "", &len)) == NULL)
		return;
	tail = err + (len > 4096 ? len - 4096 : 0);
	len -= (size_t)(tail - err);
	for (size_t i = 0; i < sizeof(limit_words) / sizeof(limit_words[0]);
	     i++) {
		if (!says(tail, len, limit_words[i].text) ||
		    (limit_words[i].also != NULL &&
			!says(tail, len, limit_words[i].also)))
			continue;
		if (!words_backed(jr, limit_words[i].status,
			limit_words[i].text, why, sizeof(why))) {
			/* Exit code and status stay; the detail says why
			 * the words were not taken. */
			if (r->detail == NULL || r->detail[0] == '\0')
				jobrun_restatus(jr, r->status, why);
			break;
		}
		snprintf(why, sizeof(why), "the program stopped on \"%s\"",
		    limit_words[i].text);
		if (limit_words[i].status == JOB_DISK_FULL && jr->staged_valid)
			jobrun_stage_figures(jr, why, sizeof(why));
		jobrun_restatus(jr, limit_words[i].status, why);
		break;
	}
	free(err);
}
