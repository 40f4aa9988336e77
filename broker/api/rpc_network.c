/*
 * rpc_network.c: a client's network list for one job (issue 25), the
 * "network" parameter of serve's exec and of the MCP run tools: an
 * object {"allow": [...], "allow_address": [...], "deny": [...]} of rule
 * strings in the policy's syntax (stockade-policy(5), [network]), which
 * narrows the policy's list for that job and never widens it
 * (jobrun_use_network, egress_rules_narrow).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "egress_rules.h"
#include "rpc.h"

/* The keys of the object, in the order they are read. */
static const struct {
	const char *key;
	enum egress_rule_kind kind;
} keys[] = {
    {"allow", EGRESS_RULE_ALLOW},
    {"allow_address", EGRESS_RULE_ALLOW_ADDRESS},
    {"deny", EGRESS_RULE_DENY},
};

/* Reads the array V of KEY's rules into OUT. Returns 0 or -EINVAL (WHY
 * set), -E2BIG, -ENOMEM. */
static int
read_kind(json_t *v, const char *key, enum egress_rule_kind kind,
    struct egress_rules *out, char *why, size_t whylen)
{
	struct egress_rule r;
	size_t i;
	json_t *s;
	int e;

	if (!json_is_array(v)) {
		snprintf(why, whylen, "%s: expected an array of strings", key);
		return -EINVAL;
	}
	json_array_foreach(v, i, s)
	{
		if (!json_is_string(s) ||
		    strlen(json_string_value(s)) != json_string_length(s)) {
			snprintf(why, whylen,
			    "%s[%zu]: expected a string without NUL", key, i);
			return -EINVAL;
		}
		e = egress_rule_parse(kind, json_string_value(s), &r);
		if (e < 0 && e != -ENOMEM) {
			snprintf(why, whylen, "%s[%zu]: %.300s: %s", key, i,
			    json_string_value(s), egress_name_strerror(e));
			return -EINVAL;
		}
		if (e < 0 || (e = egress_rules_add(out, &r)) < 0) {
			if (e == -E2BIG)
				snprintf(why, whylen, "more than %u rules",
				    EGRESS_MAX_RULES);
			return e;
		}
	}
	return 0;
}

int
rpc_network_rules(json_t *v, struct egress_rules *out, char *why, size_t whylen)
{
	const char *key;
	json_t *val;
	int e;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(v)) {
		snprintf(why, whylen,
		    "expected an object with allow, allow_address and deny "
		    "arrays");
		return -EINVAL;
	}
	json_object_foreach(v, key, val)
	{
		size_t k = 0;

		while (k < sizeof(keys) / sizeof(keys[0]) &&
		    strcmp(keys[k].key, key) != 0)
			k++;
		if (k == sizeof(keys) / sizeof(keys[0])) {
			snprintf(why, whylen,
			    "unknown key %.64s (allow, allow_address, deny)",
			    key);
			e = -EINVAL;
		} else
			e = read_kind(val, key, keys[k].kind, out, why, whylen);
		if (e < 0) {
			egress_rules_clear(out);
			return e;
		}
	}
	return 0;
}
