/*
 * probe_seccomp.c: stockade-probe's commands for the seccomp checks
 * (broker/check_seccomp.c).
 */
#include "probe.h"

const struct probe_cmd probe_seccomp_cmds[] = {
	{NULL, NULL, NULL},
};
