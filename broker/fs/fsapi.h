/*
 * fsapi.h: the broker's host file API against the workspace directory
 * (docs/architecture.md, "The host file API"; issue 3).
 *
 * The jailed program shares the workspace and is hostile: it may plant
 * symlinks, FIFOs, hard links and huge or sparse files, and race the
 * broker. Every path is therefore checked as a string (broker/fs/wspath.h)
 * and then resolved once, by openat2 from ROOT (the O_DIRECTORY
 * descriptor the broker opened at start-up, workspace_open) with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV. Every later step (fstat, linkat, renameat2, unlinkat)
 * is relative to a descriptor already resolved: nothing looks a path up
 * twice, and nothing is a check followed by a use of a path.
 *
 * Errors: functions return 0 (or a descriptor) or a negative errno, and
 * those that take WHY set it to the stable named error (broker/fs/fserr.h)
 * the client sees. They never log and never exit (style.md rule 13).
 */
#ifndef STOCKADE_FSAPI_H
#define STOCKADE_FSAPI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "wspath.h"
#include "wswalk.h"

#include "fserr.h"
#include "policy.h"

/*
 * Opens PATH (NUL-terminated, workspace-relative, checked by wspath_check
 * with the default limits) beneath ROOT with openat2(FLAGS | O_CLOEXEC,
 * MODE) and RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
 * | RESOLVE_NO_XDEV. Returns a descriptor the caller owns, or a negative
 * errno: -EINVAL for a path wspath refuses, -ELOOP for a symlink anywhere
 * on the path, -EXDEV for a lookup that would leave ROOT or its mount,
 * -ENOSYS when the kernel has no openat2 (a refusal: never fall back),
 * else what openat2(2) says. fs_error_from_errno names them.
 */
int fsapi_open_beneath(int root, const char *path, int flags, mode_t mode);

/*
 * Copies the regular file PATH beneath ROOT to OUT_FD (a blocking
 * descriptor the caller owns and keeps: a file, pipe or socket), adding
 * the number of bytes written to *COPIED (set to 0 first).
 *
 * The parent is resolved once and the file opened beneath it with
 * fsapi_open_regular_at (O_PATH first: a FIFO or device is never opened
 * for I/O): anything but a regular file is not_regular_file (a directory
 * is_a_directory, a symlink symlink_refused); more than one hard link is
 * hardlinked_file (the same inode may be a file outside the workspace the
 * job linked); st_size over MAX_BYTES is too_large, decided on the
 * descriptor without reading. At most MAX_BYTES bytes are copied, even if
 * the file grows meanwhile: a file that grows past the limit ends at
 * MAX_BYTES. The copy stays in the kernel where it can: copy_file_range
 * to a file, sendfile to a pipe or socket; else read/write through a
 * 64 KiB buffer.
 *
 * Returns 0 with *WHY = FS_OK, or a negative errno with *WHY set:
 * invalid_path, symlink_refused, escapes_workspace, not_found,
 * not_a_directory, is_a_directory, not_regular_file, hardlinked_file,
 * too_large, io_error (also for a failure writing OUT_FD, after which
 * OUT_FD holds part of the file, and for a copy stopped by the front:
 * fsapi_set_interrupted).
 */
int fsapi_read(int root, const char *path, uint64_t max_bytes, int out_fd,
    uint64_t *copied, enum fs_error *why);

