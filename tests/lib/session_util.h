/*
 * session_util.h: what the tests that drive a broker/launcher session
 * through struct supervisor share (test_session.c, test_pool.c): the
 * session itself, its output, and what the launcher holds.
 */
#ifndef STOCKADE_TEST_SESSION_UTIL_H
#define STOCKADE_TEST_SESSION_UTIL_H

#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "result.h"
#include "supervisor.h"

struct captured {
	char data[3][4096]; /* [1] stdout, [2] stderr */
	size_t len[3];
	struct supervisor *kill_on_output; /* SIGKILL its launcher on output */
};

/* output_fn (supervisor.h) appending to a struct captured ARG. */
void on_output(void *arg, int stream, const uint8_t *data, size_t len);
/* Entries of directory PATH, "." and ".." excluded. */
int count_entries(const char *path);
/* Lines of file PATH. */
int count_lines(const char *path);
/* Descriptors of process PID. */
int launcher_fds(pid_t pid);
/* "FD->TARGET ..." for each descriptor of PID, for messages (malloc'd). */
char *launcher_fd_list(pid_t pid);
/* The children of PID, as the kernel lists them ("" when none; malloc'd). */
char *launcher_children(pid_t pid);
/* Asserts /proc/PID/status has the line LINE ("Seccomp:\t2"). */
void assert_status_line(pid_t pid, const char *line);

struct session {
	struct policy pol;
	struct supervisor sup;
	int wsfd;
};

/* A session on the embedded default policy and the harness's workspace,
 * on the launcher the harness names; no warm pool unless the caller sets
 * ss->sup.pool_size before the first job. */
void session_open(struct session *ss);
void session_close(struct session *ss);
/* Runs ARGV (NULL-terminated) as one job with a wall-clock limit of
 * WALL_MS (0: the policy's); fills RES and C. */
void run_job(struct session *ss, char **argv, uint64_t wall_ms,
    struct captured *c, struct job_result *res);
/* Waits until the process behind PIDFD has died (not reaped). */
void wait_dead(int pidfd);

/* The jails waiting in launcher PID's warm pool: its children named
 * stockade-init (its other child is the zygote), up to MAX, into PIDS.
 * Waits up to 5 s for WANT of them (the pool refills in the background);
 * returns how many there are then. */
int waiting_jails(pid_t launcher, int want, pid_t *pids, int max);

/* Runs the shell command CMD in SS as a job that must end ok (asserted);
 * its output in C. */
void run_sh(struct session *ss, const char *cmd, struct captured *c);

#endif
