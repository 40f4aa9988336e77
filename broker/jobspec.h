/* jobspec.h: turning a policy and a command line into a job spec. */
#ifndef STOCKADE_JOBSPEC_H
#define STOCKADE_JOBSPEC_H

#include "policy.h"
#include "proto.h"

/*
 * Fills SPEC from POLICY and the program ARGV (ARGC >= 1). SPEC borrows
 * every string from POLICY and ARGV (the caller keeps both alive while
 * SPEC is used, and frees SPEC's arrays with jobspec_release, not
 * job_spec_clear). Returns 0, -E2BIG for more arguments than the protocol
 * carries, -ENOMEM.
 */
int jobspec_from_policy(struct job_spec *spec, const struct policy *policy,
			int argc, char **argv);

/* Frees the arrays jobspec_from_policy allocated; accepts a zeroed SPEC. */
void jobspec_release(struct job_spec *spec);

#endif
