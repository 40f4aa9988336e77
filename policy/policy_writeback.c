/*
 * policy_writeback.c: a policy layer's [writeback] rules (policy.h,
 * policy_loader.h): each checked and kept in the layer's own list as it
 * is read, then laid over the policy's once the layer is read whole.
 * Pure, as policy.c.
 */
#include "policy_loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static const char *const wb_action_names[] = {
    [WB_ALLOW] = "allow",
    [WB_REFUSE] = "refuse",
    [WB_QUARANTINE] = "quarantine",
};

const char *
policy_wb_action_name(enum wb_action a)
{
	return (unsigned)a <= WB_QUARANTINE ? wb_action_names[a] : NULL;
}

bool
policy_parse_wb_value(const char *key, const char *v, char *pat, size_t patlen,
    bool *drivers, char *why, size_t whylen)
{
	size_t n = strcspn(v, " \t");
	const char *q = v + n, *bad;

	*drivers = false;
	while (policy_is_blank(*q))
		q++;
	if (*q != '\0' && strcmp(q, "drivers") != 0) {
		snprintf(why, whylen,
		    "%s \"%.200s\": expected PATTERN, or PATTERN drivers (a "
		    "pattern has no blank: \"?\" matches one)",
		    key, v);
		return false;
	}
	*drivers = *q != '\0';
	if (n >= patlen) {
		snprintf(why, whylen, "%s \"%.200s\": pattern too long", key,
		    v);
		return false;
	}
	memcpy(pat, v, n);
	pat[n] = '\0';
	bad = writeback_pattern_error(pat);
	if (bad != NULL) {
		snprintf(why, whylen, "%s \"%.200s\" %s", key, pat, bad);
		return false;
	}
	return true;
}

/* The index of P's rule of pattern PAT and qualifier DRIVERS, or -1. */
static ssize_t
find_wb(const struct policy *p, const char *pat, bool drivers)
{
	for (size_t i = 0; i < p->writeback.n; i++)
		if (p->writeback.rules[i].drivers == drivers &&
		    strcmp(p->writeback.rules[i].pattern, pat) == 0)
			return (ssize_t)i;
	return -1;
}

/* Makes room for one more [writeback] rule of P (and its origin). */
static int
grow_wb(struct policy *p)
{
	struct policy_origin *from;
	struct wb_rule *v;

	v = reallocarray(p->writeback.rules, p->writeback.n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->writeback.rules = v;
	from = reallocarray(p->wb_from, p->writeback.n + 1, sizeof(*from));
	if (!from)
		return -ENOMEM;
	p->wb_from = from;
	return 0;
}

/* The action named KEY, or -1. */
static int
wb_action_of(const char *key)
{
	for (int i = WB_ALLOW; i <= WB_QUARANTINE; i++)
		if (strcmp(key, wb_action_names[i]) == 0)
			return i;
	return -1;
}

int
policy_add_wb(struct loader *l, const char *key, const char *v)
{
	struct policy *s = &l->lists;
	char why[POLICY_ERR_MAX], *pat;
	int action = wb_action_of(key);
	ssize_t j;
	bool drivers;

	if (action < 0)
		return policy_refuse_entry(l,
		    "unknown action \"%.64s\" in [writeback] (expected "
		    "refuse, quarantine or allow)",
		    key);
	pat = malloc(strlen(v) + 1);
	if (!pat)
		return policy_fail_at(l, -ENOMEM, l->lineno, "out of memory");
	if (!policy_parse_wb_value(key, v, pat, strlen(v) + 1, &drivers, why,
		sizeof(why))) {
		free(pat);
		return policy_refuse_entry(l, "%s", why);
	}
	/* Within one file (the first would always win); the default's
	 * rule of the same pattern is the one this takes the place of. */
	j = find_wb(s, pat, drivers);
	if (j >= 0) {
		free(pat);
		return policy_refuse_entry(l,
		    "duplicate rule %s = %.200s (line %u has the same "
		    "pattern and qualifier)",
		    key, v, s->wb_from[j].line);
	}
	if (s->writeback.n >= POLICY_MAX_WB_RULES || grow_wb(s) < 0) {
		free(pat);
		if (s->writeback.n >= POLICY_MAX_WB_RULES)
			return fail(l,
			    "too many [writeback] rules (at most %u)",
			    POLICY_MAX_WB_RULES);
		return policy_fail_at(l, -ENOMEM, l->lineno, "out of memory");
	}
	s->wb_from[s->writeback.n] = (struct policy_origin){l->in_file,
	    l->lineno};
	s->writeback.rules[s->writeback.n++] = (struct wb_rule){pat,
	    (enum wb_action)action, drivers};
	return 1;
}

void
policy_free_wb(struct policy *p)
{
	for (size_t i = 0; i < p->writeback.n; i++)
		free(p->writeback.rules[i].pattern);
	free(p->writeback.rules);
	free(p->wb_from);
	p->writeback = (struct wb_policy){NULL, 0};
	p->wb_from = NULL;
}

/* Moves the layer's list S into P whole ([policy] replace). */
static void
take_wb(struct policy *p, struct policy *s)
{
	policy_free_wb(p);
	p->writeback = s->writeback;
	p->wb_from = s->wb_from;
	s->writeback = (struct wb_policy){NULL, 0};
	s->wb_from = NULL;
}

int
policy_merge_wb(struct loader *l)
{
	struct policy *p = l->p, *s = &l->lists;
	const size_t had = p->writeback.n;

	if (p->replace & POLICY_LIST_WRITEBACK)
		take_wb(p, s);
	for (size_t i = 0; i < s->writeback.n; i++) {
		struct wb_rule *r = &s->writeback.rules[i];
		ssize_t j = find_wb(p, r->pattern, r->drivers);

		if (j < 0) {
			if (p->writeback.n >= POLICY_MAX_WB_RULES)
				return policy_fail_at(l, -EINVAL,
				    s->wb_from[i].line,
				    "too many [writeback] rules (at most %u, "
				    "the default's %zu included; [policy] "
				    "replace = writeback leaves them out)",
				    POLICY_MAX_WB_RULES, had);
			if (grow_wb(p) < 0)
				return policy_fail_at(l, -ENOMEM,
				    s->wb_from[i].line, "out of memory");
			j = (ssize_t)p->writeback.n++;
		} else {
			free(p->writeback.rules[j].pattern);
		}
		p->writeback.rules[j] = *r;
		p->wb_from[j] = s->wb_from[i];
		r->pattern = NULL;
	}
	return 1;
}
