/*
 * init_internal.h: what jail init's files share (jail_init.c, netns.c,
 * reaper.c). Not for other callers.
 */
#ifndef STOCKADE_INIT_INTERNAL_H
#define STOCKADE_INIT_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "jail.h"

/* What jail init knows of its job while it builds the jail and reaps. */
struct init_ctx {
	const struct job_spec *spec;
	const struct jail_host *h;
	int status_fd; /* the write end of the status pipe */
	bool userns; /* layer user_ns on */
	bool pidns; /* layer pid_ns on */
	bool mountns; /* layer mount_ns on */
	bool group; /* layer process_group on */
	int tmp_fd; /* /tmp and home, held to tell disk_full, or -1 */
	int home_fd;
	int proc_fd; /* the host's /proc without a pid namespace, or -1 */
};

/*
 * Reports the failed set-up step STAGE (enum job_stage) with ERR (an
 * errno value, either sign) on STATUS_FD as INIT_REC_SETUP_FAILED and
 * ends init with status 1. Never returns.
 */
_Noreturn void setup_failed(int status_fd, int stage, int err);

/*
 * FD (a result: a negative errno passes through) moved to 3 or above
 * with the fcntl(2) command CMD (F_DUPFD_CLOEXEC): init has closed 0, 1
 * and 2, which the payload's standard streams will take. Returns the new
 * descriptor (FD itself is closed when it was moved), or a negative errno
 * with errno set too.
 */
int above_stdio(int fd, int cmd);

/*
 * A warm pool's jail, built for TEMPLATE: waits on GO_FD for the job's
 * WIRE_GO message from the launcher (shared/wire.h: its RUN message, and
 * its stdin pipe by role) and returns the RUN decoded (leaked: init execs
 * nothing and exits after its payload). The launcher discarding the jail
 * (EOF) ends init quietly; a message that does not decode, or a job that
 * asks for what the jail was not built for (jail_pool_compatible: a
 * launcher is not trusted to widen a jail), is a set-up failure
 * (STAGE_POOL_JOB). The message carries the stdin pipe role exactly when
 * the spec has JOB_F_STDIN, and then the read end of a pipe (else it is
 * a set-up failure too, EPERM); it is stored in
 * *STDIN_FD, numbered above 2 and close-on-exec (the caller owns it).
 * GO_FD is closed once the job is read. A failure is reported on
 * STATUS_FD and ends init (pool_job.c). Signals are blocked: the wait
 * is not interrupted, and the kernel's SIGKILL still ends it.
 */
const struct job_spec *jail_init_take_job(const struct job_spec *template,
    int go_fd, int status_fd, int *stdin_fd);

/*
 * TCP's buffer autotuning in the jail's network namespace capped at the
 * socket defaults (netns.c). Returns 0 or -errno.
 */
int jail_init_tcp_buffers(void);

/*
 * Brings up lo, the only interface of the jail's new network namespace
 * (netns.c). Returns 0 or -errno.
 */
int jail_init_loopback(void);

/*
 * Jail init's last part (reaper.c), once the payload PAYLOAD runs: reaps
 * every process of the jail with every signal blocked (ALL, waited for
 * with sigwaitinfo), forwards the termination signals to the payload,
 * and when the payload exits sends INIT_REC_TASKS (in a pid namespace of
 * its own with its own /proc) and INIT_REC_PAYLOAD_EXIT on
 * C->status_fd and exits 0; on JAIL_KILL_SIGNAL it ends the job
 * (jail_kill_tree with layer process_group on and no pid namespace, else
 * the payload alone) and exits 0. Never returns.
 */
_Noreturn void jail_init_reap(const struct init_ctx *c, pid_t payload,
    const sigset_t *all);

#endif
