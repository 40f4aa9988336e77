/*
 * test_result_net.c: a job's network in its result (issue 25; result_net.c,
 * result_add_network): the "network" object from a hand-built report,
 * hostile bytes in a host, the hint of each reason and its order against
 * the more important hints, the text form, the summary, no "network" key
 * for a job without one.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "capture.h"
#include "egress_ctl.h"
#include "egress_rules.h"
#include "result_json.h"
#include "utf8.h"

static struct capture out, err;
static struct job_limits lim;
static struct job_result res;
static struct egress_report rep;
static struct egress_rules rules;
static struct result_net net;

static void
add_rule(enum egress_rule_kind kind, const char *text)
{
	struct egress_rule r;

	cr_assert_eq(egress_rule_parse(kind, text, &r), 0, "%s", text);
	cr_assert_eq(egress_rules_add(&rules, &r), 0);
}

static void
setup(void)
{
	cr_assert_eq(capture_init(&out, 1024), 0);
	cr_assert_eq(capture_init(&err, 1024), 0);
	memset(&lim, 0, sizeof(lim));
	lim.wall_ms = 10000;
	lim.cpu_ms = 10000;
	lim.memory_bytes = 512u << 20;
	lim.stdout_bytes = 1u << 20;
	lim.stderr_bytes = 1u << 20;
	lim.nproc = 64;
	memset(&res, 0, sizeof(res));
	res.status = JOB_EXIT_NONZERO;
	res.exit_code = 1;
	res.wall_ms = 40;
	res.detail = (char *)(uintptr_t) "";
	memset(&rep, 0, sizeof(rep));
	memset(&rules, 0, sizeof(rules));
	add_rule(EGRESS_RULE_ALLOW, "pypi.org:443");
	add_rule(EGRESS_RULE_ALLOW, "*.pythonhosted.org");
	add_rule(EGRESS_RULE_ALLOW_ADDRESS, "127.0.0.1/32:8080");
	add_rule(EGRESS_RULE_DENY, "evil.pypi.org");
	net.report = &rep;
	net.rules = &rules;
}

static void
teardown(void)
{
	capture_free(&out);
	capture_free(&err);
	egress_rules_clear(&rules);
}

TestSuite(result_net, .init = setup, .fini = teardown);

/* As egress_report_refusal would (egress_ctl.c is the proxy's). */
static void
refuse(const char *host, uint16_t port, enum egress_reason why,
    const char *detail)
{
	struct egress_refusal_rec *r = NULL;

	rep.refusals++;
	for (uint32_t i = 0; i < rep.nrefusal && r == NULL; i++)
		if (strcmp(rep.refusal[i].host, host) == 0 &&
		    rep.refusal[i].port == port && rep.refusal[i].reason == why)
			r = &rep.refusal[i];
	if (r == NULL) {
		cr_assert_lt(rep.nrefusal, EGRESS_REPORT_MAX);
		r = &rep.refusal[rep.nrefusal++];
		snprintf(r->host, sizeof(r->host), "%s", host);
		snprintf(r->detail, sizeof(r->detail), "%s",
		    detail ? detail : "");
		r->port = port;
		r->reason = why;
	}
	r->count++;
}

/* As egress_report_conn would. */
static void
connect_to(const char *host, uint16_t port, const char *address,
    uint64_t bytes_out, uint64_t bytes_in)
{
	struct egress_conn_rec *c = NULL;

	rep.connections++;
	rep.bytes_out += bytes_out;
	rep.bytes_in += bytes_in;
	for (uint32_t i = 0; i < rep.nconn && c == NULL; i++)
		if (strcmp(rep.conn[i].host, host) == 0 &&
		    rep.conn[i].port == port)
			c = &rep.conn[i];
	if (c == NULL) {
		cr_assert_lt(rep.nconn, EGRESS_REPORT_MAX);
		c = &rep.conn[rep.nconn++];
		snprintf(c->host, sizeof(c->host), "%s", host);
		c->port = port;
	}
	snprintf(c->address, sizeof(c->address), "%s", address);
	c->count++;
	c->bytes_out += bytes_out;
	c->bytes_in += bytes_in;
}

/* The hint of the job with its network, in a static buffer. */
static const char *
hint(void)
{
	static char buf[RESULT_HINT_MAX];

	return result_hint_net(&res, &lim, &err, &net, buf, sizeof(buf));
}

#define HAS(s, what) \
	cr_assert_not_null(strstr(s, what), "no \"%s\" in: %s", what, s)
