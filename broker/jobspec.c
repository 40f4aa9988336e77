/* jobspec.c: see jobspec.h. */
#include "jobspec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int
jobspec_from_policy(struct job_spec *spec, const struct policy *p, int argc,
		    char **argv)
{
	memset(spec, 0, sizeof(*spec));
	if (argc < 1)
		return -EINVAL;
	if ((unsigned)argc > JOB_MAX_ARGS || p->nenv > JOB_MAX_ENV ||
	    p->nmounts > JOB_MAX_MOUNTS)
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
	spec->mounts = p->mounts;
	spec->nmounts = (uint32_t)p->nmounts;
	spec->uid = p->uid;
	spec->gid = p->gid;
	spec->limits = p->limits;
	if (p->unsafe_no_seccomp)
		spec->flags |= JOB_F_UNSAFE_NO_SECCOMP;
	if (p->pty)
		spec->flags |= JOB_F_DEVPTS;
	return 0;
}

void
jobspec_release(struct job_spec *spec)
{
	free(spec->argv);
	free(spec->envp);
	memset(spec, 0, sizeof(*spec));
}
