/*
 * check_results.c: the results checks of `stockade check` (check.h).
 */
#include "check.h"

const struct check checks_results[] = {
	{NULL, NULL, NULL, NULL},
};
