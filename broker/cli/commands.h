/* commands.h: the broker's subcommands; each returns the exit status. */
#ifndef STOCKADE_COMMANDS_H
#define STOCKADE_COMMANDS_H

#include <signal.h>
#include <stddef.h>

#include "checkpoint.h"
#include "confine.h"
#include "egress_proxy.h"
#include "fsapi.h"
#include "policy.h"
#include "supervisor.h"
#include "workspace.h"

/* Exit statuses shared by every command (README.md, "Exit status"). */
#define EXIT_USAGE 2 /* bad arguments or a bad policy file */
#define EXIT_SANDBOX 70 /* stockade itself failed (EX_SOFTWARE) */

int cmd_run(int argc, char **argv);
int cmd_policy(int argc, char **argv);
/* `stockade put` and `stockade get` (cmd_fs.c, cmd_fs_xfer.c): exit 0,
 * 1 for a named file error, 2 for usage, 69 without openat2. */
int cmd_put(int argc, char **argv);
int cmd_get(int argc, char **argv);
/* `stockade ls`, `rm`, `mkdir`, `mv`, `stat` (cmd_fs.c; rm, mkdir and mv
 * in cmd_fs_edit.c): the other operations of the host file API on a
 * workspace; exit statuses as put. */
int cmd_ls(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_mkdir(int argc, char **argv);
int cmd_mv(int argc, char **argv);
int cmd_stat(int argc, char **argv);
/* `stockade unpack` and `stockade pack` (cmd_pack.c, fs_tar.h): a tar
 * archive into or out of a workspace; exit statuses as put. */
int cmd_unpack(int argc, char **argv);
int cmd_pack(int argc, char **argv);
/* `stockade serve` (serve.c): a JSON-RPC 2.0 session on one workspace
 * (docs/protocol.md). Exit 0 at end of input or on SIGINT/SIGTERM. */
int cmd_serve(int argc, char **argv);
/* `stockade doctor [--json]` (cmd_doctor.c, doctor.h): every layer of the
 * jail checked on this host, then the verdict. Exit 0 for "full" and
 * "degraded", 69 (EXIT_REFUSED) for "refused", 2 for usage. */
int cmd_doctor(int argc, char **argv);
/*
 * `stockade check ...` and `stockade eval ...` (cmd_verify.c): executes
 * the program NAME ("stockade-check", "stockade-eval"; verify/) found
 * the way the launcher is (install_open_helper, install_path.h: beside
 * this binary, then libexecdir/stockade by the relative path, then the
 * compiled-in STOCKADE_LIBEXECDIR) with ARGV (ARGC strings, ARGV[0] the
 * command's name, kept) and the environment
 * plus STOCKADE_BROKER=this binary, so that the program checks the
 * broker the user ran. Returns only on failure: EXIT_SANDBOX (70), with
 * the places tried and the fix on stderr (COMMAND names the command in
 * the message). On success the exit status is the program's own:
 * docs/check.md and docs/evidence.md give them.
 */
int cmd_exec_verify(const char *command, const char *name, int argc,
    char **argv);

/* `stockade mcp [--workspace DIR] [--keep] [--policy FILE]` (cmd_mcp.c,
 * mcp.h, docs/mcp.md; issue 8): a Model Context Protocol server over
 * stdio on one workspace. Exit 0 at end of input or on SIGINT/SIGTERM,
 * 1 when its output failed or a line was over 16 MiB, 2 for usage, a bad
 * policy or workspace, 69 refused, 70 when the launcher cannot be
 * found or started. */
int cmd_mcp(int argc, char **argv);

/*
 * The set-up `stockade serve` and `stockade mcp` (session.c; COMMAND:
 * "serve", "mcp") share before their transports differ: loads POLICY_FILE (NULL:
 * the default) into POL and refuses a policy only an evaluation may run
 * (one that switches a layer off, [jail] unsafe_layers_off or
 * unsafe_no_seccomp, or binds without Landlock, [filesystem]
 * unsafe_ro_bind_no_landlock: docs/layers.md); refuses when the host
 * lacks a layer (doctor_cached_verdict); opens WORKSPACE (NULL: a fresh
 * temporary one) into WS; finds the launcher into SUP
 * (supervisor_init); starts the egress proxy into PX when the policy
 * allows hosts (session_start_proxy; PX is initialised either way and
 * the caller stops it). Says why on stderr. Returns 0, or the exit status
 * (EXIT_USAGE, EXIT_REFUSED, EXIT_SANDBOX) with all it made undone (POL
 * cleared, WS closed and, if temporary, removed).
 */
int session_prepare(const char *command, const char *policy_file,
    const char *workspace, struct policy *pol, struct workspace *ws,
    struct supervisor *sup, struct egress_proxy *px);

/*
 * From here on launchers come from a spawner (supervisor_use_spawner)
 * and the broker is confined with the NRULES RULES (confine_or_complain).
 * Returns 0 or the exit status (EXIT_SANDBOX, EXIT_REFUSED).
 */
int session_confine(struct supervisor *sup, const struct confine_rule *rules,
    size_t nrules);

/*
 * The checkpoint store's directory (checkpoint.h, ckpt_dir_make) into CD
 * when POL allows checkpoints, made before the session confines itself:
 * the confined broker can make nothing in $TMPDIR. Failing, CD stays
 * cleared with a warning (fs.checkpoint then answers io_error). The
 * caller adds its rules (cd->fd every right, cd->parent_fd
 * LANDLOCK_ACCESS_FS_REMOVE_DIR) and hands it to the session, or
 * removes it (ckpt_dir_remove). A reaper child removes the store when
 * the broker dies without doing so (SIGKILL): session.c.
 */
void session_ckpt_dir(const struct policy *pol, struct ckpt_dir *cd);

/*
 * Blocks SIGINT, SIGTERM and SIGHUP, the signals that end a session, in
 * the calling thread (pthread_sigmask(3)): from here on they are taken
 * only where the session waits with a mask that lets them in. When
 * WAITMASK is not NULL it gets that mask: the one before the call, those
 * three removed (for ppoll(2)). Cannot fail with these arguments.
 */
void session_block_end_signals(sigset_t *waitmask);

/*
 * Starts the egress proxy of a session (or of `stockade run`) into PX
 * when POL allows hosts (policy_has_network: an allow or allow_address
 * rule), before the broker confines itself (egress_proxy_start; the
 * program at $STOCKADE_PROXY when set, for tests). PX is initialised
 * either way (egress_proxy_init); the caller stops it at the end
 * (egress_proxy_stop). Returns 0, or the exit status after saying why
 * on stderr: EXIT_SANDBOX when the proxy is not installed, EXIT_REFUSED
 * when it cannot confine itself here (fail closed: no job runs with a
 * network its policy did not bound).
 */
int session_start_proxy(const struct policy *pol, struct egress_proxy *px);

/*
 * Loads the policy FILE (NULL: the embedded default) into P, printing
 * "stockade: FILE:LINE: message" on failure. Returns 0 or EXIT_USAGE.
 */
int load_policy_or_complain(struct policy *p, const char *file);

/*
 * Opens the workspace DIR (NULL: a fresh temporary one) into WS
 * (workspace_open, workspace.h), printing "stockade: ..." on failure.
 * A commit a killed broker left in it (broker/fs/stage.h, STAGE_JOURNAL)
 * is undone first, with a warning that says so (stage_recover); one that
 * cannot be undone leaves the workspace as found and is EXIT_SANDBOX.
 * Returns 0, EXIT_REFUSED (69) when the kernel has no openat2 (a refusal,
 * never a fallback: style.md rule 18), EXIT_SANDBOX, or EXIT_USAGE.
 */
int open_workspace_or_complain(struct workspace *ws, const char *dir);

/*
 * Confines the broker (confine_broker, confine.h) with the NRULES RULES,
 * printing "stockade: ..." on failure. Returns 0 or an exit status:
 * EXIT_REFUSED (69) when the kernel has no Landlock (a refusal with the
 * fix, as a missing openat2: style.md rule 18), EXIT_SANDBOX otherwise.
 * The caller exits on failure: a partly confined broker serves nothing.
 */
int confine_or_complain(const struct confine_rule *rules, size_t nrules);

/*
 * Prints "stockade: PATH: NAME: explanation" on stderr for the file error
 * WHY on the sandbox path PATH (cmd_fs.c; `stockade put/get/ls/...` and
 * `stockade run --put/--get`). PATH is shown escaped (fsname.h), never
 * raw: it may come from the job (a name with a newline or an escape
 * sequence). The explanation is TEXT, or (NULL) fsreport_explain's under
 * CTX's limits (the rule an invalid path breaks, else fs_error_text).
 */
void fs_complain(const struct fs_ctx *ctx, const char *path, enum fs_error why,
    const char *text);

#endif
