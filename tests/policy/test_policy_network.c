/*
 * test_policy_network.c: the [network] section of the policy language
 * (policy/policy_lists.c, policy_format.c; issue 25): rules, caps, their
 * lines, the canonical form and round trip, and `stockade policy
 * check`'s report of every refused rule (policy_load_file_report).
 * Fixtures: tests/policy/valid-network*.ini and invalid-network-*.ini,
 * each invalid one with a test below asserting its exact message.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policy_fixture.h"

#define MIB (UINT64_C(1024) * 1024)

/* policy_format (or policy_show, SHOW) of P as a string the caller
 * frees; R gets what it returned. */
static char *
format_as(const struct policy *p, bool show, int *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	*r = show ? policy_show(p, f) : policy_format(p, f);
	cr_assert_eq(fclose(f), 0);
	return text;
}

static char *
format(const struct policy *p)
{
	int r;
	char *text = format_as(p, false, &r);

	cr_assert_eq(r, 0, "policy_format: %d", r);
	return text;
}

/* A policy no file could produce is refused, and nothing is written. */
static void
expect_format_refused(const struct policy *p)
{
	int r;
	char *text = format_as(p, false, &r);

	cr_assert_eq(r, -EINVAL);
	cr_assert_str_eq(text, "");
	free(text);
}

/* Formats P, loads the text back, expects the same [network], and
 * formats that to the same text. */
static void
assert_round_trip(const struct policy *p)
{
	char err[POLICY_ERR_MAX];
	struct policy q;
	char *text = format(p), *again;

	memset(&q, 0, sizeof(q));
	cr_assert_eq(policy_load_string(&q, text, p->name, err, sizeof(err)), 0,
	    "%s\n%s", err, text);
	assert_net_eq(&p->net, &q.net);
	again = format(&q);
	cr_assert_str_eq(again, text);
	free(again);
	free(text);
	policy_clear(&q);
}

