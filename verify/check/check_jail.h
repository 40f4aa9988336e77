/*
 * check_jail.h: what the checks of the jail's layers share
 * (check_jail_util.c): running stockade-probe (probe_jail.c,
 * probe_process.c) in a job, reading its output and the default policy,
 * and the check functions of check_mounts.c, check_limits.c and
 * check_terminal.c, whose entries are in the tables of check_jail.c and
 * check_process.c.
 *
 * The files: check_jail.c (user_ns, pid_ns, network_ns, ipc_ns, uts_ns),
 * check_mounts.c (mount_ns), check_process.c (process_cleanup,
 * environment, working_directory; the table of terminal too),
 * check_terminal.c (terminal), check_limits.c (limits),
 * check_privs.c (capabilities, no_new_privs, landlock).
 */
#ifndef STOCKADE_CHECK_JAIL_H
#define STOCKADE_CHECK_JAIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"

/* One job of these checks takes 10 to 50 ms; a stockade that hangs is
 * cut off here. */
#define JAIL_JOB_DEADLINE_MS 10000

#define MIB (1024LL * 1024)
/* statfs(2)'s f_type of a tmpfs, as the probe prints it. */
#define TMPFS_MAGIC_HEX "0x1021994"

/* The probe as every job here runs it: by its absolute path in the
 * workspace, so that a job left outside /work still reports. */
#define JAIL_PROBE "/work/stockade-probe"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* What a probe job needs besides the probe's arguments. */
struct pj {
	const char *const *run_args; /* more `stockade run` options */
	const char *policy; /* policy text, NULL: the default */
	const char *workspace; /* --workspace, NULL: a temporary one */
	const char *const *extra_env;
	int64_t deadline_ms; /* 0: JAIL_JOB_DEADLINE_MS */
	const char *status; /* the status expected, NULL: "ok" */
};

/* The default policy, nothing more (all zero). */
extern const struct pj jail_plain;

/*
 * Runs the probe with ARGV (NULL-terminated, at most 30) in a job as S
 * says, into J (always initialised: free it with check_job_free). True
 * when the job ended with S's status; otherwise fails R saying what came
 * instead.
 */
bool jail_probe_ok(struct check_ctx *c, struct check_result *r,
    struct check_job *j, const struct pj *s, const char *const *argv);

/* KEY of the probe's output (check_value) into BUF; when missing, fails
 * R saying so and returns false. */
bool jail_val(struct check_result *r, const struct check_job *j,
    const char *key, char *buf, size_t len);

/* The integer LIMIT of the result's "limits" object, or -1. */
json_int_t jail_job_limit(const struct check_job *j, const char *limit);

/* True when the comma-separated LIST holds ITEM. */
bool jail_list_has(const char *list, const char *item);

/*
 * The entries of section SECTION ("environment", "filesystem") of the
 * embedded default policy (`stockade policy default`), as "NAME=value"
 * lines without blanks around the "=", into BUF. Returns 0 or a
 * negative errno (-EPROTO when the command failed).
 */
int jail_default_section(struct check_ctx *c, const char *section, char *buf,
    size_t len);

/* The default policy's [jail] home into BUF. Returns 0 or a negative
 * errno (-ENOENT when it names none). */
int jail_default_home(struct check_ctx *c, char *buf, size_t len);

/*
 * Fails R when the job's namespace NS ("user", "pid", "net", ...) is the
 * caller's own, passes it otherwise: two processes share a namespace
 * exactly when their /proc/PID/ns/NS links read alike (namespaces(7)).
 */
void jail_own_namespace(struct check_ctx *c, struct check_result *r,
    const char *ns);

/* check_mounts.c: the mount_ns checks (each commented there). */
void mnt_old_root_detached(struct check_ctx *c, struct check_result *r);
void mnt_root_ro(struct check_ctx *c, struct check_result *r);
void mnt_work_nosuid(struct check_ctx *c, struct check_result *r);
void mnt_binds_ro(struct check_ctx *c, struct check_result *r);
void mnt_tmpfs_flags(struct check_ctx *c, struct check_result *r);
void mnt_proc_sys_ro(struct check_ctx *c, struct check_result *r);
void mnt_dev_hidden(struct check_ctx *c, struct check_result *r);
void mnt_host_paths_absent(struct check_ctx *c, struct check_result *r);
/* mount_ns.proc_host_facts_masked: the host facts of /proc read empty. */
void mnt_proc_host_facts_masked(struct check_ctx *c, struct check_result *r);
/* mount_ns.boot_id_own: each job's boot id is its own, not the host's. */
void mnt_boot_id_own(struct check_ctx *c, struct check_result *r);
void mnt_etc_write_refused(struct check_ctx *c, struct check_result *r);

/* check_netns.c: the network_ns checks (each commented there). */
void net_only_lo(struct check_ctx *c, struct check_result *r);
void net_host_lo_unreachable(struct check_ctx *c, struct check_result *r);
void net_loopback_tcp(struct check_ctx *c, struct check_result *r);
void net_host_abstract_unreachable(struct check_ctx *c, struct check_result *r);
void net_own(struct check_ctx *c, struct check_result *r);

/* check_limits.c: the limits checks (each commented there). */
void lim_rlimit_fsize(struct check_ctx *c, struct check_result *r);
void lim_rlimit_nofile(struct check_ctx *c, struct check_result *r);
void lim_rlimit_nproc(struct check_ctx *c, struct check_result *r);
void lim_rlimit_core(struct check_ctx *c, struct check_result *r);
void lim_rlimit_data(struct check_ctx *c, struct check_result *r);
void lim_rlimit_cpu(struct check_ctx *c, struct check_result *r);
void lim_rlimit_misc(struct check_ctx *c, struct check_result *r);
void lim_user_quotas(struct check_ctx *c, struct check_result *r);
void lim_unseen_memory(struct check_ctx *c, struct check_result *r);
void lim_ofd_locks(struct check_ctx *c, struct check_result *r);
void lim_tmpfs_sizes(struct check_ctx *c, struct check_result *r);

/* check_terminal.c: the terminal checks (each commented there). */
void term_own_session(struct check_ctx *c, struct check_result *r);
void term_no_ctty(struct check_ctx *c, struct check_result *r);
void term_stdio_kinds(struct check_ctx *c, struct check_result *r);
void term_split_controls_escaped(struct check_ctx *c, struct check_result *r);
void term_only_stdio(struct check_ctx *c, struct check_result *r);

#endif
