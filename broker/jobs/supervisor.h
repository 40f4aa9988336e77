/*
 * supervisor.h: the broker's side of the launcher (mirrors
 * launcher/supervisor/dispatch.c). One struct per launcher; a test can build one and
 * drive it (style.md rule 16).
 */
#ifndef STOCKADE_SUPERVISOR_H
#define STOCKADE_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>
#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"
#include "spawner.h"
#include "stdin_feed.h"

/* How long a launcher may stay silent, milliseconds: from its exec to
 * HELLO_REPLY, and from RUN to RESULT beyond the job's wall_ms. */
#define SUPERVISOR_HELLO_MS 5000u
#define SUPERVISOR_GRACE_MS 10000u

/*
 * What a session watches while a job runs besides the launcher (serve.c:
 * its client's connection, for a $/cancelRequest or a client gone).
 * supervisor_run polls FDS with the launcher's socket and calls FN (with
 * ARG) once right after RUN is sent, every revents 0 (to look at what
 * was read before), and then whenever one of them has events, their
 * revents set. FN may change FDS (an fd of -1 is not polled); it must
 * stop polling for a condition that stays (a hang-up it has acted on),
 * or it is called again at once. FN may call jobrun_cancel, and must
 * not block.
 */
#define SUPERVISOR_WATCH_FDS 2
struct supervisor_watch {
	struct pollfd fds[SUPERVISOR_WATCH_FDS];
	void (*fn)(struct supervisor_watch *w);
	void *arg;
};

/*
 * The receiver of a job's NET (issue 25; proto.h): called while
 * supervisor_run waits, once per job whose spec has a proxy_port, before
 * its RESULT, with ARG (struct supervisor's net_arg), the job's id, and
 * the two descriptors jail init made in the job's network namespace:
 * LISTENER, a TCP socket listening on the jail's 127.0.0.1:proxy_port
 * (non-blocking), and PACKET, an AF_PACKET socket on the jail's lo whose
 * locked filter passes the jail's outgoing TCP SYNs and UDP datagrams
 * (launcher/init/egress.c). The function owns both and must close them
 * (or hand them on) itself; it must not block (the launcher's RESULT
 * waits). Without one (net_fn NULL, as supervisor_init leaves it), both
 * are closed: the job's connections to the proxy then fail
 * (ECONNREFUSED).
 */
typedef void (*net_fn)(void *arg, uint64_t job_id, int listener, int packet);

/*
 * The receiver of a job's STAGE (issue 26; proto.h): called while
 * supervisor_run waits, once per job with a stage (job_spec_staged: layers mount_ns and
 * user_ns on), before its
 * RESULT, with ARG (struct supervisor's stage_arg), the job's id,
 * TOKEN (the stage's PROTO_STAGE_TOKEN_BYTES token bytes, borrowed for
 * the call: the spawner opens the stage for a confined broker only with
 * them, spawner.h), and
 * STAGE, an O_RDONLY directory descriptor of the root of the job's stage
 * tmpfs: PROTO_STAGE_UPPER in it is the upper layer of the overlay the
 * job saw at /work, PROTO_STAGE_WORK overlayfs's work directory
 * (broker/fs/stage.h reads it). The tmpfs lives while a descriptor of it
 * does. The function owns STAGE and must close it (or keep it); it must
 * not block. Without one (stage_fn NULL), it is closed: what the job
 * wrote is dropped.
 */
typedef void (*stage_fn)(void *arg, uint64_t job_id, int stage,
    const uint8_t *token);

struct supervisor {
	int exe_fd; /* the launcher binary, opened O_PATH once */
	pid_t pid; /* launcher process, 0 when none */
	int pidfd; /* its pidfd */
	int sock; /* our end of the socketpair */
	uint64_t next_job_id;
	unsigned restarts; /* launchers started after the first */
	uint64_t run_started_ms; /* when the running job's RUN was sent
				  * (spawner_now_ms), for its wall_ms
				  * if the launcher fails it; 0 idle */
	uint8_t *msg; /* PROTO_MAX_MSG bytes */
	bool use_spawner; /* launchers come from SPAWNER, never a fork */
	int tty_fd; /* the caller's terminal, sent with the next
			      * RUN as its 2nd descriptor (layer
			      * no_terminal off only; borrowed), or -1 */
	struct stdin_feed *feed; /* the next job's standard input
				  * (borrowed; stdin_feed.h), or NULL:
				  * its pipe's read end goes with RUN
				  * instead of tty_fd (JOB_F_STDIN) */
	struct spawner spawner; /* spawner.h; none until
				 * supervisor_use_spawner */
	uint32_t pool_size; /* warm jails each launcher keeps (POOL, sent
			      * at every start; 0: none, `stockade run`) */
	struct supervisor_watch *watch; /* polled during a job (borrowed),
					 * or NULL (supervisor_init's) */
	net_fn net_fn; /* a job's NET receiver, or NULL: closed */
	void *net_arg; /* its ARG */
	stage_fn stage_fn; /* a job's STAGE receiver, or NULL: closed */
	void *stage_arg; /* its ARG */
	bool run_unread; /* the last supervisor_run's launcher died
			      * before it read the job's RUN: nothing of
			      * the job ran (supervisor_run) */
};

