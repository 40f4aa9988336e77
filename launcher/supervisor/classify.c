/*
 * classify.c: monitor_classify (monitor_internal.h), a job's one status.
 * With layer limits off no limit of stockade's was in force: a signal or
 * an exit is the program's (crash, exit_nonzero), never a *_limit or
 * disk_full status; only the wall clock (timeout) stays.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "monitor_internal.h"
#include "utf8.h"

/* The size of the detail monitor_classify writes. */
#define DETAIL_SIZE (JOB_MAX_DETAIL + 1)

/*
 * R's status for a payload killed by signal SIG (R->signal set): a limit's
 * signal when LIMITS (layer limits on) and the figures say that limit was
 * passed, the seccomp filter's SIGSYS, else a crash. DETAIL
 * (DETAIL_SIZE bytes) says why when the status needs it.
 */
static void
signal_status(const struct job_spec *spec, bool limits, int sig,
    struct job_result *r, char *detail)
{
	r->signal = sig;
	switch (r->signal) {
	case SIGXCPU:
		/* Only RLIMIT_CPU's SIGXCPU is a limit; a
		 * program can send itself one. */
		r->status = limits && r->cpu_ms + 1000 >= spec->limits.cpu_ms
		    ? JOB_CPU_LIMIT
		    : JOB_CRASH;
		break;
	case SIGXFSZ:
		r->status = limits ? JOB_FILE_SIZE_LIMIT : JOB_CRASH;
		break;
	case SIGSYS:
		r->status = JOB_POLICY_VIOLATION;
		fmt_words(detail, DETAIL_SIZE,
		    "killed by the seccomp filter (SIGSYS)");
		break;
	case SIGKILL:
		/* RLIMIT_CPU's hard limit ends in SIGKILL. */
		r->status = limits && r->cpu_ms >= spec->limits.cpu_ms
		    ? JOB_CPU_LIMIT
		    : JOB_CRASH;
		break;
	default:
		r->status = JOB_CRASH;
		break;
	}
}

/*
 * R's status, exit code and signal from what jail init saw (REC, when
 * HAVE_REC): the payload's wait status, a failed set-up step or bind, or
 * no report at all when the launcher had no reason of its own to end the
 * jail (S). LIMITS: layer limits on. DETAIL as signal_status.
 */
static void
status_from_init(const struct job_spec *spec, const struct job_state *s,
    const int32_t rec[3], bool have_rec, bool limits, struct job_result *r,
    char *detail)
{
	if (have_rec && rec[0] == INIT_REC_PAYLOAD_EXIT) {
		int st = rec[1];

		if (WIFEXITED(st)) {
			r->exit_code = WEXITSTATUS(st);
			r->status = r->exit_code == 0 ? JOB_OK
						      : JOB_EXIT_NONZERO;
		} else if (WIFSIGNALED(st)) {
			/* SIGXCPU and SIGKILL are RLIMIT_CPU's only past the
			 * limit by the backstop's margin (payload.c). */
			signal_status(spec, limits, WTERMSIG(st), r, detail);
		} else {
			r->status = JOB_SANDBOX_ERROR;
			fmt_words(detail, DETAIL_SIZE,
			    "unexpected wait status %#x", (unsigned)st);
		}
	} else if (have_rec && rec[0] == INIT_REC_SETUP_FAILED) {
		r->status = JOB_SANDBOX_ERROR;
		fmt_words(detail, DETAIL_SIZE, "jail set-up failed at %s: %s",
		    jail_stage_name(rec[1]), strerror(rec[2]));
	} else if (have_rec && rec[0] == INIT_REC_BIND_FAILED) {
		/* Issue 22: a bind whose host path went away (or was never
		 * there) names that path, the fix being the host's or the
		 * policy's. The index is init's, checked against the job. */
		const struct mount_entry *m = rec[1] >= 0 &&
			(uint32_t)rec[1] < spec->nmounts
		    ? &spec->mounts[rec[1]]
		    : NULL;

		r->status = JOB_SANDBOX_ERROR;
		fmt_words(detail, DETAIL_SIZE,
		    "jail set-up failed at %s: "
		    "%s %.900s: %s%s",
		    jail_stage_name(STAGE_BIND),
		    m == NULL			       ? "bind"
			: m->kind == MOUNT_RO_BIND_TRY ? "ro_bind_try"
			: m->kind == MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK
			? "unsafe_ro_bind_no_landlock"
			: "ro_bind",
		    m == NULL ? "(unknown)" : m->source, strerror(rec[2]),
		    rec[2] == ENOENT || rec[2] == ENOTDIR
			? " (the host has no such path; `stockade policy "
			  "check` names such binds)"
			: "");
	} else if (!s->timed_out && !s->over_output && !s->cancelled &&
	    s->enf.reason == ENF_NONE && !s->den.ended) {
		r->status = JOB_SANDBOX_ERROR;
		fmt_words(detail, DETAIL_SIZE,
		    "jail init ended without a report (code %d, status %d)",
		    s->info.si_code, s->info.si_status);
	}
}

