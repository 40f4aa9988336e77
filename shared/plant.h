/*
 * plant.h: planted defects (issue 7, docs/defects.md), realistic mistakes
 * compiled into a test build of stockade to measure whether `stockade
 * check` notices them.
 *
 * A build configured with -Dplanted_defects=true (meson refuses it with
 * buildtype=release) defines STOCKADE_PLANTED_DEFECTS; there PLANTED(name)
 * is true when the variable STOCKADE_PLANT names that defect. In every
 * other build PLANTED(name) is the constant false: the defect's code is
 * dead and removed by the compiler, and its name is never made into a
 * string, so the binaries carry no trace of it (tests/test_plant_absent.py
 * checks with strings(1)).
 *
 * The list of defects is the plants-*.def files beside this header, one
 * PLANT_DEFECT(name, "what the mistake is") each, one file per group of
 * checks that should catch them. A name not in the list does not compile.
 */
#ifndef STOCKADE_PLANT_H
#define STOCKADE_PLANT_H

#include <stdbool.h>

#ifdef STOCKADE_PLANTED_DEFECTS

enum plant_id {
#define PLANT_DEFECT(name, what) PLANT_##name,
#include "plants-jail.def"
#include "plants-seccomp.def"
#include "plants-fs.def"
#include "plants-results.def"
#include "plants-boundary.def"
#undef PLANT_DEFECT
	PLANT_COUNT
};

/*
 * Reads STOCKADE_PLANT once (the broker and the launcher call it first
 * thing in main). Unset or empty: no defect. Returns 0, or -EINVAL for a
 * name that is not a planted defect (the caller refuses to run: a typo
 * must not measure a sound build as a defective one). Prints a warning
 * on stderr when a defect is switched on.
 */
int plant_init(void);

/* True when defect ID is the one STOCKADE_PLANT named. */
bool plant_active(enum plant_id id);

/* The active defect's name, or NULL. Borrowed, static. */
const char *plant_name(void);

/* The name and description of defect I (0 <= I < PLANT_COUNT), for
 * `stockade --list-plants`. Static strings. */
const char *plant_id_name(int i);
const char *plant_id_what(int i);

#define PLANTED(name) plant_active(PLANT_##name)

#else

#define PLANTED(name) false

#endif

#endif
