/* result.c: status names, signal names, hints and exit statuses. Pure. */
#include "result.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

static const char *const status_names[] = {
    [JOB_OK] = "ok",
    [JOB_EXIT_NONZERO] = "exit_nonzero",
    [JOB_TIMEOUT] = "timeout",
    [JOB_CPU_LIMIT] = "cpu_limit",
    [JOB_MEMORY_LIMIT] = "memory_limit",
    [JOB_PROCESS_LIMIT] = "process_limit",
    [JOB_OUTPUT_LIMIT] = "output_limit",
    [JOB_FILE_SIZE_LIMIT] = "file_size_limit",
    [JOB_DISK_FULL] = "disk_full",
    [JOB_CRASH] = "crash",
    [JOB_POLICY_VIOLATION] = "policy_violation",
    [JOB_SANDBOX_ERROR] = "sandbox_error",
    [JOB_CANCELLED] = "cancelled",
};

const char *
job_status_name(enum job_status status)
{
	if ((unsigned)status > JOB_STATUS_MAX)
		return "sandbox_error";
	return status_names[status];
}

int
job_status_from_name(const char *name)
{
	for (int i = 0; i <= JOB_STATUS_MAX; i++)
		if (strcmp(status_names[i], name) == 0)
			return i;
	return -1;
}

static const char *const cancel_texts[] = {
    [JOB_CANCEL_SIGINT] = "SIGINT to stockade, as from Ctrl-C",
    [JOB_CANCEL_SIGTERM] = "SIGTERM to stockade",
    [JOB_CANCEL_SIGHUP] = "SIGHUP to stockade, its terminal gone",
    [JOB_CANCEL_REQUEST] = "the client's cancel request",
    [JOB_CANCEL_CLIENT_GONE] = "the client's connection closed",
};

const char *
job_cancel_reason_text(int reason)
{
	if (reason < 1 || reason > JOB_CANCEL_MAX)
		return NULL;
	return cancel_texts[reason];
}

const char *
job_memory_measure_name(int m)
{
	static const char *const names[] = {
	    [MEASURE_RSS_SUM] = "rss_sum",
	    [MEASURE_PSS_SUM] = "pss_sum",
	    [MEASURE_CGROUP] = "cgroup",
	};

	if (m == 0)
		return "none";
	if (m < 0 || m > MEASURE_MAX)
		return NULL;
	return names[m];
}

const char *
job_limit_kind_name(int k)
{
	if (k != JOB_REACHED_PROCESSES)
		return NULL;
	return "processes";
}

int
job_cancel_reason_signal(int reason)
{
	switch (reason) {
	case JOB_CANCEL_SIGINT:
		return SIGINT;
	case JOB_CANCEL_SIGTERM:
		return SIGTERM;
	case JOB_CANCEL_SIGHUP:
		return SIGHUP;
	default:
		return 0;
	}
}

static const char *const layer_names[] = {
    [JOB_LAYER_LIMITS] = "limits",
    [JOB_LAYER_PROCESS_GROUP] = "process_group",
    [JOB_LAYER_SCRUBBED_ENV] = "scrubbed_env",
    [JOB_LAYER_PRIVATE_CWD] = "private_cwd",
    [JOB_LAYER_USER_NS] = "user_ns",
    [JOB_LAYER_PID_NS] = "pid_ns",
    [JOB_LAYER_MOUNT_NS] = "mount_ns",
    [JOB_LAYER_NETWORK_NS] = "network_ns",
    [JOB_LAYER_IPC_UTS] = "ipc_uts",
    [JOB_LAYER_NO_TERMINAL] = "no_terminal",
    [JOB_LAYER_CAPS_NNP] = "caps_nnp",
    [JOB_LAYER_LANDLOCK] = "landlock",
    [JOB_LAYER_SECCOMP] = "seccomp",
};

const char *
job_layer_name(int layer)
{
	if (layer < 1 || layer > JOB_LAYER_MAX)
		return NULL;
	return layer_names[layer];
}

int
job_layer_parse(const char *name, size_t len)
{
	for (int i = 1; i <= JOB_LAYER_MAX; i++)
		if (strlen(layer_names[i]) == len &&
		    memcmp(layer_names[i], name, len) == 0)
			return i;
	return -1;
}

char *
job_layers_format(uint32_t off, char *buf, size_t size)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 1; i <= JOB_LAYER_MAX && at < size; i++) {
		int n;

		if (!(off & JOB_LAYER_BIT(i)))
			continue;
		n = snprintf(buf + at, size - at, "%s%s", at ? ", " : "",
		    layer_names[i]);
		if (n < 0)
			break;
		at += (size_t)n;
	}
	return buf;
}

