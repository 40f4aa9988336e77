/*
 * test_jobspec.c: the command line against what one RUN message carries
 * (broker/jobs/jobspec.c): JOB_MAX_ARGS arguments of JOB_MAX_STR bytes each
 * (-E2BIG past either), and the whole job within PROTO_MAX_BODY
 * (-EMSGSIZE), all decided before a launcher is started; and the spec
 * owning copies of everything it points to (shared/proto.h, struct
 * job_spec): it outlives the policy and the command line it was made
 * from, and job_spec_clear frees it (the valgrind and sanitize_leaks
 * setups see a leak or a use after free).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
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
		/* A copy, not the caller's string (struct job_spec). */
		cr_assert_str_eq(spec.argv[n - 1], v[n - 1]);
		cr_assert_neq(spec.argv[n - 1], v[n - 1]);
		cr_assert_null(spec.argv[n]);
		job_spec_clear(&spec);
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
	job_spec_clear(&spec);
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

/* Overwrites every byte of the NUL-terminated string S with 'Z' and frees
 * it: a spec still pointing into it would read freed memory (ASan,
 * valgrind), or, without them, most likely the 'Z's. */
static void
scribble_free(char *s)
{
	if (s != NULL)
		memset(s, 'Z', strlen(s));
	free(s);
}

/*
 * One ownership rule: a spec from jobspec_from_policy owns copies of all
 * its strings and arrays. The policy and the command line are
 * overwritten and freed, and the spec still reads what they held, still
 * encodes, and job_spec_clear frees it all.
 */
Test(jobspec, owns_copies_of_policy_and_argv)
{
	struct job_spec spec;
	char *v[3] = {strdup("/bin/echo"), strdup("hi"), NULL};
	char *hostname, *user, *home, *profile, *env0 = NULL, *src0 = NULL;
	uint8_t *msg = malloc(PROTO_MAX_MSG);
	size_t nenv = pol.nenv, nmounts = pol.nmounts;

	cr_assert(v[0] != NULL && v[1] != NULL && msg != NULL);
	cr_assert_gt(nenv, 0u, "the default policy sets an environment");
	cr_assert_gt(nmounts, 0u, "the default policy binds host paths");
	cr_assert_eq(jobspec_from_policy(&spec, &pol, 2, v), 0);
	/* What the policy held, to compare after it is gone. */
	hostname = strdup(pol.hostname);
	user = strdup(pol.user);
	home = strdup(pol.home);
	profile = strdup(pol.seccomp_profile);
	env0 = strdup(pol.env[0]);
	src0 = strdup(pol.mounts[0].source);
	cr_assert(hostname && user && home && profile && env0 && src0);

	scribble_free(v[0]);
	scribble_free(v[1]);
	scribble_free(pol.hostname);
	scribble_free(pol.user);
	scribble_free(pol.home);
	scribble_free(pol.seccomp_profile);
	scribble_free(pol.cgroup);
	pol.hostname = pol.user = pol.home = NULL;
	pol.seccomp_profile = pol.cgroup = NULL;
	for (size_t i = 0; i < nenv; i++)
		memset(pol.env[i], 'Z', strlen(pol.env[i]));
	for (size_t i = 0; i < nmounts; i++) {
		memset(pol.mounts[i].source, 'Z', strlen(pol.mounts[i].source));
		memset(pol.mounts[i].target, 'Z', strlen(pol.mounts[i].target));
	}
	policy_clear(&pol);

	cr_assert_eq(spec.argc, 2u);
	cr_assert_str_eq(spec.argv[0], "/bin/echo");
	cr_assert_str_eq(spec.argv[1], "hi");
	cr_assert_null(spec.argv[2]);
	cr_assert_str_eq(spec.hostname, hostname);
	cr_assert_str_eq(spec.user, user);
	cr_assert_str_eq(spec.home, home);
	cr_assert_str_eq(spec.seccomp_profile, profile);
	cr_assert_not_null(spec.cgroup);
	cr_assert_eq(spec.envc, nenv);
	cr_assert_str_eq(spec.envp[0], env0);
	cr_assert_null(spec.envp[nenv]);
	cr_assert_eq(spec.nmounts, nmounts);
	cr_assert_str_eq(spec.mounts[0].source, src0);
	cr_assert_gt(proto_encode_run(msg, PROTO_MAX_MSG, &spec), 0);

	job_spec_clear(&spec);
	cr_assert_null(spec.argv);
	cr_assert_null(spec.envp);
	cr_assert_null(spec.mounts);
	cr_assert_null(spec.hostname);
	cr_assert_eq(spec.argc + spec.envc + spec.nmounts, 0u);
	/* Cleared twice is harmless: it owns nothing now. */
	job_spec_clear(&spec);
	free(hostname);
	free(user);
	free(home);
	free(profile);
	free(env0);
	free(src0);
	free(msg);
	/* teardown clears POL again: policy_clear left it zeroed. */
}

