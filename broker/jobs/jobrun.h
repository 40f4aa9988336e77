/*
 * jobrun.h: running one job, the part `stockade run` (cmd_run.c) and the
 * `exec` method of `stockade serve` (rpc_exec.c, docs/protocol.md)
 * share: the policy and a command line become a job spec, the job runs on a
 * supervisor with the workspace at /work, its output is captured within
 * the policy's caps, and the result becomes the JSON object of README.md
 * ("Result fields").
 *
 * Signals: a broker interrupted while a job runs sends CANCEL so that the
 * launcher kills the jail and still answers with the job's RESULT. The
 * handler can reach only file-scope state, so that state (the socket, the
 * encoded CANCEL, the signal caught) lives in jobrun.c, once per process.
 */
#ifndef STOCKADE_JOBRUN_H
#define STOCKADE_JOBRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "capture.h"
#include "egress_ctl.h"
#include "egress_proxy.h"
#include "fsapi.h"
#include "policy.h"
#include "proto.h"
#include "result.h"
#include "result_json.h"
#include "staged.h"
#include "stdin_feed.h"
#include "supervisor.h"

/* What a caller may change of the policy's [limits] for one job; 0 keeps
 * the policy's value. `stockade run` may set any value its flags accept
 * (the caller is the deployer); `stockade serve` only lowers them. */
struct jobrun_overrides {
	uint64_t wall_ms; /* wall-clock limit, milliseconds */
	uint64_t cpu_ms; /* CPU time of the jail, milliseconds */
	uint64_t memory_bytes; /* memory limit, bytes */
	uint64_t fsize_bytes; /* RLIMIT_FSIZE, bytes */
	uint64_t tmp_bytes; /* /tmp tmpfs size, bytes */
	uint64_t output_bytes; /* the cap of stdout and of stderr, bytes */
	uint32_t nproc; /* tasks of the jail */
};

struct jobrun {
	struct job_limits limits; /* in force: the policy's, overridden */
	struct job_spec spec; /* owned, every string and array in it
				   * (proto.h); jobrun_free clears it */
	int tty_fd; /* the caller's terminal for the payload's
				   * stdin (layer no_terminal off; borrowed),
				   * or -1 (jobrun_init's default) */
	struct stdin_feed *feed; /* the job's standard input (borrowed;
				   * stdin_feed.h), or NULL (jobrun_init's
				   * default): /dev/null. Not with tty_fd */
	struct capture cap[3]; /* [1] stdout, [2] stderr ([0] unused) */
	struct job_result res; /* filled by jobrun_exec */
	output_fn tee; /* also given every chunk (may be NULL) */
	void *tee_arg;
	int start_error; /* a negative errno from a launcher start
				   * the caller made before (cmd_run starts
				   * it before confining the broker, which
				   * then cannot start another): reported
				   * by jobrun_exec instead of trying
				   * again; 0 (jobrun_init's default) none */
	/* Controlled egress (issue 25; jobrun_use_network): the session's
	 * proxy (borrowed), or NULL (jobrun_init's default): no network;
	 * the job's rules and caps (owned); its report once it ran
	 * (owned, malloc'd), or NULL. */
	struct egress_proxy *proxy;
	struct egress_job net;
	struct egress_report *net_report;
	bool net_sent; /* the proxy took the running job (on_net) */
	/* The workspace as a layer (issue 26; staged.h): the stage the
	 * launcher sent for the running job (PROTO_STAGE, an O_RDONLY
	 * directory descriptor of the stage tmpfs's root, holding
	 * PROTO_STAGE_UPPER and PROTO_STAGE_WORK; owned: supervisor.h,
	 * stage_fn, jobrun_stage_arm), or -1 (none yet, or a job without a
	 * stage, job_spec_staged: an evaluation with layer mount_ns or
	 * user_ns off writes the workspace itself); the commit
	 * mode (the policy's [files] commit unless the front chose) and the
	 * [writeback] rules (borrowed from the policy); the number the
	 * session gives the change set; once the job ran with a stage, its
	 * change set and what became of it (staged_valid). STAGE_TOKEN:
	 * the token that came with stage_fd (PROTO_STAGE_TOKEN). */
	int stage_fd;
	uint8_t stage_token[PROTO_STAGE_TOKEN_BYTES];
	enum commit_mode commit;
	const struct wb_policy *writeback;
	uint32_t stage_id;
	bool staged_valid;
	struct staged staged;
};

