/*
 * eval_job.h: how `stockade eval` runs a program (issue 6): `stockade
 * run` as a shell would run it in a terminal (eval_run.h), and the small
 * `stockade get`/`put` steps. Only async-signal-safe calls happen between
 * fork and execve: the eval has threads.
 */
#ifndef STOCKADE_EVAL_JOB_H
#define STOCKADE_EVAL_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Milliseconds of CLOCK_MONOTONIC. */
int64_t eval_now_ms(void);

/* Sleeps MS milliseconds (EINTR resumed). */
void eval_sleep_ms(int64_t ms);

/* What one descriptor gave: its first KEEP bytes, and how many in all. */
struct eval_sink {
	unsigned char *data; /* malloc'd, LEN bytes (not NUL-terminated) */
	size_t len, cap, keep;
	uint64_t total; /* bytes read, kept or not */
	int fd; /* O_NONBLOCK read end; -1 once at its end */
};

/* Reads FD of S until it would block; closes it (fd -1) at its end or on
 * an error (EIO: a pty whose slave side closed). */
void eval_sink_read(struct eval_sink *s);

/*
 * Runs ARGV (ARGV[0] the program's path) with ENVP, standard streams on
 * /dev/null, and waits at most MS milliseconds (then kills it). Returns
 * its exit status, 128 + a signal, or a negative errno.
 */
int eval_spawn_wait(const char *const argv[], const char *const envp[],
    int64_t ms);

/*
 * A job run as a shell runs a command in a terminal: a session leader
 * (the "terminal owner", standing for the user's shell) holds a pty as
 * its controlling terminal and starts the program in a process group of
 * its own, made the terminal's foreground group. When the program ends,
 * the terminal owner stays until eval_job_end, so that the kernel's
 * SIGHUP to the foreground group when a session leader exits
 * (credentials(7), "Sessions") cannot kill what the program left behind
 * before the eval has looked for it: a real shell does not exit when its
 * command does. The owner tells the eval over a pipe the program's pid
 * (an int), then its wait status (an int) once it has ended. It is a
 * child subreaper (PR_SET_CHILD_SUBREAPER) and reaps every orphan of
 * the job until released: zombies left to an init that reaps late
 * would count in the user's RLIMIT_NPROC of the next jobs.
 */
struct eval_job {
	struct eval_sink out, err, pty;
	pid_t owner; /* the terminal owner, 0 when none */
	pid_t pid; /* the program, 0 before the owner said */
	int report; /* the owner's pipe to us, -1 when done */
	int release; /* closed to let the owner exit */
	int status; /* the program's wait status */
	bool exited; /* STATUS is valid */
	bool killed; /* by us: past its deadline, or interrupted */
	bool interrupted; /* killed because INTERRUPTED said so */
};

/* Empties J: no processes, every descriptor -1, the sinks keeping
 * OUT_KEEP, ERR_KEEP and PTY_KEEP bytes. */
void eval_job_init(struct eval_job *j, size_t out_keep, size_t err_keep,
    size_t pty_keep);

/*
 * Starts the terminal owner and, through it, ARGV/ENVP: the pty slave
 * SLAVE (a path) its controlling terminal and standard input, standard
 * output and error pipes read into J->out and J->err, working directory
 * CWD, and a fresh session keyring holding the "user" key
 * "stockade-eval-secret" with the KEYLEN bytes of KEY (keyrings(7); none
 * where the kernel has no keys). MASTER (the pty's master, O_CLOEXEC,
 * taken) is read into J->pty. Returns 0 or a negative errno.
 */
int eval_job_start(struct eval_job *j, const char *const argv[],
    const char *const envp[], const char *slave, int master, const char *cwd,
    const char *key, size_t keylen);

/*
 * Reads the job's output until the program has ended and its pipes are
 * closed (200 ms after its end at most: a process it left may hold
 * them), or until DEADLINE (ms of CLOCK_MONOTONIC) or INTERRUPTED (may be
 * NULL) says otherwise: then SIGTERM (stockade run cancels the job and
 * still answers), SIGKILL 5 s later.
 */
void eval_job_wait(struct eval_job *j, int64_t deadline,
    int (*interrupted)(void));

/* Lets the terminal owner exit and reaps it (SIGKILL after 5 s); closes
 * the pipes to it. The sinks stay. */
void eval_job_end(struct eval_job *j);

/* eval_job_end, then closes and frees the sinks. */
void eval_job_free(struct eval_job *j);

#endif
