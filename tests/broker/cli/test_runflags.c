/*
 * test_runflags.c: the limit flags and --format of `stockade run`
 * (broker/cli/runflags.c; /tmp/s/issue4.md, "Limits"): every flag's accepted
 * values at both ends of its range, and its refusals: below and above
 * the range, junk, signs, fractions where only whole numbers are meant,
 * and what strtod/strtoull would take but a person does not write. A
 * refusal changes nothing and says which flag and which value. --output
 * sets both stream caps, as far as the job's limits (jobrun_init).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobrun.h"
#include "policy.h"
#include "runflags.h"

#define MIB (UINT64_C(1024) * 1024)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
/* A string literal as the char * of an argv (getopt_long does not write
 * to it). */
#define S(x) ((char *)(uintptr_t)(x))

/* An override set no flag wrote: every field a value no flag gives. */
static void
poison(struct jobrun_overrides *ov, enum run_format *fmt)
{
	memset(ov, 0, sizeof(*ov));
	ov->wall_ms = 11;
	ov->cpu_ms = 12;
	ov->memory_bytes = 13;
	ov->fsize_bytes = 14;
	ov->tmp_bytes = 15;
	ov->output_bytes = 16;
	ov->nproc = 17;
	*fmt = (enum run_format)99;
}

/* Applies CODE ARG to a poisoned override set; returns the verdict and
 * the set, with WHY. */
static int
apply(int code, const char *arg, struct jobrun_overrides *ov,
    enum run_format *fmt, char *why, size_t whylen)
{
	poison(ov, fmt);
	memset(why, 0, whylen);
	return runflags_apply(code, arg, ov, fmt, why, whylen);
}

/* The field CODE writes, after apply(). */
static uint64_t
field(int code, const struct jobrun_overrides *ov)
{
	switch (code) {
	case RUNFLAG_TIMEOUT:
		return ov->wall_ms;
	case RUNFLAG_CPU_TIME:
		return ov->cpu_ms;
	case RUNFLAG_MEMORY:
		return ov->memory_bytes;
	case RUNFLAG_FILE_SIZE:
		return ov->fsize_bytes;
	case RUNFLAG_TMP_SIZE:
		return ov->tmp_bytes;
	case RUNFLAG_OUTPUT:
		return ov->output_bytes;
	case RUNFLAG_PROCESSES:
		return ov->nproc;
	default:
		cr_assert_fail("no field for code %d", code);
	}
	return 0;
}

/* Every field but CODE's still holds its poison. */
static void
others_untouched(int code, const struct jobrun_overrides *ov,
    enum run_format fmt, const char *what)
{
	struct jobrun_overrides p;
	enum run_format pf;

	poison(&p, &pf);
	if (code != RUNFLAG_TIMEOUT)
		cr_assert_eq(ov->wall_ms, p.wall_ms, "%s: wall_ms", what);
	if (code != RUNFLAG_CPU_TIME)
		cr_assert_eq(ov->cpu_ms, p.cpu_ms, "%s: cpu_ms", what);
	if (code != RUNFLAG_MEMORY)
		cr_assert_eq(ov->memory_bytes, p.memory_bytes, "%s: memory",
		    what);
	if (code != RUNFLAG_FILE_SIZE)
		cr_assert_eq(ov->fsize_bytes, p.fsize_bytes, "%s: fsize", what);
	if (code != RUNFLAG_TMP_SIZE)
		cr_assert_eq(ov->tmp_bytes, p.tmp_bytes, "%s: tmp", what);
	if (code != RUNFLAG_OUTPUT)
		cr_assert_eq(ov->output_bytes, p.output_bytes, "%s: output",
		    what);
	if (code != RUNFLAG_PROCESSES)
		cr_assert_eq(ov->nproc, p.nproc, "%s: nproc", what);
	if (code != RUNFLAG_FORMAT)
		cr_assert_eq(fmt, pf, "%s: format", what);
}