/*
 * Writes everything read from IN_FD (until end of file; the caller owns
 * and keeps it) as the file PATH beneath ROOT, atomically: never in
 * place. The parent directory of PATH is resolved once with
 * fsapi_open_beneath(O_PATH | O_DIRECTORY), and the data goes to an
 * unnamed O_TMPFILE in it (where the file system lacks O_TMPFILE, a
 * random name ".stockade-tmp-XXXXXXXXXXXXXXXX", 16 hex digits from
 * getrandom, created O_CREAT | O_EXCL | O_NOFOLLOW).
 *
 * The final name appears only when the data is complete: by linkat of the
 * unnamed file to PATH (exists if the name is taken: linkat never
 * replaces). With OVERWRITE and a file at PATH (or one that appeared
 * since), the unnamed file is first linked at a random name, which is
 * then renamed over PATH with renameat2 (linkat cannot replace). A random
 * name without OVERWRITE is renamed with RENAME_NOREPLACE. The final name
 * is never opened: a symlink or FIFO planted there is replaced, never
 * written through; a directory there is is_a_directory (renameat2
 * refuses to replace a directory with a file: EISDIR).
 *
 * MODE: permission bits of the new file, masked with 0777 (never setuid,
 * setgid or sticky) and set with fchmod, so the umask does not apply.
 * When the caller is root, the file is given the owner and group of ROOT
 * (the job runs as the workspace's owner, workspace.h).
 *
 * More than MAX_BYTES bytes from IN_FD is too_large (at most MAX_BYTES + 1
 * are read). IN_FD is read from its current offset: copy_file_range or
 * sendfile from a regular file, splice from a pipe, else read/write.
 * Any failure, including too_large, a full disk and a copy stopped by
 * the front (fsapi_set_interrupted: io_error), leaves no file and no
 * temporary name behind. A broker killed midway leaves nothing while
 * the data is in an unnamed O_TMPFILE (freed with its descriptor), but
 * leaves the random name when killed while it exists: on a file system
 * without O_TMPFILE, and when replacing a file between the linkat and the
 * renameat2. Such a name is an
 * ordinary file the job or the client can see and remove.
 *
 * Returns 0 with *WHY = FS_OK, or a negative errno with *WHY set:
 * invalid_path, symlink_refused, escapes_workspace, not_found (no parent
 * directory), not_a_directory, is_a_directory, exists, too_large,
 * quota_exceeded, io_error (also for a failure reading IN_FD).
 */
int fsapi_write(int root, const char *path, int in_fd, uint64_t max_bytes,
    mode_t mode, bool overwrite, enum fs_error *why);

/*
 * The session's view of one workspace for the operations below: the
 * directory descriptor (borrowed; the caller owns it) and the quotas
 * (policy.h, [files]). The usage figures are the broker's running count of
 * what the workspace holds (regular files and their st_size, bytes, and
 * every entry for the file count); fsapi_usage fills them by a bounded
 * walk, every successful write/mkdir/remove/rename done through this
 * struct keeps them current, and a job invalidates them (the caller sets
 * usage_valid = false after each job). An operation that needs them while
 * they are invalid walks the workspace first.
 */
struct fs_ctx {
	int root; /* O_DIRECTORY descriptor of the workspace */
	struct fs_quota quota; /* copied from the policy */
	bool usage_valid;
	uint64_t used_bytes; /* sum of st_size of regular files, bytes */
	uint64_t used_entries; /* files, directories and everything else */
	/* Disk space of every entry (st_blocks * 512, bytes; a file with n
	 * hard links counts 1/n at each) at the last fsapi_usage walk; not
	 * kept current by the operations. What a job's workspace limit
	 * counts (jobrun.h): a sparse file costs only the blocks it has, and
	 * empty directories and long symlinks their blocks too. */
	uint64_t used_disk;
};

/* Sets CTX up for ROOT (borrowed) and Q (copied); usage invalid. */
void fsapi_ctx_init(struct fs_ctx *ctx, int root, const struct fs_quota *q);

/* The wspath limits of CTX's quota (max_path, max_depth). */
struct wspath_limits fsapi_path_limits(const struct fs_ctx *ctx);

/*
 * Walks the workspace (wswalk.h, never following a link, at most
 * quota.max_files + 1 entries and quota.max_depth levels) and sets the
 * usage figures. Returns 0; -E2BIG when the workspace holds more than
 * quota.max_files entries, is deeper than quota.max_depth, or holds a
 * directory the walk may not enter or read (EACCES, EPERM: a mode the
 * job set, wswalk.h "denied"; what it holds is unknown) (usage_valid
 * true, used_bytes a lower bound, and used_entries at least
 * quota.max_files + 1: the workspace counts as full, so that every
 * fsapi_put and fsapi_mkdir is refused with quota_exceeded until entries
 * are removed or a later walk finds it within bounds); another negative
 * errno on failure (usage invalid).
 */
int fsapi_usage(struct fs_ctx *ctx);

/* Another consumer of fsapi_usage_walk's walk (a snapshot: snapshot.h's
 * snapshot_take_usage), so that one walk serves both. */