static const struct {
	int sig;
	const char *name;
} signals[] = {
    {SIGHUP, "SIGHUP"},
    {SIGINT, "SIGINT"},
    {SIGQUIT, "SIGQUIT"},
    {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"},
    {SIGABRT, "SIGABRT"},
    {SIGBUS, "SIGBUS"},
    {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"},
    {SIGUSR1, "SIGUSR1"},
    {SIGSEGV, "SIGSEGV"},
    {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"},
    {SIGALRM, "SIGALRM"},
    {SIGTERM, "SIGTERM"},
    {SIGSTKFLT, "SIGSTKFLT"},
    {SIGCHLD, "SIGCHLD"},
    {SIGCONT, "SIGCONT"},
    {SIGSTOP, "SIGSTOP"},
    {SIGTSTP, "SIGTSTP"},
    {SIGTTIN, "SIGTTIN"},
    {SIGTTOU, "SIGTTOU"},
    {SIGURG, "SIGURG"},
    {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"},
    {SIGVTALRM, "SIGVTALRM"},
    {SIGPROF, "SIGPROF"},
    {SIGWINCH, "SIGWINCH"},
    {SIGIO, "SIGIO"},
    {SIGPWR, "SIGPWR"},
    {SIGSYS, "SIGSYS"},
};

const char *
signal_name(int sig)
{
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (signals[i].sig == sig)
			return signals[i].name;
	return NULL;
}

/* What usually raises SIG in a program (signal(7)), for the crash hint. */
static const char *
crash_cause(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "a bad memory access (a null or freed pointer, an index "
		       "out of bounds, or recursion too deep for the stack)";
	case SIGABRT:
		return "an abort, usually a failed assertion or heap "
		       "corruption the C library detected";
	case SIGFPE:
		return "an arithmetic error, usually an integer division by "
		       "zero";
	case SIGBUS:
		return "an access to memory that has no backing, usually a "
		       "memory-mapped file that was truncated";
	case SIGILL:
		return "an illegal instruction, usually code built for another "
		       "CPU or a corrupted function pointer";
	case SIGPIPE:
		return "a write to a pipe or socket whose reader had gone";
	case SIGTRAP:
		return "a breakpoint or trap instruction left in the code";
	default:
		return "a signal from the program itself or one of its own "
		       "processes (the sandbox stops a job only for a limit, "
		       "and "
		       "then says which)";
	}
}

static double
mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

void
job_hint_truncation(const struct job_result *res, const struct job_limits *lim,
    char *buf, size_t size)
{
	char figures[2][96];
	const uint64_t bytes[2] = {res->stdout_bytes, res->stderr_bytes};
	const uint64_t cap[2] = {lim->stdout_bytes, lim->stderr_bytes};
	const char *names[2] = {"stdout", "stderr"};
	size_t at = strlen(buf);

	for (int i = 0; i < 2; i++) {
		figures[i][0] = '\0';
		if (bytes[i] > cap[i])
			snprintf(figures[i], sizeof(figures[i]),
			    "%s%s %llu "
			    "bytes over a cap of %llu",
			    i == 1 && figures[0][0] ? ", " : "", names[i],
			    (unsigned long long)bytes[i],
			    (unsigned long long)cap[i]);
	}
	if (at + 1 >= size)
		return;
	fmt_words(buf + at, size - at,
	    " Its output was truncated (%s%s; the "
	    "first and the last half of each cap are kept, around a "
	    "marker): to see all of it, write it to a file in /work (for "
	    "example: program > /work/out.txt 2>&1) and read the parts you "
	    "need from that file.",
	    figures[0], figures[1]);
}

/* The hint of a program that exited by itself (JOB_OK, JOB_EXIT_NONZERO),
 * into BUF of SIZE bytes. */
static void
hint_exited(const struct job_result *res, const struct job_limits *lim,
    char *buf, size_t size)
{
	/* On int: job_hint() sent only this family here. */
	switch ((int)res->status) {
	case JOB_OK:
		if (res->nreached > 0 &&
		    res->reached[0].limit == JOB_REACHED_PROCESSES)
			/* Issue 23: exit 0 is no proof that all was done. */
			fmt_words(buf, size,
			    "The program exited with code 0 in "
			    "%llu ms, but the sandbox reached its limit of "
			    "%u processes and threads (%u time%s): forks or "
			    "new threads were refused, so its output may be "
			    "incomplete; check stderr for failed forks and "
			    "use a bounded pool of workers.",
			    (unsigned long long)res->wall_ms, lim->nproc,
			    res->reached[0].times,
			    res->reached[0].times == 1 ? "" : "s");
		else if (job_output_truncated(res, lim))
			fmt_words(buf, size,
			    "The program exited with code 0 in "
			    "%llu ms.",
			    (unsigned long long)res->wall_ms);
		else
			fmt_words(buf, size,
			    "The program exited with code 0 in "
			    "%llu ms; its output is complete.",
			    (unsigned long long)res->wall_ms);
		break;
	case JOB_EXIT_NONZERO:
		if (res->exit_code == 127)
			fmt_words(buf, size,
			    "Exit code 127: the program was not "
			    "found inside the sandbox; check its name, or "
			    "call it through an interpreter that exists "
			    "(python3, sh) with the script in /work.");
		else if (res->exit_code == 126)
			fmt_words(buf, size,
			    "Exit code 126: the program exists "
			    "but cannot be executed; make it executable "
			    "(chmod +x) or run it through its interpreter.");
		else
			fmt_words(buf, size,
			    "The program exited with code %d; "
			    "read stderr for its own error message and fix "
			    "the cause before running it again.",
			    res->exit_code);
		break;
	default:
		break;
	}
}

/* The hint of a program stopped at its memory limit, into BUF of SIZE
 * bytes. */
static void
hint_memory(const struct job_result *res, const struct job_limits *lim,
    char *buf, size_t size)
{
	/* Below the limit, an allocation was refused outright:
	 * RLIMIT_DATA holds one process to twice the limit. */
	if (res->peak_memory_kb * 1024 < lim->memory_bytes)
		fmt_words(buf, size,
		    "The program asked for more memory "
		    "than the sandbox allows (limit %.1f MiB, one "
		    "allocation was refused); stream large inputs "
		    "instead of loading them whole (read in chunks or "
		    "line by line) and do not allocate everything at "
		    "once.",
		    mib(lim->memory_bytes));
	else
		fmt_words(buf, size,
		    "The program ran out of memory "
		    "(limit %.1f MiB, peak seen %.1f MiB); stream "
		    "large inputs instead of loading them whole (read "
		    "in chunks or line by line) and free what is no "
		    "longer needed, or ask for more memory only if "
		    "the task truly needs it.",
		    mib(lim->memory_bytes),
		    (double)res->peak_memory_kb / 1024.0);
}

/* The hint of a program stopped for one of its limits (wall clock, CPU,
 * memory, processes, output, file size, disk), into BUF of SIZE bytes. */
static void
hint_limit(const struct job_result *res, const struct job_limits *lim,
    char *buf, size_t size)
{
	/* On int: job_hint() sent only this family here. */
	switch ((int)res->status) {
	case JOB_TIMEOUT:
		fmt_words(buf, size,
		    "The program was killed after %llu ms, its "
		    "wall-clock limit of %llu ms; bound its loops or make "
		    "it do less per run (a smaller input, fewer "
		    "iterations), or run it with a longer timeout only if "
		    "the task truly needs one and the user allows it.",
		    (unsigned long long)res->wall_ms,
		    (unsigned long long)lim->wall_ms);
		break;
	case JOB_CPU_LIMIT:
		fmt_words(buf, size,
		    "The program used %llu ms of CPU time, over "
		    "its limit of %llu ms; make the computation cheaper "
		    "or ask for a larger CPU limit only if the task truly "
		    "needs one.",
		    (unsigned long long)res->cpu_ms,
		    (unsigned long long)lim->cpu_ms);
		break;
	case JOB_MEMORY_LIMIT:
		hint_memory(res, lim, buf, size);
		break;
	case JOB_PROCESS_LIMIT:
		fmt_words(buf, size,
		    "The program hit its limit of %u processes "
		    "and threads (the sandbox's init is one of them); do "
		    "not start processes or threads in a loop, use a "
		    "bounded pool instead.",
		    lim->nproc);
		break;
	case JOB_OUTPUT_LIMIT:
		fmt_words(buf, size,
		    "The program was stopped after writing more "
		    "than its output cap (stdout %llu bytes, stderr %llu "
		    "bytes; head and tail kept); write large results to a "
		    "file in /work and print only a summary.",
		    (unsigned long long)lim->stdout_bytes,
		    (unsigned long long)lim->stderr_bytes);
		break;
	case JOB_FILE_SIZE_LIMIT:
		fmt_words(buf, size,
		    "The program tried to write a file larger "
		    "than its limit of %.1f MiB; write less data or split "
		    "it across smaller files.",
		    mib(lim->fsize_bytes));
		break;
	case JOB_DISK_FULL:
		fmt_words(buf, size,
		    "The program ran out of disk space (%s; the "
		    "limits are %.1f MiB for /tmp and %.1f MiB for /work); "
		    "delete temporary files or write less, or ask the user "
		    "for more space.",
		    res->detail && *res->detail ? res->detail : "full",
		    mib(lim->tmp_bytes), mib(lim->workspace_bytes));
		break;
	default:
		break;
	}
}

/* The hint of a job stopped by the sandbox's rules, by someone, or by the
 * sandbox's own failure (policy violation, cancel, sandbox error), into
 * BUF of SIZE bytes. */
static void
hint_stopped(const struct job_result *res, char *buf, size_t size)
{
	/* On int: job_hint() sent only this family here. */
	switch ((int)res->status) {
	case JOB_POLICY_VIOLATION:
		fmt_words(buf, size,
		    "The program made a system call the sandbox "
		    "forbids%s%s; retrying will fail the same way, so do "
		    "the task without that operation.",
		    res->detail && *res->detail ? ": " : "",
		    res->detail ? res->detail : "");
		break;
	case JOB_CANCELLED:
		/* Not the program's fault nor the sandbox's: someone
		 * chose to stop it, and a retry would overrule them. */
		fmt_words(buf, size,
		    "The job was stopped by the user or the "
		    "client after %llu ms, not by the program or a limit; "
		    "do not run it again on your own: tell the user it was "
		    "stopped and ask how to go on (%s; the output it wrote "
		    "until then is kept).",
		    (unsigned long long)res->wall_ms,
		    res->detail && *res->detail ? res->detail : "cancelled");
		break;
	case JOB_SANDBOX_ERROR:
	default:
		fmt_words(buf, size,
		    "The sandbox itself failed, not the "
		    "program%s%s; tell the user, who may have to fix the "
		    "host as the detail says, and retry only if the cause "
		    "looks temporary.",
		    res->detail && *res->detail ? ": " : "",
		    res->detail ? res->detail : "");
		break;
	}
}

char *
job_hint(const struct job_result *res, const struct job_limits *lim, char *buf,
    size_t size)
{
	const char *sig = signal_name(res->signal);

	if (sig == NULL)
		sig = "an unknown signal";
	switch (res->status) {
	case JOB_OK:
	case JOB_EXIT_NONZERO:
		hint_exited(res, lim, buf, size);
		break;
	case JOB_TIMEOUT:
	case JOB_CPU_LIMIT:
	case JOB_MEMORY_LIMIT:
	case JOB_PROCESS_LIMIT:
	case JOB_OUTPUT_LIMIT:
	case JOB_FILE_SIZE_LIMIT:
	case JOB_DISK_FULL:
		hint_limit(res, lim, buf, size);
		break;
	case JOB_CRASH:
		fmt_words(buf, size,
		    "The program was killed by %s, which it did "
		    "not ask for: %s; inspect that in the program or the "
		    "library it calls rather than retrying unchanged.",
		    sig, crash_cause(res->signal));
		break;
	case JOB_POLICY_VIOLATION:
	case JOB_CANCELLED:
	case JOB_SANDBOX_ERROR:
	default:
		hint_stopped(res, buf, size);
		break;
	}
	/* Killed for its output, the hint above says so already. */
	if (res->status != JOB_OUTPUT_LIMIT && job_output_truncated(res, lim))
		job_hint_truncation(res, lim, buf, size);
	return buf;
}

bool
job_output_truncated(const struct job_result *res, const struct job_limits *lim)
{
	/* Layer limits off: no cap was in force (broker/jobs/jobrun.h). */
	if (res->layers_off & JOB_LAYER_BIT(JOB_LAYER_LIMITS))
		return false;
	return res->stdout_bytes > lim->stdout_bytes ||
	    res->stderr_bytes > lim->stderr_bytes;
}

int
job_exit_status(const struct job_result *res)
{
	switch (res->status) {
	case JOB_OK:
		return 0;
	case JOB_EXIT_NONZERO:
		return res->exit_code > 0 && res->exit_code < 256
		    ? res->exit_code
		    : 1;
	case JOB_TIMEOUT:
		return 124;
	case JOB_CRASH:
		return 128 + res->signal;
	case JOB_SANDBOX_ERROR:
		return 70;
	case JOB_CANCELLED: {
		int sig = job_cancel_reason_signal((int)res->cancel_reason);

		return 128 + (sig != 0 ? sig : SIGINT);
	}
	case JOB_CPU_LIMIT:
	case JOB_MEMORY_LIMIT:
	case JOB_PROCESS_LIMIT:
	case JOB_OUTPUT_LIMIT:
	case JOB_FILE_SIZE_LIMIT:
	case JOB_DISK_FULL:
	case JOB_POLICY_VIOLATION:
	default:
		return 125;
	}
}

void
job_result_clear(struct job_result *res)
{
	if (res == NULL)
		return;
	free(res->detail);
	res->detail = NULL;
}
