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
	/* The user or the client stopped the job (issue 22): SIGINT,
	 * SIGTERM or SIGHUP to the broker, a cancel request, a client gone. */
	JOB_CANCELLED = 12,
};
#define JOB_STATUS_MAX JOB_CANCELLED

/*
 * Why a job was cancelled: CANCEL carries it (proto.h), the launcher's
 * detail names it, and `stockade run` exits 128 + the signal for the
 * three signals (README.md, "Exit status"). The numbers travel on the
 * wire and are never renumbered; 0 is "not cancelled" and never sent.
 */
enum job_cancel_reason {
	JOB_CANCEL_NONE = 0,
	JOB_CANCEL_SIGINT = 1, /* SIGINT to the broker (Ctrl-C) */
	JOB_CANCEL_SIGTERM = 2, /* SIGTERM to the broker */
	JOB_CANCEL_SIGHUP = 3, /* SIGHUP: its terminal went away */
	JOB_CANCEL_REQUEST = 4, /* the client asked: serve's
				     * $/cancelRequest, MCP's
				     * notifications/cancelled */
	JOB_CANCEL_CLIENT_GONE = 5, /* the client's connection closed */
};
#define JOB_CANCEL_MAX JOB_CANCEL_CLIENT_GONE

/*
 * The words of REASON for a detail ("SIGTERM to stockade", "the client's
 * cancel request", ...), or NULL when REASON is not 1..JOB_CANCEL_MAX.
 */
const char *job_cancel_reason_text(int reason);

/* The signal of REASON (SIGINT, SIGTERM, SIGHUP), or 0 for a reason that
 * is not a signal or not a reason. */
int job_cancel_reason_signal(int reason);

/* How the launcher held a job's memory, process and CPU limits. */
enum job_enforcement {
	ENFORCE_AUTO = 0, /* in a spec: cgroup2 when usable, else monitor */
	ENFORCE_MONITOR = 1, /* the /proc monitor and rlimits (usage.c) */
	ENFORCE_CGROUP2 = 2, /* a cgroup v2 leaf per job (cgroup.c) */
};
#define ENFORCE_MAX ENFORCE_CGROUP2

/* The limits in force for one job; 0 means "no limit" only where noted. */
struct job_limits {
	uint64_t wall_ms; /* wall-clock limit, milliseconds (> 0) */
	uint64_t cpu_ms; /* CPU time of the whole jail, milliseconds */
	uint64_t memory_bytes; /* resident memory of the whole jail, bytes */
	uint64_t tmp_bytes; /* size= of the /tmp tmpfs, bytes */
	uint64_t home_bytes; /* size= of the home tmpfs, bytes */
	uint64_t fsize_bytes; /* RLIMIT_FSIZE, bytes */
	uint64_t stdout_bytes; /* cap on stdout, bytes */
	uint64_t stderr_bytes; /* cap on stderr, bytes */
	uint32_t nofile; /* RLIMIT_NOFILE */
	uint32_t nproc; /* tasks of the jail, its init included */
	uint32_t cpu_percent; /* cgroup2 cpu.max, % of one CPU; 0 = none */
	uint64_t workspace_bytes; /* [files] workspace_mb, bytes (> 0) */
};

/*
 * The launcher answers at most DENIALS_RATE refusals a second on
 * average, DENIALS_BURST in a row (issue 23: a job looping on refused
 * calls made the launcher spend as much CPU as itself, CPU that no limit
 * of the job counts). Past that, the listener is not read for a while:
 * the job's refused calls wait in the kernel, asleep, which costs the job
 * wall-clock time (its wall limit counts it) and the launcher nothing.
 * A program that meets a refusal now and then (a runtime probing for
 * io_uring, a test suite trying socket families) never waits; see
 * docs/decisions.md, "Refusals are answered at a bounded rate".
 * launcher/supervisor/denials.c answers by these; seccomp.refusal_rate_bounded
 * (verify/check/check_seccomp.c) checks them.
 */
#define DENIALS_RATE 1000u /* answers per second; a multiple of 1000 */
#define DENIALS_BURST 1000u /* answers in a row after a quiet second */

