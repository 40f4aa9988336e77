/*
 * supervisor_internal.h: what supervisor.c and supervisor_fds.c share:
 * the launcher's messages that carry descriptors (NET, STAGE). Not for
 * other callers.
 */
#ifndef STOCKADE_SUPERVISOR_INTERNAL_H
#define STOCKADE_SUPERVISOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "supervisor.h"

/* The descriptors a message of TYPE from the launcher carries (proto.h):
 * NET's two, STAGE's one, 0 for every other type. */
size_t supervisor_fds_of(uint16_t type);

/*
 * A NET or STAGE (TYPE) of the running job SPEC, BODY of LEN bytes, with
 * its supervisor_fds_of(TYPE) descriptors FDS (ours): checked (the job's
 * id; NET for a job with a proxy port, STAGE for one with a stage
 * (job_spec_staged); each at most once, *SEEN a mask of the types that came, bit TYPE)
 * and handed to S's net_fn or stage_fn, which own them, or closed when
 * there is none. Returns 0, or -EPROTO with the descriptors closed (the
 * caller fails the job: a protocol violation).
 */
int supervisor_take_fds(struct supervisor *s, const struct job_spec *spec,
    uint16_t type, const uint8_t *body, size_t len, const int *fds,
    uint32_t *seen);

#endif