/* [network] (issue 25): every rule is checked where it is written. */
#define NET_BAD(key, v, sentence) key " \"" v "\" " sentence
#define NETWORK_FIXTURES(X)                                                    \
	X(network_space, "invalid-network-space.ini", 3,                       \
	    NET_BAD("allow", "exa mple.org", "contains a space"))              \
	X(network_userinfo, "invalid-network-userinfo.ini", 2,                 \
	    NET_BAD("allow", "user@registry.example.org",                      \
		"contains \"@\" (userinfo)"))                                  \
	X(network_percent, "invalid-network-percent.ini", 2,                   \
	    NET_BAD("allow", "registry%2eexample.org",                         \
		"contains \"%\" (percent-encoding or an IPv6 zone)"))          \
	X(network_non_ascii, "invalid-network-non-ascii.ini", 2,               \
	    NET_BAD("allow",                                                   \
		"b\xc3\xbc"                                                    \
		"cher.example",                                                \
		"contains a byte outside ASCII (write an international name "  \
		"as punycode, xn--)"))                                         \
	X(network_port, "invalid-network-port.ini", 2,                         \
	    NET_BAD("allow", "registry.example.org:70000",                     \
		"has a port that is not a decimal number from 1 to 65535"))    \
	X(network_port_range, "invalid-network-port-range.ini", 2,             \
	    NET_BAD("allow", "registry.example.org:443-80",                    \
		"has a port range whose first port is above its last"))        \
	X(network_address_in_allow, "invalid-network-address-in-allow.ini", 2, \
	    NET_BAD("allow", "127.0.0.1:8080",                                 \
		"is an address, not a name (addresses are allow_address's)"))  \
	X(network_odd_ipv4, "invalid-network-odd-ipv4.ini", 3,                 \
	    NET_BAD("allow", "0x7f.1",                                         \
		"ends in a number but is no dotted quad (an IPv4 address is "  \
		"written a.b.c.d, decimal, no leading zero)"))                 \
	X(network_wildcard, "invalid-network-wildcard.ini", 2,                 \
	    NET_BAD("allow", "*.com",                                          \
		"has \"*\" other than as \"*.\" before a name of two labels "  \
		"or more"))                                                    \
	X(network_no_port, "invalid-network-no-port.ini", 2,                   \
	    NET_BAD("allow_address", "127.0.0.1",                              \
		"has no port (ADDRESS[/BITS]:PORT[-PORT])"))                   \
	X(network_host_bits, "invalid-network-host-bits.ini", 2,               \
	    NET_BAD("allow_address", "10.1.0.0/8:80",                          \
		"has address bits set beyond its prefix length"))              \
	X(network_hyphen, "invalid-network-hyphen.ini", 2,                     \
	    NET_BAD("deny", "-x.example.org",                                  \
		"has a label that starts or ends with \"-\""))                 \
	X(network_underscore, "invalid-network-underscore.ini", 2,             \
	    NET_BAD("allow", "my_host.example.org",                            \
		"contains a character other than letters, digits, \"-\" and "  \
		"\".\""))                                                      \
	X(network_label_long, "invalid-network-label-long.ini", 2,             \
	    NET_BAD("allow",                                                   \
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
		"aaaa.example.org",                                            \
		"has a label longer than 63 bytes"))                           \
	X(network_empty_label, "invalid-network-empty-label.ini", 2,           \
	    NET_BAD("allow", "registry..example.org", "has an empty label"))   \
	X(network_slash, "invalid-network-slash.ini", 2,                       \
	    NET_BAD("allow", "https://registry.example.org",                   \
		"contains \"/\" or a backslash"))                              \
	X(network_duplicate, "invalid-network-duplicate.ini", 3,               \
	    "duplicate rule allow = Registry.Example.Org.")                    \
	X(network_unknown_key, "invalid-network-unknown-key.ini", 2,           \
	    "unknown key \"allow_host\" in [network]")                         \
	X(network_cap, "invalid-network-cap.ini", 2,                           \
	    "max_connections must be between 1 and 1000000")                   \
	X(network_several, "invalid-network-several.ini", 3,                   \
	    NET_BAD("allow", "exa mple.org", "contains a space"))              \
	X(network_then_value, "invalid-network-then-value.ini", 2,             \
	    NET_BAD("allow", "a b.example", "contains a space"))               \
	X(network_resolver, "invalid-network-resolver.ini", 3,                 \
	    "resolver: expected an address and port, A.B.C.D:PORT or "         \
	    "[IPV6]:PORT, got \"127.0.0.1\"")                                  \
	X(network_resolver_port, "invalid-network-resolver-port.ini", 2,       \
	    "resolver: expected an address and port, A.B.C.D:PORT or "         \
	    "[IPV6]:PORT, got \"1.2.3.4:053\"")

/* The text of rule I of P, canonical. */
static const char *
net_text(const struct policy *p, size_t i, char *buf)
{
	cr_assert_lt(i, p->net.rules.n);
	cr_assert_eq(egress_rule_format(&p->net.rules.v[i], buf,
			 EGRESS_RULE_BUF),
	    0);
	return buf;
}

Test(network, default_has_no_network)
{
	struct policy p;

	load_default(&p);
	cr_assert_eq(p.net.rules.n, 0);
	cr_assert_not(policy_has_network(&p));
	cr_assert_eq(p.net.bytes_out, 64 * MIB);
	cr_assert_eq(p.net.bytes_in, 1024 * MIB);
	cr_assert_eq(p.net.max_connections, 1024);
	cr_assert_eq(p.net.max_concurrent, 32);
	cr_assert_str_eq(p.net.resolver, "");
	policy_clear(&p);
}

/* policy_format of P writes "resolver = WANT". */
static void
expect_formatted_resolver(const struct policy *p, const char *want)
{
	char *buf = NULL, line[128];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	cr_assert_eq(policy_format(p, f), 0);
	fclose(f);
	snprintf(line, sizeof(line), "\nresolver = %s\n", want);
	cr_assert(strstr(buf, line) != NULL, "%s", buf);
	free(buf);
}

