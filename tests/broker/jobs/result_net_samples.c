/*
 * result_net_samples.c: prints results with a network (issue 25), built
 * by result_to_json and result_add_network from hand-made reports, one
 * JSON object a line: {"name": NAME, "result": RESULT, "text": the text
 * form}. tests/broker/jobs/test_result_net_samples.py validates each
 * against docs/result.schema.json and hands each text form to the
 * scripted model of tests/system/test_model.py. Exits 1 when a result
 * cannot be built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "capture.h"
#include "egress_ctl.h"
#include "egress_rules.h"
#include "result_json.h"

/* One sample: how the job ended, what its stderr says, what the proxy
 * refused (up to two entries) and whether it failed. */
struct sample {
	const char *name;
	enum job_status status;
	int exit_code;
	const char *stderr_text;
	bool proxy_failed;
	struct {
		const char *host;
		uint16_t port;
		enum egress_reason reason;
		const char *detail;
	} refused[2];
};

static const struct sample samples[] = {
    {"not_allowed", JOB_EXIT_NONZERO, 1, NULL, false,
	{{"evil.example", 443, EGRESS_REASON_NOT_ALLOWED, ""}}},
    {"direct_connect", JOB_EXIT_NONZERO, 1, NULL, false,
	{{"93.184.215.14", 443, EGRESS_REASON_DIRECT_CONNECT, "tcp"}}},
    {"direct_and_not_allowed", JOB_EXIT_NONZERO, 1, NULL, false,
	{{"10.0.0.1", 53, EGRESS_REASON_DIRECT_CONNECT, "udp"},
	    {"evil.example", 443, EGRESS_REASON_NOT_ALLOWED, ""}}},
    {"dns_lookup", JOB_EXIT_NONZERO, 1, NULL, false,
	{{"127.0.0.1", 53, EGRESS_REASON_DIRECT_CONNECT, "udp"}}},
    {"private_address", JOB_EXIT_NONZERO, 1, NULL, false,
	{{"intranet.pypi.org", 443, EGRESS_REASON_PRIVATE_ADDRESS, ""}}},
    {"sni_mismatch", JOB_EXIT_NONZERO, 35, NULL, false,
	{{"pypi.org", 443, EGRESS_REASON_SNI_MISMATCH, "evil.example"}}},
    {"budget", JOB_EXIT_NONZERO, 1, NULL, false,
	{{"pypi.org", 443, EGRESS_REASON_BUDGET, "max_bytes_in_mb"}}},
    {"bad_request", JOB_EXIT_NONZERO, 1, NULL, false,
	{{"a@b", 80, EGRESS_REASON_BAD_REQUEST, "userinfo"}}},
    {"unreachable", JOB_EXIT_NONZERO, 6, NULL, false,
	{{"pypi.org", 443, EGRESS_REASON_UNREACHABLE, "no_such_name"}}},
    {"ok_with_refusal", JOB_OK, 0, NULL, false,
	{{"evil.example", 443, EGRESS_REASON_NOT_ALLOWED, ""}}},
    {"proxy_failed", JOB_EXIT_NONZERO, 1, NULL, true, {{NULL}}},
    {"proxy_failed_ok", JOB_OK, 0, NULL, true, {{NULL}}},
    {"timeout_with_refusal", JOB_TIMEOUT, -1, NULL, false,
	{{"evil.example", 443, EGRESS_REASON_NOT_ALLOWED, ""}}},
    {"resolve_failure", JOB_EXIT_NONZERO, 6,
	"curl: (6) Could not resolve "
	"host: pypi.org\n",
	false, {{NULL}}},
    {"hostile_host", JOB_EXIT_NONZERO, 1, NULL, false,
	{{"a\nstatus: ok\x1b[2J\xff", 443, EGRESS_REASON_NOT_ALLOWED,
	    "\x07\x9b"}}},
    {"ok_clean", JOB_OK, 0, NULL, false, {{NULL}}},
};