/*
 * Narrows a failure R (exit_nonzero or crash, and ok for a limit passed
 * between two samples) to the cause the figures show: a command killed by
 * SIGXFSZ, /tmp or home full (REC's flags when HAVE_REC), a limit passed
 * between two of the monitor's samples, forks refused at the process
 * limit, or a call the seccomp filter refused. LIMITS: layer limits on.
 * DETAIL as signal_status.
 */
/* R (a job that failed) a disk_full of the file system FULL (INIT_FULL_*
 * flags) names, with DETAIL: /work first (its stage: issue 26), then
 * /tmp, then home. */
static void
full_status(const struct job_spec *spec, int32_t full, struct job_result *r,
    char *detail)
{
	r->status = JOB_DISK_FULL;
	if (full & INIT_FULL_WORK)
		fmt_words(detail, DETAIL_SIZE,
		    "/work was full as the program ended (the %.1f MiB and "
		    "%llu entries the job may add to the workspace)",
		    (double)spec->workspace_allow / 1048576.0,
		    (unsigned long long)spec->stage_files);
	else
		fmt_words(detail, DETAIL_SIZE,
		    "%s full as the program ended "
		    "(tmpfs of %.1f MiB)",
		    (full & INIT_FULL_TMP) ? "/tmp was"
					   : "the home directory was",
		    (double)((full & INIT_FULL_TMP) ? spec->limits.tmp_bytes
						    : spec->limits.home_bytes) /
			1048576.0);
}

static void
status_explained(const struct job_spec *spec, const struct job_state *s,
    const int32_t rec[3], bool have_rec, bool limits, struct job_result *r,
    char *detail)
{
	/* A shell reports a command killed by signal N as exit 128 + N
	 * (POSIX.1-2017, Shell Command Language 2.8.2); SIGXFSZ is sent
	 * only for RLIMIT_FSIZE. */
	if (limits && r->status == JOB_EXIT_NONZERO &&
	    r->exit_code == 128 + SIGXFSZ) {
		r->status = JOB_FILE_SIZE_LIMIT;
		fmt_words(detail, DETAIL_SIZE,
		    "exit code %d: a command it ran "
		    "was killed by SIGXFSZ (a file over %.1f MiB)",
		    r->exit_code, (double)spec->limits.fsize_bytes / 1048576.0);
	}
	/* A program that failed with /work (its stage), /tmp or home full
	 * most likely failed of it (ENOSPC); one that handled it and exited
	 * 0 is ok. */
	if (have_rec && rec[0] == INIT_REC_PAYLOAD_EXIT && rec[2] != 0 &&
	    (r->status == JOB_EXIT_NONZERO || r->status == JOB_CRASH))
		full_status(spec, rec[2], r, detail);
	/* A limit passed between two samples is still passed: the exact
	 * figures of the end (rusage, memory.peak) against the limits. */
	if (limits && (r->status == JOB_OK || r->status == JOB_EXIT_NONZERO) &&
	    s->enf.reason == ENF_NONE && !s->timed_out && !s->over_output) {
		if (s->enf.peak_rss_bytes > spec->limits.memory_bytes) {
			r->status = JOB_MEMORY_LIMIT;
			fmt_words(detail, DETAIL_SIZE,
			    "peak resident memory "
			    "%.1f MiB over the limit of %.1f MiB, between two "
			    "samples of the monitor",
			    (double)s->enf.peak_rss_bytes / 1048576.0,
			    (double)spec->limits.memory_bytes / 1048576.0);
		} else if (r->cpu_ms > spec->limits.cpu_ms) {
			r->status = JOB_CPU_LIMIT;
			fmt_words(detail, DETAIL_SIZE,
			    "%llu ms of CPU time over "
			    "the limit of %llu ms, between two samples of the "
			    "monitor",
			    (unsigned long long)r->cpu_ms,
			    (unsigned long long)spec->limits.cpu_ms);
		}
	}
	/* Forks refused at the limit explain a failure that follows. */
	if (s->enf.pids_hit &&
	    (r->status == JOB_EXIT_NONZERO || r->status == JOB_CRASH)) {
		r->status = JOB_PROCESS_LIMIT;
		fmt_words(detail, DETAIL_SIZE,
		    "the jail reached its limit of "
		    "%u processes and threads",
		    spec->limits.nproc);
	}
	/* A program that failed after the filter refused it a call most
	 * likely failed of it: name the first one refused. */
	if (s->den.n > 0 &&
	    (r->status == JOB_EXIT_NONZERO || r->status == JOB_CRASH)) {
		r->status = JOB_POLICY_VIOLATION;
		fmt_words(detail, DETAIL_SIZE,
		    "the seccomp filter refused "
		    "%s (first at %llu ms) and the program then failed",
		    s->den.d[0].syscall,
		    (unsigned long long)s->den.d[0].first_ms);
	}
}

