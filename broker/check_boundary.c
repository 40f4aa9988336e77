/*
 * check_boundary.c: the boundary checks of `stockade check` (check.h).
 */
#include "check.h"

const struct check checks_boundary[] = {
	{NULL, NULL, NULL, NULL},
};
