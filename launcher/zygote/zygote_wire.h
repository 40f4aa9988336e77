/*
 * zygote_wire.h: the private wire between the launcher's supervisor
 * (supervisor/zygote_client.c) and its zygote (zygote/zygote.c). Not for
 * other callers.
 *
 * Wire, on the SOCK_SEQPACKET pair (private to the launcher and its
 * zygote, so not in proto.h):
 *   request  the RUN message as proto_encode_run writes it; descriptors:
 *            the workspace directory, then the cgroup leaf if any (a
 *            directory), then the payload's stdin if any: the read end
 *            of the job's stdin pipe (a FIFO; JOB_F_STDIN) or the
 *            caller's terminal (a character device; layer no_terminal
 *            off);
 *   prepare  u32 "POOL", then a request as above without a stdin: a
 *            jail for the warm pool, whose init waits for its job
 *            (zygote_prepare_jail);
 *   reply    i32 refusal, i32 errno, u8 kill_on_denial, i32 pid,
 *            u64 start seconds, u64 start nanoseconds (CLOCK_MONOTONIC at
 *            the clone, which is system-wide), u64 token, str why; on
 *            ZYGOTE_OK the descriptors init's pidfd, stdout, stderr,
 *            status pipe and seccomp-notify socket, in that order, then
 *            for a prepared jail the socket its job goes to;
 *   kill     u32 "KILL", i32 signal (SIGKILL or JAIL_KILL_SIGNAL), u64
 *            token; no descriptor, no reply (zygote_kill).
 */
#ifndef STOCKADE_ZYGOTE_WIRE_H
#define STOCKADE_ZYGOTE_WIRE_H

#include <sys/types.h>

#include "zygote.h"

/* A reply's descriptors: those of a started jail, and of a prepared one. */
#define REPLY_FDS 5
#define MAX_REPLY_FDS 6
/* A request's descriptors: workspace, cgroup leaf, the payload's stdin. */
#define REQUEST_FDS 3
/* The first word of a kill request (zygote_kill): "KILL". */
#define KILL_MAGIC 0x4c4c494bu
/* The first word of a prepare request (zygote_prepare_jail): "POOL". */
#define POOL_MAGIC 0x4c4f4f50u
/* The first word of a measure request and of its reply (zygote_measure):
 * "MEAS". */
#define MEAS_MAGIC 0x5341454du
/* The first word of a kernel objects count request and of its reply
 * (zygote_kernel_objects): "KOBJ". */
#define KOBJ_MAGIC 0x4a424f4bu

/*
 * The zygote's body, run in the child zygote_start forks; never returns.
 * C is the session's configuration (zygote.h, kept by the caller for the
 * life of the process), SOCK the zygote's end of the pair above, LAUNCHER
 * the pid of the launcher that forked it: the zygote drops its
 * privileges, dies with the launcher, and serves requests on SOCK until
 * it reads EOF (exit 0) or fails (exit 1).
 */
_Noreturn void zygote_main(const struct zygote_config *c, int sock,
    pid_t launcher);

#endif
