/*
 * runflags.h: the limit flags of `stockade run` (README.md, "Limits") and
 * its --format. Pure parsing; no I/O.
 */
#ifndef STOCKADE_RUNFLAGS_H
#define STOCKADE_RUNFLAGS_H

#include <getopt.h>
#include <stdbool.h>

#include "jobrun.h"

/* How `stockade run` reports a job. */
enum run_format {
	RUN_FORMAT_STREAM =
	    0, /* output passed through live, summary on stderr */
	RUN_FORMAT_JSON, /* one JSON result line on stdout (README.md) */
	RUN_FORMAT_TEXT, /* the compact text form on stdout (docs/tool.md) */
};

/* getopt_long codes of the limit flags; cmd_run's own use letters. */
enum {
	RUNFLAG_TIMEOUT = 1000,
	RUNFLAG_CPU_TIME,
	RUNFLAG_MEMORY,
	RUNFLAG_PROCESSES,
	RUNFLAG_FILE_SIZE,
	RUNFLAG_TMP_SIZE,
	RUNFLAG_OUTPUT,
	RUNFLAG_FORMAT,
};

/* The option table entries of the flags above: exactly RUNFLAGS_N, with
 * no terminating entry; cmd_run appends its own, zero-ended, table. */
#define RUNFLAGS_N 8
extern const struct option runflags_options[RUNFLAGS_N];

/*
 * Applies the flag CODE (a RUNFLAG_*) with ARG to OV or *FMT:
 *   --timeout SECONDS, --cpu-time SECONDS: plain decimal seconds above 0
 *     and at most 86400 ("2", "0.25"), exact to the millisecond, digits
 *     past the third decimal rounding up;
 *   --memory MIB, --file-size MIB, --tmp-size MIB: whole MiB (memory at
 *     least 16, the others at least 1; at most 1048576);
 *   --processes N: 2 to 65536 (the jail's init is one of them);
 *   --output KIB: the cap of stdout and of stderr, 1 to 1048576 KiB;
 *   --format stream|json|text.
 * The ranges are the policy's ([limits], policy/default.ini). Returns 0,
 * or -EINVAL with one sentence for the user in WHY (WHYLEN bytes).
 */
int runflags_apply(int code, const char *arg, struct jobrun_overrides *ov,
    enum run_format *fmt, char *why, size_t whylen);

#endif