/*
 * The launcher's own reasons to end the jail (S), which win over what
 * init saw: denied = kill, a limit the enforcer saw, the wall clock (a
 * fork bomb at its limit until then is process_limit), the output cap, a
 * cancel. DETAIL as signal_status.
 */
static void
status_by_launcher(const struct job_spec *spec, const struct job_state *s,
    struct job_result *r, char *detail)
{
	/* The launcher's own reasons to kill win over what init saw. */
	if (s->den.ended && !s->timed_out) {
		r->status = JOB_POLICY_VIOLATION;
		r->exit_code = -1;
		r->signal = SIGKILL;
		fmt_words(detail, DETAIL_SIZE, "%s", s->den.detail);
	} else if (s->enf.reason != ENF_NONE && !s->timed_out &&
	    !s->over_output) {
		static const enum job_status by_reason[] = {
		    [ENF_MEMORY] = JOB_MEMORY_LIMIT,
		    [ENF_CPU] = JOB_CPU_LIMIT,
		    [ENF_PROCESSES] = JOB_PROCESS_LIMIT,
		    [ENF_WORKSPACE] = JOB_DISK_FULL,
		};

		r->status = by_reason[s->enf.reason];
		r->exit_code = -1;
		r->signal = SIGKILL;
		fmt_words(detail, DETAIL_SIZE, "%s", s->enf.detail);
	} else if (s->timed_out && s->enf.pids_hit) {
		/* A fork bomb that kept the jail at its limit until the
		 * clock ran out. */
		r->status = JOB_PROCESS_LIMIT;
		r->exit_code = -1;
		r->signal = SIGKILL;
		fmt_words(detail, DETAIL_SIZE,
		    "the jail reached its limit of "
		    "%u processes and threads",
		    spec->limits.nproc);
	} else if (s->timed_out) {
		r->status = JOB_TIMEOUT;
		r->exit_code = -1;
		r->signal = SIGKILL;
	} else if (s->over_output) {
		r->status = JOB_OUTPUT_LIMIT;
		r->exit_code = -1;
		r->signal = SIGKILL;
	} else if (s->cancelled) {
		/* Someone chose to stop it: its own status, with the
		 * figures so far, never blamed on stockade (issue 22). */
		const char *why = job_cancel_reason_text((int)s->cancel_reason);

		r->status = JOB_CANCELLED;
		r->exit_code = -1;
		r->signal = SIGKILL;
		fmt_words(detail, DETAIL_SIZE, "cancelled by %s",
		    why != NULL ? why : "stockade");
	}
}

void
monitor_classify(const struct job_spec *spec, struct job_state *s,
    int32_t rec[3], bool have_rec, struct job_result *r)
{
	static char detail[DETAIL_SIZE];
	const bool limits = !job_spec_layer_off(spec, JOB_LAYER_LIMITS);

	r->exit_code = -1;
	r->signal = 0;
	detail[0] = '\0';
	status_from_init(spec, s, rec, have_rec, limits, r, detail);
	status_explained(spec, s, rec, have_rec, limits, r, detail);
	status_by_launcher(spec, s, r, detail);
	r->detail = detail;
}