/*
 * Prepares JR for the program ARGV (ARGC >= 1 strings) under POL with the
 * overrides OV (may be NULL). JR's spec holds copies of what it takes
 * from POL and ARGV (jobspec_from_policy): the caller may free both once
 * this returns. The job runs without the layers
 * policy_layers_off(POL) names (the caller has refused such a policy
 * unless it is an evaluation: docs/layers.md); with layer scrubbed_env
 * off its environment is a copy of the broker's own (environ, as it is
 * now) with POL's [environment] laid over it. The
 * command line is checked against what the RUN message can carry
 * (jobspec_from_policy) before anything is started. Returns 0, or a
 * negative errno with JR cleared (jobrun_free is still allowed): -E2BIG,
 * -EMSGSIZE, -EINVAL as jobspec_from_policy, -EOVERFLOW for a broker
 * environment over JOB_MAX_ENV variables or with one over JOB_MAX_STR
 * bytes (jobrun_spec_error words them), -ENOMEM.
 */
int jobrun_init(struct jobrun *jr, const struct policy *pol, int argc,
    char **argv, const struct jobrun_overrides *ov);

/* Why a client's variable is refused (jobrun_set_env); the names are
 * stable, the same in every front (README.md, docs/protocol.md). */
enum jobenv_error {
	JOBENV_OK = 0,
	JOBENV_INVALID_NAME, /* "invalid_env_name": empty, over
			       * JOBENV_MAX_NAME bytes, or not
			       * [A-Za-z_][A-Za-z0-9_]* ('=' included) */
	JOBENV_INVALID_VALUE, /* "invalid_env_value": holds a NUL, or
			       * NAME=value over JOB_MAX_STR bytes */
	JOBENV_NOT_ALLOWED, /* "env_not_allowed": not in the policy's
			       * [jail] client_env */
	JOBENV_TOO_MANY, /* "too_many_env": over JOB_MAX_ENV with
			       * the policy's */
};

/* Longest variable name a client may set, bytes. */
#define JOBENV_MAX_NAME 255u

/* The stable name of E ("env_not_allowed"), "ok" for JOBENV_OK. */
const char *jobenv_error_name(enum jobenv_error e);

/*
 * Lays the client's variable NAME=VALUE (VALUE_LEN bytes, which must
 * hold no NUL) over JR's environment (the policy's [environment],
 * jobrun_init): a variable of that name is replaced, else it is added.
 * Allowed only when POL's [jail] client_env lists NAME
 * (policy_client_env_allows). The string is copied (JR's spec owns it;
 * a variable it replaces is freed). Returns
 * JOBENV_OK, or the reason with one sentence for the user in WHY
 * (WHYLEN bytes; JR unchanged). Out of memory, *OOM is set and the
 * answer is JOBENV_TOO_MANY (never JOBENV_OK); the caller reports it as
 * its own failure. The whole job must still fit in one RUN:
 * jobrun_check_fits after the last one.
 */
enum jobenv_error jobrun_set_env(struct jobrun *jr, const struct policy *pol,
    const char *name, const char *value, size_t value_len, bool *oom, char *why,
    size_t whylen);

/*
 * Layer scrubbed_env off (docs/layers.md): SPEC's environment becomes the
 * broker's own, every variable the policy sets taking the policy's value
 * (the policy's entries are appended, the broker's of the same name left
 * out). SPEC owns the new array and copies of the broker's strings (the
 * policy's, which SPEC owned already, move into it; job_spec_clear frees
 * them all). Returns 0, -EOVERFLOW (more than JOB_MAX_ENV variables, or
 * one longer than JOB_MAX_STR) or -ENOMEM, SPEC unchanged then.
 * jobrun_init's; the caller checks that the job still fits.
 */
int jobrun_inherit_environment(struct job_spec *spec);

/*
 * Gives JR's job the network of the policy's [network] section NET
 * (borrowed) through the session's proxy PX (borrowed; it must outlive
 * JR's job): the job's rules are NET's, or, when NARROW is not NULL, a
 * client's list narrowed against them (egress_rules_narrow: it may
 * narrow, never widen), and NET's caps. The job's spec gets a proxy
 * port and the proxy variables (jobspec_set_proxy). Call after
 * jobrun_init and before jobrun_exec; the client's list must be checked
 * here, before anything is started. Returns 0; -EPERM with *BAD the
 * index in NARROW of the first rule that would widen NET; -E2BIG,
 * -ENOMEM (egress_rules_narrow's); JR unchanged on failure.
 */
int jobrun_use_network(struct jobrun *jr, struct egress_proxy *px,
    const struct net_policy *net, const struct egress_rules *narrow,
    size_t *bad);

/*
 * Around one supervisor_run of JR's job on SUP (jobrun_exec's):
 * jobrun_net_arm makes SUP hand the job's NET to JR's proxy (SUP's
 * net_fn; none when JR has no proxy); jobrun_net_end takes it back and
 * fills JR->net_report with the job's report (egress_proxy_end: a proxy
 * that failed gives one that says proxy_failed), or leaves it NULL for a
 * job without a proxy (or when memory runs out).
 */
