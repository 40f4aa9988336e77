/*
 * test_egress_rules.c: the rules of controlled egress, the decision and
 * the narrowing of a policy's list for one job (shared/egress_rules.c;
 * issue 25).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <string.h>

#include "egress_rules.h"

/* ---- Rules in text ------------------------------------------------------ */

static struct egress_rule
rule(enum egress_rule_kind kind, const char *text)
{
	struct egress_rule r;
	int e = egress_rule_parse(kind, text, &r);

	cr_assert_eq(e, 0, "%s: %s", text, egress_name_errname(e));
	return r;
}

/* Builds a list from "allow:TEXT", "allow_address:TEXT", "deny:TEXT". */
static void
rules_of(struct egress_rules *rules, const char *const *spec, size_t n)
{
	rules->v = NULL;
	rules->n = 0;
	for (size_t i = 0; i < n; i++) {
		const char *colon = strchr(spec[i], ':');
		size_t klen = (size_t)(colon - spec[i]);
		enum egress_rule_kind kind = klen == 5 ? EGRESS_RULE_ALLOW
		    : klen == 4			       ? EGRESS_RULE_DENY
				: EGRESS_RULE_ALLOW_ADDRESS;
		struct egress_rule r = rule(kind, colon + 1);

		cr_assert_eq(egress_rules_add(rules, &r), 0);
	}
}

