/* jobspec.c: see jobspec.h. */
#include "jobspec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	spec->argv = calloc((size_t)argc + 1, sizeof(char *));
	spec->envp = calloc(p->nenv + 1, sizeof(char *));
	if (spec->argv == NULL || spec->envp == NULL) {
		jobspec_release(spec);
		return -ENOMEM;
	}
	for (int i = 0; i < argc; i++)
		spec->argv[i] = argv[i];
	spec->argc = (uint32_t)argc;
	for (size_t i = 0; i < p->nenv; i++)
		spec->envp[i] = p->env[i];
	spec->envc = (uint32_t)p->nenv;
	spec->hostname = p->hostname;
	spec->user = p->user;
	spec->home = p->home;
	spec->enforcement = p->enforcement;
	spec->cgroup = p->cgroup;
	spec->seccomp_profile = p->seccomp_profile;
	spec->mounts = p->mounts;
	spec->nmounts = (uint32_t)p->nmounts;
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
		jobspec_release(spec);
		return -ENOMEM;
	}
	n = proto_encode_run(msg, PROTO_MAX_MSG, spec);
	free(msg);
	if (n < 0) {
		jobspec_release(spec);
		return n == -ENOBUFS ? -EMSGSIZE : n;
	}
	return 0;
}

void
jobspec_release(struct job_spec *spec)
{
	free(spec->argv);
	free(spec->envp);
	memset(spec, 0, sizeof(*spec));
}
