/*
 * check_fs_put.c: checks of `stockade check` (check.h).
 */
#include "check.h"

const struct check checks_fs_put[] = {
	{NULL, NULL, NULL, NULL},
};
