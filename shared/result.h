/*
 * result.h: the typed end of every job (architecture.md, "What the model
 * sees"). The numeric values travel on the wire and are never renumbered.
 */
#ifndef STOCKADE_RESULT_H
#define STOCKADE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum job_status {
	JOB_OK = 0,
	JOB_EXIT_NONZERO = 1,
	JOB_TIMEOUT = 2,
	JOB_CPU_LIMIT = 3,
	JOB_MEMORY_LIMIT = 4,
	JOB_PROCESS_LIMIT = 5,
	JOB_OUTPUT_LIMIT = 6,
	JOB_FILE_SIZE_LIMIT = 7,
	JOB_DISK_FULL = 8,
	JOB_CRASH = 9,
	JOB_POLICY_VIOLATION = 10,
	JOB_SANDBOX_ERROR = 11,
};
#define JOB_STATUS_MAX JOB_SANDBOX_ERROR

/* How the launcher held a job's memory, process and CPU limits. */
enum job_enforcement {
	ENFORCE_AUTO = 0,    /* in a spec: cgroup2 when usable, else monitor */
	ENFORCE_MONITOR = 1, /* the /proc monitor and rlimits (usage.c) */
	ENFORCE_CGROUP2 = 2, /* a cgroup v2 leaf per job (cgroup.c) */
};
#define ENFORCE_MAX ENFORCE_CGROUP2

/* The limits in force for one job; 0 means "no limit" only where noted. */
struct job_limits {
	uint64_t wall_ms;      /* wall-clock limit, milliseconds (> 0) */
	uint64_t cpu_ms;       /* CPU time of the whole jail, milliseconds */
	uint64_t memory_bytes; /* resident memory of the whole jail, bytes */
	uint64_t tmp_bytes;    /* size= of the /tmp tmpfs, bytes */
	uint64_t home_bytes;   /* size= of the home tmpfs, bytes */
	uint64_t fsize_bytes;  /* RLIMIT_FSIZE, bytes */
	uint64_t stdout_bytes; /* cap on stdout, bytes */
	uint64_t stderr_bytes; /* cap on stderr, bytes */
	uint32_t nofile;       /* RLIMIT_NOFILE */
	uint32_t nproc;        /* tasks of the jail, its init included */
	uint32_t cpu_percent;  /* cgroup2 cpu.max, % of one CPU; 0 = none */
	uint64_t workspace_bytes; /* [files] workspace_mb, bytes (> 0) */
};

/* One system call the jail's seccomp filter refused (issue 5). */
#define JOB_MAX_DENIALS 32u
#define JOB_DENIAL_NAME 32u
struct job_denial {
	char syscall[JOB_DENIAL_NAME]; /* "ptrace", or "i386:20" for a foreign
					* ABI's number; NUL-terminated */
	uint32_t count;                /* times refused */
	uint64_t first_ms;             /* first refusal, ms since the start */
};

/* What the launcher reports for one job. Strings are owned by the struct. */
struct job_result {
	uint64_t job_id;
	enum job_status status;
	int32_t exit_code;       /* -1 when the program did not exit */
	int32_t signal;          /* 0 when not killed by a signal */
	uint64_t wall_ms;        /* from clone to reap, milliseconds */
	uint64_t cpu_ms;         /* user + system of the whole jail, ms */
	uint64_t peak_memory_kb; /* peak resident memory of the jail, KiB */
	uint32_t peak_processes; /* most tasks of the jail seen at once */
	enum job_enforcement enforcement; /* MONITOR or CGROUP2 */
	int32_t landlock_abi;    /* Landlock ABI the jail got; 0 = none */
	uint32_t ndenials;       /* entries of denials, <= JOB_MAX_DENIALS */
	struct job_denial denials[JOB_MAX_DENIALS]; /* by first refusal */
	uint64_t stdout_bytes;   /* bytes the program wrote to stdout */
	uint64_t stderr_bytes;   /* bytes the program wrote to stderr */
	char *detail;            /* NUL-terminated; "" when nothing to add */
};

/* The stable name of STATUS ("ok", "timeout", ...); never NULL. */
const char *job_status_name(enum job_status status);
/* The status named NAME, or -1 when NAME is not a status name. */
int job_status_from_name(const char *name);
/*
 * The conventional name of signal SIG without the "SIG" prefix removed
 * ("SIGSEGV"), or NULL for a number that names no signal.
 */
const char *signal_name(int sig);
/*
 * Writes into BUF (SIZE bytes, NUL-terminated, truncated if needed) one or
 * two sentences for a model: what happened, with the figure against the
 * limit, and what to try next. Returns BUF.
 */
char *job_hint(const struct job_result *res, const struct job_limits *lim,
	       char *buf, size_t size);
/*
 * The exit status of `stockade run` for RES (README.md, "Exit status"):
 * 0 ok; the program's code for exit_nonzero; 124 timeout; 128+N crash;
 * 125 for every other limit; 70 for sandbox_error.
 */
int job_exit_status(const struct job_result *res);
/* Frees the strings of RES (not RES itself); accepts NULL. */
void job_result_clear(struct job_result *res);

#endif
