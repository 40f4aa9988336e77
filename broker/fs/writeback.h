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
 * A pattern is matched against the workspace-relative path (policy.h,
 * writeback_pattern_match, with writeback_pattern_error, the policy
 * language's, where the loader checks patterns): "/" separates
 * components, "*" and "?" do not match "/", "**" matches any number of
 * whole components (zero included), a pattern with no "/" (a trailing one
 * aside) matches the last component at any depth, a leading "/" anchors,
 * and a trailing "/" matches that directory and everything below it.
 * A rule may carry the qualifier "drivers" (written "refuse =
 * .gitattributes drivers"): it then matches only a change that may
 * assign a filter, diff or merge driver (gitattributes(5)): a created or
 * modified entry that is not a directory, unless it is a regular file
 * whose new content, read from the stage, assigns none.
 */
#ifndef STOCKADE_WRITEBACK_H
#define STOCKADE_WRITEBACK_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "snapshot.h"
#include "stage.h"

/* How much of a file a "drivers" rule reads, bytes: a longer file counts
 * as assigning drivers (what it holds past this is unknown). */
#define WRITEBACK_READ_MAX (64u * 1024u)

/*
 * The first rule of WB (policy.h) that matches the change C (its entry's
 * path), first match wins. For a "drivers" rule the new content is read
 * from the file at C's path below STAGE_UPPER (stage.h) in the stage
 * STAGE (its root and token, borrowed; NULL: none), its parent resolved
 * beneath it with no symlink on the way (fsapi_open_parent) and the file
 * opened through stage_open_at, read only if it is a regular file with
 * one link, at most WRITEBACK_READ_MAX + 1 bytes. A
 * deletion never matches a "drivers" rule, nor does a directory; a file
 * that cannot be read (STAGE NULL, gone, a symlink, a hard link, too long,
 * an I/O error) matches it: what it would assign is unknown. The content
 * assigns a driver when a line that is not a comment (gitattributes(5):
 * "#" first after blanks) has a word, split at blanks and NUL, that is
 * "filter=", "diff=" or "merge=" and a value, after an optional "-" or
 * "!" and in either case (more than git reads: never fewer). Returns the
 * rule (borrowed from WB), or NULL when none matches (the change is
 * committed).
 */
const struct wb_rule *writeback_match(const struct wb_policy *wb,
    const struct change *c, const struct stage_ref *stage);

#endif
