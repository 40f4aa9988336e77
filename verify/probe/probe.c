/*
 * probe.c: stockade-probe's main (probe.h): `stockade-probe COMMAND
 * [ARGS...]`, or `stockade-probe --list`. What the commands print with
 * is in probe_out.c.
 */
#include <stdio.h>
#include <string.h>

#include "probe.h"

static const struct probe_cmd *const groups[] = {
    probe_jail_cmds,
    probe_process_cmds,
    probe_seccomp_cmds,
    probe_syscalls_cmds,
    probe_results_cmds,
    probe_boundary_cmds,
    probe_egress_cmds,
};

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
			for (const struct probe_cmd *p = groups[g];
			     p->name != NULL; p++)
				printf("%-24s %s\n", p->name, p->usage);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr,
		    "usage: stockade-probe COMMAND [ARGS...] | "
		    "--list\n");
		return 2;
	}
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (const struct probe_cmd *p = groups[g]; p->name != NULL;
		     p++)
			if (strcmp(p->name, argv[1]) == 0)
				return p->fn(argc - 1, argv + 1);
	fprintf(stderr, "stockade-probe: unknown command %s\n", argv[1]);
	return 2;
}
