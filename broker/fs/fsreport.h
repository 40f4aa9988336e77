/*
 * fsreport.h: the host file API's results as every front shows them
 * (`stockade serve`, rpc.c; the command line, cmd_fs.c and cmd_run.c):
 * the explanation of a named error, and names and entries as JSON
 * (docs/protocol.md, "Paths and names"). One implementation, so that the
 * fronts cannot drift apart. Never logs, never exits.
 */
#ifndef STOCKADE_FSREPORT_H
#define STOCKADE_FSREPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "fsapi.h"

/*
 * The explanation of the file error WHY on the path PATH (LEN bytes, may
 * hold a NUL: then it is what is wrong) and, for a rename, TO (TOLEN
 * bytes; NULL: none): for FS_INVALID_PATH the rule (wspath_rule_text)
 * that PATH, else TO, breaks under CTX's limits (fsapi_path_limits);
 * for FS_TOO_LARGE and FS_QUOTA_EXCEEDED the limit in bytes and the
 * policy key that raises it (CTX's quota); otherwise, or when neither
 * path breaks a rule, fs_error_text(WHY). Returns a static or
 * thread-local string, valid until this thread's next call.
 */
const char *fsreport_explain(const struct fs_ctx *ctx, enum fs_error why,
    const char *path, size_t len, const char *to, size_t tolen);

/*
 * Standard base64 with padding (RFC 4648, section 4) of DATA[0..LEN), by
 * glibc's b64_ntop (libresolv). Returns a NUL-terminated string the
 * caller frees, or NULL (ENOMEM).
 */
char *fsreport_base64(const void *data, size_t len);

/*
 * Sets KEY in the object O to the name P (LEN bytes, any bytes): as it
 * is when plain (fsname_is_plain), else escaped (fsname_escape) with
 * KEY_B64 set to the base64 of the raw bytes (docs/protocol.md, "Paths
 * and names"). Returns false on ENOMEM (O may then hold KEY only).
 */
bool fsreport_set_name(json_t *o, const char *key, const char *key_b64,
    const char *p, size_t len);

/*
 * E as the entry object of docs/protocol.md (fs.list, fs.stat; also
 * `stockade ls/stat --json`), members in this order: path (and path_b64,
 * fsreport_set_name), type (fs_type_name), size, mode, mtime (seconds,
 * the nanoseconds as fraction), and nlink when NLINK. Returns a new
 * reference, or NULL (ENOMEM).
 */
json_t *fsreport_entry(const struct fs_entry *e, bool nlink);

#endif
