/*
 * seccomp_prebuilt.c: jail_seccomp_prebuilt (jail.h), the lookup in the
 * table of filters compiled at build time (jail_bpf.h). Apart from
 * seccomp.c because the program that writes the table (bpfgen.c) links
 * seccomp.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jail.h"
#include "jail_bpf.h"

int
jail_seccomp_prebuilt(const char *profile, bool monitor,
    struct sock_fprog *prog, bool *kill)
{
	for (size_t i = 0; i < jail_bpf_count; i++) {
		const struct jail_bpf *b = &jail_bpf_table[i];

		if (b->monitor != monitor || strcmp(b->profile, profile) != 0)
			continue;
		prog->filter = malloc(b->len * sizeof(*b->filter));
		if (prog->filter == NULL)
			return -ENOMEM;
		memcpy(prog->filter, b->filter, b->len * sizeof(*b->filter));
		prog->len = b->len;
		*kill = b->kill;
		return 0;
	}
	return -ENOENT;
}
