/*
 * probe_syscalls.c: stockade-probe's commands (probe.h).
 */
#include "probe.h"

const struct probe_cmd probe_syscalls_cmds[] = {
	{NULL, NULL, NULL},
};
