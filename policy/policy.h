/*
 * policy.h: the policy language (README.md, "Policy"; policy/default.ini).
 *
 * A policy is an INI file read with inih. A file is laid over the embedded
 * default policy (policy/default.ini, compiled in): a scalar key it sets
 * replaces the default's value; the entries it gives in a list section
 * ([environment], [filesystem], [network]'s rules, [writeback]'s rules)
 * add to the default's list, an entry the default also has (the same
 * variable, the same bind target, the same [network] rule, the same
 * [writeback] pattern and qualifier) taking its place. Only [policy]
 * replace = environment, filesystem, network, writeback makes the file's
 * list the whole list (docs/decisions.md, "Policy lists add to the
 * default's"). Every error is reported as "FILE:LINE: message".
 *
 * Loading is pure (no file system access beyond reading the file itself);
 * whether bind sources exist is `stockade policy check`'s business
 * (policy_check_source) and the launcher's at job time.
 */
#ifndef STOCKADE_POLICY_H
#define STOCKADE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "egress_rules.h"
#include "proto.h"
#include "result.h"

#define POLICY_ERR_MAX 512

/* Most scalar keys the language can have (struct policy's scalar_from). */
#define POLICY_MAX_SCALARS 64

/* The list sections, as bits of [policy] replace (struct policy). */
#define POLICY_LIST_ENVIRONMENT 0x1u
#define POLICY_LIST_FILESYSTEM 0x2u
#define POLICY_LIST_NETWORK 0x4u
#define POLICY_LIST_WRITEBACK 0x8u
#define POLICY_LISTS_ALL                                    \
	(POLICY_LIST_ENVIRONMENT | POLICY_LIST_FILESYSTEM | \
	    POLICY_LIST_NETWORK | POLICY_LIST_WRITEBACK)

/* Most [writeback] rules of one policy, the default's included. */
#define POLICY_MAX_WB_RULES 256u

/*
 * Where a key or list entry of a loaded policy was given: the embedded
 * default (IN_FILE false) or the file laid over it (struct policy's
 * name), at LINE, from 1. LINE 0: not known (a policy built by hand).
 */
struct policy_origin {
	bool in_file;
	unsigned line;
};

/*
 * [files]: the quotas of the host file API (broker/fs/fsapi.h; issue 3).
 * Checked by the broker on every operation; a job itself is bounded by
 * [limits] (file_size_mb) and the workspace's file system.
 */
struct fs_quota {
	uint64_t file_bytes; /* max_file_mb: one file in or out, bytes */
	uint64_t
	    workspace_bytes; /* workspace_mb: sum of regular files, bytes */
	uint64_t max_files; /* max_files: entries in the workspace */
	uint32_t max_path; /* max_path_bytes: one path, bytes (<= 4096) */
	uint32_t max_depth; /* max_depth: components of one path (<= 256) */
	uint32_t mode_mask; /* mode_mask: bits a client may set (<= 0777) */
	bool allow_hardlinks; /* allow_hardlinks: read files with nlink > 1 */
	uint64_t inline_bytes; /* inline_kb: base64 payload in JSON, bytes */
};

/*
 * [network]: controlled egress (issue 25; shared/egress_rules.h). Its
 * rules (allow, allow_address, deny) form a list like [environment]'s;
 * without an allow or allow_address rule a job has no network, as with
 * no [network] section at all. The caps hold for one job, through the
 * proxy; the proxy that enforces them is not part of the policy.
 */
struct net_policy {
	struct egress_rules rules; /* in the order given */
	uint64_t bytes_out; /* max_bytes_out_mb: sent by the job, bytes */
	uint64_t bytes_in; /* max_bytes_in_mb: received by the job, bytes */
	uint32_t max_connections; /* connections made, in all */
	uint32_t max_concurrent; /* max_concurrent_connections: open at once */
	char *resolver; /* resolver: "" (the host's /etc/resolv.conf) or
			 * the proxy's DNS server, "ADDR:PORT"
			 * (policy_valid_resolver) */
};

/*
 * [writeback]: the firewall on what a job writes back (issue 26;
 * broker/fs/writeback.h). Rules in order, first match wins; the embedded
 * default's come first unless the file replaces the list. A rule of the
 * file with the same pattern and qualifier as one of the default's takes
 * that rule's place (its action changes where it stands); the file's
 * other rules come after the default's, so an exception to a default's
 * rule (allow = .vscode/settings.json under quarantine = .vscode/) needs
 * [policy] replace = writeback.
 */
enum wb_action {
	WB_ALLOW = 0, /* committed */
	WB_REFUSE, /* left out of the commit and dropped */
	WB_QUARANTINE, /* left out, kept staged for the client */
};

struct wb_rule {
	char *pattern; /* writeback.h's syntax, owned */
	enum wb_action action;
	bool drivers; /* only a file assigning filter/diff/merge drivers */
};