static int
add_rule(struct egress_rules *rules, enum egress_rule_kind kind,
    const char *text)
{
	struct egress_rule r;

	if (egress_rule_parse(kind, text, &r) != 0)
		return -1;
	return egress_rules_add(rules, &r);
}

/* The report of S: its refusals, one connection to pypi.org. */
static void
fill_report(const struct sample *s, struct egress_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->nconn = 1;
	rep->connections = 1;
	snprintf(rep->conn[0].host, sizeof(rep->conn[0].host), "pypi.org");
	snprintf(rep->conn[0].address, sizeof(rep->conn[0].address),
	    "151.101.0.223");
	rep->conn[0].port = 443;
	rep->conn[0].count = 1;
	rep->conn[0].bytes_out = rep->bytes_out = 517;
	rep->conn[0].bytes_in = rep->bytes_in = 90210;
	rep->proxy_failed = s->proxy_failed;
	for (size_t i = 0; i < 2 && s->refused[i].host != NULL; i++) {
		struct egress_refusal_rec *r = &rep->refusal[rep->nrefusal++];

		snprintf(r->host, sizeof(r->host), "%s", s->refused[i].host);
		snprintf(r->detail, sizeof(r->detail), "%s",
		    s->refused[i].detail);
		r->port = s->refused[i].port;
		r->reason = s->refused[i].reason;
		r->count = 1;
		rep->refusals++;
	}
}

/* The result of S as a {"name", "result", "text"} object, or NULL. */
static json_t *
sample_json(const struct sample *s, const struct egress_rules *rules)
{
	struct job_limits lim = {.wall_ms = 10000,
	    .cpu_ms = 10000,
	    .memory_bytes = 512u << 20,
	    .stdout_bytes = 1u << 20,
	    .stderr_bytes = 1u << 20,
	    .nproc = 64,
	    .workspace_bytes = 1u << 30};
	struct job_result res = {.status = s->status,
	    .exit_code = s->exit_code,
	    .signal = s->exit_code < 0 ? 9 : 0,
	    .wall_ms = s->status == JOB_TIMEOUT ? 10001 : 812,
	    .detail = (char *)(uintptr_t) ""};
	struct egress_report rep;
	struct result_net net = {&rep, rules};
	struct capture out, err;
	char *text = NULL;
	size_t len = 0;
	json_t *o = NULL, *r;
	FILE *f;

	fill_report(s, &rep);
	capture_init(&out, 1024);
	capture_init(&err, 1024);
	if (s->stderr_text != NULL) {
		capture_add(&err, (const uint8_t *)s->stderr_text,
		    strlen(s->stderr_text));
		res.stderr_bytes = strlen(s->stderr_text);
	}
	r = result_to_json(&res, &lim, &out, &err);
	f = open_memstream(&text, &len);
	if (r != NULL && f != NULL &&
	    result_add_network(r, &res, &lim, &out, &err, &net) == 0 &&
	    result_print_text(r, f) == 0 && fclose(f) == 0)
		o = json_pack("{s:s,s:O,s:s}", "name", s->name, "result", r,
		    "text", text);
	json_decref(r);
	free(text);
	capture_free(&out);
	capture_free(&err);
	return o;
}

int
main(void)
{
	struct egress_rules rules = {NULL, 0};
	int rc = 0;

	if (add_rule(&rules, EGRESS_RULE_ALLOW, "pypi.org:443") != 0 ||
	    add_rule(&rules, EGRESS_RULE_ALLOW, "*.pythonhosted.org") != 0 ||
	    add_rule(&rules, EGRESS_RULE_DENY, "evil.pypi.org") != 0)
		return 1;
	for (size_t i = 0; i < sizeof(samples) / sizeof(*samples); i++) {
		json_t *o = sample_json(&samples[i], &rules);

		if (o == NULL || json_dumpf(o, stdout, JSON_COMPACT) < 0) {
			fprintf(stderr, "%s: no result\n", samples[i].name);
			rc = 1;
		}
		putchar('\n');
		json_decref(o);
	}
	egress_rules_clear(&rules);
	return rc;
}
