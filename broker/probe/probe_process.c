/*
 * probe_process.c: stockade-probe's commands (probe.h).
 */
#include "probe.h"

const struct probe_cmd probe_process_cmds[] = {
	{NULL, NULL, NULL},
};