/* One system call the jail's seccomp filter refused (issue 5). */
#define JOB_MAX_DENIALS 32u
#define JOB_DENIAL_NAME 32u
struct job_denial {
	char syscall[JOB_DENIAL_NAME]; /* "ptrace", or "i386:20" for a foreign
					* ABI's number; NUL-terminated */
	uint32_t count; /* times refused */
	uint64_t first_ms; /* first refusal, ms since the start */
};

/*
 * The jail's layers (architecture.md, "The jail, layer by layer";
 * docs/layers.md), numbered in the order the layer table of `stockade eval
 * layers` adds them. A mask of layers switched off ([jail]
 * unsafe_layers_off, evaluation only) has bit N - 1 set for layer N. The
 * numbers travel on the wire (RUN's layers_off) and are never renumbered.
 */
enum job_layer {
	JOB_LAYER_LIMITS = 1, /* rlimits, monitor/cgroup limits, tmpfs sizes */
	JOB_LAYER_PROCESS_GROUP = 2, /* nothing the job started outlives it */
	JOB_LAYER_SCRUBBED_ENV = 3, /* only the policy's [environment] */
	JOB_LAYER_PRIVATE_CWD = 4, /* private HOME and TMPDIR */
	JOB_LAYER_USER_NS = 5, /* CLONE_NEWUSER */
	JOB_LAYER_PID_NS = 6, /* CLONE_NEWPID, own /proc */
	JOB_LAYER_MOUNT_NS = 7, /* new root, binds, pivot_root */
	JOB_LAYER_NETWORK_NS = 8, /* CLONE_NEWNET, Landlock TCP and
				      * abstract unix scope */
	JOB_LAYER_IPC_UTS = 9, /* CLONE_NEWIPC, NEWUTS, NEWCGROUP */
	JOB_LAYER_NO_TERMINAL = 10, /* setsid, stdin /dev/null */
	JOB_LAYER_CAPS_NNP = 11, /* capabilities, securebits, NNP */
	JOB_LAYER_LANDLOCK = 12, /* the payload's Landlock domain */
	JOB_LAYER_SECCOMP = 13, /* the payload's seccomp filter */
};
#define JOB_LAYER_MAX JOB_LAYER_SECCOMP
/* The bit of layer N (1..JOB_LAYER_MAX) in a layers_off mask. */
#define JOB_LAYER_BIT(n) (UINT32_C(1) << ((unsigned)(n)-1u))
/* Every layer's bit; any other bit of a mask is unknown. */
#define JOB_LAYERS_ALL ((UINT32_C(1) << JOB_LAYER_MAX) - 1u)

/*
 * The name of layer LAYER ("limits", "process_group", ...: the words of
 * the policy, the wire's documentation, the result's layers_off and the
 * evaluation's tables), or NULL when LAYER is not 1..JOB_LAYER_MAX.
 */
const char *job_layer_name(int layer);

/* The layer named by the LEN bytes at NAME (no NUL needed), or -1. */
int job_layer_parse(const char *name, size_t len);

/*
 * Writes the names of the layers in mask OFF, in layer order, joined by
 * ", ", into BUF (SIZE > 0 bytes, NUL-terminated, truncated if it must
 * be; "" for 0; unknown bits are ignored). Returns BUF.
 */
char *job_layers_format(uint32_t off, char *buf, size_t size);

/*
 * How a result's peak_memory_kb was measured (issue 23, point 8). The
 * numbers travel on the wire (RESULT, protocol 9) and are never
 * renumbered; the names are the result's "memory_measure".
 */
enum job_memory_measure {
	MEASURE_RSS_SUM = 1, /* "rss_sum": each process's resident set,
			      * summed (shared pages once per process: an
			      * upper bound), the monitor while under
			      * the limit */
	MEASURE_PSS_SUM = 2, /* "pss_sum": each process's proportional set
			      * size (smaps_rollup Pss), summed: a shared
			      * page counts once; the monitor once the
			      * resident sum passed the limit */
	MEASURE_CGROUP = 3, /* "cgroup": memory.peak of the job's leaf */
};
#define MEASURE_MAX MEASURE_CGROUP

/* The name of measure M ("rss_sum", ...); "none" for 0 (no jail ran);
 * NULL past MEASURE_MAX. */
const char *job_memory_measure_name(int m);