struct fsapi_walk_tee {
	wswalk_fn fn; /* NULL, or told of every entry after it is
				 * counted: 0 to go on (the walk is the
				 * usage's: FN cannot skip a directory), or
				 * a negative errno to stop it (the usage
				 * then invalid) */
	void (*on_denied)(void *arg, const char *path); /* NULL, or as
				 * wswalk_opts' */
	int (*interrupted)(void); /* NULL, or as wswalk_opts': non-zero
				 * stops the walk with -EINTR (usage
				 * invalid) */
	void *arg; /* given to FN and ON_DENIED */
};

/*
 * fsapi_usage's walk (its bounds, its figures, its returns), with TEE
 * (may be NULL: fsapi_usage itself) told of what the walk sees, and the
 * walk's STATS (may be NULL) for the caller. A negative return of
 * TEE->fn, or -EINTR, is returned with the usage invalid.
 */
int fsapi_usage_walk(struct fs_ctx *ctx, const struct fsapi_walk_tee *tee,
    struct wswalk_stats *stats);

/* One directory entry as the API reports it (list, stat). */
enum fs_type {
	FS_T_FILE = 'f',
	FS_T_DIR = 'd',
	FS_T_SYMLINK = 'l',
	FS_T_FIFO = 'p',
	FS_T_SOCKET = 's',
	FS_T_CHAR = 'c',
	FS_T_BLOCK = 'b',
};
struct fs_entry {
	const char *path; /* workspace-relative, raw bytes (may hold any
			       * byte but '/' and NUL in a component: escape
			       * it before showing it, fsname.h) */
	enum fs_type type;
	uint64_t size; /* st_size, bytes (a symlink: its target's length) */
	uint32_t mode; /* permission bits, st_mode & 07777 */
	int64_t mtime_ns; /* modification time, ns since the epoch */
	uint64_t nlink;
};

/* Name of TYPE for the fronts: "file", "directory", "symlink", "fifo",
 * "socket", "char_device", "block_device". Static storage. */
const char *fs_type_name(enum fs_type type);

/* The type of an inode of mode MODE (st_mode's S_IFMT bits, inode(7));
 * a mode of no known type is FS_T_FILE. */
enum fs_type fs_type_of(mode_t mode);

/*
 * Describes PATH (with lstat semantics: a symlink is reported, never
 * followed) into *E; E->path points into PATH. PATH "." is the workspace
 * itself. The parent is resolved once as fsapi_open_beneath does (with
 * CTX's path limits: so in every operation below) and the entry
 * read with fstatat(AT_SYMLINK_NOFOLLOW) relative to it. Returns 0 or a
 * negative errno with *WHY set (invalid_path, symlink_refused on a parent,
 * escapes_workspace, not_found, not_a_directory, io_error).
 */
int fsapi_stat(struct fs_ctx *ctx, const char *path, struct fs_entry *e,
    enum fs_error *why);

/* Called once per entry of a listing; E and its path are borrowed for the
 * call. Return 0 to go on, 1 to stop the listing there (fsapi_list then
 * returns 0 with *TRUNCATED true: a reply grown too large), a negative
 * errno to stop the listing (returned by fsapi_list with *WHY io_error). */
typedef int (*fs_list_fn)(void *arg, const struct fs_entry *e);

/*
 * Lists the directory PATH ("." for the workspace): its entries in
 * byte-wise name order, each reported with its workspace-relative path;
 * with RECURSIVE, each directory's entries follow it (pre-order, depth
 * first, never through a symlink, at most quota.max_depth levels). At
 * most LIMIT entries (0: quota.max_files) are reported; *TRUNCATED says
 * whether more were left out: past LIMIT or quota.max_depth, a path
 * longer than quota.max_path (not reported, nor what is below it: no
 * client could name it), a directory the walk was denied (EACCES, EPERM:
 * wswalk.h), or FN asked to stop. Directories are opened one level at a
 * time with openat2 beneath their parent's descriptor (wswalk.h), so a
 * directory swapped for a symlink while the walk runs is refused, not
 * followed. Returns 0 or a negative errno with *WHY set (as fsapi_stat;
 * not_a_directory when PATH is not a directory).
 */
int fsapi_list(struct fs_ctx *ctx, const char *path, bool recursive,
    size_t limit, fs_list_fn fn, void *arg, bool *truncated,
    enum fs_error *why);

