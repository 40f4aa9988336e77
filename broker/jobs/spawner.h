/*
 * spawner.h: the unconfined process that starts launchers for a confined
 * broker (issue 3, item 7; docs/architecture.md, "Processes").
 *
 * Why it exists: once confine_broker() (confine.h) has run, the broker
 * can neither execve (seccomp) nor give a program it starts the right to
 * mount: Landlock forbids mount(2), pivot_root(2) and the new mount API
 * in every process of a domain, and a child inherits its parent's domain
 * across exec (landlock(7), "Filesystem topology modification"). A
 * launcher exec'd by the confined broker could not build a single jail.
 * So the broker forks, before confining itself, a tiny process that
 * stays outside its domain and its seccomp filter and does one thing:
 * start the launcher it was given, on request.
 *
 * What a confined (perhaps compromised) broker can make it do: start
 * the launcher binary fixed at fork time, with a fixed argv
 * ("stockade-launcher --ipc-fd 3"), an empty environment (STOCKADE_DEBUG
 * only when the broker had it at start-up), stdin/stdout /dev/null and
 * the spawner's stderr - what the broker could already do before
 * confining itself. Nothing it sends is parsed beyond a bare WIRE_SPAWN
 * header; any other message, or a descriptor, ends the spawner.
 *
 * Wire (one SOCK_SEQPACKET pair, private to the two processes; they run
 * the same binary): the spawn channel of shared/wire.h, whose table
 * gives each message and its descriptors' roles:
 *   broker -> spawner  WIRE_SPAWN, empty: "start a launcher"
 *   spawner -> broker  WIRE_SPAWN_REPLY, u32 the launcher's pid, with the
 *                      roles launcher socket (the broker's end of the
 *                      launcher's socketpair) and launcher pidfd, both
 *                      required; or WIRE_SPAWN_FAILED, u32 errno, none.
 * The launcher is made with clone3(CLONE_PARENT | CLONE_PIDFD), so it is
 * the broker's child, not the spawner's: the broker reaps it, gets its
 * SIGCHLD, and the launcher's PR_SET_PDEATHSIG follows the broker.
 *
 * Lifetime: the spawner is the broker's child with PR_SET_PDEATHSIG
 * SIGKILL, and exits when its socket reads EOF; it ignores the signals
 * a terminal sends to the whole foreground group (SIGINT, SIGQUIT,
 * SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU), so ^C reaches the broker, which
 * decides. A confined broker cannot make a new spawner (it would be
 * confined too): if the spawner dies, no launcher can be started again.
 */
#ifndef STOCKADE_SPAWNER_H
#define STOCKADE_SPAWNER_H

#include <stdint.h>
#include <sys/types.h>

/* The launcher's socket number and arguments, the same on both paths
 * (supervisor.c's direct fork and the spawner). */
#define SPAWNER_LAUNCHER_NAME "stockade-launcher"
#define SPAWNER_LAUNCHER_FD 3

struct spawner {
	pid_t pid; /* the spawner, 0 when none */
	int pidfd; /* its pidfd, -1 when none */
	int sock; /* our end of its socket, -1 when none */
};

/* Sets SP to "no spawner" (pid 0, descriptors -1). */
void spawner_clear(struct spawner *sp);

/*
 * Forks the spawner (clone with CLONE_PIDFD; it is our child). EXE_FD is
 * the launcher binary (O_PATH, borrowed: the spawner keeps its own copy,
 * the caller may close it afterwards). Call it before confine_broker()
 * and before making threads. The child keeps only stderr, /dev/null as
 * stdin and stdout, its socket and the launcher's descriptor
 * (closefrom); it holds a copy of the caller's memory as it was at the
 * fork, and never returns. Returns 0, or a negative errno (socketpair,
 * clone) with SP unchanged.
 */
int spawner_start(struct spawner *sp, int exe_fd);

/*
 * Asks the spawner for a launcher and waits for the answer until the
 * CLOCK_MONOTONIC time DEADLINE_MS (milliseconds). On success returns 0
 * with *SOCK (our end of the launcher's SOCK_SEQPACKET socketpair) and
 * *PIDFD (the launcher's pidfd), both O_CLOEXEC and owned by the caller,
 * and *PID, a child of the caller that the caller must reap. Returns a
 * negative errno otherwise: the spawner's own (socketpair, clone3) as it
 * reported it; -ENOTCONN when there is no spawner or it is gone;
 * -ETIMEDOUT when it did not answer in time; -EPROTO for a malformed
 * answer. After -ENOTCONN, -ETIMEDOUT or -EPROTO the spawner is killed
 * and reaped (SP holds none) because its socket can no longer be
 * trusted to pair answers with requests.
 */
int spawner_launch(struct spawner *sp, uint64_t deadline_ms, int *sock,
    int *pidfd, pid_t *pid);

/*
 * Closes our socket (the spawner's signal to exit), waits up to 5 s for
 * it, kills it if it has not exited, and reaps it. SP then holds no
 * spawner. Safe on a cleared SP.
 */
void spawner_stop(struct spawner *sp);

/*
 * In a freshly forked child: makes SOCK the descriptor
 * SPAWNER_LAUNCHER_FD, stdin and stdout /dev/null, keeps stderr, closes
 * every other descriptor, restores default signal dispositions and an
 * empty signal mask, and execveat()s EXE_FD (AT_EMPTY_PATH) with argv
 * "stockade-launcher --ipc-fd 3" and an environment holding only
 * STOCKADE_DEBUG=1 when the caller has STOCKADE_DEBUG set. Only
 * async-signal-safe calls. Never returns: _exit(127) on any failure.
 */
_Noreturn void spawner_exec_launcher(int sock, int exe_fd);

/*
 * spawner_exec_launcher's work for any helper program (the launcher, the
 * egress proxy): as it, with ARGV (NULL-terminated, borrowed) in place
 * of the launcher's, so that the program finds its socket at
 * SPAWNER_LAUNCHER_FD (3). Only async-signal-safe calls; never returns.
 */
_Noreturn void spawner_exec_helper(int sock, int exe_fd, char *const argv[]);

/*
 * A child held the way the broker holds both the spawner and a launcher
 * (supervisor.c): its pid, its pidfd and our end of a socket to it.
 */

/* CLOCK_MONOTONIC (clock_gettime(2)) in milliseconds. */
uint64_t spawner_now_ms(void);

/*
 * Waits until FD is readable (or hung up: the read that follows says
 * which) or the CLOCK_MONOTONIC time DEADLINE_MS (spawner_now_ms) has
 * passed; EINTR is retried. Returns 0, -ETIMEDOUT, or another negative
 * errno (poll(2)).
 */
int spawner_wait_readable(int fd, uint64_t deadline_ms);

/*
 * Ends the child *PID, with its pidfd *PIDFD and our socket to it *SOCK
 * (both owned, -1 when none). GRACE_MS 0: kills it (SIGKILL through the
 * pidfd) at once. Otherwise closes *SOCK first, the child's signal to
 * exit, and kills it only if it has not exited within GRACE_MS
 * milliseconds. Then reaps it (waitpid, EINTR retried). Always closes
 * both descriptors (setting them to -1) and sets *PID to 0; with *PID <=
 * 0 that is all it does.
 */
void spawner_end_child(pid_t *pid, int *pidfd, int *sock, uint64_t grace_ms);

#endif
