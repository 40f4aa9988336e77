/*
 * fs_tar.h: many files in one stream, a tar archive in and out of the
 * workspace (fs.unpack and fs.pack of `stockade serve`, `stockade
 * unpack` and `stockade pack`; docs/protocol.md, issue 9).
 *
 * libarchive parses and writes the stream, nothing more: the reader has
 * the tar format and the "none" filter only (never
 * archive_read_support_*_all, which can start external decompressors),
 * the writer the pax format in its restricted form with no filter, and
 * both see only the descriptor or memory they are given (their read and
 * write are ours). libarchive never touches a path: every entry goes
 * through the file API (fsapi.h) with the session's quotas, exactly as
 * fs.write and fs.read do (openat2 beneath the workspace, the path
 * rules, O_TMPFILE and linkat, mode_mask, max_files...), so the broker's
 * confinement (confine.h) holds for it as for any request.
 */
#ifndef STOCKADE_FS_TAR_H
#define STOCKADE_FS_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fsapi.h"

/* What a request did (its result, or how far it got before an error). */
struct fstar_counts {
	uint64_t files; /* regular files written (unpack) or packed */
	uint64_t directories; /* directory entries made or found (unpack),
				 * packed (pack) */
	uint64_t bytes; /* file data, bytes (not the archive's) */
	uint64_t skipped; /* pack: entries left out (symlinks, special
				 * and hard-linked files, directories the walk
				 * could not enter or that lie past
				 * max_depth); unpack: always 0 */
};

/* Why a request stopped. */
struct fstar_fail {
	enum fs_error why;
	char *entry; /* the entry's name as the archive (unpack)
				 * or the workspace (pack) holds it, raw
				 * bytes, owned; NULL: the request's own
				 * PATH failed */
	size_t entry_len;
	char text[240]; /* the explanation; "" for the front's own
				 * (fsreport_explain on the path) */
};

/* Frees what F holds (F itself is the caller's). */
void fstar_fail_free(struct fstar_fail *f);

/* Sets F to WHY with TEXT (NULL: ""), its entry cleared; bytes of TEXT
 * outside printable ASCII become '?' (libarchive's messages quote the
 * archive's names). */
void fstar_fail_set(struct fstar_fail *f, enum fs_error why, const char *text);

/*
 * Unpacks a tar stream (ustar, pax or GNU; no compression) into the
 * workspace directory DIR ("." for the workspace itself; made with its
 * missing parents when absent, as fsapi_mkdir with parents). The stream
 * is read from IN_FD (a blocking descriptor the caller owns and keeps:
 * a pipe, socket or file, from its offset) or, when IN_FD is -1, is the
 * LEN bytes at DATA.
 *
 * Entries: a directory is made (mode: the archive's, masked by
 * mode_mask, always with u+rwx so that what follows it can be written
 * in it; an existing directory is kept as it is); a regular file is
 * written as fsapi_put writes one (its parent resolved once per run of
 * entries in the same directory, the data from the archive into an
 * O_TMPFILE linked into place; missing parents are made; OVERWRITE as
 * fs.write's). A leading "./" is dropped and the entry "./" stands for
 * DIR itself; every other name must pass the path rules (wspath.h) on
 * its own (no "..", not absolute) and, joined to DIR, under the quota's
 * max_path and max_depth. Symbolic links (symlink_refused), hard links
 * (hardlinked_file) and devices, FIFOs and sockets (not_regular_file)
 * are refused.
 *
 * Files of up to FSTAR_JOB_MAX bytes (without OVERWRITE) are written by
 * writer threads (fs_tar_pool.h) while the stream is read on, each
 * checked and counted against the quotas in the archive's order first.
 *
 * The first error stops the request and nothing more is read: *F names
 * the entry and why, N says what was completed before it (at most one
 * entry after it, the one a second writer thread was already writing,
 * may be there too, complete; it is counted in the quotas, not in N). A
 * file is either complete or absent: one whose data ends early (the stream cut
 * short or lying about its size), one over max_file_mb (too_large) or
 * the workspace's room (quota_exceeded, decided on its declared size
 * before any of its data is read) leaves nothing. A stream that ends
 * without the two zero blocks that close an archive is io_error (a
 * producer that died between two entries), as is anything that is not a
 * tar stream (the error says so when it is gzip, bzip2, xz or zstd).
 * A copy stopped by the front (fsapi_set_interrupted) is io_error.
 *
 * Returns 0, or a negative errno with *F set (the caller frees it with
 * fstar_fail_free either way); -ENOMEM when out of memory (F->why
 * io_error).
 */
int fstar_unpack(struct fs_ctx *ctx, const char *dir, int in_fd,
    const void *data, size_t len, bool overwrite, struct fstar_counts *n,
    struct fstar_fail *f);

/*
 * Writes the workspace directory or file PATH ("." for the workspace) to
 * OUT_FD (a blocking descriptor the caller owns and keeps) as a POSIX
 * pax tar (libarchive's pax_restricted: plain ustar headers unless a
 * name or size needs a pax extension), at most MAX_BYTES bytes of it
 * (more is too_large: for an inline answer; UINT64_MAX for none).
 *
 * The names are relative to PATH (a directory's contents, without "./";
 * a file as its last component). Directories are walked with wswalk
 * (never through a link, at most max_depth levels counted from the
 * workspace) and each file opened with fsapi_open_regular_at, as
 * fs.read opens one: a file over max_file_mb is too_large, and
 * symlinks, FIFOs, sockets, devices and hard-linked files (unless
 * allow_hardlinks) are left out and counted in N->skipped, never
 * followed or opened. Permission bits are written as st_mode & 0777
 * (never setuid, setgid or sticky: the archive may be unpacked by root),
 * owner and group as 0 without names, mtime to the second.
 *
 * Returns 0, or a negative errno with *F set (a failed write to OUT_FD
 * is io_error and leaves part of an archive there).
 */
int fstar_pack(struct fs_ctx *ctx, const char *path, int out_fd,
    uint64_t max_bytes, struct fstar_counts *n, struct fstar_fail *f);

#endif
