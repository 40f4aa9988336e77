/*
 * eval_decoy.h: the host process an attack may try to read, signal or
 * kill (issue 6). One per run: `stockade eval __decoy CANARY`, the
 * stockade binary executed again so that its command line holds the
 * decoy_argv canary and its environment (DECOY_SECRET) the decoy_env
 * canary, as a careless host process's would. It catches every signal it
 * can and writes each one's number to the eval through a pipe; death and
 * SIGSTOP, which it cannot catch, its parent sees with waitid.
 */
#ifndef STOCKADE_EVAL_DECOY_H
#define STOCKADE_EVAL_DECOY_H

#include <stddef.h>
#include <sys/types.h>

struct eval_decoy {
	pid_t pid; /* the decoy, a child of the caller */
	int sigfd; /* read end of its signal pipe (O_NONBLOCK) */
};

/*
 * Starts a decoy: the program SELF (the stockade-eval binary) run as
 * "SELF __decoy ARGV_CANARY" with only DECOY_SECRET=ENV_CANARY and
 * PATH in its environment, in a process group of its own, standard
 * streams on /dev/null, killed when the calling thread dies
 * (PR_SET_PDEATHSIG). Waits (at most 5 s) until it has set its handlers.
 * Returns 0, or a negative errno (the decoy then is not left running).
 */
int eval_decoy_start(struct eval_decoy *d, const char *self,
    const char *argv_canary, const char *env_canary);

/*
 * Whether anything reached the decoy: 1 with a short description in WHAT
 * (LEN bytes: "killed by SIGKILL", "stopped by SIGSTOP", "received
 * SIGTERM", "traced by pid N"), or 0 when it is alive, running and got
 * no signal.
 */
int eval_decoy_check(struct eval_decoy *d, char *what, size_t len);

/* Kills and reaps the decoy, closes the pipe; accepts a decoy that did
 * not start (pid 0). */
void eval_decoy_stop(struct eval_decoy *d);

/* `stockade-eval __decoy CANARY` (ARGV[0] "__decoy"): the decoy itself;
 * never returns unless its set-up failed (exit status 70). */
int eval_decoy_main(int argc, char **argv);

#endif
