/*
 * run_usage.c: the help of `stockade run` (`stockade run --help`): the
 * synopsis, then each option with its meaning and its default, then the
 * exit statuses. The defaults of the limits are read from the embedded
 * default policy (policy/default.ini), so that they cannot drift from it.
 */
#include <stdio.h>
#include <string.h>

#include "cmd_run.h"
#include "policy.h"

/* The synopsis: every option, then the program. */
static void
usage_synopsis(FILE *f)
{
	fprintf(f,
	    "usage: stockade run [--policy FILE] [--workspace DIR] [--keep]\n"
	    "                    [--timeout SECONDS] [--cpu-time SECONDS]\n"
	    "                    [--memory MIB] [--processes N] [--file-size "
	    "MIB]\n"
	    "                    [--tmp-size MIB] [--output KIB]\n"
	    "                    [--json | --format stream|json|text]\n"
	    "                    [--unsafe-evaluation] [--no-progress]\n"
	    "                    [--stdin FILE | --no-stdin] [--env "
	    "NAME[=VALUE]]...\n"
	    "                    [--put HOST:SANDBOX]... [--get "
	    "SANDBOX:HOST]...\n"
	    "                    [--rollback-on-failure | --dry-run]\n"
	    "                    -- PROGRAM [ARGS...]\n");
}

/* What the command does, and the options of the policy and the
 * workspace. */
static void
usage_setup(FILE *f)
{
	fprintf(f,
	    "\nRuns PROGRAM in a fresh jail with the workspace at /work "
	    "and prints one result.\n\nOptions (defaults are the "
	    "embedded default policy's; a --policy file's\nkeys replace "
	    "them, and these flags replace both):\n"
	    "  --policy FILE       the policy (stockade-policy(5)); default: "
	    "the embedded one\n"
	    "  --workspace DIR     the host directory mounted at /work; "
	    "default: a fresh\n"
	    "                      temporary one, removed after the job\n"
	    "  --keep              keep that temporary workspace and print "
	    "its path\n"
	    "  --rollback-on-failure  write the job's changes back only "
	    "when it ends ok\n"
	    "  --dry-run           show the job's change set and write "
	    "nothing back\n");
}

/* The limit flags (runflags.h), with the defaults of the policy D. */
static void
usage_limits(FILE *f, const struct policy *d)
{
	const struct job_limits *l = &d->limits;

	fprintf(f,
	    "  --timeout SECONDS   wall-clock limit; default %llu.%03llu "
	    "([limits] wall_time_ms)\n"
	    "  --cpu-time SECONDS  CPU-time limit; default %llu.%03llu "
	    "([limits] cpu_time_ms)\n"
	    "  --memory MIB        memory limit; default %llu ([limits] "
	    "memory_mb)\n"
	    "  --processes N       processes and threads; default %u "
	    "([limits] processes)\n"
	    "  --file-size MIB     largest file the job may write; default "
	    "%llu ([limits]\n                      file_size_mb)\n"
	    "  --tmp-size MIB      size of the job's /tmp; default %llu "
	    "([limits] tmp_mb)\n"
	    "  --output KIB        cap of stdout and of stderr each; "
	    "default %llu and %llu\n"
	    "                      ([limits] stdout_kb, stderr_kb); past "
	    "it the output is\n"
	    "                      %s ([limits] on_output_limit)\n",
	    (unsigned long long)(l->wall_ms / 1000),
	    (unsigned long long)(l->wall_ms % 1000),
	    (unsigned long long)(l->cpu_ms / 1000),
	    (unsigned long long)(l->cpu_ms % 1000),
	    (unsigned long long)(l->memory_bytes >> 20), l->nproc,
	    (unsigned long long)(l->fsize_bytes >> 20),
	    (unsigned long long)(l->tmp_bytes >> 20),
	    (unsigned long long)(l->stdout_bytes >> 10),
	    (unsigned long long)(l->stderr_bytes >> 10),
	    d->on_output_limit == OUTPUT_KILL
		? "killed (output_limit)"
		: "truncated, head and tail kept");
}

/* The options of the result's form, the job's input and files, and the
 * terminal; then --unsafe-evaluation and --help. */
static void
usage_io(FILE *f)
{
	fprintf(f,
	    "  --json              print the result as JSON "
	    "(docs/result.schema.json)\n"
	    "  --format FORMAT     stream (default: the output as it comes, "
	    "then a summary\n"
	    "                      on stderr), json, or text (the form a "
	    "model reads)\n"
	    "  --stdin FILE        the program's standard input from FILE; "
	    "default:\n"
	    "                      stockade's own when it is not a terminal, "
	    "else /dev/null\n"
	    "  --no-stdin          the program's standard input is "
	    "/dev/null\n"
	    "  --env NAME=VALUE    a variable over the policy's "
	    "[environment] (repeatable;\n"
	    "                      --env NAME passes stockade's own value); "
	    "default: none,\n"
	    "                      as far as [jail] client_env allows\n"
	    "  --put HOST:SANDBOX  copy a host file into the workspace "
	    "before the job\n"
	    "                      (repeatable; missing directories are "
	    "made)\n"
	    "  --get SANDBOX:HOST  copy a workspace file out after the job "
	    "(repeatable)\n"
	    "  --no-progress       no \"running S s of LIMIT s\" line on "
	    "a terminal; default:\n"
	    "                      shown on a terminal after a second, never "
	    "with --json\n"
	    "  --unsafe-evaluation accept a policy that switches a layer "
	    "off (unsafe_ keys),\n"
	    "                      for measuring layers only; default: "
	    "refused\n"
	    "  --help              this text\n");
}

/* The exit statuses (README.md, "Exit status"). */
static void
usage_exit_status(FILE *f)
{
	fprintf(f,
	    "\nExit status: the program's own; 124 timeout; 125 another "
	    "limit or a policy\nviolation; 128+N a crash by signal N, or "
	    "cancelled (130 by SIGINT, 143 by\nSIGTERM); 69 a layer the "
	    "kernel lacks; 70 a sandbox error; 2 usage; 1 a --put\nor "
	    "--get that failed (README.md, \"Exit status\"; man "
	    "stockade).\n");
}

void
run_usage(FILE *f)
{
	struct policy d;
	char err[256];

	usage_synopsis(f);
	if (f != stdout)
		return;
	memset(&d, 0, sizeof(d));
	if (policy_load_default(&d, err, sizeof(err)) < 0) {
		fprintf(f, "(the embedded default policy did not load: %s)\n",
		    err);
		return;
	}
	usage_setup(f);
	usage_limits(f, &d);
	usage_io(f);
	usage_exit_status(f);
	policy_clear(&d);
}
