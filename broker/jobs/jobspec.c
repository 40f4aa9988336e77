/* jobspec.c: see jobspec.h. */
#include "jobspec.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* *DST = a copy of SRC (NULL stays NULL). Returns 0 or -ENOMEM. */
static int
dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (src != NULL && (*dst = strdup(src)) == NULL)
		return -ENOMEM;
	return 0;
}

/* A new array of copies of the N strings of SRC, then NULL, in *DST.
 * Returns 0 or -ENOMEM, with *DST then holding the copies made so far
 * (NULL-terminated: job_spec_clear frees them). */
static int
dup_strv(char ***dst, char *const *src, size_t n)
{
	if ((*dst = calloc(n + 1, sizeof(char *))) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (dup_str(&(*dst)[i], src[i]) < 0)
			return -ENOMEM;
	return 0;
}

/* SPEC's mounts: copies of POLICY's. Returns 0 or -ENOMEM (what was
 * copied is SPEC's, for job_spec_clear). */
static int
dup_mounts(struct job_spec *spec, const struct policy *p)
{
	spec->mounts = calloc(p->nmounts ? p->nmounts : 1,
	    sizeof(*spec->mounts));
	if (spec->mounts == NULL)
		return -ENOMEM;
	spec->nmounts = (uint32_t)p->nmounts;
	for (size_t i = 0; i < p->nmounts; i++) {
		spec->mounts[i].kind = p->mounts[i].kind;
		if (dup_str(&spec->mounts[i].source, p->mounts[i].source) < 0 ||
		    dup_str(&spec->mounts[i].target, p->mounts[i].target) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Copies every string and array of P and ARGV into SPEC (zeroed).
 * Returns 0 or -ENOMEM (SPEC then owns what was copied). */
static int
copy_from(struct job_spec *spec, const struct policy *p, int argc, char **argv)
{
	if (dup_strv(&spec->argv, argv, (size_t)argc) < 0)
		return -ENOMEM;
	spec->argc = (uint32_t)argc;
	if (dup_strv(&spec->envp, p->env, p->nenv) < 0)
		return -ENOMEM;
	spec->envc = (uint32_t)p->nenv;
	if (dup_str(&spec->hostname, p->hostname) < 0 ||
	    dup_str(&spec->user, p->user) < 0 ||
	    dup_str(&spec->home, p->home) < 0 ||
	    dup_str(&spec->cgroup, p->cgroup) < 0 ||
	    dup_str(&spec->seccomp_profile, p->seccomp_profile) < 0)
		return -ENOMEM;
	return dup_mounts(spec, p);
}

int
jobspec_from_policy(struct job_spec *spec, const struct policy *p, int argc,
    char **argv)
{
	uint8_t *msg;
	int n;

	memset(spec, 0, sizeof(*spec));
	if (argc < 1)
		return -EINVAL;
	/* The decoder's bounds (proto.h), checked here where the user can
	 * still be told: past them, proto_encode_run would refuse the job
	 * only after the launcher was started. */
	if ((unsigned)argc > JOB_MAX_ARGS)
		return -E2BIG;
	for (int i = 0; i < argc; i++)
		if (strnlen(argv[i], JOB_MAX_STR + 1) > JOB_MAX_STR)
			return -E2BIG;
	if (argv[0][0] == '\0')
		return -EINVAL;
	if (p->nenv > JOB_MAX_ENV || p->nmounts > JOB_MAX_MOUNTS)
		return -E2BIG;
	if (copy_from(spec, p, argc, argv) < 0) {
		job_spec_clear(spec);
		return -ENOMEM;
	}
	spec->enforcement = p->enforcement;
	spec->uid = p->uid;
	spec->gid = p->gid;
	spec->limits = p->limits;
	if (p->unsafe_no_seccomp)
		spec->flags |= JOB_F_UNSAFE_NO_SECCOMP;
	if (p->pty)
		spec->flags |= JOB_F_DEVPTS;
	if (p->on_output_limit == OUTPUT_KILL)
		spec->flags |= JOB_F_OUTPUT_KILL;

	/* 1024 arguments of 16 KiB each are far more than one message
	 * holds: encode it once to know (the job id does not change the
	 * size, every id being 8 bytes). */
	msg = malloc(PROTO_MAX_MSG);
	if (msg == NULL) {
		job_spec_clear(spec);
		return -ENOMEM;
	}
	n = proto_encode_run(msg, PROTO_MAX_MSG, spec);
	free(msg);
	if (n < 0) {
		job_spec_clear(spec);
		return n == -ENOBUFS ? -EMSGSIZE : n;
	}
	return 0;
}

const char *const JOBSPEC_PROXY_VARS[JOBSPEC_PROXY_NVARS] = {"HTTP_PROXY",
    "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
    "all_proxy", "no_proxy"};

/* Whether ENTRY ("NAME=value") is one of JOBSPEC_PROXY_VARS. */
static bool
is_proxy_var(const char *entry)
{
	size_t n = strcspn(entry, "=");

	for (size_t i = 0; i < JOBSPEC_PROXY_NVARS; i++)
		if (strlen(JOBSPEC_PROXY_VARS[i]) == n &&
		    strncmp(entry, JOBSPEC_PROXY_VARS[i], n) == 0)
			return true;
	return false;
}

/* The JOBSPEC_PROXY_NVARS new entries for PORT into V (malloc'd each).
 * 0 or -ENOMEM (those made are freed). */
static int
proxy_entries(char **v, uint16_t port)
{
	for (size_t i = 0; i < JOBSPEC_PROXY_NVARS; i++) {
		const char *name = JOBSPEC_PROXY_VARS[i];
		int n;

		if (i % 4 == 3)
			n = asprintf(&v[i], "%s=localhost,127.0.0.1,::1", name);
		else
			n = asprintf(&v[i], "%s=%s://127.0.0.1:%u", name,
			    i % 4 == 2 ? "socks5h" : "http", (unsigned)port);
		if (n < 0) {
			while (i > 0)
				free(v[--i]);
			return -ENOMEM;
		}
	}
	return 0;
}

int
jobspec_set_proxy(struct job_spec *spec, uint16_t port)
{
	size_t keep = 0, n = 0;
	char **env;

	if (port == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < spec->envc; i++)
		keep += !is_proxy_var(spec->envp[i]);
	if (keep + JOBSPEC_PROXY_NVARS > JOB_MAX_ENV)
		return -EOVERFLOW;
	if ((env = calloc(keep + JOBSPEC_PROXY_NVARS + 1, sizeof(*env))) ==
	    NULL)
		return -ENOMEM;
	if (proxy_entries(env + keep, port) < 0) {
		free(env);
		return -ENOMEM;
	}
	/* SPEC's own strings move; those replaced are freed. */
	for (uint32_t i = 0; i < spec->envc; i++) {
		if (is_proxy_var(spec->envp[i]))
			free(spec->envp[i]);
		else
			env[n++] = spec->envp[i];
	}
	free(spec->envp);
	spec->envp = env;
	spec->envc = (uint32_t)(keep + JOBSPEC_PROXY_NVARS);
	spec->proxy_port = port;
	return 0;
}
