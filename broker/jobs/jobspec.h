/* jobspec.h: turning a policy and a command line into a job spec. */
#ifndef STOCKADE_JOBSPEC_H
#define STOCKADE_JOBSPEC_H

#include "policy.h"
#include "proto.h"

/*
 * Fills SPEC from POLICY and the program ARGV (ARGC >= 1). SPEC owns
 * copies of every string and array it points to (proto.h, struct
 * job_spec): POLICY and ARGV may be freed or changed as soon as this
 * returns, and the caller frees SPEC with job_spec_clear. Checks what the
 * protocol can carry before anything is started, so that a command line
 * the launcher would refuse is the caller's error and not a sandbox
 * failure. Returns 0; -E2BIG for more than JOB_MAX_ARGS arguments or an
 * argument (the program included) over JOB_MAX_STR bytes; -EMSGSIZE when
 * every argument fits but the job as a whole does not fit in one RUN
 * message (PROTO_MAX_BODY); -EINVAL for an empty program name; -ENOMEM.
 * On failure SPEC is left zeroed, owning nothing.
 */
int jobspec_from_policy(struct job_spec *spec, const struct policy *policy,
    int argc, char **argv);

#endif
