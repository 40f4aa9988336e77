/*
 * plant.c: the switch of the planted defects (plant.h). Compiled only
 * into a -Dplanted_defects=true build.
 */
#include "plant.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef STOCKADE_PLANTED_DEFECTS
#error "plant.c belongs to the planted-defects build only"
#endif

static const struct {
	const char *name, *what;
} plants[PLANT_COUNT] = {
#define PLANT_DEFECT(n, w) {#n, w},
#include "plants-jail.def"
#include "plants-seccomp.def"
#include "plants-fs.def"
#include "plants-results.def"
#include "plants-boundary.def"
#undef PLANT_DEFECT
};

static int active = -1;

int
plant_init(void)
{
	const char *v = getenv("STOCKADE_PLANT");

	active = -1;
	if (v == NULL || *v == '\0')
		return 0;
	for (int i = 0; i < PLANT_COUNT; i++)
		if (strcmp(v, plants[i].name) == 0) {
			active = i;
			fprintf(stderr,
			    "stockade: warning: planted defect %s "
			    "is on (a test build; docs/defects.md)\n",
			    v);
			return 0;
		}
	fprintf(stderr,
	    "stockade: STOCKADE_PLANT=%s is not a planted "
	    "defect of this build (stockade --list-plants)\n",
	    v);
	return -EINVAL;
}

bool
plant_active(enum plant_id id)
{
	return active >= 0 && (int)id == active;
}

const char *
plant_name(void)
{
	return active >= 0 ? plants[active].name : NULL;
}

const char *
plant_id_name(int i)
{
	return i >= 0 && i < PLANT_COUNT ? plants[i].name : NULL;
}

const char *
plant_id_what(int i)
{
	return i >= 0 && i < PLANT_COUNT ? plants[i].what : NULL;
}
