/*
 * probe_boundary.c: stockade-probe's commands for the boundary checks
 * (broker/check_boundary.c).
 */
#include "probe.h"

const struct probe_cmd probe_boundary_cmds[] = {
	{NULL, NULL, NULL},
};
