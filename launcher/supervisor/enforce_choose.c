/*
 * enforce_choose.c: which enforcement holds a job (enforce_choose,
 * enforce.h): a leaf of the delegated cgroup v2 the launcher looked up
 * (and claimed) once per path, or the /proc monitor.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "enforce.h"
#include "launcher.h"
#include "log.h"
#include "utf8.h"

/*
 * Makes the launcher's own cgroup DIR, a delegated scope, usable for job
 * leaves: our processes move to a leaf of it and the controllers are
 * enabled for its children (cg_claim_own; cgroup-v2.rst, "No Internal
 * Process Constraint"). Sets L->cg_why and returns -errno when it cannot.
 */
static int
claim_own(struct launcher *l, const char *dir)
{
	char why[256];
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), e;

	if (fd < 0) {
		e = -errno;
		snprintf(l->cg_why, sizeof(l->cg_why), "cgroup %.200s: %.250s",
		    dir, strerror(-e));
		return e;
	}
	e = cg_claim_own(fd, getppid(), getpid(), l->zygote.pid, true, why,
	    sizeof(why));
	if (e == -EOPNOTSUPP)
		e = cg_claim_own(fd, getppid(), getpid(), l->zygote.pid, false,
		    why, sizeof(why));
	close(fd);
	if (e < 0)
		snprintf(l->cg_why, sizeof(l->cg_why), "cgroup %.200s: %.250s",
		    dir, why);
	return e;
}

/* Looks up (once per path) the delegated cgroup for SPEC into L. */
static void
lookup_parent(struct launcher *l, const struct job_spec *spec)
{
	char own[PATH_MAX];
	const char *path = spec->cgroup != NULL ? spec->cgroup : "";
	char *slash;
	int e;

	if (l->cg_path != NULL && strcmp(l->cg_path, path) == 0)
		return;
	if (l->cg_parent >= 0)
		close(l->cg_parent);
	l->cg_parent = -1;
	free(l->cg_path);
	l->cg_path = strdup(path);
	l->cg_why[0] = '\0';
	if (path[0] == '\0') {
		if ((e = cg_own_path_self(own, sizeof(own))) < 0) {
			snprintf(l->cg_why, sizeof(l->cg_why),
			    "the launcher is "
			    "in no cgroup v2 (%s): name a delegated one with "
			    "[limits] cgroup",
			    strerror(-e));
			return;
		}
		/* A launcher the broker restarted was born in the leaf its
		 * predecessor moved them to: the scope is the parent. */
		slash = strrchr(own, '/');
		if (slash != NULL && slash != own &&
		    strcmp(slash + 1, CG_SUPERVISOR) == 0)
			*slash = '\0';
		if (claim_own(l, own) < 0)
			return;
		path = own;
	}
	l->cg_parent = cg_open_parent(path, true, l->cg_why, sizeof(l->cg_why));
	if (l->cg_parent < 0) {
		l->cg_parent = -1;
		/* Without cpu it may still serve jobs that need no cpu.max. */
		l->cg_parent = cg_open_parent(path, false, l->cg_why,
		    sizeof(l->cg_why));
		if (l->cg_parent < 0)
			l->cg_parent = -1;
	}
}

int
enforce_choose(struct launcher *l, const struct job_spec *spec,
    const char *name, enum job_enforcement *mode, int *leaf, char *why,
    size_t whylen)
{
	struct cg_limits cl = {
	    .memory_max = spec->limits.memory_bytes,
	    .pids_max = spec->limits.nproc,
	    .cpu_percent = spec->limits.cpu_percent,
	};

	*leaf = -1;
	*mode = ENFORCE_MONITOR;
	if (job_spec_layer_off(spec, JOB_LAYER_LIMITS))
		return 0;
	if (spec->enforcement != ENFORCE_MONITOR) {
		lookup_parent(l, spec);
		if (l->cg_parent >= 0) {
			*leaf = cg_leaf_create(l->cg_parent, name, &cl);
			if (*leaf >= 0) {
				*mode = ENFORCE_CGROUP2;
				return 0;
			}
			snprintf(l->cg_why, sizeof(l->cg_why),
			    "cannot make the "
			    "job's cgroup leaf %s: %s (cpu.max needs the cpu "
			    "controller in cgroup.subtree_control)",
			    name, strerror(-*leaf));
			*leaf = -1;
		}
	}
	if (spec->enforcement == ENFORCE_CGROUP2) {
		fmt_words(why, whylen,
		    "the policy asks for cgroup2 enforcement "
		    "and there is no usable delegated cgroup v2: %s",
		    l->cg_why);
		return -EPERM;
	}
	if (spec->limits.cpu_percent > 0) {
		if (spec->enforcement == ENFORCE_MONITOR)
			fmt_words(why, whylen,
			    "the policy sets cpu_percent = %u, "
			    "which needs cgroup2 enforcement (cpu.max), and "
			    "enforcement = monitor",
			    spec->limits.cpu_percent);
		else
			fmt_words(why, whylen,
			    "the policy sets cpu_percent = %u, "
			    "which needs a delegated cgroup v2 (cpu.max), and "
			    "there is none: %s",
			    spec->limits.cpu_percent, l->cg_why);
		return -EPERM;
	}
	return 0;
}
