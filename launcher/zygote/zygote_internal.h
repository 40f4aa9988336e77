/*
 * zygote_internal.h: the zygote's state, shared by its loop (zygote.c)
 * and the requests it serves without making a jail (zygote_serve.c).
 * Not for other callers.
 */
#ifndef STOCKADE_ZYGOTE_INTERNAL_H
#define STOCKADE_ZYGOTE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "filter_cache.h"
#include "proto.h"
#include "zygote.h"

/* Jails alive at once: the pool's, the running job's, and ones dying. */
#define MAX_LIVE (PROTO_MAX_POOL + 8)

/*
 * What the session's first request fixed (zygote.h, "Authority"): that
 * request reaches the zygote before any job has run, so before anything
 * a payload controls has reached the launcher.
 */
struct pin {
	bool set;
	struct job_spec spec; /* the first request, decoded */
	dev_t ws_dev; /* its workspace */
	ino_t ws_ino;
	bool cgroup; /* it came with a cgroup leaf, */
	dev_t cg_dev; /* whose parent is this one */
	ino_t cg_ino;
};

struct zstate {
	const struct zygote_config *c;
	struct filter_cache cache;
	struct pin pin;
	/* The jails it made that have not exited, by token: the launcher
	 * asks the zygote to kill them (it may signal nothing itself). */
	struct {
		uint64_t token;
		int pidfd;
		pid_t pid; /* init's host pid, valid while pidfd is open */
	} live[MAX_LIVE];
	size_t nlive;
	uint64_t last_token;
	int proc_fd; /* the host's /proc, for measure requests, or -1 */
};

/*
 * Serves request M on SOCK when it is a kill (WIRE_KILL: the jail's init
 * signalled, no reply), a measure or a count (WIRE_MEASURE, WIRE_KOBJ:
 * answered on SOCK) whose body decodes (wire.h). Returns true when
 * served; false for any other message, which the caller answers as a
 * jail request (refused when it is none).
 */
bool zygote_serve(struct zstate *z, int sock, const struct wire_msg *m);

#endif