/* The value of NAME in SPEC's environment, or NULL; asserts it is there
 * at most once. */
static const char *
env_value(const struct job_spec *spec, const char *name)
{
	const char *found = NULL;
	size_t n = strlen(name);

	for (uint32_t i = 0; i < spec->envc; i++)
		if (strncmp(spec->envp[i], name, n) == 0 &&
		    spec->envp[i][n] == '=') {
			cr_assert_null(found, "%s twice", name);
			found = spec->envp[i] + n + 1;
		}
	cr_assert_null(spec->envp[spec->envc]);
	return found;
}

/* Adds "NAME=VALUE" (a copy) to SPEC's environment. */
static void
env_add(struct job_spec *spec, const char *entry)
{
	char **v = reallocarray(spec->envp, spec->envc + 2, sizeof(*v));

	cr_assert_not_null(v);
	spec->envp = v;
	spec->envp[spec->envc++] = strdup(entry);
	spec->envp[spec->envc] = NULL;
}

/* Issue 25: the proxy's port and the eight variables, the policy's of
 * the same names replaced, every other variable kept in its order. */
Test(jobspec, set_proxy)
{
	char *argv[] = {(char *)(uintptr_t) "prog", NULL};
	struct job_spec spec;
	uint32_t before;

	cr_assert_eq(jobspec_from_policy(&spec, &pol, 1, argv), 0);
	env_add(&spec, "http_proxy=http://policy.example:1");
	env_add(&spec, "NO_PROXY=*");
	env_add(&spec, "HTTP_PROXYX=kept");
	before = spec.envc;
	cr_assert_eq(jobspec_set_proxy(&spec, 3128), 0);
	cr_assert_eq(spec.proxy_port, 3128);
	cr_assert_eq(spec.envc, before - 2 + JOBSPEC_PROXY_NVARS);
	cr_assert_str_eq(env_value(&spec, "HTTP_PROXY"),
	    "http://127.0.0.1:3128");
	cr_assert_str_eq(env_value(&spec, "http_proxy"),
	    "http://127.0.0.1:3128");
	cr_assert_str_eq(env_value(&spec, "HTTPS_PROXY"),
	    "http://127.0.0.1:3128");
	cr_assert_str_eq(env_value(&spec, "https_proxy"),
	    "http://127.0.0.1:3128");
	cr_assert_str_eq(env_value(&spec, "ALL_PROXY"),
	    "socks5h://127.0.0.1:3128");
	cr_assert_str_eq(env_value(&spec, "all_proxy"),
	    "socks5h://127.0.0.1:3128");
	cr_assert_str_eq(env_value(&spec, "NO_PROXY"),
	    "localhost,127.0.0.1,::1");
	cr_assert_str_eq(env_value(&spec, "no_proxy"),
	    "localhost,127.0.0.1,::1");
	cr_assert_str_eq(env_value(&spec, "HTTP_PROXYX"), "kept");
	/* Again with another port: still eight, the new port. */
	cr_assert_eq(jobspec_set_proxy(&spec, 65535), 0);
	cr_assert_eq(spec.envc, before - 2 + JOBSPEC_PROXY_NVARS);
	cr_assert_str_eq(env_value(&spec, "all_proxy"),
	    "socks5h://127.0.0.1:65535");
	/* Port 0 is refused, SPEC unchanged. */
	cr_assert_eq(jobspec_set_proxy(&spec, 0), -EINVAL);
	cr_assert_eq(spec.proxy_port, 65535);
	job_spec_clear(&spec);
}

/* More than JOB_MAX_ENV variables with the proxy's is refused, SPEC
 * unchanged. */
Test(jobspec, set_proxy_env_bound)
{
	char *argv[] = {(char *)(uintptr_t) "prog", NULL}, entry[32];
	struct job_spec spec;

	cr_assert_eq(jobspec_from_policy(&spec, &pol, 1, argv), 0);
	while (spec.envc < JOB_MAX_ENV - JOBSPEC_PROXY_NVARS + 1) {
		snprintf(entry, sizeof(entry), "V%u=x", spec.envc);
		env_add(&spec, entry);
	}
	cr_assert_eq(jobspec_set_proxy(&spec, 3128), -EOVERFLOW);
	cr_assert_eq(spec.proxy_port, 0);
	cr_assert_eq(spec.envc, JOB_MAX_ENV - JOBSPEC_PROXY_NVARS + 1);
	cr_assert_null(env_value(&spec, "HTTP_PROXY"));
	job_spec_clear(&spec);
}