void jobrun_net_arm(struct jobrun *jr, struct supervisor *sup);
void jobrun_net_end(struct jobrun *jr, struct supervisor *sup);

/*
 * Around one supervisor_run of JR's job on SUP (jobrun_exec's; issue
 * 26): jobrun_stage_arm closes a stage_fd JR still holds and makes SUP
 * hand the job's STAGE to JR->stage_fd (SUP's stage_fn; a second one,
 * or one of another job, is closed); jobrun_stage_end takes SUP's
 * receiver back. jobrun_stage.c.
 */
void jobrun_stage_arm(struct jobrun *jr, struct supervisor *sup);
void jobrun_stage_end(struct supervisor *sup);

/* JR's report and rules as the result functions take them (result_json.h,
 * struct result_net; both borrowed from JR, report NULL for a job that
 * had no network). */
struct result_net jobrun_net_of(const struct jobrun *jr);

/* 0, or -EMSGSIZE when JR's job no longer fits in one RUN message
 * (jobrun_spec_error words it), or -ENOMEM. */
int jobrun_check_fits(const struct jobrun *jr);

/*
 * The bytes of STREAM (1 stdout, 2 stderr) that JR's result keeps, head
 * and tail: the stream's cap (stdout_kb, stderr_kb, or --output), or
 * SIZE_MAX with layer limits off (an evaluation: output is not capped
 * then, so that what the program printed reaches the caller whole,
 * docs/layers.md). JR must have been prepared by jobrun_init. Pure.
 */
size_t jobrun_output_cap(const struct jobrun *jr, int stream);

/*
 * Keeps at most CAP bytes (head and tail) of each stream for the result
 * instead of the policy's caps, which still bound what the job may write:
 * for a caller that passes the output through as it comes (jr->tee) and
 * prints no result, so that the broker's memory does not grow with the
 * caps. The status needs the last few KiB of stderr (jobrun_exec), so
 * CAP should be at least 8192. Returns 0 or -ENOMEM (JR unusable).
 */
int jobrun_shrink_captures(struct jobrun *jr, size_t cap);

/*
 * One sentence for a negative errno of jobrun_init (the caller's error,
 * or -ENOMEM), into BUF (LEN bytes). Returns BUF.
 */
char *jobrun_spec_error(int e, char *buf, size_t len);

/*
 * Runs the job prepared in JR on SUP (borrowed; started here if it is not
 * running, supervisor_start) with the workspace FS->root (borrowed) at
 * /work, capturing its output (and passing every chunk to JR->tee).
 *
 * The job's writes go to a stage (issue 26) of jobrun_stage_size's
 * bytes and entries, which the kernel holds at write time; after the
 * job, jobrun_settle reads its change set, holds it against the
 * [writeback] rules and commits, rolls back or keeps it by JR->commit,
 * the commit counting against the workspace quota
 * (FS->quota.workspace_bytes): no walk of the workspace is made for the
 * job (the commit walks it once when FS's usage figures are not yet
 * known, then keeps them current). Without a stage (layer mount_ns off:
 * an evaluation) the job writes the workspace itself: the launcher is
 * told how many bytes it may add (the quota less FS's usage) and the
 * workspace is counted again after it, a job that left it over its
 * quota ending disk_full whatever its exit; a workspace that cannot be
 * counted leaves the job nothing to add (fail closed).
 *
 * With layer limits off neither happens: no limit was in force.
 *
 * A job that exited non-zero is given the status of the limit it ran
 * into when the program's own last error message names it (an
 * allocation refused: memory_limit; EFBIG: file_size_limit; ENOSPC:
 * disk_full; a fork refused with EAGAIN: process_limit), or when the
 * launcher saw it at its process limit
 * (process_limit); its exit code is kept (docs/decisions.md).
 *
 * With JR->feed, the job reads it on its standard input (supervisor.h):
 * the run-once-more above happens only when nothing of it was lost
 * (stdin_feed_restartable), and a source that failed to read (an I/O
 * error, not its end) makes the result a sandbox_error naming it,
 * whatever the program did: it never ends ok with part of its input
 * silently dropped.
 *
 * With CATCH_SIGNALS (the `stockade run` way), SIGINT, SIGTERM and SIGHUP
 * are caught from the launcher's start to the job's end, then reset to
 * their default: the first sends CANCEL, a second kills the broker at
 * once (SA_RESETHAND). Without it the caller has installed
 * jobrun_catch_signals for its whole life, and a job is not started at
 * all once a signal has been caught (-EINTR).
 *
 * A job the launcher reports cancelled keeps that status (no
 * refinement) and gets the reason of the CANCEL sent in
 * JR->res.cancel_reason.
 *
 * Returns 0 when JR->res holds the job's result, whatever its status
 * (a launcher that died or broke the protocol mid-job is a sandbox_error
 * result); or a negative errno when the job could not be run at all (the
 * launcher did not start: supervisor_start's errors; -EINTR), with
 * JR->res a sandbox_error whose detail says why.
 */
