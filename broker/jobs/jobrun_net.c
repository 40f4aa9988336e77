/*
 * jobrun_net.c: a job's controlled egress (issue 25; jobrun.h,
 * jobrun_use_network): its rules and caps, its hand-over to the
 * session's proxy when the launcher sends the listener jail init made,
 * its report when it ends, and the result object with that report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobrun.h"
#include "jobspec.h"
#include "log.h"
#include "result_json.h"

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

/* The supervisor's NET receiver (supervisor.h, net_fn) while a job of JR
 * (ARG) runs: hands the job to the proxy with the two descriptors, then
 * closes ours. A proxy that is dead leaves them closed: the job's
 * connections to it are refused at once, and its report says so. */
static void
on_net(void *arg, uint64_t job_id, int listener, int packet)
{
	struct jobrun *jr = arg;
	int e;

	if (jr->proxy != NULL && job_id == jr->spec.job_id) {
		jr->net.job_id = job_id;
		e = egress_proxy_job(jr->proxy, &jr->net, listener, packet);
		jr->net_sent = e == 0;
		if (e < 0)
			log_warn("the egress proxy did not take job %llu: %s",
			    (unsigned long long)job_id, strerror(-e));
	}
	close(listener);
	close(packet);
}

void
jobrun_net_arm(struct jobrun *jr, struct supervisor *sup)
{
	jr->net_sent = false;
	sup->net_fn = jr->proxy != NULL ? on_net : NULL;
	sup->net_arg = jr->proxy != NULL ? jr : NULL;
}

void
jobrun_net_end(struct jobrun *jr, struct supervisor *sup)
{
	sup->net_fn = NULL;
	sup->net_arg = NULL;
	if (jr->proxy == NULL)
		return;
	free(jr->net_report);
	jr->net_report = calloc(1, sizeof(*jr->net_report));
	if (jr->net_report == NULL)
		return;
	if (jr->net_sent)
		(void)egress_proxy_end(jr->proxy, jr->spec.job_id,
		    jr->net_report);
	else {
		/* The job never reached its network (its set-up failed
		 * first), or the proxy was dead when it did. */
		jr->net_report->job_id = jr->spec.job_id;
		jr->net_report->proxy_failed = jr->proxy->dead;
	}
	jr->net_sent = false;
}

struct result_net
jobrun_net_of(const struct jobrun *jr)
{
	return (struct result_net){jr->net_report, &jr->net.rules};
}

json_t *
jobrun_result_json(const struct jobrun *jr)
{
	struct result_net net = jobrun_net_of(jr);
	json_t *o = result_to_json(&jr->res, &jr->limits, &jr->cap[1],
	    &jr->cap[2]);

	if (o != NULL && jr->net_report != NULL &&
	    result_add_network(o, &jr->res, &jr->limits, &jr->cap[1],
		&jr->cap[2], &net) < 0) {
		json_decref(o);
		errno = ENOMEM;
		return NULL;
	}
	if (o != NULL && jr->staged_valid &&
	    staged_add_result(o, &jr->staged, staged_mode_name(jr->commit)) <
		0) {
		json_decref(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}
