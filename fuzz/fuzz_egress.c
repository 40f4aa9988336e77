/*
 * fuzz_egress.c: host names, rules and the decision of controlled egress
 * (shared/egress_name.h, shared/egress_rules.h; issue 25).
 *
 * Input: a control byte, then text. The control byte's low two bits pick
 * what the text is: 0, a host as a client sends it (egress_host_canon,
 * then egress_decide under a fixed list); 1, 2, 3, a rule of kind allow,
 * allow_address or deny (egress_rule_parse). Properties, each an abort
 * when broken:
 *  - a canonical host is canonical: read again it is the same text and
 *    kind, holds no upper case and no byte egress_host_hostile refuses,
 *    and is at most 253 bytes; a refusal has a known token and leaves
 *    the output empty;
 *  - the decision of a host egress_host_canon refuses is bad_request,
 *    and a host it accepts is decided as its canonical form is;
 *  - a rule that parses formats, and its text parses back to an equal
 *    rule that formats to the same text.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "egress_rules.h"
#include "fuzz.h"

/* A list holding every kind of rule, wildcards and ranges included. */
static const struct egress_rules *
fixed_rules(void)
{
	static const char *const spec[][2] = {
	    {"allow", "registry.example.org"},
	    {"allow", "*.example.net:8000-8100"},
	    {"allow_address", "127.0.0.1:8080"},
	    {"allow_address", "[fd00::]/8:443"},
	    {"deny", "*.upload.example.net"},
	};
	static struct egress_rules rules;
	static bool made;
	struct egress_rule r;

	for (size_t i = 0; !made && i < sizeof(spec) / sizeof(spec[0]); i++) {
		enum egress_rule_kind k = strcmp(spec[i][0], "allow") == 0
		    ? EGRESS_RULE_ALLOW
		    : strcmp(spec[i][0], "deny") == 0
		    ? EGRESS_RULE_DENY
		    : EGRESS_RULE_ALLOW_ADDRESS;

		if (egress_rule_parse(k, spec[i][1], &r) < 0 ||
		    egress_rules_add(&rules, &r) < 0)
			fuzz_fail("fixed rule %s", spec[i][1]);
	}
	made = true;
	return &rules;
}

static void
check_host(const char *in, size_t len)
{
	char out[EGRESS_HOST_BUF], again[EGRESS_HOST_BUF];
	struct egress_decision d1, d2;
	int r = egress_host_canon(in, len, out, sizeof(out)), r2;
	size_t n;

	egress_decide(fixed_rules(), in, len, 443, &d1);
	if (r < 0) {
		FUZZ_ASSERT(strcmp(egress_name_errname(r), "unknown") != 0);
		FUZZ_ASSERT(out[0] == '\0');
		FUZZ_ASSERT(d1.reason == EGRESS_REASON_BAD_REQUEST);
		FUZZ_ASSERT(d1.error == r);
		return;
	}
	n = strlen(out);
	FUZZ_ASSERT(n > 0 && n <= EGRESS_NAME_MAX);
	FUZZ_ASSERT(egress_host_hostile(out, n) == 0);
	for (size_t i = 0; i < n; i++)
		FUZZ_ASSERT(out[i] < 'A' || out[i] > 'Z');
	r2 = egress_host_canon(out, n, again, sizeof(again));
	FUZZ_ASSERT(r2 == r);
	FUZZ_ASSERT(strcmp(out, again) == 0);
	egress_decide(fixed_rules(), out, n, 443, &d2);
	FUZZ_ASSERT(d1.allowed == d2.allowed && d1.reason == d2.reason &&
	    d1.rule == d2.rule);
}

static void
check_rule(enum egress_rule_kind kind, const char *text)
{
	char t1[EGRESS_RULE_BUF], t2[EGRESS_RULE_BUF];
	struct egress_rule r, back;
	int e = egress_rule_parse(kind, text, &r);

	if (e < 0) {
		FUZZ_ASSERT(strcmp(egress_name_errname(e), "unknown") != 0);
		return;
	}
	if (egress_rule_format(&r, t1, sizeof(t1)) < 0)
		fuzz_fail("a parsed rule does not format: %s", text);
	if (egress_rule_parse(kind, t1, &back) < 0 ||
	    !egress_rule_eq(&r, &back))
		fuzz_fail("\"%s\" formats as \"%s\", which reads back as "
			  "another rule",
		    text, t1);
	FUZZ_ASSERT(egress_rule_format(&back, t2, sizeof(t2)) == 0);
	FUZZ_ASSERT(strcmp(t1, t2) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode;
	char *text;

	if (size < 1)
		return 0;
	mode = data[0] & 3u;
	if (mode == 0) {
		check_host((const char *)data + 1, size - 1);
		return 0;
	}
	/* A rule is a C string, as the policy reader hands it over. */
	if ((text = malloc(size)) == NULL)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	check_rule((enum egress_rule_kind)(mode - 1), text);
	free(text);
	return 0;
}
