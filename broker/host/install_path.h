/*
 * install_path.h: where the stockade binaries find each other, in a
 * build tree, an installation, or an installed tree moved elsewhere
 * (`meson install --destdir D`, `dpkg-deb -x`): docs/decisions.md,
 * "The launcher is found next to the broker".
 */
#ifndef STOCKADE_INSTALL_PATH_H
#define STOCKADE_INSTALL_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* How many places install_helper_paths gives at most. */
#define INSTALL_PATHS_MAX 3

/*
 * Writes the directory of the running binary (the target of
 * /proc/self/exe: absolute, no symbolic links) into DIR (LEN bytes).
 * Returns 0, or a negative errno (-ENAMETOOLONG when it does not fit,
 * -ENOENT when the binary was deleted since it started).
 */
int install_self_dir(char *dir, size_t len);

/*
 * The places to look for the helper program NAME ("stockade-launcher",
 * "stockade-probe") of the stockade binary in the directory BINDIR (an
 * absolute path without symbolic links, as install_self_dir gives), in
 * order, never $PATH:
 *   1. BINDIR/NAME: a build tree, where all three sit side by side;
 *   2. BINDIR/STOCKADE_BIN_TO_LIBEXEC/stockade/NAME: an installed tree
 *      wherever it lies; STOCKADE_BIN_TO_LIBEXEC is the path from
 *      bindir to libexecdir, computed at configure time (meson.build),
 *      its leading ".." components taken off BINDIR (exact, since
 *      BINDIR holds no symbolic link);
 *   3. with BUILTIN only, STOCKADE_LIBEXECDIR/NAME: the compiled-in
 *      installation.
 * Writes them into PATHS (INSTALL_PATHS_MAX strings of PATH_MAX bytes;
 * duplicates and paths that do not fit are left out) and returns how
 * many.
 */
size_t install_helper_paths(const char *bindir, const char *name, bool builtin,
    char paths[][4096]);

/*
 * OUT (PATH_MAX bytes) = DIR with the relative path REL laid on it: each
 * leading ".." takes a component off (exact when DIR holds no symbolic
 * link, as install_self_dir gives), "." is skipped, the rest is
 * appended. Returns false when it does not fit.
 */
bool install_rel_join(char *out, const char *dir, const char *rel);

/*
 * Opens PATH O_PATH | O_CLOEXEC and checks on the descriptor that it is a
 * regular file with an execute bit. Returns the descriptor (the caller's
 * to close) or a negative errno (-EACCES for anything but a regular
 * executable file).
 */
int install_open_exe(const char *path);

/*
 * Opens the first place of install_helper_paths(BINDIR, NAME, BUILTIN)
 * that is a regular file with an execute bit, O_PATH | O_CLOEXEC (opened
 * first, then checked on the descriptor). BINDIR NULL means the
 * directory of the running binary. Returns the descriptor, the caller's
 * to close, with its path in FOUND (FOUNDLEN bytes; FOUND may be NULL),
 * or a negative errno (the last place's: -ENOENT, or -EACCES for a file
 * that is not a regular executable) with the places tried, ", "
 * separated, in TRIED (TRIEDLEN bytes, truncated; TRIED may be NULL).
 */
int install_open_helper(const char *bindir, const char *name, bool builtin,
    char *found, size_t foundlen, char *tried, size_t triedlen);

#endif