static const char *
flag_name(int code)
{
	switch (code) {
	case RUNFLAG_TIMEOUT:
		return "--timeout";
	case RUNFLAG_CPU_TIME:
		return "--cpu-time";
	case RUNFLAG_MEMORY:
		return "--memory";
	case RUNFLAG_FILE_SIZE:
		return "--file-size";
	case RUNFLAG_TMP_SIZE:
		return "--tmp-size";
	case RUNFLAG_OUTPUT:
		return "--output";
	case RUNFLAG_PROCESSES:
		return "--processes";
	case RUNFLAG_FORMAT:
		return "--format";
	default:
		return "?";
	}
}

/* CODE ARG is accepted and writes WANT to its field, nothing else. */
static void
accepts(int code, const char *arg, uint64_t want)
{
	struct jobrun_overrides ov;
	enum run_format fmt;
	char why[256], what[128];
	int e = apply(code, arg, &ov, &fmt, why, sizeof(why));

	snprintf(what, sizeof(what), "%s \"%s\"", flag_name(code), arg);
	cr_assert_eq(e, 0, "%s refused: %s", what, why);
	cr_assert_eq(field(code, &ov), want, "%s gave %llu, want %llu", what,
	    (unsigned long long)field(code, &ov), (unsigned long long)want);
	others_untouched(code, &ov, fmt, what);
}

/* CODE ARG is refused with -EINVAL, nothing written, and one sentence
 * that names the flag and quotes the value. */
static void
refuses(int code, const char *arg)
{
	struct jobrun_overrides ov;
	enum run_format fmt;
	char why[256], what[128], quoted[128];
	int e = apply(code, arg, &ov, &fmt, why, sizeof(why));

	snprintf(what, sizeof(what), "%s \"%s\"", flag_name(code), arg);
	cr_assert_eq(e, -EINVAL, "%s: %d, want -EINVAL", what, e);
	others_untouched(-1, &ov, fmt, what);
	cr_assert_not_null(strstr(why, flag_name(code)), "%s: why \"%s\"", what,
	    why);
	snprintf(quoted, sizeof(quoted), "\"%s\"", arg);
	cr_assert_not_null(strstr(why, quoted), "%s: why \"%s\"", what, why);
	if (strchr(arg, '\n') == NULL)
		cr_assert_null(strchr(why, '\n'), "%s: why \"%s\"", what, why);
}

/* Junk no numeric flag takes. */
static const char *const junk[] = {
    "",
    " ",
    "abc",
    "1x",
    "x1",
    "1 2",
    "--",
    "-",
    "+",
    ".",
    "1,5",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "infinity",
    "1e",
    "e3",
    "0x",
};

static const int count_flags[] = {
    RUNFLAG_MEMORY,
    RUNFLAG_FILE_SIZE,
    RUNFLAG_TMP_SIZE,
    RUNFLAG_PROCESSES,
    RUNFLAG_OUTPUT,
};

/* ---- the option table ---- */

Test(runflags, option_table)
{
	static const struct {
		const char *name;
		int code;
	} want[] = {
	    {"timeout", RUNFLAG_TIMEOUT},
	    {"cpu-time", RUNFLAG_CPU_TIME},
	    {"memory", RUNFLAG_MEMORY},
	    {"processes", RUNFLAG_PROCESSES},
	    {"file-size", RUNFLAG_FILE_SIZE},
	    {"tmp-size", RUNFLAG_TMP_SIZE},
	    {"output", RUNFLAG_OUTPUT},
	    {"format", RUNFLAG_FORMAT},
	};

	cr_assert_eq(RUNFLAGS_N, NELEM(want));
	for (size_t i = 0; i < NELEM(want); i++) {
		bool found = false;

		for (size_t j = 0; j < RUNFLAGS_N; j++) {
			const struct option *o = &runflags_options[j];

			if (o->name == NULL ||
			    strcmp(o->name, want[i].name) != 0)
				continue;
			cr_assert(!found, "--%s twice", want[i].name);
			found = true;
			cr_assert_eq(o->val, want[i].code, "--%s", o->name);
			cr_assert_eq(o->has_arg, required_argument, "--%s",
			    o->name);
			cr_assert_null(o->flag, "--%s", o->name);
		}
		cr_assert(found, "--%s missing", want[i].name);
	}
	/* Codes out of the letters' way, and distinct. */
	cr_assert_gt(RUNFLAG_TIMEOUT, 255);
}