/*
 * Called for each chunk of output of the running job: STREAM 1 stdout,
 * 2 stderr; DATA[0..LEN) borrowed for the call.
 */
typedef void (
    *output_fn)(void *arg, int stream, const uint8_t *data, size_t len);

/*
 * Finds the launcher binary "stockade-launcher" (install_open_helper,
 * install_path.h): in the directory of the running broker
 * (/proc/self/exe; a build tree), else in <that directory>/<path from
 * bindir to libexecdir>/stockade/ (an installed tree wherever it lies),
 * else in STOCKADE_LIBEXECDIR; never $PATH. Opens it O_PATH|O_CLOEXEC
 * into S->exe_fd after checking it is a regular executable file.
 * Returns 0 or a negative errno; writes the paths tried to ERR on
 * failure.
 */
int supervisor_init(struct supervisor *s, char *err, size_t errlen);

/*
 * As supervisor_init, with the launcher binary at PATH instead of the
 * search (tests, whose binary does not sit beside the launcher). PATH is
 * opened O_PATH at once and must be a regular executable file. Returns 0
 * or a negative errno with ERR set.
 */
int supervisor_init_path(struct supervisor *s, const char *path, char *err,
    size_t errlen);

/*
 * From now on, starts launchers through a spawner (spawner.h) instead of
 * forking them: forks the spawner with S's launcher binary, then closes
 * S->exe_fd (the broker no longer needs it). Call it after
 * supervisor_init or supervisor_init_path, before confine_broker() and
 * before making threads; a launcher already running is kept. A broker
 * that confines itself must call it: a confined broker can neither exec
 * nor give a launcher the right to mount, nor read its jobs' stages: this
 * also makes the spawner the process's stage opener (broker/fs/stage.h,
 * stage_set_opener with spawner_stage_opener and S's spawner), until
 * supervisor_free. S must then stay where it is. Returns 0, or a
 * negative errno from spawner_start (S unchanged: launchers are still
 * forked, the stage opened directly).
 */
int supervisor_use_spawner(struct supervisor *s);

/*
 * Starts a launcher and exchanges HELLO; returns 0 at once when one is
 * running, and first reaps one that has exited (it died between jobs;
 * S->restarts counts it). Without a spawner: fork, then
 * execveat of exe_fd with its socket at fd 3, stdin and stdout /dev/null,
 * everything else closed, an empty environment (spawner_exec_launcher).
 * With one: the spawner does the same and hands over the launcher, our
 * child all the same. Returns 0 or a negative errno (-EPROTO on a version
 * mismatch, -ETIMEDOUT when no HELLO_REPLY came within
 * SUPERVISOR_HELLO_MS of the start, -ENOTCONN when the spawner is gone:
 * no launcher can be started again, the broker should exit); on failure
 * the launcher is killed and reaped.
 */
int supervisor_start(struct supervisor *s);

/*
 * Runs SPEC (its job_id is assigned here) with the workspace directory
 * WSFD (borrowed), and S->tty_fd when it is not -1, calling OUT for each
 * output chunk, and fills RES (the caller clears it). With S->feed, SPEC
 * gets JOB_F_STDIN and the job reads a new pipe (stdin_feed_start) that
 * is fed while the launcher is waited for, and closed when the job ends:
 * a program that does not read it delays nothing (stdin_feed.h); a pipe
 * that cannot be made is a sandbox_error result. If the launcher dies or breaks the protocol, or its
 * RESULT has not come SPEC's wall_ms + SUPERVISOR_GRACE_MS after RUN was
 * sent, not counting the time spent in OUT (detail "the launcher did not
 * answer within N ms"), RES is a sandbox_error naming why, the launcher
 * is killed and reaped, and the next call starts a new one. When that
 * launcher died before it read the RUN (it had exited before the RUN was
 * sent, the send failed with EPIPE, or its socket was closed with a
 * message of ours unread, ECONNRESET rather than end of file; unix(7)),
 * S->run_unread is set: unless the caller sent CANCEL meanwhile (the
 * unread message may then be the CANCEL), nothing of the job ran, and
 * the caller may run it again (jobrun_exec does, once). While the job
 * runs, S->watch (when not NULL) is served as struct supervisor_watch
 * says. Returns 0
 * when RES is filled, or a negative errno when nothing could be sent at
 * all (supervisor_start's errors).
 */
int supervisor_run(struct supervisor *s, struct job_spec *spec, int wsfd,
    output_fn out, void *arg, struct job_result *res);

/* Closes the session and reaps the launcher, killing it if it has not
 * exited within 5 s; S can be started again. */
void supervisor_stop(struct supervisor *s);

/* supervisor_stop, then stops the spawner (spawner_stop), closes exe_fd
 * and frees S's buffers. */
void supervisor_free(struct supervisor *s);

#endif