/*
 * Makes the directory PATH with permission bits MODE & quota.mode_mask
 * (made 0700, then set with fchmod on the new directory's descriptor, so
 * the umask does not apply; owned by ROOT's owner when the broker is
 * root, as fsapi_write). With PARENTS, makes the missing parents too, one
 * component at a time: mkdirat in the descriptor of the previous one,
 * then openat2 of the single component beneath it (so a symlink planted
 * between the two is refused; a directory made here gets its mode once
 * its child is made), and an existing directory at PATH is success while
 * anything else there is exists. Counts against quota.max_files. Returns
 * 0 or a negative errno with *WHY set (invalid_path, symlink_refused,
 * escapes_workspace, not_found (a parent missing without PARENTS),
 * not_a_directory, exists, quota_exceeded, io_error).
 */
int fsapi_mkdir(struct fs_ctx *ctx, const char *path, mode_t mode, bool parents,
    enum fs_error *why);

/*
 * Makes the missing parent directories of the file path PATH (mode 0755
 * & quota.mode_mask, fsapi_mkdir with PARENTS), so that a put into
 * "src/app/main.py" of an empty workspace lands as a model expects, as
 * MCP's write_file does. Nothing to do when PATH has a single component.
 * Returns 0 or a negative errno with *WHY set as fsapi_mkdir's, but
 * not_a_directory (not exists) when a parent is a file or anything else
 * that is not a directory.
 */
int fsapi_mkdir_parents_of(struct fs_ctx *ctx, const char *path,
    enum fs_error *why);

/*
 * Removes PATH: a file, symlink (the link itself, never its target),
 * FIFO, socket, or an empty directory; a non-empty directory only with
 * RECURSIVE (remove_tree_at on the parent's descriptor: never follows a
 * link, never leaves the workspace's mount). The workspace itself (".")
 * cannot be removed (invalid_path). Returns 0 or a negative errno with
 * *WHY set (invalid_path, symlink_refused on a parent, escapes_workspace,
 * not_found, not_a_directory, not_empty, io_error).
 */
int fsapi_remove(struct fs_ctx *ctx, const char *path, bool recursive,
    enum fs_error *why);

/*
 * Renames FROM to TO within the workspace with renameat2 on the two
 * parents' descriptors (each resolved once, as fsapi_stat),
 * RENAME_NOREPLACE unless OVERWRITE. The entry moved is the directory
 * entry itself: a symlink is moved as a link, never followed. Returns 0
 * or a negative errno with *WHY set (invalid_path, symlink_refused,
 * escapes_workspace, not_found, not_a_directory, is_a_directory,
 * not_empty, exists, io_error).
 */
int fsapi_rename(struct fs_ctx *ctx, const char *from, const char *to,
    bool overwrite, enum fs_error *why);

/*
 * Makes the symbolic link PATH holding TARGET (NUL-terminated, stored as
 * it is: 1 to PATH_MAX - 1 bytes, any bytes; the file API never follows
 * a link, so where it points is the job's business) with symlinkat(2) in
 * PATH's parent, resolved once as fsapi_stat; owned by ROOT's owner when
 * the broker is root (fchownat AT_SYMLINK_NOFOLLOW). An existing entry
 * at PATH is exists (never replaced). Counts against quota.max_files.
 * Returns 0 or a negative errno with *WHY set (invalid_path, also for an
 * empty or overlong TARGET, symlink_refused, escapes_workspace,
 * not_found, not_a_directory, exists, quota_exceeded, io_error).
 */
int fsapi_symlink(struct fs_ctx *ctx, const char *path, const char *target,
    enum fs_error *why);

/*
 * fsapi_write under CTX's quotas: the per-file limit is
 * min(quota.file_bytes, what quota.workspace_bytes leaves plus the size
 * of a regular file the write replaces), the path is checked with CTX's
 * path limits, a new file counts against quota.max_files, MODE is masked
 * with quota.mode_mask. At most limit + 1 bytes are read, so the lower of
 * the two bounds names the error: the per-file one too_large, the
 * workspace's quota_exceeded; a new name when quota.max_files entries
 * exist is quota_exceeded before any byte is read. Walks the workspace
 * first when the usage figures are invalid (fsapi_usage). *WRITTEN (may
 * be NULL) gets the file's size. Updates the usage figures on success.
 * Where the data goes until it is complete (an O_TMPFILE; when replacing
 * a file, a random name renamed over PATH) and what a broker killed
 * midway leaves: as fsapi_write. From a pipe, the file is linked as soon as the pipe ends:
 * to tell a producer that died early from a short file, stage it first
 * and compare the size (fsapi_stage).
 */
