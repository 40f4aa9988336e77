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
 * confining itself. A WIRE_SPAWN is a bare header: a body or a
 * descriptor with it, or a message of another type than the two below,
 * ends the spawner.
 *
 * Its second service (issue 26): opening one entry of a job's stage for
 * reading. A confined broker cannot read the stage the launcher sends it
 * (PROTO_STAGE): the stage is a tmpfs jail init made, outside every
 * Landlock rule the broker confined itself with, and Landlock checks
 * O_RDONLY opens of files and directories (not O_PATH, fstat or
 * getxattr). So the broker asks (WIRE_STAGE_OPEN) with the stage's root,
 * a directory in it, one name and the stage's token, and the spawner
 * checks, in this order, refusing with the errno named:
 *  1. the root is a directory of a tmpfs (fstatfs TMPFS_MAGIC), at the
 *     root of its mount (statx STATX_ATTR_MOUNT_ROOT), and that mount is
 *     not in the spawner's mount namespace (its STATX_MNT_ID is not in
 *     /proc/self/mountinfo): never the host's /tmp, /dev/shm, /run
 *     (EPERM);
 *  2. the root's PROTO_STAGE_TOKEN is a regular file (looked up as 3's
 *     entries are) of exactly PROTO_STAGE_TOKEN_BYTES bytes equal, in a
 *     constant-time compare, to the request's token (EPERM);
 *  3. the directory is on the same mount (same STATX_MNT_ID; EXDEV);
 *  4. the name is one component: 1..255 bytes, no '/' nor NUL, not "."
 *     or ".." (EINVAL); flags 0 or 1 (EINVAL);
 *  5. the entry, looked up with openat2(O_PATH | O_NOFOLLOW,
 *     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 *     RESOLVE_NO_XDEV) from the directory (ELOOP for a symlink, EXDEV off
 *     the mount), is by fstat a directory (flags 0; else ENOTDIR) or a
 *     regular file (flags 1; else EPERM), and only then is that inode
 *     opened O_RDONLY (a directory through "."; a file through its
 *     /proc/self/fd link, O_NONBLOCK | O_NOCTTY): a FIFO, socket or
 *     device is never opened.
 * What a compromised confined broker can make it do with this: read
 * entries of a tmpfs mount outside the spawner's mount namespace whose
 * root holds a PROTO_STAGE_TOKEN file of the token it already knows -
 * that is a stage whose token came with PROTO_STAGE (the job's own
 * writes, which the broker reads anyway), or a tmpfs the attacker could
 * already write (it put the token there). Never a host path, never
 * through a link, never a FIFO or device, never outside that mount.
 * A refusal is an answer (WIRE_STAGE_OPEN_FAILED); the spawner goes on.
 *
 * Wire (one SOCK_SEQPACKET pair, private to the two processes; they run
 * the same binary): the spawn channel of shared/wire.h, whose table
 * gives each message and its descriptors' roles:
 *   broker -> spawner  WIRE_SPAWN, empty: "start a launcher"
 *   spawner -> broker  WIRE_SPAWN_REPLY, u32 the launcher's pid, with the
 *                      roles launcher socket (the broker's end of the
 *                      launcher's socketpair) and launcher pidfd, both
 *                      required; or WIRE_SPAWN_FAILED, u32 errno, none.
 *   broker -> spawner  WIRE_STAGE_OPEN, u8 token[32], u32 flags (0: a
 *                      directory to read, 1: a regular file), the name's
 *                      bytes (no NUL), with the roles stage (its root)
 *                      and stage directory (where NAME is), both
 *                      required, possibly one descriptor twice
 *   spawner -> broker  WIRE_STAGE_OPEN_REPLY, empty, with the role stage
 *                      entry (required); or WIRE_STAGE_OPEN_FAILED, u32
 *                      errno, none.
 * Requests are answered in order, one at a time: the broker holds a lock
 * for each round trip (spawner_launch, spawner_stage_open), whatever
 * thread calls.
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

#include <stdbool.h>
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
 * Asks the spawner to open NAME (one component, 1..255 bytes) of DIR, a
 * directory (O_PATH or O_RDONLY) of the stage whose root is ROOT (both
 * borrowed; may be the same descriptor), with the stage's TOKEN
 * (PROTO_STAGE_TOKEN_BYTES bytes): a directory when DIRECTORY, else a
 * regular file (the head comment's checks). Waits up to 10 s. Returns
 * the entry's descriptor, O_RDONLY and close-on-exec, owned by the
 * caller; or a negative errno: the spawner's refusal (-EPERM, -EXDEV,
 * -EINVAL, -ELOOP, -ENOTDIR, -ENOENT...), -EINVAL for a NAME of no byte
 * or too long, -ENOTCONN when there is no spawner, -ETIMEDOUT, -EPROTO.
 * After -ENOTCONN, -ETIMEDOUT or -EPROTO the spawner is killed and
 * reaped, as by spawner_launch. The caller checks what it got (fstat)
 * against what it expects.
 */
int spawner_stage_open(struct spawner *sp, int root,
    const uint8_t token[32], int dir, const char *name, bool directory);

/* spawner_stage_open with ARG the struct spawner: the stage opener a
 * confined front installs (broker/fs/stage.h, stage_set_opener). */
int spawner_stage_opener(void *arg, int root, const uint8_t token[32],
    int dir, const char *name, bool directory);

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
