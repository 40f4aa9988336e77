/*
 * handover.h: how a warm pool's jail hands its job to a payload that is
 * already confined (issue 27; docs/layers.md, "A warm jail's payload").
 *
 * A waiting jail's init forks its payload before the job comes. The
 * payload applies every step of its set-up (payload.c: session, rlimits,
 * signals, descriptors, no_new_privs, Landlock, the seccomp filter) and
 * blocks in recvmsg(2) on its end of a SOCK_SEQPACKET socketpair whose
 * other end init keeps. When the job arrives, init checks it against
 * the jail (jail_pool_compatible) and sends the payload one message, the
 * exec block: the job's argv and environment, and its stdin pipe by
 * SCM_RIGHTS when it has one. The payload then only moves that pipe to
 * descriptor 0 and calls execve(2).
 *
 * The exec block: u32 argc, u32 envc (host byte order: both ends are
 * this program), then argc and then envc NUL-terminated strings, nothing
 * after. At most JOB_MAX_ARGS arguments and JOB_MAX_ENV variables; its
 * length is bounded by the RUN message it comes from.
 */
#ifndef STOCKADE_HANDOVER_H
#define STOCKADE_HANDOVER_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* The largest exec block, bytes: no larger than the job's RUN. */
#define HANDOVER_MAX_BYTES PROTO_MAX_BODY

/*
 * What the payload receives into, allocated before its rlimits (nothing
 * allocates once RLIMIT_DATA is set: payload.c) and never freed (the
 * payload execs or exits): the block's bytes, and pointer arrays for
 * argv and envp, each with room for its terminating NULL.
 */
struct handover_buf {
	uint8_t *bytes; /* HANDOVER_MAX_BYTES */
	char **argv; /* JOB_MAX_ARGS + 1 */
	char **envp; /* JOB_MAX_ENV + 1 */
};

/*
 * Allocates HB's three buffers. Returns 0, or -ENOMEM (HB then holds
 * whatever was allocated; the caller exits).
 */
int handover_buf_init(struct handover_buf *hb);

/*
 * Init's side: sends JOB's argv and envp on SOCK (init's end of the
 * socketpair) as one exec block, with STDIN_FD (borrowed; -1: none) by
 * SCM_RIGHTS, MSG_NOSIGNAL. Returns 0; -EMSGSIZE for a block over
 * HANDOVER_MAX_BYTES or counts over the bounds above; -ENOMEM; or
 * sendmsg(2)'s negative errno (-EPIPE: the payload is gone).
 */
int handover_send(int sock, const struct job_spec *job, int stdin_fd);

/*
 * The payload's side: receives one exec block on SOCK into HB without
 * allocating (recvmsg(2) with MSG_CMSG_CLOEXEC), and points *ARGV and
 * *ENVP at its strings, NULL-terminated. *STDIN_FD gets the descriptor
 * that came with it (close-on-exec, the caller's), or -1. Returns 1 for a
 * block; 0 at EOF (init is gone: the pool dropped the jail); -EBADMSG for
 * a block that does not parse, a truncated message or control data, or
 * more than one descriptor (any that came are closed); or recvmsg's
 * negative errno. EINTR is retried.
 */
int handover_recv(int sock, struct handover_buf *hb, char ***argv, char ***envp,
    int *stdin_fd);

#endif
