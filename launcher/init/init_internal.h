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
