/* policy_fixture.c: see policy_fixture.h. */
#include "policy_fixture.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
source_root(void)
{
	const char *root = getenv("STOCKADE_SOURCE_ROOT");

	cr_assert(root && *root, "STOCKADE_SOURCE_ROOT is not set");
	return root;
}

char *
fixture(const char *name)
{
	char *path;

	cr_assert(
	    asprintf(&path, "%s/tests/policy/%s", source_root(), name) > 0);
	return path;
}

void
assert_cleared(const struct policy *p)
{
	cr_assert_null(p->name);
	cr_assert_null(p->env);
	cr_assert_eq(p->nenv, 0);
	cr_assert_null(p->mounts);
	cr_assert_eq(p->nmounts, 0);
	cr_assert_null(p->hostname);
	cr_assert_null(p->user);
	cr_assert_null(p->home);
	cr_assert_null(p->net.rules.v);
	cr_assert_eq(p->net.rules.n, 0);
	cr_assert_null(p->net_from);
	cr_assert_null(p->writeback.rules);
	cr_assert_eq(p->writeback.n, 0);
	cr_assert_null(p->wb_from);
}

void
expect_invalid(const char *name, unsigned line, const char *msg)
{
	char err[POLICY_ERR_MAX], want[POLICY_ERR_MAX];
	char *path = fixture(name);
	struct policy p;
	int r;

	memset(&p, 0, sizeof(p));
	r = policy_load_file(&p, path, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:%u: %s", path, line, msg);
	cr_assert_eq(r, -EINVAL, "%s: r = %d (%s)", name, r, err);
	cr_assert_str_eq(err, want);
	assert_cleared(&p);
	free(path);
}

void
load_fixture(const char *name, struct policy *p)
{
	char err[POLICY_ERR_MAX];
	char *path = fixture(name);
	int r;

	memset(p, 0, sizeof(*p));
	r = policy_load_file(p, path, err, sizeof(err));
	cr_assert_eq(r, 0, "%s: %s", name, err);
	cr_assert_str_eq(p->name, path);
	free(path);
}

void
load_text(const char *text, struct policy *p)
{
	char err[POLICY_ERR_MAX];

	memset(p, 0, sizeof(*p));
	cr_assert_eq(policy_load_string(p, text, "test", err, sizeof(err)), 0,
	    "%s", err);
}

void
load_default(struct policy *p)
{
	char err[POLICY_ERR_MAX];

	memset(p, 0, sizeof(*p));
	cr_assert_eq(policy_load_default(p, err, sizeof(err)), 0, "%s", err);
}

void
assert_net_eq(const struct net_policy *a, const struct net_policy *b)
{
	cr_assert_eq(a->bytes_out, b->bytes_out);
	cr_assert_eq(a->bytes_in, b->bytes_in);
	cr_assert_eq(a->max_connections, b->max_connections);
	cr_assert_eq(a->max_concurrent, b->max_concurrent);
	cr_assert_eq(a->rules.n, b->rules.n);
	for (size_t i = 0; i < a->rules.n; i++)
		cr_assert(egress_rule_eq(&a->rules.v[i], &b->rules.v[i]),
		    "rule %zu", i);
}

void
assert_wb_eq(const struct wb_policy *a, const struct wb_policy *b)
{
	cr_assert_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		cr_assert_str_eq(a->rules[i].pattern, b->rules[i].pattern,
		    "rule %zu", i);
		cr_assert_eq(a->rules[i].action, b->rules[i].action, "rule %zu",
		    i);
		cr_assert_eq(a->rules[i].drivers, b->rules[i].drivers,
		    "rule %zu", i);
	}
}