struct wb_policy {
	struct wb_rule *rules; /* in the order given */
	size_t n; /* at most POLICY_MAX_WB_RULES */
};

/*
 * Whether PAT (NUL-terminated) is a valid [writeback] pattern: not empty,
 * no control byte (NUL ends it) and no blank (a rule's value splits at
 * blanks: "?" matches one), no empty, "." or ".." component, "**"
 * only as a whole component, at most 4096 bytes. A leading "/" anchors
 * the pattern at the workspace's root; a trailing "/" marks a directory
 * (writeback_pattern_match). Returns NULL, or a static phrase saying what
 * is wrong, to follow the pattern in a message ("is empty", "has an empty
 * component (\"//\")", ...). Pure.
 */
const char *writeback_pattern_error(const char *pat);

/*
 * Whether PATH (workspace-relative, raw bytes, NUL-terminated, "/"
 * between components) matches the pattern PAT. "/" separates components;
 * "*" matches any bytes of one component (a leading "." included) and
 * "?" one byte, neither "/"; "**" matches any number of whole components,
 * zero included; any other byte matches itself, ASCII letters in either
 * case (a workspace on a case-insensitive file system, a macOS folder
 * shared into a VM, has .GIT/hooks be .git/hooks); no character classes,
 * no escapes (gitignore(5)'s rules otherwise). A pattern with no "/" (a
 * trailing one aside) matches the last component of PATH at any depth
 * (".envrc" matches "sub/.envrc"); one with a "/" before its end, or a
 * leading "/",
 * is anchored at the workspace's root ("**" at its head reaches any
 * depth). A trailing "/" matches that directory itself and every path
 * below it (".vscode/" matches ".vscode" and "a/.vscode/tasks.json").
 * False for an invalid PAT (writeback_pattern_error) or an empty PATH.
 * Pure; time within the product of the two lengths.
 */
bool writeback_pattern_match(const char *pat, const char *path);

/* [files] commit: when a job's staged changes reach the workspace. */
enum commit_mode {
	COMMIT_ALWAYS = 0, /* after every job, whatever its status */
	COMMIT_ON_OK, /* after a job whose status is ok; else rolled back */
	COMMIT_KEEP, /* kept staged for the client: fs.commit, fs.rollback */
};

/* [limits] on_output_limit: what output past stdout_kb or stderr_kb does. */
enum output_action {
	OUTPUT_TRUNCATE = 0, /* drained to the end, head and tail kept */
	OUTPUT_KILL = 1, /* the jail is killed: output_limit */
};

struct policy {
	char *name; /* "<default>" or the file's path */
	struct job_limits limits; /* all non-zero after a successful load */
	char **env; /* nenv "NAME=value" strings */
	size_t nenv;
	struct mount_entry *mounts; /* nmounts read-only binds */
	size_t nmounts;
	char *hostname; /* [jail] hostname */
	char *user; /* [jail] user: passwd name of the payload */
	char *home; /* [jail] home: absolute path in the jail */
	uint32_t uid, gid; /* [jail] uid, gid: non-zero */
	bool pty; /* [jail] pty: a private /dev/pts */
	uint32_t pool_size; /* [jail] pool_size: jails a session
				     * keeps built and waiting, 0 to
				     * PROTO_MAX_POOL
				     * (launcher/supervisor/pool.h) */
	uint32_t layers_off; /* [jail] unsafe_layers_off (evaluation):
				     * a JOB_LAYER_BIT mask (result.h) */
	bool unsafe_no_seccomp; /* [jail] unsafe_no_seccomp (evaluation) */
	char *seccomp_profile; /* [jail] seccomp_profile: default, strict */
	char *client_env; /* [jail] client_env: the variables a
				     * client may set per job, as written
				     * (policy_client_env_allows) */
	struct fs_quota files; /* [files] */
	struct net_policy net; /* [network] */
	struct wb_policy writeback; /* [writeback] */
	enum commit_mode commit; /* [files] commit */
	enum job_enforcement enforcement; /* [limits] enforcement */
	char *cgroup; /* [limits] cgroup: "" or absolute */
	enum output_action on_output_limit; /* [limits] on_output_limit */
	uint32_t replace; /* [policy] replace: the POLICY_LIST_*
				     * whose list is the file's alone */
	bool no_programs; /* [policy] no_programs: the job is
				     * meant to have no program of the
				     * system (policy_check_programs) */
	/* Where each entry came from, parallel to env and mounts (NULL
	 * for a hand-built policy), and each scalar key, in the order of
	 * the key table (policy_format's order). */
	struct policy_origin *env_from;
	struct policy_origin *mounts_from;
	struct policy_origin *net_from; /* parallel to net.rules */
	struct policy_origin *wb_from; /* parallel to writeback.rules */
	struct policy_origin scalar_from[POLICY_MAX_SCALARS];
};

