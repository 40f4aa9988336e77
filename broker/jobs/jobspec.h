/* jobspec.h: turning a policy and a command line into a job spec. */
#ifndef STOCKADE_JOBSPEC_H
#define STOCKADE_JOBSPEC_H

#include <stdint.h>

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

/* How many variables jobspec_set_proxy sets (JOBSPEC_PROXY_VARS). */
#define JOBSPEC_PROXY_NVARS 8u

/*
 * The names jobspec_set_proxy sets, both cases, for the clients that read
 * one or the other (docs/egress.md, "The job's proxy variables"):
 * HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, http_proxy, https_proxy,
 * all_proxy, no_proxy. Static storage.
 */
extern const char *const JOBSPEC_PROXY_VARS[JOBSPEC_PROXY_NVARS];

/*
 * Controlled egress (issue 25): SPEC's proxy_port becomes PORT (1 to
 * 65535) and its environment points every usual client at the proxy
 * jail init listens for at 127.0.0.1:PORT: HTTP_PROXY and HTTPS_PROXY
 * "http://127.0.0.1:PORT", ALL_PROXY "socks5h://127.0.0.1:PORT" (the
 * 'h': the proxy resolves names, the jail has no resolver), NO_PROXY
 * "localhost,127.0.0.1,::1", and the same four in lower case. An entry
 * of SPEC's of one of those names (the policy's) is replaced: these win.
 * SPEC owns the new strings (proto.h, struct job_spec); the replaced
 * ones are freed. Returns 0; -EINVAL for PORT 0; -EOVERFLOW when SPEC
 * would hold more than JOB_MAX_ENV variables; -ENOMEM. On failure SPEC
 * is unchanged. The caller checks that the job still fits one RUN.
 */
int jobspec_set_proxy(struct job_spec *spec, uint16_t port);

#endif
