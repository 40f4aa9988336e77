/* fsapi.c: the host file API on the workspace descriptor (fsapi.h). */
#include "fsapi.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "wspath.h"

#define COPY_BUF 65536

/* openat2 with the host file API's resolve flags, without the string
 * check (the callers have made it). Returns an fd or -errno. */
static int
open_beneath_raw(int root, const char *path, int flags, mode_t mode)
{
	struct open_how how;
	long fd;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		      RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	do
		fd = syscall(SYS_openat2, root, path, &how, sizeof(how));
	while (fd < 0 && (errno == EINTR || errno == EAGAIN));
	return fd < 0 ? -errno : (int)fd;
}

int
fsapi_open_beneath(int root, const char *path, int flags, mode_t mode)
{
	if (path == NULL || wspath_check(path, strlen(path), NULL) < 0)
		return -EINVAL;
	return open_beneath_raw(root, path, flags, mode);
}

/*
 * Copies from IN to OUT until end of file or LIMIT bytes, whichever comes
 * first, adding to *COPIED. copy_file_range first (in the kernel, no
 * buffer); read/write when it cannot serve this pair of descriptors
 * (a pipe, another file system, an O_APPEND output). Sets *OUT_SIDE when
 * a failure was the output's. Returns 0 or -errno.
 */
static int
copy_fd(int in, int out, uint64_t limit, uint64_t *copied, bool *out_side)
{
	static const size_t chunk = 1u << 30;
	char buf[COPY_BUF];
	bool kernel = true;

	*out_side = false;
	while (*copied < limit) {
		uint64_t left = limit - *copied;
		size_t want = left < chunk ? (size_t)left : chunk;
		ssize_t n;
		int e;

		if (kernel) {
			n = copy_file_range(in, NULL, out, NULL, want, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EXDEV || errno == EINVAL ||
				      errno == ENOSYS || errno == EOPNOTSUPP ||
				      errno == EBADF)) {
				kernel = false;
				continue;
			}
			if (n < 0) {
				/* Cannot tell which side: the write side's
				 * errors (ENOSPC, EFBIG...) are named. */
				*out_side = true;
				return -errno;
			}
			if (n == 0)
				return 0;
			*copied += (uint64_t)n;
			continue;
		}
		if (want > sizeof(buf))
			want = sizeof(buf);
		n = read(in, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		if ((e = write_all(out, buf, (size_t)n)) < 0) {
			*out_side = true;
			return e;
		}
		*copied += (uint64_t)n;
	}
	return 0;
}

/* Sets *WHY and returns E (a negative errno): one exit for each failure. */
static int
fail(enum fs_error *why, enum fs_error err, int e)
{
	*why = err;
	return e;
}

int
fsapi_read(int root, const char *path, uint64_t max_bytes, int out_fd,
	   uint64_t *copied, enum fs_error *why)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	bool out_side;
	int e;

	*copied = 0;
	*why = FS_OK;
	if (path == NULL || wspath_check(path, strlen(path), NULL) < 0)
		return fail(why, FS_INVALID_PATH, -EINVAL);
	/* O_PATH first: nothing is opened for reading (no FIFO wait, no
	 * device open with its side effects) until fstat has said what the
	 * name is; only a regular file is then reopened, through its own
	 * descriptor, never by name again. */
	fd = open_beneath_raw(root, path, O_PATH, 0);
	if (fd < 0)
		return fail(why, fs_error_from_errno(-fd), fd);
	if (fstat(fd, &st) < 0)
		return fail(why, FS_IO_ERROR, -errno);
	/* Decided on the descriptor we will read, not on the name. */
	if (S_ISDIR(st.st_mode))
		return fail(why, FS_IS_A_DIRECTORY, -EISDIR);
	if (!S_ISREG(st.st_mode))
		return fail(why, FS_NOT_REGULAR_FILE, -EINVAL);
	/* A second link may be the job's hard link to a file outside the
	 * workspace that it could not read itself but the broker can. */
	if (st.st_nlink > 1)
		return fail(why, FS_HARDLINKED_FILE, -EMLINK);
	/* A sparse 1 TB file is refused here, without reading a byte. */
	if (st.st_size < 0 || (uint64_t)st.st_size > max_bytes)
		return fail(why, FS_TOO_LARGE, -EFBIG);
	{
		char self[64];
		int rfd;

		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		rfd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (rfd < 0)
			return fail(why, FS_IO_ERROR, -errno);
		close(fd);
		fd = rfd;
	}
	/* At most MAX_BYTES even if the file grows while it is copied. */
	if ((e = copy_fd(fd, out_fd, max_bytes, copied, &out_side)) < 0)
		return fail(why, FS_IO_ERROR, e);
	return 0;
}

/* NAME (17 bytes) := ".stockade-tmp-" is prefixed by the caller; this
 * fills 16 random hex digits. Returns 0 or -errno. */
