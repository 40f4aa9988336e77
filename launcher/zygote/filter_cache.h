/*
 * filter_cache.h: the zygote's seccomp filters, one per (profile,
 * enforcement) a session asks for (filter_cache.c). Not for other
 * callers than zygote.c.
 */
#ifndef STOCKADE_FILTER_CACHE_H
#define STOCKADE_FILTER_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "jail.h"

/* The most filters one session may ask for. */
#define MAX_FILTERS 4

/* The zygote's seccomp filters, built and compiled to BPF at the first
 * job that needs each (profile, enforcement), and reused: a payload loads
 * the program with one seccomp(2) call (jail_seccomp_load). */
struct filter_cache {
	struct {
		char profile[JOB_MAX_PROFILE + 1];
		bool monitor;
		bool kill;
		struct sock_fprog prog;
	} f[MAX_FILTERS];
	size_t n;
};

/*
 * The compiled filter of PROFILE for MONITOR (the monitor's enforcement:
 * jail_seccomp_build) from C, built at the first job that needs it: the
 * prebuilt BPF when stockade has it (jail_seccomp_prebuilt), else built
 * with libseccomp and compiled. *KILL gets the profile's denied = kill.
 * The program stays C's for the zygote's life. Returns it, or NULL with
 * WHY (WHYLEN bytes) saying why (too many profiles, unknown profile,
 * out of memory, a compile failure).
 */
const struct sock_fprog *cached_filter(struct filter_cache *c,
    const char *profile, bool monitor, bool *kill, char *why, size_t whylen);

#endif
