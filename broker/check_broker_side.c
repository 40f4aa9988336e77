/*
 * check_broker_side.c: checks of `stockade check` (check.h).
 */
#include "check.h"

const struct check checks_broker_side[] = {
	{NULL, NULL, NULL, NULL},
};