static int
random_tmp_name(char *name, size_t size)
{
	uint8_t r[8];
	ssize_t n;

	do
		n = getrandom(r, sizeof(r), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(r))
		return n < 0 ? -errno : -EIO;
	snprintf(name, size, ".stockade-tmp-%02x%02x%02x%02x%02x%02x%02x%02x",
		 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
	return 0;
}

/*
 * Makes a temporary name in DIRFD for the new file: a link to the unnamed
 * file FD (PROC: its /proc/self/fd path) when PROC is not NULL, else a new
 * empty file created O_EXCL | O_NOFOLLOW with MODE (its descriptor in
 * *NEWFD). TMP (at least 40 bytes) gets the name. Returns 0 or -errno.
 */
static int
make_tmp_name(int dirfd, const char *proc, mode_t mode, char *tmp,
	      size_t size, int *newfd)
{
	int tries, e;

	for (tries = 0; tries < 16; tries++) {
		if ((e = random_tmp_name(tmp, size)) < 0)
			return e;
		if (proc != NULL) {
			if (linkat(AT_FDCWD, proc, dirfd, tmp,
				   AT_SYMLINK_FOLLOW) == 0)
				return 0;
		} else {
			*newfd = openat(dirfd, tmp,
					O_CREAT | O_EXCL | O_WRONLY |
						O_NOFOLLOW | O_NOCTTY |
						O_CLOEXEC,
					mode);
			if (*newfd >= 0)
				return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int
fsapi_write(int root, const char *path, int in_fd, uint64_t max_bytes,
	    mode_t mode, bool overwrite, enum fs_error *why)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_close_ int fd = -1;
	char parent[WSPATH_MAX_PATH + 1], tmp[48] = "", proc[64] = "";
	const mode_t m = mode & 0777; /* never setuid, setgid or sticky */
	const char *name;
	uint64_t copied = 0;
	struct stat st;
	size_t len, off;
	bool out_side;
	int e;

	*why = FS_OK;
	if (path == NULL || wspath_check(path, (len = strlen(path)), NULL) < 0 ||
	    wspath_split(path, len, parent, sizeof(parent), &off) < 0)
		return fail(why, FS_INVALID_PATH, -EINVAL);
	name = path + off;
	/* The parent, resolved once; everything after is relative to it. */
	dirfd = open_beneath_raw(root, parent[0] != '\0' ? parent : ".",
				 O_PATH | O_DIRECTORY, 0);
	if (dirfd < 0)
		return fail(why, fs_error_from_errno(-dirfd), dirfd);
	/* An early answer before any data is consumed; the kernel decides
	 * again at linkat/renameat2 time, so a race changes nothing. */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode))
			return fail(why, FS_IS_A_DIRECTORY, -EISDIR);
		if (!overwrite)
			return fail(why, FS_EXISTS, -EEXIST);
	} else if (errno != ENOENT) {
		return fail(why, fs_error_from_errno(errno), -errno);
	}

	fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, m);
	if (fd >= 0) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	} else if (errno == EOPNOTSUPP || errno == EISDIR) {
		/* No O_TMPFILE on this file system (EISDIR: a kernel that
		 * predates it): a random name, removed on any failure. */
		if ((e = make_tmp_name(dirfd, NULL, m, tmp, sizeof(tmp),
				       &fd)) < 0)
			return fail(why, fs_error_from_errno(-e), e);
	} else {
		return fail(why, fs_error_from_errno(errno), -errno);
	}

	if (geteuid() == 0) {
		/* The job runs as the workspace's owner (workspace.h). */
		struct stat rs;

		if (fstat(root, &rs) < 0 || fchown(fd, rs.st_uid, rs.st_gid) < 0) {
			e = -errno;
			*why = FS_IO_ERROR;
			goto out_unlink;
		}
	}
	if (fchmod(fd, m) < 0) {
		e = -errno;
		*why = FS_IO_ERROR;
		goto out_unlink;
	}
	/* MAX_BYTES + 1 tells a file of exactly the limit from a larger
	 * one without reading all of a huge one. */
	e = copy_fd(in_fd, fd, max_bytes == UINT64_MAX ? max_bytes :
				       max_bytes + 1,
		    &copied, &out_side);
	if (e < 0) {
		*why = out_side ? fs_error_from_errno(-e) : FS_IO_ERROR;
		if (*why != FS_QUOTA_EXCEEDED && *why != FS_TOO_LARGE)
			*why = FS_IO_ERROR;
		goto out_unlink;
	}
	if (copied > max_bytes) {
		e = -EFBIG;
		*why = FS_TOO_LARGE;
		goto out_unlink;
	}

	if (proc[0] != '\0' && !overwrite) {
		/* linkat never replaces: a name taken since is EEXIST. */
		if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		return fail(why, fs_error_from_errno(errno), -errno);
	}
	if (proc[0] != '\0' &&
	    (e = make_tmp_name(dirfd, proc, m, tmp, sizeof(tmp), NULL)) < 0) {
		*why = fs_error_from_errno(-e);
		return e;
	}
	/* TMP now names the complete file. rename replaces the directory
	 * entry NAME itself: a symlink or FIFO there is never followed. */
	if (renameat2(dirfd, tmp, dirfd, name,
		      overwrite ? 0 : RENAME_NOREPLACE) == 0)
		return 0;
	e = -errno;
	if (e == -EINVAL && !overwrite) {
		/* No RENAME_NOREPLACE here: linkat never replaces either. */
		if (linkat(dirfd, tmp, dirfd, name, 0) == 0) {
			(void)unlinkat(dirfd, tmp, 0);
			return 0;
		}
		e = -errno;
	}
	*why = fs_error_from_errno(-e);
out_unlink:
	if (tmp[0] != '\0')
		(void)unlinkat(dirfd, tmp, 0);
	return e;
}