/* The table as cmd_run uses it: copied before its own, zero-ended. */
Test(runflags, through_getopt_long)
{
	char *argv[] = {
	    S("run"),
	    S("--timeout"),
	    S("1.5"),
	    S("--memory=256"),
	    S("--processes"),
	    S("8"),
	    S("--cpu-time=2"),
	    S("--file-size"),
	    S("3"),
	    S("--tmp-size=4"),
	    S("--output"),
	    S("5"),
	    S("--format=text"),
	    S("--"),
	    S("prog"),
	    S("--timeout"),
	    S("x"),
	    NULL,
	};
	struct option opts[RUNFLAGS_N + 1];
	struct jobrun_overrides ov;
	enum run_format fmt = RUN_FORMAT_STREAM;
	char why[256];
	int c, argc = (int)NELEM(argv) - 1;

	memcpy(opts, runflags_options, sizeof(runflags_options));
	memset(&opts[RUNFLAGS_N], 0, sizeof(opts[RUNFLAGS_N]));
	memset(&ov, 0, sizeof(ov));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		cr_assert(c >= RUNFLAG_TIMEOUT && c <= RUNFLAG_FORMAT,
		    "getopt_long gave %d", c);
		cr_assert_eq(runflags_apply(c, optarg, &ov, &fmt, why,
				 sizeof(why)),
		    0, "%s", why);
	}
	cr_assert_str_eq(argv[optind], "prog");
	cr_assert_eq(ov.wall_ms, 1500);
	cr_assert_eq(ov.cpu_ms, 2000);
	cr_assert_eq(ov.memory_bytes, 256 * MIB);
	cr_assert_eq(ov.nproc, 8);
	cr_assert_eq(ov.fsize_bytes, 3 * MIB);
	cr_assert_eq(ov.tmp_bytes, 4 * MIB);
	cr_assert_eq(ov.output_bytes, 5 * 1024);
	cr_assert_eq(fmt, RUN_FORMAT_TEXT);
}

/* ---- --timeout and --cpu-time: decimal seconds in (0, 86400] ---- */

static const int second_flags[] = {RUNFLAG_TIMEOUT, RUNFLAG_CPU_TIME};

Test(runflags, seconds_accepted)
{
	for (size_t f = 0; f < NELEM(second_flags); f++) {
		int c = second_flags[f];

		accepts(c, "1", 1000);
		accepts(c, "30", 30000);
		accepts(c, "86400", UINT64_C(86400000));
		accepts(c, "86400.0", UINT64_C(86400000));
		accepts(c, "1.5", 1500);
		accepts(c, "0.25", 250);
		accepts(c, ".5", 500);
		accepts(c, "0.001", 1);
		accepts(c, "2.5", 2500);
		accepts(c, "10.125", 10125);
		/* Below a millisecond: rounded up, never to 0. */
		accepts(c, "0.0001", 1);
		accepts(c, "0.0004", 1);
		accepts(c, "1.0001", 1001);
		accepts(c, "0.000000001", 1);
	}
}

Test(runflags, seconds_refused)
{
	static const char *const bad[] = {
	    "0",
	    "0.0",
	    "-0",
	    "-1",
	    "-0.5",
	    "86400.001",
	    "86401",
	    "100000",
	    "1e9",
	    "1e400",
	    "99999999999999999999999",
	    "1s",
	    "1.5s",
	    "1ms",
	    "5m",
	    "1..5",
	    "1.5.",
	    "--1",
	};

	for (size_t f = 0; f < NELEM(second_flags); f++) {
		for (size_t i = 0; i < NELEM(bad); i++)
			refuses(second_flags[f], bad[i]);
		for (size_t i = 0; i < NELEM(junk); i++)
			refuses(second_flags[f], junk[i]);
	}
}

