/*
 * policy_check.c: what `stockade policy check` asks of a loaded policy
 * beyond the language (policy.h): that the job has a program to run, and
 * that every ro_bind source is on this host. Messages are "NAME:LINE:
 * what", at the line of the policy that made it so.
 */
#include "policy.h"
#include "policy_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Writes "NAME:LINE: " for origin O of P, then FMT, into ERR. */
__attribute__((format(printf, 5, 6))) static void
say(const struct policy *p, const struct policy_origin *o, char *err,
    size_t errlen, const char *fmt, ...)
{
	const char *name = o != NULL && o->in_file && p->name != NULL
	    ? p->name
	    : DEFAULT_NAME;
	va_list ap;
	int n;

	if (err == NULL || errlen == 0)
		return;
	n = snprintf(err, errlen, "%s:%u: ", name, o != NULL ? o->line : 0);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/* Where P's [policy] replace was given. */
static const struct policy_origin *
replace_origin(const struct policy *p)
{
	for (size_t i = 0; i < NSCALARS; i++)
		if (policy_scalar_keys[i].kind == K_LISTS)
			return &p->scalar_from[i];
	return NULL;
}

/* Whether the directory DIR (LEN bytes, absolute) is at or below one of
 * P's bind targets. */
static bool
bound(const struct policy *p, const char *dir, size_t len)
{
	while (len > 1 && dir[len - 1] == '/')
		len--;
	for (size_t i = 0; i < p->nmounts; i++) {
		const char *t = p->mounts[i].target;
		size_t tlen = strlen(t);

		if (len >= tlen && strncmp(dir, t, tlen) == 0 &&
		    (len == tlen || dir[tlen] == '/'))
			return true;
	}
	return false;
}

int
policy_check_programs(const struct policy *p, char *err, size_t errlen)
{
	const struct policy_origin *from = NULL, *o;
	const char *path = NULL, *s;

	if (p->no_programs)
		return 0;
	for (size_t i = 0; i < p->nenv; i++)
		if (strncmp(p->env[i], "PATH=", 5) == 0) {
			path = p->env[i] + 5;
			from = p->env_from != NULL ? &p->env_from[i] : NULL;
		}
	if (path == NULL || *path == '\0') {
		/* The file's PATH, or its replace that left the default's
		 * out. */
		o = path != NULL ? from : replace_origin(p);
		say(p, o, err, errlen,
		    "the job has no program to run: [environment] has %s "
		    "PATH; give one, or set [policy] no_programs = true if "
		    "that is meant",
		    path == NULL ? "no" : "an empty");
		return -EINVAL;
	}
	for (s = path; *s != '\0';) {
		size_t n = strcspn(s, ":");

		if (n > 0 && s[0] == '/' && bound(p, s, n))
			return 0;
		s += n;
		if (*s == ':')
			s++;
	}
	/* The file's PATH if it gave one, else its replace of the binds. */
	o = from != NULL && from->in_file	    ? from
	    : (p->replace & POLICY_LIST_FILESYSTEM) ? replace_origin(p)
						    : from;
	say(p, o, err, errlen,
	    "the job has no program to run: no directory of PATH (%.200s) is "
	    "at or below a bind of [filesystem]; bind one (ro_bind = /usr), "
	    "or set [policy] no_programs = true if that is meant",
	    path);
	return -EINVAL;
}

int
policy_check_source(const struct policy *p, size_t i, char *err, size_t errlen)
{
	const struct mount_entry *m = &p->mounts[i];
	const struct policy_origin *o = p->mounts_from != NULL
	    ? &p->mounts_from[i]
	    : NULL;
	const char *key = m->kind == MOUNT_RO_BIND_TRY ? "ro_bind_try"
	    : m->kind == MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK
	    ? "unsafe_ro_bind_no_landlock"
	    : "ro_bind";
	struct stat st;
	int e;

	/* As the launcher opens it: O_PATH | O_NOFOLLOW (mounts.c). */
	if (lstat(m->source, &st) == 0)
		return 0;
	e = errno;
	if (e == ENOENT || e == ENOTDIR) {
		if (m->kind == MOUNT_RO_BIND_TRY)
			return 0;
		say(p, o, err, errlen,
		    "%s %s: the host has no such path (a job would end as "
		    "sandbox_error; ro_bind_try binds a path only where the "
		    "host has it)",
		    key, m->source);
	} else {
		say(p, o, err, errlen, "%s %s: %s", key, m->source,
		    strerror(e));
	}
	return -e;
}
