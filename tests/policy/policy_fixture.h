/*
 * policy_fixture.h: what the policy tests share (test_policy.c,
 * test_policy_network.c): the fixtures of tests/policy/, found through
 * STOCKADE_SOURCE_ROOT (set by tests/meson.build), and loading a policy
 * with a Criterion assertion on the outcome. Every function fails the
 * running test, rather than returning an error, when a step fails.
 */
#ifndef STOCKADE_TEST_POLICY_FIXTURE_H
#define STOCKADE_TEST_POLICY_FIXTURE_H

#include "policy.h"

/* The source tree's root (STOCKADE_SOURCE_ROOT); never NULL or "". */
const char *source_root(void);

/* The path of fixture NAME in tests/policy/, malloc'd: the caller frees
 * it. */
char *fixture(const char *name);

/* Asserts that P owns nothing, as policy_clear and a failed load leave
 * it: no name, environment, mounts, jail strings, [network] or
 * [writeback] rules. */
void assert_cleared(const struct policy *p);

/* Loads fixture NAME and asserts that it is refused with exactly
 * "PATH:LINE: MSG", the policy left cleared. */
void expect_invalid(const char *name, unsigned line, const char *msg);

/* Loads fixture NAME into P (zeroed first), asserting success and that
 * P's name is the fixture's path. The caller frees P with policy_clear. */
void load_fixture(const char *name, struct policy *p);

/* Loads TEXT (named "test") into P, asserting success; policy_clear. */
void load_text(const char *text, struct policy *p);

/* Loads the embedded default into P, asserting success; policy_clear. */
void load_default(struct policy *p);

/* Asserts that A and B hold the same caps and the same rules in order. */
void assert_net_eq(const struct net_policy *a, const struct net_policy *b);

/* Asserts that A and B hold the same [writeback] rules in order. */
void assert_wb_eq(const struct wb_policy *a, const struct wb_policy *b);

#endif
