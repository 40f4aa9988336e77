/*
 * rpc_internal.h: what the JSON-RPC dispatcher (rpc.c: the envelope),
 * the parameter checks and errors (rpc_params.c) and the methods
 * (rpc_exec.c, rpc_fs.c, rpc_fs_tar.c) share. Not for other files; the
 * contract of each helper is at its definition in rpc_params.c.
 */
#ifndef STOCKADE_RPC_INTERNAL_H
#define STOCKADE_RPC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "fserr.h"
#include "rpc.h"

/* One request being answered. */
struct call {
	struct rpc_session *s;
	json_t *params; /* an object, borrowed */
	int *fds; /* borrowed: rpc_handle closes them */
	size_t nfds;
	int code; /* the error when a method returns NULL */
	char *message; /* owned, valid UTF-8 */
	json_t *data; /* owned, may be NULL */
};

/* A path from a request: LEN bytes at P (owned, NUL-terminated after
 * LEN; a NUL within LEN makes it invalid). */
struct rawpath {
	char *p;
	size_t len;
};

/* Errors: each sets C's error and returns NULL for the method to return
 * (DATA stolen; the message made valid UTF-8). */
json_t *rpc_fail(struct call *c, int code, json_t *data, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
json_t *rpc_out_of_memory(struct call *c);
json_t *rpc_bad_param(struct call *c, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* -32001 for WHY on P (and TO for a rename), TEXT or the stable text. */
json_t *rpc_file_error(struct call *c, enum fs_error why,
    const struct rawpath *p, const struct rawpath *to, const char *text);

/*
 * json_loadb and json_dumps(JSON_COMPACT) that fail whenever one of
 * jansson's allocations failed (jansson 2.14 goes on after some: a
 * string parsed without the bytes it could not append, a dump without a
 * key's closing quote; rpc.c). rpc_json_loadb returns the value (the
 * caller's) or NULL with *ERR set and *OOM true when memory, not the
 * text, was the cause; rpc_json_dumps a line the caller frees, or NULL.
 * `stockade serve` and `stockade mcp` read and write every message
 * through them.
 */
json_t *rpc_json_loadb(const char *buf, size_t len, size_t flags,
    json_error_t *err, bool *oom);
char *rpc_json_dumps(const json_t *o);

/* {"path" (escaped), "path_b64" when escaped} merged into REST (stolen,
 * may be NULL); NULL on ENOMEM. */
json_t *rpc_named(const char *p, size_t len, json_t *rest);
/* {"path", "size"} for a transfer's answer; NULL with C's error set. */
json_t *rpc_path_size(struct call *c, const struct rawpath *p, uint64_t size);

/* Parameters: each returns false with C's error (-32602) set. */
bool rpc_known_params(struct call *c, const char *const *names);
bool rpc_opt_bool(struct call *c, const char *name, bool dflt, bool *out);
bool rpc_opt_uint(struct call *c, const char *name, uint64_t dflt, uint64_t min,
    uint64_t max, uint64_t *out);
bool rpc_get_path(struct call *c, const char *name, const char *name_b64,
    const char *dflt, struct rawpath *p);
/* The descriptor "fd" names (borrowed from C), checked for direction and
 * kind (regular file, pipe, connected stream socket). */
bool rpc_get_fd(struct call *c, bool readable, int *fd);
/* rpc_get_fd for the parameter NAME ("stdin_fd") instead of "fd". */
bool rpc_get_fd_named(struct call *c, const char *name, bool readable, int *fd);
/* Base64 S (LEN bytes) into *OUT (the caller frees it, *OUTLEN bytes);
 * 0, -EINVAL, -EFBIG over MAX bytes, or -ENOMEM. */
int rpc_b64_decode(const char *s, size_t len, size_t max, uint8_t **out,
    size_t *outlen);
/* An anonymous memory file (memfd) holding DATA (LEN bytes), at offset
 * 0: a descriptor the caller owns, or -errno. */
int rpc_memfd_with(const void *data, size_t len);

/*
 * exec (rpc_exec.c, docs/protocol.md): runs the job the parameters of C
 * describe on the session's supervisor, with snapshots of the workspace
 * before and after it. Returns the job's result object (a new reference)
 * or NULL with C's error set; P is unused.
 */
json_t *rpc_exec(struct call *c, struct rawpath *p);

/* The fs.* methods (rpc_fs.c, docs/protocol.md): each returns the result
 * object (a new reference) or NULL with C's error set; P is the request's
 * main path, filled by the method and freed by the dispatcher. */
json_t *rpc_fs_write(struct call *c, struct rawpath *p);
json_t *rpc_fs_read(struct call *c, struct rawpath *p);
json_t *rpc_fs_list(struct call *c, struct rawpath *p);
json_t *rpc_fs_stat(struct call *c, struct rawpath *p);
json_t *rpc_fs_mkdir(struct call *c, struct rawpath *p);
json_t *rpc_fs_remove(struct call *c, struct rawpath *p);
json_t *rpc_fs_rename(struct call *c, struct rawpath *p);
json_t *rpc_fs_changes(struct call *c, struct rawpath *p);
json_t *rpc_fs_diff(struct call *c, struct rawpath *p);
json_t *rpc_fs_commit(struct call *c, struct rawpath *p);
json_t *rpc_fs_rollback(struct call *c, struct rawpath *p);

/*
 * Staged change sets (rpc_stage.c; issue 26): a session's jobs always
 * write to a stage (a session never runs a policy with layer mount_ns
 * off, session.c). rpc_exec_stage_begin reads exec's "commit"
 * into JR and numbers its change set, refusing the exec (C's error,
 * false) when RPC_MAX_STAGES sets are still staged;
 * rpc_exec_stage_end moves JR's change set into S (the newest);
 * rpc_stage_changes is fs.changes's answer from the newest set (a new
 * reference, or NULL with C's error); rpc_stage_free_all frees S's sets.
 */
struct jobrun;
bool rpc_exec_stage_begin(struct call *c, struct jobrun *jr);
void rpc_exec_stage_end(struct rpc_session *s, struct jobrun *jr);
json_t *rpc_stage_changes(struct call *c);
void rpc_stage_free_all(struct rpc_session *s);
/* fs.unpack and fs.pack (rpc_fs_tar.c, fs_tar.h). */
json_t *rpc_fs_unpack(struct call *c, struct rawpath *p);
json_t *rpc_fs_pack(struct call *c, struct rawpath *p);

#endif
