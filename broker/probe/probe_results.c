/*
 * probe_results.c: stockade-probe's commands for the results checks
 * (broker/check_results.c).
 */
#include "probe.h"

const struct probe_cmd probe_results_cmds[] = {
	{NULL, NULL, NULL},
};