/* The embedded default policy text, byte-identical to policy/default.ini. */
extern const char policy_default_text[];

/*
 * Loads the embedded default into P (which the caller zeroes or clears
 * first). Returns 0, or a negative errno with ERR (ERRLEN bytes) set to
 * "<default>:LINE: message" (only a build defect makes this fail).
 */
int policy_load_default(struct policy *p, char *err, size_t errlen);

/*
 * Loads the default and lays the file PATH over it. Returns 0; -ENOENT,
 * -EACCES... when PATH cannot be read (ERR: "PATH: strerror"); -EINVAL
 * for a bad file (ERR: "PATH:LINE: message"). On failure P owns nothing.
 */
int policy_load_file(struct policy *p, const char *path, char *err,
    size_t errlen);

/*
 * As policy_load_file, for `stockade policy check`, which names every bad
 * entry rather than the first: a [network] rule the file refuses does
 * not end the reading. REPORT(MSG, ARG) gets each error as it is found,
 * "PATH:LINE: message" (or "PATH: strerror"): the refused rules in the
 * file's order, then whatever else ended the reading, each once. The
 * load fails when any was reported: -EINVAL, ERR holding the first
 * refused rule's message or the other error. REPORT NULL: exactly
 * policy_load_file. ERR may be NULL. MSG is valid during the call only.
 */
int policy_load_file_report(struct policy *p, const char *path,
    void (*report)(const char *msg, void *arg), void *arg, char *err,
    size_t errlen);

/*
 * As policy_load_file, for TEXT named NAME in messages (tests, fuzzers).
 */
int policy_load_string(struct policy *p, const char *text, const char *name,
    char *err, size_t errlen);

/*
 * The layers P switches off: [jail] unsafe_layers_off, and seccomp when
 * unsafe_no_seccomp is true (the older name of the same switch). 0 for a
 * policy that runs the whole product. Pure.
 */
uint32_t policy_layers_off(const struct policy *p);

/*
 * The first bind of P made with [filesystem] unsafe_ro_bind_no_landlock
 * (a bind given no Landlock rule, for the tests of the layers), or NULL;
 * borrowed from P. Such a policy is an evaluation's, as one with layers
 * off: `stockade run` refuses it without --unsafe-evaluation, `stockade
 * serve` always (docs/layers.md).
 */
const struct mount_entry *policy_unsafe_mount(const struct policy *p);

/*
 * Whether P's [jail] client_env lets a client set the variable NAME for
 * one job (`stockade run --env`, exec's and the MCP run tools' env): it
 * is listed, or matches a listed "PREFIX*" (the prefix, then anything),
 * or the list holds "*". An empty list allows nothing. Pure; NAME is
 * not checked here (the caller checks it is a variable name).
 */
bool policy_client_env_allows(const struct policy *p, const char *name);

/*
 * Whether P opens any network to a job: a [network] allow or
 * allow_address rule (deny rules alone open nothing). Pure.
 */
bool policy_has_network(const struct policy *p);

/* Frees everything P owns and zeroes it; accepts NULL. */
void policy_clear(struct policy *p);

/*
 * Writes P to OUT as a complete, canonical policy file that loads back to
 * an equal policy. Returns 0; -EINVAL, writing nothing, for a (hand-built)
 * policy that would not load back; -EIO when OUT fails.
 */
int policy_format(const struct policy *p, FILE *out);

/*
 * As policy_format, with where each line came from (`stockade policy
 * show`): a "; default:N" or "; file:N" comment after each key (before
 * it where it would not fit the line or would be read as the value),
 * and under each list section whether the list is the default's, the
 * default's with the file's entries laid over it, or the file's alone
 * ([policy] replace). The text loads back to an equal policy. Returns as
 * policy_format.
 */
int policy_show(const struct policy *p, FILE *out);

/*
 * Whether the job P describes has a program of the system to run: a PATH
 * in [environment] with at least one absolute directory at or below a
 * bind target of [filesystem]. Returns 0 when it has, or when [policy]
 * no_programs says that none is meant; -EINVAL otherwise, with ERR
 * (ERRLEN bytes) "NAME:LINE: the job has no program to run: ...", LINE
 * the line of P that made it so (its PATH, or its [policy] replace) and
 * NAME P's name or "<default>" for a line of the default. Pure.
 */
int policy_check_programs(const struct policy *p, char *err, size_t errlen);

/*
 * Whether the source of P's bind I (< P->nmounts) is on this host, as the
 * launcher will open it (lstat(2): a final symbolic link is bound as the
 * link). A ro_bind_try source may be missing (the launcher skips it).
 * Returns 0; or a negative errno with ERR (ERRLEN bytes) "NAME:LINE:
 * ro_bind PATH: what", NAME and LINE where the bind was given.
 */
int policy_check_source(const struct policy *p, size_t i, char *err,
    size_t errlen);

#endif
