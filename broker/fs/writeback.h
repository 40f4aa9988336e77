/*
 * writeback.h: the firewall on what a job writes back (issue 26, point 6;
 * policy [writeback]; docs/threat-model.md, "write-back").
 *
 * Code that runs sandboxed can leave files that a host tool runs later,
 * outside the sandbox: a git hook, core.hooksPath or a filter driver in
 * .git/config, a .gitattributes filter or diff driver, an editor's task
 * file, a direnv .envrc, a shell rc file, an agent's settings or MCP
 * configuration. Before a commit the broker matches every change (created,
 * modified or deleted) against the [writeback] rules, first match wins:
 *   refuse      the change is left out of the commit and dropped;
 *   quarantine  it is left out and kept in the session's stage for the
 *               client to inspect (fs.diff) and accept (fs.commit PATH);
 *   allow       it is committed (an exception placed before a wider rule).
 * A pattern is matched against the workspace-relative path: "/" separates
 * components, "*" and "?" do not match "/", "**" matches any number of
 * whole components (zero included), a pattern with no "/" matches the
 * last component at any depth, and a trailing "/" matches everything
 * below that directory. A rule may carry the qualifier "drivers" (written
 * "quarantine = .gitattributes drivers"): it then matches only a
 * .gitattributes-style file whose new content assigns a filter, diff or
 * merge driver (gitattributes(5)), read from the stage.
 */
#ifndef STOCKADE_WRITEBACK_H
#define STOCKADE_WRITEBACK_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "snapshot.h"

/*
 * Whether PAT (NUL-terminated) is a valid pattern: not empty, no NUL or
 * control byte, no "." or ".." component, "**" only as a whole component,
 * at most 4096 bytes. Returns NULL or a static sentence saying what is wrong.
 */
const char *writeback_pattern_error(const char *pat);

/*
 * Whether PATH (a workspace-relative path, raw bytes, NUL-terminated)
 * matches PAT by the rules above (the qualifier aside). Pure.
 */
bool writeback_pattern_match(const char *pat, const char *path);

/*
 * The first rule of WB (policy.h) that matches the change C, whose new
 * content, for a "drivers" rule, is read from the file at C's path below
 * STAGE (the stage tmpfs's upper directory, borrowed; at most 64 KiB
 * read, never through a symlink). Returns the rule (borrowed from WB), or
 * NULL when none matches (the change is committed).
 */
const struct wb_rule *writeback_match(const struct wb_policy *wb,
    const struct change *c, int stage);

#endif