/*
 * Every millisecond written with three decimals is exactly that many
 * milliseconds: the parser reads the decimal digits itself, where
 * ceil(strtod(s) * 1000.0) made 731 of these 120000 one millisecond too
 * long ("2.007" gave 2008 ms: the binary product lands above 2007).
 */
Test(runflags, seconds_with_milliseconds_are_exact)
{
	char arg[32];

	for (uint64_t ms = 1; ms <= 120000; ms++) {
		snprintf(arg, sizeof(arg), "%llu.%03llu",
		    (unsigned long long)(ms / 1000),
		    (unsigned long long)(ms % 1000));
		accepts(RUNFLAG_TIMEOUT, arg, ms);
		accepts(RUNFLAG_CPU_TIME, arg, ms);
	}
}

/*
 * "Plain decimal seconds" (runflags.h): nothing of what strtod takes
 * beyond that (hexadecimal 0x10 as 16 s, 0x1p3 as 8 s, leading blanks and
 * '+', exponents as in 1e3 = 1000 s), as the count flags refuse them.
 */
Test(runflags, seconds_only_plain_decimal)
{
	static const char *const bad[] = {
	    "0x10",
	    "0x1p3",
	    "0X1A",
	    " 5",
	    "\t5",
	    "+5",
	    "1e3",
	    "1E2",
	    "5e-1",
	};

	for (size_t f = 0; f < NELEM(second_flags); f++)
		for (size_t i = 0; i < NELEM(bad); i++)
			refuses(second_flags[f], bad[i]);
}

/* ---- the whole-number flags ---- */

Test(runflags, memory)
{
	accepts(RUNFLAG_MEMORY, "16", 16 * MIB);
	accepts(RUNFLAG_MEMORY, "256", 256 * MIB);
	accepts(RUNFLAG_MEMORY, "1048576", 1048576 * MIB); /* 1 TiB */
	accepts(RUNFLAG_MEMORY, "0016", 16 * MIB); /* decimal, not octal */
	refuses(RUNFLAG_MEMORY, "15");
	refuses(RUNFLAG_MEMORY, "1");
	refuses(RUNFLAG_MEMORY, "0");
	refuses(RUNFLAG_MEMORY, "1048577");
}

Test(runflags, file_size_and_tmp_size)
{
	static const int flags[] = {RUNFLAG_FILE_SIZE, RUNFLAG_TMP_SIZE};

	for (size_t f = 0; f < NELEM(flags); f++) {
		accepts(flags[f], "1", MIB);
		accepts(flags[f], "64", 64 * MIB);
		accepts(flags[f], "1048576", 1048576 * MIB);
		refuses(flags[f], "0");
		refuses(flags[f], "1048577");
	}
}

/* Tasks of the jail, its init included: 2 is the least that runs a
 * program. */
Test(runflags, processes)
{
	accepts(RUNFLAG_PROCESSES, "2", 2);
	accepts(RUNFLAG_PROCESSES, "64", 64);
	accepts(RUNFLAG_PROCESSES, "65536", 65536);
	refuses(RUNFLAG_PROCESSES, "1");
	refuses(RUNFLAG_PROCESSES, "0");
	refuses(RUNFLAG_PROCESSES, "65537");
	refuses(RUNFLAG_PROCESSES, "4294967298"); /* 2 past UINT32_MAX */
}

Test(runflags, output)
{
	accepts(RUNFLAG_OUTPUT, "1", 1024);
	accepts(RUNFLAG_OUTPUT, "1024", 1024 * 1024);
	accepts(RUNFLAG_OUTPUT, "1048576", UINT64_C(1) << 30);
	refuses(RUNFLAG_OUTPUT, "0");
	refuses(RUNFLAG_OUTPUT, "1048577");
}

/* Fractions are for seconds only; no sign, blank, base prefix, exponent,
 * unit or overflow gets past a count. */