#define HASNT(s, what) cr_assert_null(strstr(s, what), "\"%s\" in: %s", what, s)

static json_t *
result_with_net(void)
{
	json_t *o = result_to_json(&res, &lim, &out, &err);

	cr_assert_not_null(o);
	cr_assert_eq(result_add_network(o, &res, &lim, &out, &err, &net), 0);
	return o;
}

#define iget(o, key) json_integer_value(json_object_get(o, key))

static const char *
sget(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	cr_assert(json_is_string(v), "%s is not a string", key);
	return json_string_value(v);
}

/* A job without a network: no "network" key, the same hint, whether
 * result_add_network is not called, gets NULL or a NULL report. */
Test(result_net, no_report_no_network_key)
{
	json_t *a = result_to_json(&res, &lim, &out, &err);
	json_t *b = result_to_json(&res, &lim, &out, &err);
	struct result_net none = {NULL, &rules};

	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert_eq(result_add_network(a, &res, &lim, &out, &err, NULL), 0);
	cr_assert_eq(result_add_network(b, &res, &lim, &out, &err, &none), 0);
	cr_assert_null(json_object_get(a, "network"));
	cr_assert_null(json_object_get(b, "network"));
	cr_assert(json_equal(a, b));
	json_decref(a);
	json_decref(b);
}

