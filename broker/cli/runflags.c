/* runflags.c: see runflags.h. */
#include "runflags.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct option runflags_options[RUNFLAGS_N] = {
    {"timeout", required_argument, NULL, RUNFLAG_TIMEOUT},
    {"cpu-time", required_argument, NULL, RUNFLAG_CPU_TIME},
    {"memory", required_argument, NULL, RUNFLAG_MEMORY},
    {"processes", required_argument, NULL, RUNFLAG_PROCESSES},
    {"file-size", required_argument, NULL, RUNFLAG_FILE_SIZE},
    {"tmp-size", required_argument, NULL, RUNFLAG_TMP_SIZE},
    {"output", required_argument, NULL, RUNFLAG_OUTPUT},
    {"format", required_argument, NULL, RUNFLAG_FORMAT},
};

/*
 * Plain decimal seconds ("2", "0.5", "2.007") in (0, 86400] into whole
 * milliseconds, exactly, digits past the third decimal rounding up. No
 * sign, blank, exponent or hexadecimal (strtod would take "0x10" and
 * "1e3"), and no binary floating point, which makes 2.007 s 2008 ms.
 */
static int
parse_seconds(const char *s, uint64_t *ms)
{
	uint64_t whole = 0, frac = 0;
	unsigned places = 0;
	bool digits = false, rest = false;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++, digits = true) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 86400)
			return -EINVAL;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits = true) {
			if (places < 3) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				places++;
			} else if (*p != '0') {
				rest = true;
			}
		}
	}
	if (!digits || *p != '\0')
		return -EINVAL;
	for (; places < 3; places++)
		frac *= 10;
	*ms = whole * 1000 + frac + (rest ? 1 : 0);
	if (*ms == 0 || *ms > 86400000)
		return -EINVAL;
	return 0;
}

/* A plain decimal integer in [MIN, MAX]. */
static int
parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

/* --memory, --file-size or --tmp-size (CODE): ARG in MiB into OV, in
 * bytes. Returns 0, or -EINVAL with the reason in WHY. */
static int
apply_mib(int code, const char *arg, struct jobrun_overrides *ov, char *why,
    size_t whylen)
{
	uint64_t n = 0;
	uint64_t min = code == RUNFLAG_MEMORY ? 16 : 1;
	const char *name = code == RUNFLAG_MEMORY ? "memory"
	    : code == RUNFLAG_FILE_SIZE		  ? "file-size"
						  : "tmp-size";

	if (parse_count(arg, min, 1048576, &n) < 0) {
		snprintf(why, whylen,
		    "--%s: expected MiB between %llu "
		    "and 1048576, got \"%s\"",
		    name, (unsigned long long)min, arg);
		return -EINVAL;
	}
	n <<= 20;
	if (code == RUNFLAG_MEMORY)
		ov->memory_bytes = n;
	else if (code == RUNFLAG_FILE_SIZE)
		ov->fsize_bytes = n;
	else
		ov->tmp_bytes = n;
	return 0;
}

int
runflags_apply(int code, const char *arg, struct jobrun_overrides *ov,
    enum run_format *fmt, char *why, size_t whylen)
{
	uint64_t n = 0;

	switch (code) {
	case RUNFLAG_TIMEOUT:
	case RUNFLAG_CPU_TIME:
		if (parse_seconds(arg, &n) < 0) {
			snprintf(why, whylen,
			    "--%s: expected seconds above 0 "
			    "and at most 86400, got \"%s\"",
			    code == RUNFLAG_TIMEOUT ? "timeout" : "cpu-time",
			    arg);
			return -EINVAL;
		}
		if (code == RUNFLAG_TIMEOUT)
			ov->wall_ms = n;
		else
			ov->cpu_ms = n;
		return 0;
	case RUNFLAG_MEMORY:
	case RUNFLAG_FILE_SIZE:
	case RUNFLAG_TMP_SIZE:
		return apply_mib(code, arg, ov, why, whylen);
	case RUNFLAG_PROCESSES:
		if (parse_count(arg, 2, 65536, &n) < 0) {
			snprintf(why, whylen,
			    "--processes: expected a count "
			    "between 2 and 65536 (the jail's init is one), "
			    "got \"%s\"",
			    arg);
			return -EINVAL;
		}
		ov->nproc = (uint32_t)n;
		return 0;
	case RUNFLAG_OUTPUT:
		if (parse_count(arg, 1, 1048576, &n) < 0) {
			snprintf(why, whylen,
			    "--output: expected KiB between 1 "
			    "and 1048576, got \"%s\"",
			    arg);
			return -EINVAL;
		}
		ov->output_bytes = n << 10;
		return 0;
	case RUNFLAG_FORMAT:
		if (strcmp(arg, "stream") == 0)
			*fmt = RUN_FORMAT_STREAM;
		else if (strcmp(arg, "json") == 0)
			*fmt = RUN_FORMAT_JSON;
		else if (strcmp(arg, "text") == 0)
			*fmt = RUN_FORMAT_TEXT;
		else {
			snprintf(why, whylen,
			    "--format: expected stream, json "
			    "or text, got \"%s\"",
			    arg);
			return -EINVAL;
		}
		return 0;
	default:
		snprintf(why, whylen, "unknown flag");
		return -EINVAL;
	}
}