/* [network] resolver: an IPv4 or bracketed IPv6 address with a port,
 * kept as written, and written back by policy_format. */
Test(network, resolver_loads_and_formats)
{
	static const char *const ok[] = {"127.0.0.1:53", "[::1]:5353",
	    "10.0.0.53:65535", "[fd00::35]:53"};
	static const char *const bad[] = {"127.0.0.1", "127.0.0.1:0",
	    "127.0.0.1:65536", "localhost:53", "::1:53", "[::1]53",
	    "[fe80::1%eth0]:53", "1.2.3:53", "127.0.0.1:53x", ":53"};
	char text[256], why[POLICY_ERR_MAX];
	struct policy p;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(text, sizeof(text), "[network]\nresolver = %s\n",
		    ok[i]);
		cr_assert_eq(policy_load_string(&p, text, "t", why,
				 sizeof(why)),
		    0, "%s: %s", ok[i], why);
		cr_assert_str_eq(p.net.resolver, ok[i]);
		expect_formatted_resolver(&p, ok[i]);
		policy_clear(&p);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[network]\nresolver = %s\n",
		    bad[i]);
		cr_assert_lt(policy_load_string(&p, text, "t", why,
				 sizeof(why)),
		    0, "%s was accepted", bad[i]);
		cr_assert(strstr(why, "resolver: expected") != NULL, "%s", why);
	}
}

Test(network, rules_caps_and_lines)
{
	static const char *const want[][2] = {
	    {"allow", "registry.example.org"},
	    {"allow", "*.example.net:8443"},
	    {"allow", "mirror.example.org:8000-8100"},
	    {"allow_address", "127.0.0.1:8080"},
	    {"allow_address", "[::1]:8080"},
	    {"allow_address", "10.0.0.0/8:443"},
	    {"deny", "upload.example.net"},
	};
	char buf[EGRESS_RULE_BUF];
	struct policy p;

	load_fixture("valid-network.ini", &p);
	cr_assert_eq(p.net.rules.n, 7);
	for (size_t i = 0; i < 7; i++) {
		cr_assert_str_eq(egress_rule_kind_name(p.net.rules.v[i].kind),
		    want[i][0]);
		cr_assert_str_eq(net_text(&p, i, buf), want[i][1]);
		cr_assert(p.net_from[i].in_file);
		cr_assert_eq(p.net_from[i].line, 4 + i);
	}
	cr_assert(policy_has_network(&p));
	cr_assert_eq(p.net.bytes_out, 16 * MIB);
	cr_assert_eq(p.net.bytes_in, 256 * MIB);
	cr_assert_eq(p.net.max_connections, 100);
	cr_assert_eq(p.net.max_concurrent, 4);
	policy_clear(&p);
}

/* The loaded rules decide as the file says (egress_rules.h). */
Test(network, loaded_rules_decide)
{
	struct egress_decision d;
	struct policy p;

	load_fixture("valid-network.ini", &p);
	cr_assert(
	    egress_decide(&p.net.rules, "registry.example.org", 20, 443, &d));
	cr_assert_not(
	    egress_decide(&p.net.rules, "upload.example.net", 18, 8443, &d));
	cr_assert_eq(d.rule, 6);
	cr_assert(egress_decide(&p.net.rules, "a.example.net", 13, 8443, &d));
	cr_assert_not(egress_decide(&p.net.rules, "example.net", 11, 8443, &d));
	cr_assert(egress_decide(&p.net.rules, "127.0.0.1", 9, 8080, &d));
	policy_clear(&p);
}

Test(network, empty_section_is_no_network)
{
	struct policy d, p;

	load_default(&d);
	load_fixture("valid-network-empty.ini", &p);
	cr_assert_not(policy_has_network(&p));
	assert_net_eq(&p.net, &d.net);
	cr_assert_eq(p.nenv, d.nenv);
	cr_assert_eq(p.nmounts, d.nmounts);
	policy_clear(&p);
	policy_clear(&d);
}

