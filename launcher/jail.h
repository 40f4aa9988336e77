/*
 * jail.h: building one namespace jail for one job (architecture.md, "The
 * jail, layer by layer") and the records its init sends back.
 */
#ifndef STOCKADE_JAIL_H
#define STOCKADE_JAIL_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <seccomp.h>

#include "proto.h"

/* A running jail, as the launcher sees it. Descriptors owned by it. */
struct jail {
	pid_t pid;           /* jail init, in the launcher's pid namespace */
	int pidfd;           /* pidfd of init (CLONE_PIDFD) */
	int out_fd, err_fd;  /* read ends of the payload's stdout/stderr */
	int status_fd;       /* read end of init's status pipe */
	struct timespec start; /* CLOCK_MONOTONIC at clone */
};

/* Stages of jail set-up, reported by init when one fails. Stable numbers. */
enum jail_stage {
	STAGE_PARENT = 1, STAGE_ID_MAPS, STAGE_MOUNT_NS, STAGE_ROOT_TMPFS,
	STAGE_BIND, STAGE_ETC, STAGE_DEV, STAGE_PROC, STAGE_TMP, STAGE_HOME,
	STAGE_WORK, STAGE_HOSTNAME, STAGE_LOOPBACK, STAGE_PIVOT_ROOT,
	STAGE_REMOUNT_ROOT, STAGE_CAPS, STAGE_FORK_PAYLOAD, STAGE_SIGNALS,
};
/* A short name for STAGE ("bind mounts"), never NULL. */
const char *jail_stage_name(int stage);

/* Records on the status pipe, init -> launcher: three little-endian i32. */
enum init_record {
	INIT_REC_SETUP_FAILED = 1, /* a = stage, b = errno */
	INIT_REC_PAYLOAD_EXIT = 2, /* a = wait status of the payload */
};
#define INIT_RECORD_SIZE 12

/*
 * Starts the jail for SPEC with the workspace directory WSFD (borrowed; the
 * launcher keeps ownership) bound at /work, LAUNCHER_PIDFD a pidfd of the
 * launcher itself (borrowed; init uses it to notice a launcher that died
 * before init armed PR_SET_PDEATHSIG), and the seccomp filter FILTER
 * (borrowed; NULL only when SPEC has JOB_F_UNSAFE_NO_SECCOMP). Returns 0
 * and fills J, or a negative errno when the clone itself fails (-EPERM,
 * -ENOSPC and -EINVAL there mean unprivileged user namespaces are not
 * available). Failures inside the jail are reported later on status_fd.
 */
int jail_start(const struct job_spec *spec, int wsfd, int launcher_pidfd,
	       scmp_filter_ctx filter, struct jail *j);

/* Closes J's descriptors (not the process: it is reaped by the caller). */
void jail_close(struct jail *j);

/*
 * The body of jail init (pid 1 of the jail); never returns. STATUS_FD is
 * the write end of the status pipe; OUT_FD and ERR_FD the write ends of the
 * payload's output pipes. See jail.c for the order of the steps.
 */
_Noreturn void jail_init_main(const struct job_spec *spec, int wsfd,
			      uid_t outer_uid, gid_t outer_gid,
			      int launcher_pidfd, int status_fd, int out_fd,
			      int err_fd, scmp_filter_ctx filter);

/*
 * Builds the first seccomp filter (launcher/seccomp.c): foreign ABIs
 * killed; ptrace, bpf, io_uring, keyctl, the mount API, namespace creation,
 * kexec, module loading and similar denied with EPERM; clone3 answered with
 * ENOSYS. Returns a context the caller releases, or NULL on failure.
 */
scmp_filter_ctx jail_seccomp_build(void);

/*
 * Drops to the payload and executes SPEC's program in the already built
 * jail: setsid, rlimits, signal mask reset, descriptors closed,
 * no_new_privs, seccomp (FILTER unless NULL), execvp. Never returns: on an
 * exec failure it prints why on stderr (fd 2) and exits 127 (not found)
 * or 126 (not executable), the shell's convention (POSIX.1-2017, Shell
 * Command Language 2.9.1.1).
 */
_Noreturn void jail_exec_payload(const struct job_spec *spec,
				 scmp_filter_ctx filter);

#endif
