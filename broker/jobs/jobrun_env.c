/*
 * jobrun_env.c: a job's environment (jobrun.h): the broker's own when the
 * layer scrubbed_env is off (jobrun_inherit_environment), and the
 * variables a client sets (jobrun_set_env), each checked against the
 * policy.
 */
#include "jobrun.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True when ENTRY ("NAME=value") names the variable of ENV ("NAME=..."). */
static bool
same_name(const char *entry, const char *env)
{
	size_t n = strcspn(env, "=");

	return strncmp(entry, env, n) == 0 && entry[n] == '=';
}

/* Frees the first N strings of ENV (copies made here) and ENV. */
static void
free_copies(char **env, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(env[i]);
	free(env);
}

int
jobrun_inherit_environment(struct job_spec *spec)
{
	extern char **environ;
	size_t n = 0, count = 0;
	char **env;

	for (char **e = environ; e != NULL && *e != NULL; e++)
		count++;
	if (count + spec->envc > JOB_MAX_ENV)
		return -EOVERFLOW;
	env = calloc(count + spec->envc + 1, sizeof(*env));
	if (env == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		const char *v = environ[i];
		bool policy = false;

		/* What the wire refuses: no name, no '=' (proto.h). */
		if (v[0] == '=' || strchr(v, '=') == NULL)
			continue;
		if (strnlen(v, JOB_MAX_STR + 1) > JOB_MAX_STR) {
			free_copies(env, n);
			return -EOVERFLOW;
		}
		for (uint32_t j = 0; j < spec->envc && !policy; j++)
			policy = same_name(v, spec->envp[j]);
		if (!policy && (env[n++] = strdup(v)) == NULL) {
			free_copies(env, n - 1);
			return -ENOMEM;
		}
	}
	/* The policy's strings are SPEC's already: they move. */
	for (uint32_t j = 0; j < spec->envc; j++)
		env[n++] = spec->envp[j];
	free(spec->envp);
	spec->envp = env;
	spec->envc = (uint32_t)n;
	return 0;
}

const char *
jobenv_error_name(enum jobenv_error e)
{
	switch (e) {
	case JOBENV_OK:
		return "ok";
	case JOBENV_INVALID_NAME:
		return "invalid_env_name";
	case JOBENV_INVALID_VALUE:
		return "invalid_env_value";
	case JOBENV_NOT_ALLOWED:
		return "env_not_allowed";
	case JOBENV_TOO_MANY:
		return "too_many_env";
	}
	return "invalid_env_name";
}

/* Is NAME a variable name a client may give: [A-Za-z_][A-Za-z0-9_]*,
 * 1 to JOBENV_MAX_NAME bytes (the policy's rule for [environment],
 * policy/default.ini)? */
static bool
valid_env_name(const char *name)
{
	size_t n = strnlen(name, JOBENV_MAX_NAME + 1);

	if (n == 0 || n > JOBENV_MAX_NAME)
		return false;
	if (!(name[0] == '_' || (name[0] >= 'A' && name[0] <= 'Z') ||
		(name[0] >= 'a' && name[0] <= 'z')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(name[i] == '_' || (name[i] >= 'A' && name[i] <= 'Z') ||
			(name[i] >= 'a' && name[i] <= 'z') ||
			(name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

enum jobenv_error
jobrun_set_env(struct jobrun *jr, const struct policy *pol, const char *name,
    const char *value, size_t value_len, bool *oom, char *why, size_t whylen)
{
	struct job_spec *spec = &jr->spec;
	size_t nlen = strnlen(name, JOBENV_MAX_NAME + 1);
	char **envp, *s;
	uint32_t i;

	*oom = false;
	if (!valid_env_name(name)) {
		snprintf(why, whylen,
		    "invalid_env_name: \"%.64s%s\" is not a "
		    "variable name (1 to %u bytes of [A-Za-z_][A-Za-z0-9_]*, "
		    "the first not a digit; no \"=\")",
		    name, nlen > 64 ? "..." : "", JOBENV_MAX_NAME);
		return JOBENV_INVALID_NAME;
	}
	if (memchr(value, '\0', value_len) != NULL ||
	    nlen + 1 + value_len > JOB_MAX_STR) {
		snprintf(why, whylen, "invalid_env_value: the value of %s %s",
		    name,
		    value_len + nlen + 1 > JOB_MAX_STR
			? "is too long (NAME=value at most 16384 bytes)"
			: "holds a NUL byte");
		return JOBENV_INVALID_VALUE;
	}
	if (!policy_client_env_allows(pol, name)) {
		snprintf(why, whylen,
		    "env_not_allowed: the policy does not let "
		    "a client set %s (its [jail] client_env is \"%.200s\")",
		    name, pol->client_env != NULL ? pol->client_env : "");
		return JOBENV_NOT_ALLOWED;
	}
	for (i = 0; i < spec->envc; i++)
		if (strncmp(spec->envp[i], name, nlen) == 0 &&
		    spec->envp[i][nlen] == '=')
			break;
	if (i == spec->envc && spec->envc >= JOB_MAX_ENV) {
		snprintf(why, whylen,
		    "too_many_env: at most %u variables, the "
		    "policy's included",
		    JOB_MAX_ENV);
		return JOBENV_TOO_MANY;
	}
	if (asprintf(&s, "%s=%.*s", name, (int)value_len, value) < 0)
		goto nomem;
	/* SPEC owns its strings (proto.h): the one replaced is freed. */
	if (i < spec->envc) {
		free(spec->envp[i]);
		spec->envp[i] = s;
		return JOBENV_OK;
	}
	envp = reallocarray(spec->envp, spec->envc + 2, sizeof(*envp));
	if (envp == NULL) {
		free(s);
		goto nomem;
	}
	spec->envp = envp;
	spec->envp[spec->envc++] = s;
	spec->envp[spec->envc] = NULL;
	return JOBENV_OK;
nomem:
	*oom = true;
	snprintf(why, whylen, "out of memory");
	return JOBENV_TOO_MANY;
}