Test(network, deny_alone_opens_nothing)
{
	struct policy p;

	load_text("[network]\ndeny = example.org\n", &p);
	cr_assert_eq(p.net.rules.n, 1);
	cr_assert_not(policy_has_network(&p));
	policy_clear(&p);
}

Test(network, replace_and_repeated_sections)
{
	char buf[EGRESS_RULE_BUF];
	struct policy p;

	load_fixture("valid-network-replace.ini", &p);
	cr_assert_eq(p.replace, POLICY_LIST_NETWORK);
	cr_assert_eq(p.net.rules.n, 2);
	cr_assert_str_eq(net_text(&p, 0, buf), "xn--bcher-kva.example");
	cr_assert_str_eq(net_text(&p, 1, buf), "*.ads.example.org");
	policy_clear(&p);
	load_text("[network]\nallow = a.example\n[limits]\nprocesses = 9\n"
		  "[network]\nallow = b.example\n",
	    &p);
	cr_assert_eq(p.net.rules.n, 2);
	cr_assert_str_eq(net_text(&p, 1, buf), "b.example");
	cr_assert_eq(p.net_from[1].line, 6);
	policy_clear(&p);
}

Test(network, too_many_rules)
{
	char err[POLICY_ERR_MAX], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct policy p;

	cr_assert_not_null(f);
	fprintf(f, "[network]\n");
	for (unsigned i = 0; i <= EGRESS_MAX_RULES; i++)
		fprintf(f, "allow = h%u.example\n", i);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(policy_load_string(&p, text, "many", err, sizeof(err)),
	    -EINVAL);
	cr_assert_str_eq(err,
	    "many:258: too many [network] rules (at most "
	    "256)");
	free(text);
}

Test(network, format_writes_canonical_rules)
{
	struct policy p;
	char *text;

	load_fixture("valid-network.ini", &p);
	text = format(&p);
	cr_assert_not_null(strstr(text,
			       "\n[network]\nmax_bytes_out_mb = 16\n"
			       "max_bytes_in_mb = 256\nmax_connections = 100\n"
			       "max_concurrent_connections = 4\n"
			       "resolver =\n"
			       "allow = registry.example.org\n"
			       "allow = *.example.net:8443\n"),
	    "%s", text);
	cr_assert_not_null(strstr(text, "allow_address = [::1]:8080\n"));
	cr_assert_not_null(strstr(text, "deny = upload.example.net\n"));
	free(text);
	assert_round_trip(&p);
	policy_clear(&p);
}

Test(network, show_names_each_rules_line)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct policy p;

	cr_assert_not_null(f);
	load_fixture("valid-network.ini", &p);
	cr_assert_eq(policy_show(&p, f), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_not_null(strstr(text,
			       "allow = registry.example.org ; file:4\n"),
	    "%s", text);
	cr_assert_not_null(
	    strstr(text, "deny = upload.example.net ; file:10\n"));
	cr_assert_not_null(strstr(text, "max_connections = 100 ; file:13\n"));
	cr_assert_not_null(strstr(text, "the default's list, the file's"));
	free(text);
	policy_clear(&p);
}

Test(network, format_refuses_hand_built_rules)
{
	struct policy p;
	struct egress_rule r;

	load_fixture("valid-network.ini", &p);
	r = p.net.rules.v[0];
	strcpy(p.net.rules.v[0].host, "Not Canonical");
	expect_format_refused(&p);
	p.net.rules.v[0] = r;
	p.net.rules.v[1] = r; /* the same rule twice */
	expect_format_refused(&p);
	policy_clear(&p);
}

/* The messages policy_load_file_report passes on, in order. */
struct reports {
	char *msg[8];
	size_t n;
};

static void
collect(const char *msg, void *arg)
{
	struct reports *r = arg;

	cr_assert_lt(r->n, 8);
	r->msg[r->n++] = strdup(msg);
}

