/*
 * jobrun_net.c: a job's controlled egress (issue 25; jobrun.h,
 * jobrun_use_network): its rules and caps, its hand-over to the
 * session's proxy when the launcher sends the listener jail init made,
 * and its report when it ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobrun.h"
#include "jobspec.h"

/* OUT = a copy of IN. Returns 0 or egress_rules_add's errno. */
static int
copy_rules(const struct egress_rules *in, struct egress_rules *out)
{
	int e;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < in->n; i++)
		if ((e = egress_rules_add(out, &in->v[i])) < 0) {
			egress_rules_clear(out);
			return e;
		}
	return 0;
}

int
jobrun_use_network(struct jobrun *jr, struct egress_proxy *px,
    const struct net_policy *net, const struct egress_rules *narrow,
    size_t *bad)
{
	struct egress_rules rules = {0};
	int e;

	e = narrow != NULL
	    ? egress_rules_narrow(&net->rules, narrow, &rules, bad)
	    : copy_rules(&net->rules, &rules);
	if (e < 0)
		return e;
	if ((e = jobspec_set_proxy(&jr->spec, EGRESS_PROXY_PORT)) < 0) {
		egress_rules_clear(&rules);
		return e;
	}
	egress_job_clear(&jr->net);
	jr->net.rules = rules;
	jr->net.max_bytes_out = net->bytes_out;
	jr->net.max_bytes_in = net->bytes_in;
	jr->net.max_connections = net->max_connections;
	jr->net.max_concurrent = net->max_concurrent;
	jr->net.port = EGRESS_PROXY_PORT;
	jr->proxy = px;
	return 0;
}
