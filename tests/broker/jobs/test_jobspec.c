/*
 * test_jobspec.c: the command line against what one RUN message carries
 * (broker/jobs/jobspec.c): JOB_MAX_ARGS arguments of JOB_MAX_STR bytes each
 * (-E2BIG past either), and the whole job within PROTO_MAX_BODY
 * (-EMSGSIZE), all decided before a launcher is started.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec.h"
#include "policy.h"

static struct policy pol;

static void
setup(void)
{
	char err[POLICY_ERR_MAX];

	memset(&pol, 0, sizeof(pol));
	cr_assert_eq(policy_load_default(&pol, err, sizeof(err)), 0, "%s", err);
}

static void
teardown(void)
{
	policy_clear(&pol);
}

TestSuite(jobspec, .init = setup, .fini = teardown);

/* N arguments: "prog", then N - 1 copies of a LEN-byte string. */
static char **
args(size_t n, size_t len, char **buf)
{
	char **v = calloc(n + 1, sizeof(*v));

	cr_assert_not_null(v);
	*buf = malloc(len + 1);
	cr_assert_not_null(*buf);
	memset(*buf, 'x', len);
	(*buf)[len] = '\0';
	v[0] = (char *)(uintptr_t) "prog";
	for (size_t i = 1; i < n; i++)
		v[i] = *buf;
	return v;
}

static int
build(size_t n, size_t len)
{
	struct job_spec spec;
	char *buf, **v = args(n, len, &buf);
	int e = jobspec_from_policy(&spec, &pol, (int)n, v);

	if (e == 0) {
		cr_assert_eq(spec.argc, n);
		cr_assert_eq(spec.argv[n - 1], v[n - 1]);
		cr_assert_null(spec.argv[n]);
		jobspec_release(&spec);
	} else {
		/* Nothing allocated is left behind on failure. */
		cr_assert_null(spec.argv);
		cr_assert_eq(spec.argc, 0);
	}
	free(v);
	free(buf);
	return e;
}

Test(jobspec, argument_count_bound)
{
	cr_assert_eq(build(JOB_MAX_ARGS, 1), 0);
	cr_assert_eq(build(JOB_MAX_ARGS + 1, 1), -E2BIG);
	cr_assert_eq(build(100000, 0), -E2BIG);
}

Test(jobspec, argument_length_bound)
{
	cr_assert_eq(build(2, JOB_MAX_STR), 0);
	cr_assert_eq(build(2, JOB_MAX_STR + 1), -E2BIG);
	cr_assert_eq(build(2, 1u << 20), -E2BIG);
}

Test(jobspec, program_name_length_bound)
{
	struct job_spec spec;
	char *prog = malloc(JOB_MAX_STR + 2);
	char *v[2] = {prog, NULL};

	cr_assert_not_null(prog);
	memset(prog, 'p', JOB_MAX_STR + 1);
	prog[JOB_MAX_STR + 1] = '\0';
	cr_assert_eq(jobspec_from_policy(&spec, &pol, 1, v), -E2BIG);
	prog[JOB_MAX_STR] = '\0';
	cr_assert_eq(jobspec_from_policy(&spec, &pol, 1, v), 0);
	jobspec_release(&spec);
	free(prog);
}

/* Each argument within bounds, the whole over one message. */
Test(jobspec, whole_job_over_one_message)
{
	size_t per = PROTO_MAX_BODY / JOB_MAX_STR + 1;

	cr_assert_eq(build(per + 1, JOB_MAX_STR), -EMSGSIZE);
	cr_assert_eq(build(JOB_MAX_ARGS, JOB_MAX_STR), -EMSGSIZE);
	cr_assert_eq(build(per - 2, JOB_MAX_STR), 0);
}

Test(jobspec, empty_program_name)
{
	struct job_spec spec;
	char *v[2] = {(char *)(uintptr_t) "", NULL};

	cr_assert_eq(jobspec_from_policy(&spec, &pol, 1, v), -EINVAL);
	cr_assert_eq(jobspec_from_policy(&spec, &pol, 0, v), -EINVAL);
}