/* `stockade policy check` names every refused rule, each at its line,
 * then what ended the reading; ERR holds the first. */
static void
expect_reports(const char *name, const char *const *want, size_t nwant,
    const char *first)
{
	char err[POLICY_ERR_MAX], line[POLICY_ERR_MAX];
	char *path = fixture(name);
	struct reports r = {0};
	struct policy p;

	cr_assert_eq(policy_load_file_report(&p, path, collect, &r, err,
			 sizeof(err)),
	    -EINVAL);
	assert_cleared(&p);
	cr_assert_eq(r.n, nwant, "%zu reports", r.n);
	for (size_t i = 0; i < nwant; i++) {
		snprintf(line, sizeof(line), "%s:%s", path, want[i]);
		cr_assert_str_eq(r.msg[i], line);
		free(r.msg[i]);
	}
	snprintf(line, sizeof(line), "%s:%s", path, first);
	cr_assert_str_eq(err, line);
	free(path);
}

Test(network, check_reports_every_refused_rule)
{
	static const char *const want[] = {
	    "3: " NET_BAD("allow", "exa mple.org", "contains a space"),
	    "4: " NET_BAD("allow_address", "10.1.0.0/8:80",
		"has address bits set beyond its prefix length"),
	    "5: duplicate rule allow = registry.example.org",
	    "6: " NET_BAD("deny", "0x7f.1",
		"ends in a number but is no dotted quad (an IPv4 address is "
		"written a.b.c.d, decimal, no leading zero)"),
	};

	expect_reports("invalid-network-several.ini", want, 4, want[0]);
}

Test(network, check_reports_what_ended_the_reading_once)
{
	static const char *const want[] = {
	    "2: " NET_BAD("allow", "a b.example", "contains a space"),
	    "4: wall_time_ms must be a decimal integer, not \"soon\"",
	};

	expect_reports("invalid-network-then-value.ini", want, 2, want[1]);
}

Test(network, check_reports_a_missing_file_and_valid_files_silently)
{
	char err[POLICY_ERR_MAX];
	char *path = fixture("valid-network.ini");
	struct reports r = {0};
	struct policy p;

	cr_assert_eq(policy_load_file_report(&p, path, collect, &r, err,
			 sizeof(err)),
	    0, "%s", err);
	cr_assert_eq(r.n, 0);
	cr_assert_eq(p.net.rules.n, 7);
	policy_clear(&p);
	free(path);
	cr_assert_eq(policy_load_file_report(&p, "/nonexistent/x.ini", collect,
			 &r, NULL, 0),
	    -ENOENT);
	cr_assert_eq(r.n, 1);
	cr_assert_str_eq(r.msg[0],
	    "/nonexistent/x.ini: No such file or directory");
	free(r.msg[0]);
}

#define X_TEST(id, file, line, msg)              \
	Test(invalid, id)                        \
	{                                        \
		expect_invalid(file, line, msg); \
	}
NETWORK_FIXTURES(X_TEST)

#define X_FILE(id, file, line, msg) file,
static const char *const invalid_files[] = {NETWORK_FIXTURES(X_FILE)};

/* No invalid-network-* fixture goes untested (test_policy.c checks the
 * others). */
Test(invalid, every_network_fixture_has_a_test)
{
	char *dir;
	struct dirent *e;
	DIR *d;
	size_t i, n = 0, max = sizeof(invalid_files) / sizeof(invalid_files[0]);

	cr_assert(asprintf(&dir, "%s/tests/policy", source_root()) > 0);
	d = opendir(dir);
	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "invalid-network-", 16) != 0)
			continue;
		for (i = 0; i < max; i++)
			if (strcmp(invalid_files[i], e->d_name) == 0)
				break;
		cr_assert_lt(i, max, "%s has no test", e->d_name);
		n++;
	}
	closedir(d);
	free(dir);
	cr_assert_eq(n, max);
}