Test(runflags, counts_refused)
{
	static const char *const bad[] = {
	    "-1",
	    "-16",
	    "+16",
	    " 16",
	    "16 ",
	    "16\n",
	    "1.5",
	    "16.0",
	    "16.",
	    "0.5",
	    "1e3",
	    "1E3",
	    "0x10",
	    "0X10",
	    "0b10",
	    "16M",
	    "16MiB",
	    "16k",
	    "18446744073709551615",
	    "18446744073709551616",
	    "99999999999999999999999999",
	    "-18446744073709551615",
	};

	for (size_t f = 0; f < NELEM(count_flags); f++) {
		for (size_t i = 0; i < NELEM(bad); i++)
			refuses(count_flags[f], bad[i]);
		for (size_t i = 0; i < NELEM(junk); i++)
			refuses(count_flags[f], junk[i]);
	}
}

/* ---- --format ---- */

Test(runflags, format)
{
	static const struct {
		const char *arg;
		enum run_format fmt;
	} good[] = {
	    {"stream", RUN_FORMAT_STREAM},
	    {"json", RUN_FORMAT_JSON},
	    {"text", RUN_FORMAT_TEXT},
	};
	static const char *const bad[] = {
	    "",
	    "JSON",
	    "Text",
	    "txt",
	    "jsonl",
	    "json ",
	    " json",
	    "stream\n",
	    "xml",
	    "compact",
	    "j",
	    "1",
	};
	struct jobrun_overrides ov, p;
	enum run_format fmt, pf;
	char why[256];

	cr_assert_eq(RUN_FORMAT_STREAM, 0, "the default is 0");
	poison(&p, &pf);
	for (size_t i = 0; i < NELEM(good); i++) {
		cr_assert_eq(apply(RUNFLAG_FORMAT, good[i].arg, &ov, &fmt, why,
				 sizeof(why)),
		    0, "%s: %s", good[i].arg, why);
		cr_assert_eq(fmt, good[i].fmt, "%s", good[i].arg);
		cr_assert_eq(memcmp(&ov, &p, sizeof(ov)), 0,
		    "--format touched a limit");
	}
	for (size_t i = 0; i < NELEM(bad); i++)
		refuses(RUNFLAG_FORMAT, bad[i]);
}

Test(runflags, unknown_code)
{
	struct jobrun_overrides ov;
	enum run_format fmt;
	char why[256];

	cr_assert_eq(apply(0, "1", &ov, &fmt, why, sizeof(why)), -EINVAL);
	others_untouched(-1, &ov, fmt, "code 0");
	cr_assert_eq(apply(RUNFLAG_FORMAT + 1, "1", &ov, &fmt, why,
			 sizeof(why)),
	    -EINVAL);
	others_untouched(-1, &ov, fmt, "code past the last");
	cr_assert_neq(why[0], '\0');
}

/* A short WHY is cut, terminated, and not overrun. */
Test(runflags, short_why)
{
	struct jobrun_overrides ov;
	enum run_format fmt;
	char why[16];

	memset(why, 'X', sizeof(why));
	poison(&ov, &fmt);
	cr_assert_eq(runflags_apply(RUNFLAG_MEMORY, "lots", &ov, &fmt, why, 8),
	    -EINVAL);
	cr_assert_eq(strlen(why), 7);
	cr_assert_eq(why[8], 'X', "wrote past WHYLEN");
}

/* ---- the flags in a job's limits (jobrun_init) ---- */

/* A and B field by field (the struct has padding). */
static void
limits_eq(const struct job_limits *a, const struct job_limits *b,
    const char *what)
{
	cr_assert_eq(a->wall_ms, b->wall_ms, "%s: wall_ms", what);
	cr_assert_eq(a->cpu_ms, b->cpu_ms, "%s: cpu_ms", what);
	cr_assert_eq(a->memory_bytes, b->memory_bytes, "%s: memory", what);
	cr_assert_eq(a->tmp_bytes, b->tmp_bytes, "%s: tmp", what);
	cr_assert_eq(a->home_bytes, b->home_bytes, "%s: home", what);
	cr_assert_eq(a->fsize_bytes, b->fsize_bytes, "%s: fsize", what);
	cr_assert_eq(a->stdout_bytes, b->stdout_bytes, "%s: stdout", what);
	cr_assert_eq(a->stderr_bytes, b->stderr_bytes, "%s: stderr", what);
	cr_assert_eq(a->nofile, b->nofile, "%s: nofile", what);
	cr_assert_eq(a->nproc, b->nproc, "%s: nproc", what);
	cr_assert_eq(a->cpu_percent, b->cpu_percent, "%s: cpu_percent", what);
	cr_assert_eq(a->workspace_bytes, b->workspace_bytes, "%s: workspace",
	    what);
}