#define RULES(var, ...)                                        \
	static const char *const var##_spec[] = {__VA_ARGS__}; \
	struct egress_rules var;                               \
	rules_of(&var, var##_spec, sizeof(var##_spec) / sizeof(char *))

static void
expect_round_trip(enum egress_rule_kind kind, const char *in, const char *want)
{
	struct egress_rule r = rule(kind, in), back;
	char text[EGRESS_RULE_BUF];

	cr_assert_eq(egress_rule_format(&r, text, sizeof(text)), 0);
	cr_assert_str_eq(text, want, "%s", in);
	back = rule(kind, text);
	cr_assert(egress_rule_eq(&r, &back), "%s", in);
}

static void
expect_rule_bad(enum egress_rule_kind kind, const char *in, int code)
{
	struct egress_rule r;
	int e = egress_rule_parse(kind, in, &r);

	cr_assert_eq(e, code, "%s: %s, want %s", in, egress_name_errname(e),
	    egress_name_errname(code));
}

Test(rule, canonical_text)
{
	expect_round_trip(EGRESS_RULE_ALLOW, "Registry.Example.ORG.",
	    "registry.example.org");
	expect_round_trip(EGRESS_RULE_ALLOW, "registry.example.org:8443",
	    "registry.example.org:8443");
	expect_round_trip(EGRESS_RULE_ALLOW, "*.Example.org:8000-8100",
	    "*.example.org:8000-8100");
	expect_round_trip(EGRESS_RULE_DENY, "upload.example.org",
	    "upload.example.org");
	expect_round_trip(EGRESS_RULE_ALLOW_ADDRESS, "127.0.0.1/32:8080",
	    "127.0.0.1:8080");
	expect_round_trip(EGRESS_RULE_ALLOW_ADDRESS, "[::1]/128:8080",
	    "[::1]:8080");
	expect_round_trip(EGRESS_RULE_ALLOW, "example.org:443-443",
	    "example.org:443");
}

Test(rule, refusals)
{
	expect_rule_bad(EGRESS_RULE_ALLOW, "127.0.0.1", EGRESS_E_ADDRESS);
	expect_rule_bad(EGRESS_RULE_ALLOW, "127.0.0.1:80", EGRESS_E_ADDRESS);
	expect_rule_bad(EGRESS_RULE_ALLOW, "[::1]:80", EGRESS_E_ADDRESS);
	expect_rule_bad(EGRESS_RULE_ALLOW, "::1", EGRESS_E_ADDRESS);
	expect_rule_bad(EGRESS_RULE_ALLOW, "127.1", EGRESS_E_ODD_IPV4);
	expect_rule_bad(EGRESS_RULE_ALLOW, "2130706433", EGRESS_E_ODD_IPV4);
	expect_rule_bad(EGRESS_RULE_ALLOW, "*.com", EGRESS_E_BAD_WILDCARD);
	expect_rule_bad(EGRESS_RULE_ALLOW, "*", EGRESS_E_BAD_WILDCARD);
	expect_rule_bad(EGRESS_RULE_ALLOW, "a.*.example.org",
	    EGRESS_E_BAD_WILDCARD);
	expect_rule_bad(EGRESS_RULE_ALLOW, "*example.org",
	    EGRESS_E_BAD_WILDCARD);
	expect_rule_bad(EGRESS_RULE_ALLOW, "**.example.org",
	    EGRESS_E_BAD_WILDCARD);
	expect_rule_bad(EGRESS_RULE_ALLOW, "example.org:", EGRESS_E_BAD_PORT);
	expect_rule_bad(EGRESS_RULE_ALLOW, "example.org:0", EGRESS_E_BAD_PORT);
	expect_rule_bad(EGRESS_RULE_ALLOW, "example.org:65536",
	    EGRESS_E_BAD_PORT);
	expect_rule_bad(EGRESS_RULE_ALLOW, "example.org:443-80",
	    EGRESS_E_PORT_RANGE);
	expect_rule_bad(EGRESS_RULE_ALLOW, "user@example.org",
	    EGRESS_E_USERINFO);
	expect_rule_bad(EGRESS_RULE_ALLOW, "https://example.org",
	    EGRESS_E_SLASH);
	expect_rule_bad(EGRESS_RULE_DENY, "exa mple.org", EGRESS_E_SPACE);
	expect_rule_bad(EGRESS_RULE_DENY, "", EGRESS_E_EMPTY);
	expect_rule_bad(EGRESS_RULE_ALLOW_ADDRESS, "127.0.0.1",
	    EGRESS_E_NO_PORT);
	expect_rule_bad(EGRESS_RULE_ALLOW_ADDRESS, "localhost:80",
	    EGRESS_E_BAD_ADDRESS);
	expect_rule_bad((enum egress_rule_kind)7, "example.org", -EINVAL);
}

Test(rule, format_refuses_hand_built_rules)
{
	struct egress_rule r = rule(EGRESS_RULE_ALLOW, "example.org");
	char text[EGRESS_RULE_BUF];

	r.ports.lo = 0;
	r.ports.hi = 80;
	cr_assert_eq(egress_rule_format(&r, text, sizeof(text)), -EINVAL);
	r.ports.lo = 90;
	cr_assert_eq(egress_rule_format(&r, text, sizeof(text)), -EINVAL);
	r = rule(EGRESS_RULE_ALLOW, "example.org");
	cr_assert_eq(egress_rule_format(&r, text, 5), -ENOSPC);
	r.kind = (enum egress_rule_kind)9;
	cr_assert_eq(egress_rule_format(&r, text, sizeof(text)), -EINVAL);
	cr_assert_str_eq(egress_rule_kind_name(EGRESS_RULE_ALLOW_ADDRESS),
	    "allow_address");
	cr_assert_str_eq(egress_rule_kind_name(r.kind), "unknown");
}

Test(rule, list_is_bounded)
{
	struct egress_rules rules = {0};
	struct egress_rule r = rule(EGRESS_RULE_ALLOW, "example.org");

	for (unsigned i = 0; i < EGRESS_MAX_RULES; i++)
		cr_assert_eq(egress_rules_add(&rules, &r), 0);
	cr_assert_eq(egress_rules_add(&rules, &r), -E2BIG);
	cr_assert_eq(rules.n, EGRESS_MAX_RULES);
	egress_rules_clear(&rules);
	cr_assert_null(rules.v);
	egress_rules_clear(NULL);
}

/* ---- Deciding a request ------------------------------------------------- */

static struct egress_decision
decide(const struct egress_rules *rules, const char *host, unsigned port)
{
	struct egress_decision d;
	bool allowed = egress_decide(rules, host, strlen(host), port, &d);

	cr_assert_eq(allowed, d.allowed);
	return d;
}

static void
expect_decision(const struct egress_rules *rules, const char *host,
    unsigned port, enum egress_reason want, int rule_index)
{
	struct egress_decision d = decide(rules, host, port);

	cr_assert_eq(d.reason, want, "%s:%u: %s, want %s", host, port,
	    egress_reason_name(d.reason), egress_reason_name(want));
	cr_assert_eq(d.allowed, want == EGRESS_REASON_NONE);
	cr_assert_eq(d.rule, rule_index, "%s:%u: rule %d", host, port, d.rule);
}

Test(decide, exact_name_on_default_ports)
{
	RULES(r, "allow:registry.example.org");

	expect_decision(&r, "registry.example.org", 443, EGRESS_REASON_NONE, 0);
	expect_decision(&r, "REGISTRY.example.org.", 80, EGRESS_REASON_NONE, 0);
	expect_decision(&r, "registry.example.org", 8080,
	    EGRESS_REASON_NOT_ALLOWED, -1);
	expect_decision(&r, "other.example.org", 443, EGRESS_REASON_NOT_ALLOWED,
	    -1);
	expect_decision(&r, "a.registry.example.org", 443,
	    EGRESS_REASON_NOT_ALLOWED, -1);
	expect_decision(&r, "registry.example.org.evil.example", 443,
	    EGRESS_REASON_NOT_ALLOWED, -1);
	expect_decision(&r, "xregistry.example.org", 443,
	    EGRESS_REASON_NOT_ALLOWED, -1);
	egress_rules_clear(&r);
}

Test(decide, wildcard_never_matches_the_bare_suffix)
{
	RULES(r, "allow:*.example.org");

	expect_decision(&r, "a.example.org", 443, EGRESS_REASON_NONE, 0);
	expect_decision(&r, "a.b.example.org", 443, EGRESS_REASON_NONE, 0);
	expect_decision(&r, "example.org", 443, EGRESS_REASON_NOT_ALLOWED, -1);
	expect_decision(&r, "badexample.org", 443, EGRESS_REASON_NOT_ALLOWED,
	    -1);
	expect_decision(&r, "example.org.evil.example", 443,
	    EGRESS_REASON_NOT_ALLOWED, -1);
	egress_rules_clear(&r);
	{
		RULES(both, "allow:*.example.org", "allow:example.org");

		expect_decision(&both, "example.org", 443, EGRESS_REASON_NONE,
		    1);
		egress_rules_clear(&both);
	}
}

Test(decide, deny_wins_over_allow)
{
	RULES(r, "allow:*.example.org", "deny:upload.example.org",
	    "allow:upload.example.org", "deny:*.cdn.example.org:443");

	expect_decision(&r, "upload.example.org", 443,
	    EGRESS_REASON_NOT_ALLOWED, 1);
	/* Without a port, deny holds on every port. */
	expect_decision(&r, "upload.example.org", 80, EGRESS_REASON_NOT_ALLOWED,
	    1);
	expect_decision(&r, "x.cdn.example.org", 443, EGRESS_REASON_NOT_ALLOWED,
	    3);
	expect_decision(&r, "x.cdn.example.org", 80, EGRESS_REASON_NONE, 0);
	expect_decision(&r, "docs.example.org", 443, EGRESS_REASON_NONE, 0);
	egress_rules_clear(&r);
}

Test(decide, ports_and_ranges)
{
	RULES(r, "allow:a.example.org:8443", "allow:b.example.org:8000-8002");

	expect_decision(&r, "a.example.org", 8443, EGRESS_REASON_NONE, 0);
	expect_decision(&r, "a.example.org", 443, EGRESS_REASON_NOT_ALLOWED,
	    -1);
	expect_decision(&r, "b.example.org", 8000, EGRESS_REASON_NONE, 1);
	expect_decision(&r, "b.example.org", 8002, EGRESS_REASON_NONE, 1);
	expect_decision(&r, "b.example.org", 8003, EGRESS_REASON_NOT_ALLOWED,
	    -1);
	expect_decision(&r, "a.example.org", 0, EGRESS_REASON_BAD_REQUEST, -1);
	expect_decision(&r, "a.example.org", 65536, EGRESS_REASON_BAD_REQUEST,
	    -1);
	egress_rules_clear(&r);
}

Test(decide, hostile_hosts_are_bad_requests)
{
	RULES(r, "allow:allowed.example");
	struct egress_decision d;

	cr_assert_not(
	    egress_decide(&r, "evil.example\0allowed.example", 28, 443, &d));
	cr_assert_eq(d.reason, EGRESS_REASON_BAD_REQUEST);
	cr_assert_eq(d.error, EGRESS_E_NUL);
	d = decide(&r, "allowed.example@evil.example", 443);
	cr_assert_eq(d.reason, EGRESS_REASON_BAD_REQUEST);
	cr_assert_eq(d.error, EGRESS_E_USERINFO);
	d = decide(&r, "allowed.example\r\n", 443);
	cr_assert_eq(d.error, EGRESS_E_CRLF);
	d = decide(&r, "allowed%2Eexample", 443);
	cr_assert_eq(d.error, EGRESS_E_PERCENT);
	d = decide(&r, "0x7f.1", 443);
	cr_assert_eq(d.reason, EGRESS_REASON_BAD_REQUEST);
	cr_assert_eq(d.error, EGRESS_E_ODD_IPV4);
	egress_rules_clear(&r);
}

Test(decide, addresses_need_allow_address)
{
	RULES(r, "allow:allowed.example", "allow_address:127.0.0.1:8080",
	    "allow_address:[fd00::]/8:443");
	struct egress_decision d;

	expect_decision(&r, "127.0.0.1", 8080, EGRESS_REASON_NONE, 1);
	expect_decision(&r, "[::ffff:127.0.0.1]", 8080, EGRESS_REASON_NONE, 1);
	expect_decision(&r, "[fd12::1]", 443, EGRESS_REASON_NONE, 2);
	d = decide(&r, "127.0.0.1", 8081);
	cr_assert_eq(d.reason, EGRESS_REASON_PRIVATE_ADDRESS);
	cr_assert_eq(d.cls, EGRESS_ADDR_LOOPBACK);
	d = decide(&r, "169.254.169.254", 80);
	cr_assert_eq(d.reason, EGRESS_REASON_PRIVATE_ADDRESS);
	cr_assert_eq(d.cls, EGRESS_ADDR_LINK_LOCAL);
	d = decide(&r, "[::ffff:169.254.169.254]", 80);
	cr_assert_eq(d.reason, EGRESS_REASON_PRIVATE_ADDRESS);
	cr_assert_eq(d.cls, EGRESS_ADDR_LINK_LOCAL);
	/* A public address the client names itself is no name the policy
	 * allowed. */
	expect_decision(&r, "8.8.8.8", 443, EGRESS_REASON_NOT_ALLOWED, -1);
	expect_decision(NULL, "allowed.example", 443, EGRESS_REASON_NOT_ALLOWED,
	    -1);
	egress_rules_clear(&r);
}

/* ---- Checking a resolved address --------------------------------------- */

static struct egress_decision
check(const struct egress_rules *rules, const char *a, unsigned port,
    const struct egress_addrs *local)
{
	struct sockaddr_in in = {.sin_family = AF_INET};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
	struct egress_decision d;
	const struct sockaddr *sa = (const struct sockaddr *)&in;
	bool allowed;

	if (inet_pton(AF_INET, a, &in.sin_addr) != 1) {
		cr_assert_eq(inet_pton(AF_INET6, a, &in6.sin6_addr), 1, "%s",
		    a);
		sa = (const struct sockaddr *)&in6;
	}
	allowed = egress_check_address(rules, sa, port, local, &d);
	cr_assert_eq(allowed, d.allowed);
	return d;
}

/* DNS rebinding: the allowed name answers with a private address. */
Test(check_address, private_address_behind_an_allowed_name)
{
	static const char *const private[] = {"127.0.0.1", "10.0.0.5",
	    "169.254.169.254", "100.64.1.1", "::1", "fe80::1", "fd00::1",
	    "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::7f00:1",
	    "0.0.0.0", "224.0.0.1", "2002:a00:1::1"};
	RULES(r, "allow:allowed.example");
	struct egress_decision d;

	for (size_t i = 0; i < sizeof(private) / sizeof(private[0]); i++) {
		d = check(&r, private[i], 443, NULL);
		cr_assert_eq(d.reason, EGRESS_REASON_PRIVATE_ADDRESS, "%s: %s",
		    private[i], egress_reason_name(d.reason));
		cr_assert_neq(d.cls, EGRESS_ADDR_PUBLIC, "%s", private[i]);
	}
	d = check(&r, "8.8.8.8", 443, NULL);
	cr_assert(d.allowed);
	cr_assert_eq(d.rule, -1);
	d = check(&r, "2606:4700:4700::1111", 443, NULL);
	cr_assert(d.allowed);
	egress_rules_clear(&r);
}

Test(check_address, allow_address_opens_a_private_address)
{
	RULES(r, "allow:index.test", "allow_address:127.0.0.1:8080");
	struct egress_decision d;

	d = check(&r, "127.0.0.1", 8080, NULL);
	cr_assert(d.allowed);
	cr_assert_eq(d.rule, 1);
	d = check(&r, "::ffff:127.0.0.1", 8080, NULL);
	cr_assert(d.allowed);
	d = check(&r, "127.0.0.1", 443, NULL);
	cr_assert_eq(d.reason, EGRESS_REASON_PRIVATE_ADDRESS);
	d = check(&r, "127.0.0.2", 8080, NULL);
	cr_assert_eq(d.reason, EGRESS_REASON_PRIVATE_ADDRESS);
	egress_rules_clear(&r);
}

Test(check_address, the_hosts_own_addresses)
{
	RULES(r, "allow:allowed.example");
	struct egress_addr own;
	struct egress_addrs local = {&own, 1};
	struct egress_decision d;

	cr_assert_eq(egress_addr_parse("8.8.4.4", &own), 0);
	d = check(&r, "8.8.4.4", 443, &local);
	cr_assert_eq(d.reason, EGRESS_REASON_PRIVATE_ADDRESS);
	cr_assert(d.local);
	cr_assert_eq(d.cls, EGRESS_ADDR_PUBLIC);
	d = check(&r, "::ffff:8.8.4.4", 443, &local);
	cr_assert(d.local);
	d = check(&r, "8.8.8.8", 443, &local);
	cr_assert(d.allowed);
	d = check(&r, "8.8.8.8", 0, &local);
	cr_assert_eq(d.reason, EGRESS_REASON_BAD_REQUEST);
	egress_rules_clear(&r);
}

Test(reason, names)
{
	cr_assert_str_eq(egress_reason_name(EGRESS_REASON_NONE), "allowed");
	cr_assert_str_eq(egress_reason_name(EGRESS_REASON_NOT_ALLOWED),
	    "not_allowed");
	cr_assert_str_eq(egress_reason_name(EGRESS_REASON_PRIVATE_ADDRESS),
	    "private_address");
	cr_assert_str_eq(egress_reason_name(EGRESS_REASON_SNI_MISMATCH),
	    "sni_mismatch");
	cr_assert_str_eq(egress_reason_name(EGRESS_REASON_BUDGET), "budget");
	cr_assert_str_eq(egress_reason_name(EGRESS_REASON_BAD_REQUEST),
	    "bad_request");
	cr_assert_str_eq(egress_reason_name(EGRESS_REASON_DIRECT_CONNECT),
	    "direct_connect");
	cr_assert_str_eq(egress_reason_name(EGRESS_REASON_UNREACHABLE),
	    "unreachable");
	cr_assert_str_eq(egress_reason_name(
			     (enum egress_reason)(EGRESS_REASON_LAST + 1)),
	    "unknown");
}

/* ---- Narrowing ---------------------------------------------------------- */

static void
expect_narrow_refused(const struct egress_rules *policy,
    const struct egress_rules *job, size_t bad_index)
{
	struct egress_rules out = {0};
	size_t bad = 99;

	cr_assert_eq(egress_rules_narrow(policy, job, &out, &bad), -EPERM);
	cr_assert_eq(bad, bad_index);
	cr_assert_null(out.v);
	cr_assert_eq(out.n, 0);
}

Test(narrow, job_within_policy_keeps_policy_denies)
{
	RULES(policy, "allow:*.example.org", "deny:upload.example.org",
	    "allow_address:10.0.0.0/8:1-65535", "allow:index.test");
	RULES(job, "allow:pkg.example.org:443", "allow:*.cdn.example.org",
	    "allow_address:10.1.0.0/16:8080", "deny:a.example.org");
	struct egress_rules out = {0};
	size_t bad = 99;

	cr_assert_eq(egress_rules_narrow(&policy, &job, &out, &bad), 0);
	cr_assert_eq(out.n, 5);
	for (size_t i = 0; i < job.n; i++)
		cr_assert(egress_rule_eq(&out.v[i], &job.v[i]));
	cr_assert(egress_rule_eq(&out.v[4], &policy.v[1]));
	/* The job's list decides, the policy's deny still in it. */
	expect_decision(&out, "pkg.example.org", 443, EGRESS_REASON_NONE, 0);
	expect_decision(&out, "pkg.example.org", 80, EGRESS_REASON_NOT_ALLOWED,
	    -1);
	expect_decision(&out, "index.test", 443, EGRESS_REASON_NOT_ALLOWED, -1);
	expect_decision(&out, "a.example.org", 443, EGRESS_REASON_NOT_ALLOWED,
	    3);
	egress_rules_clear(&out);
	egress_rules_clear(&job);
	egress_rules_clear(&policy);
}

Test(narrow, never_widens)
{
	RULES(policy, "allow:*.example.org", "allow:index.test:443",
	    "allow_address:10.0.0.0/8:8080", "allow:two.test:80",
	    "allow:two.test:443", "allow:*.sub.example.net");
	RULES(bare, "allow:example.org");
	RULES(port, "allow:index.test");
	RULES(wider, "allow:*.example.net");
	RULES(other, "allow:pkg.example.org", "allow:evil.example");
	RULES(addr, "allow_address:0.0.0.0/0:8080");
	RULES(addr_port, "allow_address:10.1.2.3:8081");
	RULES(as_name, "allow_address:127.0.0.1:443");
	RULES(range, "allow:a.example.org:1-65535");
	RULES(union_ok, "allow:two.test");
	struct egress_rules out = {0};
	size_t bad;

	expect_narrow_refused(&policy, &bare, 0);
	expect_narrow_refused(&policy, &port, 0);
	expect_narrow_refused(&policy, &wider, 0);
	expect_narrow_refused(&policy, &other, 1);
	expect_narrow_refused(&policy, &addr, 0);
	expect_narrow_refused(&policy, &addr_port, 0);
	expect_narrow_refused(&policy, &as_name, 0);
	expect_narrow_refused(&policy, &range, 0);
	/* Ports 80 and 443 from two policy rules cover the default pair. */
	cr_assert_eq(egress_rules_narrow(&policy, &union_ok, &out, &bad), 0);
	egress_rules_clear(&out);
	egress_rules_clear(&policy);
	egress_rules_clear(&bare);
	egress_rules_clear(&port);
	egress_rules_clear(&wider);
	egress_rules_clear(&other);
	egress_rules_clear(&addr);
	egress_rules_clear(&addr_port);
	egress_rules_clear(&as_name);
	egress_rules_clear(&range);
	egress_rules_clear(&union_ok);
}

/* Whatever the job asks, a narrowed list allows nothing the policy's
 * list refuses: every host and port of a small grid decided both ways. */
Test(narrow, decisions_are_a_subset)
{
	static const char *const hosts[] = {"example.org", "a.example.org",
	    "upload.example.org", "index.test", "evil.example", "127.0.0.1",
	    "10.9.9.9", "8.8.8.8", "x.upload.example.org"};
	static const unsigned ports[] = {80, 443, 8080, 9000};
	RULES(policy, "allow:*.example.org", "deny:upload.example.org",
	    "allow:index.test:443", "allow_address:10.0.0.0/8:8080");
	RULES(job, "allow:*.example.org", "allow:index.test:443",
	    "allow_address:10.9.0.0/16:8080", "deny:a.example.org:80");
	struct egress_rules out = {0};
	size_t bad;

	cr_assert_eq(egress_rules_narrow(&policy, &job, &out, &bad), 0);
	for (size_t h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++)
		for (size_t p = 0; p < sizeof(ports) / sizeof(ports[0]); p++) {
			struct egress_decision dp = decide(&policy, hosts[h],
						   ports[p]),
					       dj = decide(&out, hosts[h],
						   ports[p]);

			cr_assert(!dj.allowed || dp.allowed, "%s:%u widened",
			    hosts[h], ports[p]);
		}
	expect_decision(&out, "upload.example.org", 443,
	    EGRESS_REASON_NOT_ALLOWED, 4);
	egress_rules_clear(&out);
	egress_rules_clear(&policy);
	egress_rules_clear(&job);
}