int fsapi_put(struct fs_ctx *ctx, const char *path, int in_fd, mode_t mode,
    bool overwrite, uint64_t *written, enum fs_error *why);

/*
 * fsapi_read under CTX's quotas (path limits, at most quota.file_bytes,
 * hard links refused unless quota.allow_hardlinks), starting OFFSET bytes
 * into the file (past its end: nothing, as pread(2)) and copying at most
 * LENGTH bytes (UINT64_MAX: to the end). The size limit applies to what
 * is copied: min(LENGTH, st_size - OFFSET) over quota.file_bytes is
 * too_large, decided on the descriptor before reading, so a large file
 * can be read in ranges. Returns as fsapi_read.
 */
int fsapi_get(struct fs_ctx *ctx, const char *path, uint64_t offset,
    uint64_t length, int out_fd, uint64_t *copied, enum fs_error *why);

/*
 * Sets the stop check of every copy in this file (fsapi_read, fsapi_write,
 * fsapi_get, fsapi_put, fsapi_stage) for the whole process: FN (NULL: none,
 * the default) is called before each transfer call that may block and
 * after each one a signal interrupted (EINTR), and a nonzero answer stops
 * the copy with -EINTR and io_error (a write leaves no file). A callback
 * rather than a call to jobrun_interrupted keeps this file free of the
 * job machinery. For a transfer blocked on a pipe nobody reads (or a
 * descriptor that never ends) to stop at a signal, the front must catch
 * the signal without SA_RESTART (sigaction(2)), so that the blocked
 * write, read, splice or sendfile returns: `stockade serve` installs
 * jobrun_catch_signals and sets FN to jobrun_interrupted (serve.c). The
 * one-shot fronts leave it NULL: a signal there takes its default action
 * and kills the process.
 */
void fsapi_set_interrupted(int (*fn)(void));

/*
 * Sets the progress hook of every copy in this file for the whole
 * process, as fsapi_set_interrupted: FN (NULL: none, the default) is
 * called with ARG and the number of bytes each transfer call moved (a
 * count, not a running total), on the copying thread. With a hook the
 * kernel copies go in calls of 8 MiB (else 1 GiB), so that it hears of
 * the data as it moves. FN must return promptly and must not touch the
 * descriptors being copied. Only `stockade put` and `get` set it, for
 * their one transfer (progress.h); serve, run --put/--get and the rest
 * leave it NULL.
 */
void fsapi_set_progress(void (*fn)(void *arg, uint64_t bytes), void *arg);

/*
 * Stages what IN_FD (a pipe or socket; the caller owns and keeps it) gives
 * up to its end of file into an unnamed file: an O_TMPFILE in ROOT (so on
 * the workspace's file system, not in memory), else a memfd. At most
 * LIMIT + 1 bytes are read (so that more than LIMIT can be told from
 * exactly LIMIT); *GOT gets how many. Returns the staged file at offset 0
 * (the caller owns it), or a negative errno with *WHY set: quota_exceeded
 * (the disk or the user's quota is full), io_error (a failure reading
 * IN_FD, or a copy stopped by the front: fsapi_set_interrupted).
 *
 * Why stage: the end of file of a pipe is the same whether its producer
 * closed it or died half way, and fsapi_put links the file as soon as its
 * input ends. Staging first lets the caller compare *GOT with a declared
 * size (or see that its client went away) before anything is named. The
 * staged file is unnamed: nothing is left behind, whatever happens.
 */
int fsapi_stage(int root, int in_fd, uint64_t limit, uint64_t *got,
    enum fs_error *why);

/*
 * Opens the regular file NAME in the directory DIRFD for reading, safely
 * against a hostile workspace: O_PATH | O_NOFOLLOW first, fstat, then a
 * reopen of that very inode through /proc/self/fd with O_RDONLY |
 * O_NONBLOCK | O_NOCTTY (so a FIFO or device is never opened for I/O).
 * ST gets the stat. Refuses: a symlink (symlink_refused), a directory
 * (is_a_directory), anything else not regular (not_regular_file), more
 * than one link unless ALLOW_HARDLINKS (hardlinked_file). Returns a
 * descriptor the caller owns, or a negative errno with *WHY set.
 */
int fsapi_open_regular_at(int dirfd, const char *name, bool allow_hardlinks,
    struct stat *st, enum fs_error *why);

#endif
