/*
 * check_fs_tree.c: checks of `stockade check` (check.h).
 */
#include "check.h"

const struct check checks_fs_tree[] = {
	{NULL, NULL, NULL, NULL},
};