Test(result_net, network_object_from_a_report)
{
	json_t *o, *n, *c, *r, *ru;

	connect_to("pypi.org", 443, "151.101.0.223", 500, 9000);
	connect_to("pypi.org", 443, "151.101.64.223", 20, 30);
	refuse("evil.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	refuse("10.0.0.1", 22, EGRESS_REASON_DIRECT_CONNECT, "tcp");
	refuse("10.0.0.1", 22, EGRESS_REASON_DIRECT_CONNECT, "tcp");
	o = result_with_net();
	n = json_object_get(o, "network");
	cr_assert(json_is_object(n));
	cr_assert_eq(iget(n, "connections_total"), 2);
	cr_assert_eq(iget(n, "refusals_total"), 3);
	cr_assert_eq(iget(n, "bytes_out"), 520);
	cr_assert_eq(iget(n, "bytes_in"), 9030);
	cr_assert(json_is_false(json_object_get(n, "truncated")));
	cr_assert_str_eq(sget(n, "proxy"), "ok");
	c = json_object_get(n, "connections");
	cr_assert_eq(json_array_size(c), 1);
	c = json_array_get(c, 0);
	cr_assert_str_eq(sget(c, "host"), "pypi.org");
	cr_assert_eq(iget(c, "port"), 443);
	cr_assert_str_eq(sget(c, "address"), "151.101.64.223");
	cr_assert_eq(iget(c, "count"), 2);
	cr_assert_eq(iget(c, "bytes_out"), 520);
	r = json_object_get(n, "refusals");
	cr_assert_eq(json_array_size(r), 2);
	cr_assert_str_eq(sget(json_array_get(r, 0), "reason"), "not_allowed");
	cr_assert_str_eq(sget(json_array_get(r, 0), "detail"), "");
	cr_assert_str_eq(sget(json_array_get(r, 1), "reason"),
	    "direct_connect");
	cr_assert_str_eq(sget(json_array_get(r, 1), "detail"), "tcp");
	cr_assert_eq(iget(json_array_get(r, 1), "count"), 2);
	ru = json_object_get(n, "rules");
	cr_assert_eq(json_array_size(ru), 4);
	cr_assert_str_eq(json_string_value(json_array_get(ru, 0)),
	    "allow pypi.org:443");
	cr_assert_str_eq(json_string_value(json_array_get(ru, 1)),
	    "allow *.pythonhosted.org");
	cr_assert_str_eq(json_string_value(json_array_get(ru, 2)),
	    "allow_address 127.0.0.1:8080");
	cr_assert_str_eq(json_string_value(json_array_get(ru, 3)),
	    "deny evil.pypi.org");
	json_decref(o);
}

/* Counts past INT64_MAX, a full list, the proxy failed, rules NULL. */
Test(result_net, extremes)
{
	json_t *n;

	rep.bytes_in = UINT64_MAX;
	rep.truncated = true;
	rep.proxy_failed = true;
	net.rules = NULL;
	n = result_network_json(&net);
	cr_assert_not_null(n);
	cr_assert_eq(iget(n, "bytes_in"), INT64_MAX);
	cr_assert(json_is_true(json_object_get(n, "truncated")));
	cr_assert_str_eq(sget(n, "proxy"), "failed");
	cr_assert_eq(json_array_size(json_object_get(n, "rules")), 0);
	json_decref(n);
}

/* True when S holds only bytes LO..0x7e (0x21 for a field of the
 * network, which holds no space; 0x20 for the hint). */
static bool
ascii_from(const char *s, unsigned char lo)
{
	for (; *s; s++)
		if ((unsigned char)*s < lo || (unsigned char)*s > 0x7e)
			return false;
	return true;
}

static char *
text_of(json_t *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(result_print_text(o, f), 0);
	cr_assert_eq(fclose(f), 0);
	return text;
}

static char *
summary_of(const struct result_net *n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	result_print_summary(&res, &lim, &err, n, f);
	cr_assert_eq(fclose(f), 0);
	return text;
}

/* A hand-built report whose host holds controls, invalid UTF-8, a
 * newline that would forge a line of the text form, and no NUL at all:
 * every string of the result, its hint, its text form and the summary
 * stay printable. */
Test(result_net, hostile_host_is_escaped)
{
#define EVIL_SHOWN "a\\x0Astatus:\\x20ok\\x1B[2J\\xFF\\xC2\\x9B"
	static const char evil[] = "a\nstatus: ok\x1b[2J\xff\xc2\x9b";
	struct egress_refusal_rec *r = &rep.refusal[0];
	json_t *o, *e;
	char *text, *sum;

	memset(r->host, 'x', sizeof(r->host));
	memcpy(r->host, evil, sizeof(evil) - 1);
	memset(r->detail, '\x07', sizeof(r->detail));
	r->port = 443;
	r->reason = EGRESS_REASON_NOT_ALLOWED;
	r->count = 1;
	rep.nrefusal = 1;
	rep.refusals = 1;
	memset(rep.conn[0].address, '\x1b', sizeof(rep.conn[0].address));
	rep.conn[0].host[0] = '\n';
	rep.nconn = 1;
	o = result_with_net();
	e = json_array_get(json_object_get(json_object_get(o, "network"),
			       "refusals"),
	    0);
	cr_assert(ascii_from(sget(e, "host"), 0x21), "%s", sget(e, "host"));
	cr_assert(strncmp(sget(e, "host"), EVIL_SHOWN, strlen(EVIL_SHOWN)) == 0,
	    "%s", sget(e, "host"));
	cr_assert(ascii_from(sget(e, "detail"), 0x21));
	HAS(sget(e, "detail"), "\\x07");
	e = json_array_get(json_object_get(json_object_get(o, "network"),
			       "connections"),
	    0);
	cr_assert(ascii_from(sget(e, "address"), 0x21));
	cr_assert_str_eq(sget(e, "host"), "\\x0A");
	cr_assert(ascii_from(sget(o, "hint"), 0x20), "%s", sget(o, "hint"));
	HAS(sget(o, "hint"), "a\\x0Astatus:");
	text = text_of(o);
	cr_assert_null(strstr(text, "\nstatus: ok"), "%s", text);
	cr_assert_null(strchr(text, '\x1b'));
	sum = summary_of(&net);
	cr_assert_null(strstr(sum, "\nstatus: ok"), "%s", sum);
	cr_assert_null(strchr(sum, '\x1b'));
	free(text);
	free(sum);
	json_decref(o);
}

/* Three hosts of 253 bytes: each quoted to 100 bytes and "...", and
 * the advice still in the hint. */
Test(result_net, long_hosts_leave_the_advice)
{
	char host[254];

	for (char c = 'a'; c <= 'c'; c++) {
		memset(host, c, 253);
		host[253] = '\0';
		refuse(host, 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	}
	HAS(hint(), "ask the user to add the host");
	HAS(hint(), "aaaaaaaaaa...:443 (not_allowed)");
}

Test(result_net, hint_not_allowed)
{
	const char *h;

	refuse("evil.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	h = hint();
	HAS(h,
	    "The program exited with code 1 after the sandbox refused 1 "
	    "network connection (evil.example:443 (not_allowed))");
	HAS(h,
	    "evil.example is not in the policy's [network] allow list, "
	    "which allows pypi.org:443, *.pythonhosted.org, "
	    "127.0.0.1:8080:");
	HAS(h,
	    "ask the user to add the host to the policy's [network] "
	    "allow list");
	HAS(h, "do not retry or work around it");
	HASNT(h, "evil.pypi.org"); /* deny rules are not what it allows */
	HASNT(h, "read stderr");
	HASNT(h, "has no network");
}

Test(result_net, hint_direct_connect)
{
	const char *h;

	refuse("93.184.215.14", 443, EGRESS_REASON_DIRECT_CONNECT, "tcp");
	h = hint();
	HAS(h, "93.184.215.14:443 (direct_connect, tcp)");
	HAS(h, "The program ignored the proxy");
	HAS(h, "must use the proxy");
	HAS(h, "HTTP_PROXY and HTTPS_PROXY");
	HASNT(h, "ask the user to add");
	HASNT(h, "DNS");
	refuse("2001:db8::1", 53, EGRESS_REASON_DIRECT_CONNECT, "udp");
	HAS(hint(), "[2001:db8::1]:53 (direct_connect, udp)");
	HAS(hint(), "names. The program ignored the proxy");
	memset(&rep, 0, sizeof(rep)); /* a name lookup alone */
	refuse("127.0.0.1", 53, EGRESS_REASON_DIRECT_CONNECT, "udp");
	HAS(hint(), "looked a name up itself (DNS, port 53)");
	HAS(hint(), "so the program must use the proxy");
	HASNT(hint(), "ignored the proxy");
}

Test(result_net, hint_private_address)
{
	const char *h;

	refuse("intranet.pypi.org", 443, EGRESS_REASON_PRIVATE_ADDRESS, NULL);
	h = hint();
	HAS(h, "intranet.pypi.org resolved to a private or local address");
	HAS(h, "only an allow_address rule");
	HAS(h, "ask the user to add one");
}

/* sni_mismatch, budget, bad_request: each its own advice. */
Test(result_net, hint_sni_budget_bad_request)
{
	refuse("pypi.org", 443, EGRESS_REASON_SNI_MISMATCH, "evil.example");
	HAS(hint(), "pypi.org:443 (sni_mismatch, evil.example)");
	HAS(hint(),
	    "The TLS server name the program sent differed from the "
	    "host it asked the proxy for");
	refuse("pypi.org", 443, EGRESS_REASON_BUDGET, "max_bytes_in_mb");
	HAS(hint(), "reached its [network] cap max_bytes_in_mb");
	HAS(hint(), "ask the user to raise that cap");
	refuse("a@b", 0, EGRESS_REASON_BAD_REQUEST, "userinfo");
	HAS(hint(), "not a valid host and port (userinfo)");
}

Test(result_net, hint_proxy_failed)
{
	rep.proxy_failed = true;
	HAS(hint(),
	    "The sandbox itself failed, not the program: its network "
	    "proxy ended during the job");
	res.status = JOB_OK;
	res.exit_code = 0;
	HAS(hint(), "The sandbox itself failed");
	HAS(hint(), "may be incomplete");
}

/* Several reasons: the first three entries named, the rest counted, and
 * the advice of each reason among the entries. */
Test(result_net, hint_several_reasons)
{
	const char *h;

	refuse("a.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	refuse("10.1.1.1", 80, EGRESS_REASON_DIRECT_CONNECT, "tcp");
	refuse("b.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	refuse("c.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	refuse("d.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	h = hint();
	HAS(h,
	    "refused 5 network connections (a.example:443 (not_allowed), "
	    "10.1.1.1:80 (direct_connect, tcp), b.example:443 "
	    "(not_allowed) and 2 more (network.refusals))");
	HAS(h, "must use the proxy");
	HAS(h, "ask the user to add");
	HASNT(h, "c.example");
}

/* An ok job with a refusal: its output may be incomplete, never
 * "complete". */
Test(result_net, ok_with_refusals)
{
	res.status = JOB_OK;
	res.exit_code = 0;
	refuse("evil.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	HAS(hint(),
	    "The program exited with code 0 in 40 ms, but the sandbox "
	    "refused 1 network connection");
	HAS(hint(), "may be incomplete");
	HASNT(hint(), "output is complete");
	/* Without refusals, the plain ok hint. */
	memset(&rep, 0, sizeof(rep));
	HAS(hint(), "output is complete");
}

/* A more important hint keeps its place; one sentence names the
 * refusals after it, without the words that would send a model to the
 * user instead. */
Test(result_net, more_important_hint_first)
{
	static const enum job_status first[] = {JOB_TIMEOUT, JOB_MEMORY_LIMIT,
	    JOB_CRASH, JOB_CANCELLED, JOB_SANDBOX_ERROR};
	static const char *const phrase[] = {"bound its loops",
	    "stream large inputs", "inspect", "do not run it again",
	    "The sandbox itself failed"};

	refuse("evil.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	res.exit_code = -1;
	res.signal = 11;
	res.peak_memory_kb = 600000;
	for (size_t i = 0; i < sizeof(first) / sizeof(*first); i++) {
		const char *h;

		res.status = first[i];
		h = hint();
		cr_assert(strstr(h, phrase[i]) != NULL &&
			strstr(h, phrase[i]) < strstr(h, "also refused"),
		    "%s", h);
		HAS(h,
		    "The sandbox also refused network connections: "
		    "evil.example:443 (not_allowed).");
		HASNT(h, "ask the user to add");
	}
	res.status = JOB_EXIT_NONZERO;
	res.exit_code = 127;
	res.signal = 0;
	HAS(hint(), "not found");
	HAS(hint(), "also refused");
}

/* No allow-list: the no-network hint. An allow-list, a failed lookup in
 * stderr and no refusal: the proxy resolves names. */
Test(result_net, name_resolution_failure)
{
	static const char msg[] =
	    "curl: (6) Could not resolve host: pypi.org\n";
	char buf[RESULT_HINT_MAX];
	const char *h;

	capture_add(&err, (const uint8_t *)msg, sizeof(msg) - 1);
	result_hint_net(&res, &lim, &err, NULL, buf, sizeof(buf));
	HAS(buf, "the sandbox has no network");
	h = hint();
	HASNT(h, "has no network");
	HAS(h, "Could not resolve host");
	HAS(h, "the proxy, which resolves names itself");
	HAS(h, "must use the proxy");
	HAS(h, "allows pypi.org:443, *.pythonhosted.org, 127.0.0.1:8080.");
	/* A refusal says more than the lookup. */
	refuse("evil.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	HASNT(hint(), "resolves names");
	HAS(hint(), "ask the user to add");
}

/* Output truncated, or lost to memory: the network hint keeps the
 * sentence about it. */
Test(result_net, truncation_and_lost_output)
{
	json_t *o;

	refuse("evil.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	res.stdout_bytes = (2u << 20);
	HAS(hint(), "ask the user to add");
	HAS(hint(), "write it to a file in /work");
	res.stdout_bytes = 3;
	res.status = JOB_OK;
	res.exit_code = 0;
	capture_add(&out, (const uint8_t *)"hi\n", 3);
	out.lost = true;
	o = result_with_net();
	HAS(sget(o, "hint"), "but the sandbox refused");
	HAS(sget(o, "hint"), "could not keep all of it");
	json_decref(o);
}

Test(result_net, text_form)
{
	json_t *o, *plain;
	char *text;

	connect_to("pypi.org", 443, "151.101.0.223", 500, 9000);
	refuse("evil.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	refuse("10.0.0.1", 22, EGRESS_REASON_DIRECT_CONNECT, "tcp");
	o = result_with_net();
	text = text_of(o);
	HAS(text,
	    "\nnetwork: connections 1 (500 bytes out, 9000 bytes in), "
	    "refused 2, proxy ok\n"
	    "connected: pypi.org:443 x1 (151.101.0.223, 500 out, 9000 "
	    "in)\n"
	    "refused: evil.example:443 not_allowed x1, 10.0.0.1:22 "
	    "direct_connect (tcp) x1\n"
	    "rules: allow pypi.org:443, allow *.pythonhosted.org, "
	    "allow_address 127.0.0.1:8080, deny evil.pypi.org\n"
	    "--- stdout");
	free(text);
	plain = result_to_json(&res, &lim, &out, &err);
	text = text_of(plain);
	HASNT(text, "network:");
	HASNT(text, "rules:");
	free(text);
	json_decref(plain);
	json_decref(o);
}

Test(result_net, summary)
{
	char *s;

	res.status = JOB_OK;
	res.exit_code = 0;
	s = summary_of(&net);
	HASNT(s, "network");
	HASNT(s, "hint");
	free(s);
	refuse("evil.example", 443, EGRESS_REASON_NOT_ALLOWED, NULL);
	s = summary_of(&net);
	HAS(s,
	    "\nstockade: network: refused evil.example:443 "
	    "(not_allowed)\n");
	HAS(s, "\nstockade: hint: The program exited with code 0");
	free(s);
	s = summary_of(NULL);
	HASNT(s, "network");
	free(s);
	rep.proxy_failed = true;
	s = summary_of(&net);
	HAS(s,
	    "stockade: network: the proxy ended during the job; refused "
	    "evil.example:443");
	free(s);
}