/*
 * --output sets the cap of stdout and of stderr; every other flag sets
 * its own limit; what no flag gave stays the policy's. The job spec the
 * launcher receives carries the same limits, and the captures keep that
 * many bytes.
 */
Test(runflags, flags_reach_the_job_limits)
{
	static const struct {
		int code;
		const char *arg;
	} flags[] = {
	    {RUNFLAG_OUTPUT, "3"},
	    {RUNFLAG_TIMEOUT, "2.5"},
	    {RUNFLAG_CPU_TIME, "7"},
	    {RUNFLAG_MEMORY, "100"},
	    {RUNFLAG_PROCESSES, "9"},
	    {RUNFLAG_FILE_SIZE, "5"},
	    {RUNFLAG_TMP_SIZE, "6"},
	};
	char *argv[] = {S("prog"), NULL};
	struct jobrun_overrides ov;
	enum run_format fmt = RUN_FORMAT_STREAM;
	struct policy pol;
	struct jobrun jr;
	char err[POLICY_ERR_MAX];
	struct job_limits want;

	memset(&pol, 0, sizeof(pol));
	cr_assert_eq(policy_load_default(&pol, err, sizeof(err)), 0, "%s", err);
	/* Distinct caps in the policy, so that "both" is visible. */
	pol.limits.stdout_bytes = 1024 * 1024;
	pol.limits.stderr_bytes = 2048 * 1024;

	/* No flag: the policy's limits, untouched. */
	memset(&ov, 0, sizeof(ov));
	cr_assert_eq(jobrun_init(&jr, &pol, 1, argv, &ov), 0);
	limits_eq(&jr.limits, &pol.limits, "no flag");
	jobrun_free(&jr);

	/* --output alone: both caps, nothing else. */
	cr_assert_eq(runflags_apply(RUNFLAG_OUTPUT, "3", &ov, &fmt, err,
			 sizeof(err)),
	    0, "%s", err);
	cr_assert_eq(jobrun_init(&jr, &pol, 1, argv, &ov), 0);
	want = pol.limits;
	want.stdout_bytes = want.stderr_bytes = 3 * 1024;
	limits_eq(&jr.limits, &want, "--output");
	limits_eq(&jr.spec.limits, &want, "--output, spec");
	cr_assert_eq(jr.cap[1].half + jr.cap[1].tail_cap, 3 * 1024);
	cr_assert_eq(jr.cap[2].half + jr.cap[2].tail_cap, 3 * 1024);
	jobrun_free(&jr);

	/* Every flag at once. */
	memset(&ov, 0, sizeof(ov));
	for (size_t i = 0; i < NELEM(flags); i++)
		cr_assert_eq(runflags_apply(flags[i].code, flags[i].arg, &ov,
				 &fmt, err, sizeof(err)),
		    0, "%s", err);
	cr_assert_eq(jobrun_init(&jr, &pol, 1, argv, &ov), 0);
	want = pol.limits;
	want.stdout_bytes = want.stderr_bytes = 3 * 1024;
	want.wall_ms = 2500;
	want.cpu_ms = 7000;
	want.memory_bytes = 100 * MIB;
	want.nproc = 9;
	want.fsize_bytes = 5 * MIB;
	want.tmp_bytes = 6 * MIB;
	limits_eq(&jr.limits, &want, "every flag");
	limits_eq(&jr.spec.limits, &want, "every flag, spec");
	jobrun_free(&jr);
	policy_clear(&pol);
}
