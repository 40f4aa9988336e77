/*
 * filter_cache.c: the zygote's seccomp filters (filter_cache.h), built
 * once per session and profile, loaded by each payload with one
 * seccomp(2) call.
 */
#include "filter_cache.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const struct sock_fprog *
cached_filter(struct filter_cache *c, const char *profile, bool monitor,
    bool *kill, char *why, size_t whylen)
{
	scmp_filter_ctx ctx;
	int e;

	for (size_t i = 0; i < c->n; i++)
		if (c->f[i].monitor == monitor &&
		    strcmp(c->f[i].profile, profile) == 0) {
			*kill = c->f[i].kill;
			return &c->f[i].prog;
		}
	if (c->n == MAX_FILTERS) {
		snprintf(why, whylen,
		    "too many seccomp profiles in one session");
		return NULL;
	}
	/* Compiled when stockade was built, as below
	 * (launcher/zygote/bpfgen.c). */
	if ((e = jail_seccomp_prebuilt(profile, monitor, &c->f[c->n].prog,
		 &c->f[c->n].kill)) == 0)
		goto cached;
	if (e != -ENOENT) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	ctx = jail_seccomp_build(profile, monitor, &c->f[c->n].kill, why,
	    whylen);
	if (ctx == NULL)
		return NULL;
	e = jail_seccomp_compile(ctx, &c->f[c->n].prog);
	seccomp_release(ctx);
	if (e < 0) {
		snprintf(why, whylen, "cannot compile the seccomp filter: %s",
		    strerror(-e));
		return NULL;
	}
cached:
	snprintf(c->f[c->n].profile, sizeof(c->f[c->n].profile), "%s", profile);
	c->f[c->n].monitor = monitor;
	*kill = c->f[c->n].kill;
	return &c->f[c->n++].prog;
}