/*
 * A limit the jail reached while the program went on (issue 23, point
 * 7): the kernel refused it something (a fork at the process limit),
 * so its output may be incomplete even when it exited 0. The numbers
 * travel on the wire and are never renumbered.
 */
enum job_limit_kind {
	JOB_REACHED_PROCESSES = 1, /* "processes": tasks at the limit, forks
				    * and clones refused with EAGAIN */
};
#define JOB_REACHED_MAX JOB_REACHED_PROCESSES
#define JOB_MAX_REACHED 4u
struct job_reached {
	uint8_t limit; /* enum job_limit_kind */
	uint32_t times; /* episodes seen at the limit (monitor: samples
			  * that found the jail at it after one that did
			  * not; cgroup2: pids.events max), >= 1 */
};

/* The name of limit kind K ("processes"), or NULL. */
const char *job_limit_kind_name(int k);

/* What the launcher reports for one job. Strings are owned by the struct. */
struct job_result {
	uint64_t job_id;
	enum job_status status;
	int32_t exit_code; /* -1 when the program did not exit */
	int32_t signal; /* 0 when not killed by a signal */
	uint64_t wall_ms; /* from clone to reap, milliseconds */
	uint64_t cpu_ms; /* user + system of the whole jail, ms */
	uint64_t peak_memory_kb; /* peak resident memory of the jail, KiB */
	uint32_t peak_processes; /* most tasks of the jail seen at once */
	enum job_enforcement enforcement; /* MONITOR or CGROUP2 */
	int32_t landlock_abi; /* Landlock ABI the jail got; 0 = none */
	uint32_t ndenials; /* entries of denials, <= JOB_MAX_DENIALS */
	struct job_denial denials[JOB_MAX_DENIALS]; /* by first refusal */
	uint64_t stdout_bytes; /* bytes the program wrote to stdout */
	uint64_t stderr_bytes; /* bytes the program wrote to stderr */
	uint8_t memory_measure; /* enum job_memory_measure of peak_memory_kb,
				  * 0 when no jail ran (nothing measured) */
	uint32_t nreached; /* entries of reached, <= JOB_MAX_REACHED */
	struct job_reached reached[JOB_MAX_REACHED]; /* one per kind */
	/* The layers the job ran without (JOB_LAYER_BIT mask): set by the
	 * broker from the job's spec, not carried by RESULT. */
	uint32_t layers_off;
	/* Why a cancelled job was cancelled (enum job_cancel_reason; 0
	 * otherwise): set by the broker from the CANCEL it sent, not
	 * carried by RESULT (whose detail names it in words). */
	uint32_t cancel_reason;
	char *detail; /* NUL-terminated; "" when nothing to add */
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
 * limit, and what to try next; for an ok job that reached a limit
 * (RES->reached), which limit, how often, and that its output may be
 * incomplete. Returns BUF.
 */
char *job_hint(const struct job_result *res, const struct job_limits *lim,
    char *buf, size_t size);
/*
 * True when RES's program wrote more to stdout or stderr than LIM's caps
 * (stdout_bytes, stderr_bytes): its result keeps only the head and the
 * tail of that stream. False for a job that ran with layer limits off
 * (RES's layers_off), whose output is not capped. Pure.
 */
/*
 * Appends to BUF (SIZE bytes, holding a NUL-terminated sentence) that the
 * output was truncated, with the figures, and how to get all of it, as
 * job_hint does for a job whose output was cut (job_output_truncated).
 * A hint built another way (result_hint's network hint) calls it too.
 */
void job_hint_truncation(const struct job_result *res,
    const struct job_limits *lim, char *buf, size_t size);

bool job_output_truncated(const struct job_result *res,
    const struct job_limits *lim);
/*
 * The exit status of `stockade run` for RES (README.md, "Exit status"):
 * 0 ok; the program's code for exit_nonzero; 124 timeout; 128+N crash;
 * 125 for every other limit; 70 for sandbox_error; for cancelled 128 +
 * the signal of its cancel_reason (130 SIGINT, 143 SIGTERM, 129 SIGHUP),
 * 130 for a reason that is no signal (the user stopped it).
 */
int job_exit_status(const struct job_result *res);
/* Frees the strings of RES (not RES itself); accepts NULL. */
void job_result_clear(struct job_result *res);

#endif