int jobrun_exec(struct jobrun *jr, struct supervisor *sup, struct fs_ctx *fs,
    bool catch_signals);

/*
 * The stage a job under JR may fill (PROTO_RUN workspace_allow and
 * stage_files): bytes, the smaller of FS's quota.workspace_bytes and the
 * job's memory limit (the stage is a tmpfs, memory the job holds:
 * docs/decisions.md), and entries, quota.max_files. The same for every
 * job of a session, so that a warm jail built for one fits the next.
 */
void jobrun_stage_size(const struct jobrun *jr, const struct fs_ctx *fs,
    uint64_t *bytes, uint64_t *files);

/*
 * After JR's job ran with a stage (JR->stage_fd, taken here): reads its
 * change set into JR->staged (staged_open, under the policy's
 * [writeback] rules), makes a job that failed with its stage full
 * disk_full (with the figures), then, by JR->commit, commits the
 * pending changes to FS's workspace (always; on_ok when the status is
 * ok, else rolls them back) or keeps them. A commit that fails leaves
 * them staged; a full workspace then makes the job disk_full. Called by
 * jobrun_exec.
 */
void jobrun_settle(struct jobrun *jr, struct fs_ctx *fs);

/*
 * Sets JR's status from what the job left (jobrun_exec's, after
 * jobrun_settle): without a stage (layer mount_ns off: an evaluation),
 * the workspace's usage (FS, walked here) against its quota (with one,
 * the stage held the quota), then the program's own words for a limit
 * in the tail of its stderr, taken only for a job that exited non-zero
 * or aborted and only when the jail's figures back them (a disk_full
 * from them gets the stage's figures, jobrun_stage_figures).
 */
void jobrun_refine_status(struct jobrun *jr, struct fs_ctx *fs);

/* Appends to WHY (a NUL-terminated string in a buffer of LEN bytes) what
 * JR's stage held at the job's end against its allowance, bytes and
 * entries, and the policy keys that set it. */
void jobrun_stage_figures(const struct jobrun *jr, char *why, size_t len);

/* Sets JR's status to S with the detail WHY, keeping the exit code
 * (jobrun.c; for jobrun_settle). */
void jobrun_restatus(struct jobrun *jr, enum job_status s, const char *why);

/*
 * The result object of README.md ("Result fields") for JR's result,
 * limits and captures (result_to_json). Returns a new reference, or NULL
 * (ENOMEM).
 */
json_t *jobrun_result_json(const struct jobrun *jr);

/* Frees everything JR owns, its spec included (not what it borrows:
 * tty_fd, feed, tee_arg); accepts a cleared JR. */
void jobrun_free(struct jobrun *jr);

/*
 * Installs jobrun's handler for SIGINT, SIGTERM and SIGHUP with
 * SA_RESETHAND and without SA_RESTART (a blocking call in the caller's
 * loop returns EINTR): it records the signal (jobrun_interrupted) and,
 * while a job runs, sends CANCEL.
 */
void jobrun_catch_signals(void);

/* Resets SIGINT, SIGTERM and SIGHUP to their default action. */
void jobrun_default_signals(void);

/* The signal number the handler caught first, or 0. */
int jobrun_interrupted(void);

/*
 * Cancels the running job for WHY (enum job_cancel_reason, 1..
 * JOB_CANCEL_MAX) from another thread (mcp.c's reader: the client's
 * notifications/cancelled or its going away) or from serve's watch of
 * its client during a job (a $/cancelRequest, a client gone): sends
 * CANCEL as a signal would, so the launcher kills the jail and still
 * answers with the job's RESULT, status cancelled. The first request
 * (or signal) since the last jobrun_cancel_reset gives the reason; a
 * later one sends that first reason again. A request made before the
 * job is armed is kept and sent as soon as it is (jobrun_exec), until
 * jobrun_cancel_reset. Thread-safe and async-signal-safe; sets nothing a
 * signal sets (jobrun_interrupted stays 0: the session goes on).
 */
void jobrun_cancel(enum job_cancel_reason why);

/* Forgets a cancellation request (before the next job). */
void jobrun_cancel_reset(void);

/* Has jobrun_cancel been called since the last jobrun_cancel_reset? */
bool jobrun_cancel_requested(void);

#endif
