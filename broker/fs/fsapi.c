/*
 * fsapi.c: the host file API on the workspace descriptor (fsapi.h):
 * resolution, reading and writing. The operations under a session's
 * quotas are in fsops.c and fsops_mkdir.c, the data copy in fsapi_copy.c;
 * what they share is fsapi_internal.h.
 */
#include "fsapi.h"
#include "fsapi_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "wspath.h"

/* The sizes of the new file's temporary name and /proc/self/fd path. */
#define TMP_NAME_SIZE 48
#define PROC_PATH_SIZE 64

int
fsapi_openat2(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how;
	long fd;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	do
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (fd < 0 && (errno == EINTR || errno == EAGAIN));
	return fd < 0 ? -errno : (int)fd;
}

/* An unnamed file (O_TMPFILE) in the directory DIRFD opened with FLAGS
 * (O_WRONLY or O_RDWR) and MODE, EINTR retried as fsapi_openat2 does.
 * Returns a descriptor or -1 with errno set. */
static int
openat_tmpfile(int dirfd, int flags, mode_t mode)
{
	int fd;

	do
		fd = openat(dirfd, ".", O_TMPFILE | flags | O_CLOEXEC, mode);
	while (fd < 0 && errno == EINTR);
	return fd;
}

int
fsapi_open_beneath(int root, const char *path, int flags, mode_t mode)
{
	if (path == NULL || wspath_check(path, strlen(path), NULL) < 0)
		return -EINVAL;
	return fsapi_openat2(root, path, flags, mode);
}

int
fsapi_open_parent(int root, const char *path, const struct wspath_limits *lim,
    const char **name, enum fs_error *why)
{
	char parent[WSPATH_MAX_PATH + 1];
	size_t len, off;
	int fd;

	*name = NULL;
	if (path == NULL || wspath_check(path, (len = strlen(path)), lim) < 0 ||
	    wspath_split(path, len, parent, sizeof(parent), &off) < 0)
		return fsapi_fail(why, FS_INVALID_PATH, -EINVAL);
	/* The parent, resolved once; everything after is relative to it. */
	fd = fsapi_openat2(root, parent[0] != '\0' ? parent : ".",
	    O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		return fsapi_fail(why, fs_error_from_errno(-fd), fd);
	*name = path + off;
	return fd;
}

/*
 * Checks ST, a stat of the entry about to be read: the first refusal that
 * applies, with *WHY set, or 0.
 */
static int
check_regular(const struct stat *st, bool allow_hardlinks, enum fs_error *why)
{
	if (S_ISLNK(st->st_mode))
		return fsapi_fail(why, FS_SYMLINK_REFUSED, -ELOOP);
	if (S_ISDIR(st->st_mode))
		return fsapi_fail(why, FS_IS_A_DIRECTORY, -EISDIR);
	if (!S_ISREG(st->st_mode))
		return fsapi_fail(why, FS_NOT_REGULAR_FILE, -EINVAL);
	/* A second link may be the job's hard link to a file outside the
	 * workspace that it could not read itself but the broker can. */
	if (st->st_nlink > 1 && !allow_hardlinks)
		return fsapi_fail(why, FS_HARDLINKED_FILE, -EMLINK);
	return 0;
}

int
fsapi_open_regular_at(int dirfd, const char *name, bool allow_hardlinks,
    struct stat *st, enum fs_error *why)
{
	_cleanup_close_ int fd = -1;
	char self[64];
	int rfd, e;

	*why = FS_OK;
	/* O_PATH first: nothing is opened for reading (no FIFO wait, no
	 * device open with its side effects) until fstat has said what the
	 * name is. O_NOFOLLOW: a symlink at NAME is that link's descriptor,
	 * refused below; RESOLVE_NO_SYMLINKS refuses one anywhere else. */
	fd = fsapi_openat2(dirfd, name, O_PATH | O_NOFOLLOW, 0);
	if (fd < 0)
		return fsapi_fail(why, fs_error_from_errno(-fd), fd);
	if (fstat(fd, st) < 0)
		return fsapi_fail(why, FS_IO_ERROR, -errno);
	if ((e = check_regular(st, allow_hardlinks, why)) < 0)
		return e;
	/* Only a regular file is reopened, and through its own descriptor
	 * (the magic link names that inode, never a path again). */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	do /* EINTR retried, as fsapi_openat2 does */
		rfd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	while (rfd < 0 && errno == EINTR);
	if (rfd < 0)
		return fsapi_fail(why, FS_IO_ERROR, -errno);
	/* What the caller checks sizes against is the descriptor it reads;
	 * a link made since the first fstat is refused too. */
	if (fstat(rfd, st) < 0)
		e = fsapi_fail(why, FS_IO_ERROR, -errno);
	else
		e = check_regular(st, allow_hardlinks, why);
	if (e < 0) {
		close(rfd);
		return e;
	}
	return rfd;
}

int
fsapi_read_req(int root, const char *path, const struct fsapi_rreq *r,
    int out_fd, uint64_t *copied, enum fs_error *why)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_close_ int fd = -1;
	uint64_t size, avail, limit;
	const char *name;
	struct stat st;
	bool out_side;
	int e;

	*copied = 0;
	*why = FS_OK;
	dirfd = fsapi_open_parent(root, path, r->lim, &name, why);
	if (dirfd < 0)
		return dirfd;
	fd = fsapi_open_regular_at(dirfd, name, r->allow_hardlinks, &st, why);
	if (fd < 0)
		return fd;
	/* Decided on the descriptor we will read, without reading: a sparse
	 * 1 TB file is refused here. */
	size = st.st_size < 0 ? 0 : (uint64_t)st.st_size;
	avail = size > r->offset ? size - r->offset : 0;
	if ((avail < r->length ? avail : r->length) > r->max_bytes)
		return fsapi_fail(why, FS_TOO_LARGE, -EFBIG);
	/* Past the end (pread(2)): nothing to copy. */
	if (r->offset > 0 && avail == 0)
		return 0;
	if (r->offset > 0 && lseek(fd, (off_t)r->offset, SEEK_SET) < 0)
		return fsapi_fail(why, FS_IO_ERROR, -errno);
	/* At most MAX_BYTES even if the file grows while it is copied. */
	limit = r->length < r->max_bytes ? r->length : r->max_bytes;
	if ((e = fsapi_copy_fd(fd, out_fd, limit, copied, &out_side)) < 0)
		return fsapi_fail(why, FS_IO_ERROR, e);
	return 0;
}

int
fsapi_read(int root, const char *path, uint64_t max_bytes, int out_fd,
    uint64_t *copied, enum fs_error *why)
{
	const struct fsapi_rreq r = {
	    .lim = NULL,
	    .allow_hardlinks = false,
	    .offset = 0,
	    .length = UINT64_MAX,
	    .max_bytes = max_bytes,
	};

	return fsapi_read_req(root, path, &r, out_fd, copied, why);
}

/* Fills NAME (SIZE bytes, at least 31) with ".stockade-tmp-" and 16 random
 * hex digits. Returns 0 or -errno. */
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
make_tmp_name(int dirfd, const char *proc, mode_t mode, char *tmp, size_t size,
    int *newfd)
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
			    O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW |
				O_NOCTTY | O_CLOEXEC,
			    mode);
			if (*newfd >= 0)
				return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* The process's umask, read once (umask(2) can only be read by setting
 * it; nothing changes it after). */
mode_t
fsapi_process_umask(void)
{
	static mode_t mask = (mode_t)-1;

	if (mask == (mode_t)-1) {
		mask = umask(0);
		umask(mask);
	}
	return mask;
}

/* A + B, saturating at UINT64_MAX. */
static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * The early answer for NAME in PARENT before any data is consumed: the
 * entry there refused (a directory; any entry without W's OVERWRITE), or
 * a new name without W's ENTRY_ROOM. Sets *REPLACED and *OLD_SIZE (the
 * st_size of a regular file replaced) for an entry that will be
 * overwritten. Returns 0 or a negative errno with *WHY set.
 */
static int
write_probe_name(int parent, const char *name, const struct fsapi_wreq *w,
    bool *replaced, uint64_t *old_size, enum fs_error *why)
{
	struct stat st;

	/* The kernel decides again at linkat/renameat2 time, so a race
	 * changes nothing but the usage figures the caller keeps (which a
	 * job invalidates anyway). A batch's new file (fs.unpack: no
	 * overwrite, room for it) goes without: the linkat answers exists,
	 * a lookup fewer. */
	if (w->name != NULL && !w->overwrite && w->entry_room) {
		/* the linkat decides */
	} else if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode))
			return fsapi_fail(why, FS_IS_A_DIRECTORY, -EISDIR);
		if (!w->overwrite)
			return fsapi_fail(why, FS_EXISTS, -EEXIST);
		*replaced = true;
		if (S_ISREG(st.st_mode) && st.st_size > 0)
			*old_size = (uint64_t)st.st_size;
	} else if (errno != ENOENT) {
		return fsapi_fail(why, fs_error_from_errno(errno), -errno);
	} else if (!w->entry_room) {
		return fsapi_fail(why, FS_QUOTA_EXCEEDED, -EDQUOT);
	}
	return 0;
}

/*
 * Creates the new file in PARENT with mode M: an unnamed O_TMPFILE (PROC,
 * PROC_PATH_SIZE bytes, gets its /proc/self/fd path), else one under a
 * random name (TMP, TMP_NAME_SIZE bytes, gets it). Returns its
 * descriptor (the caller owns it) or a negative errno with *WHY set.
 */
static int
write_create(int parent, const char *name, mode_t m, char *tmp, char *proc,
    enum fs_error *why)
{
	int fd = -1, e;

	if ((fd = openat_tmpfile(parent, O_WRONLY, m)) >= 0) {
		snprintf(proc, PROC_PATH_SIZE, "/proc/self/fd/%d", fd);
	} else if (errno == EOPNOTSUPP || errno == EISDIR) {
		/* No O_TMPFILE on this file system (EISDIR: a kernel that
		 * predates it): a random name, removed on any failure. */
		if ((e = make_tmp_name(parent, NULL, m, tmp, TMP_NAME_SIZE,
			 &fd)) < 0)
			return fsapi_fail(why, fs_error_from_errno(-e), e);
	} else {
		return fsapi_fail(why, fs_error_from_errno(errno), -errno);
	}
	return fd;
}

int
fsapi_root_owner(int root, struct fsapi_wreq *w)
{
	struct stat rs;

	if (geteuid() != 0) {
		w->owner_known = -1;
		return 0;
	}
	if (fstat(root, &rs) < 0)
		return -errno;
	w->owner_known = 1;
	w->uid = rs.st_uid;
	w->gid = rs.st_gid;
	return 0;
}

/*
 * Gives the new file FD mode M and, for a root broker, the owner of the
 * workspace ROOT (W's, when it knows it: fsapi_root_owner). Returns 0 or
 * -errno.
 */
static int
write_set_owner(int root, int fd, mode_t m, const struct fsapi_wreq *w)
{
	struct fsapi_wreq own = {.owner_known = w->owner_known,
	    .uid = w->uid,
	    .gid = w->gid};
	int e;

	/* The mode first, while the file is still the broker's own: a root
	 * broker needs no CAP_FOWNER for it (confine.h). Created with M,
	 * the file already has it unless the umask took bits away. */
	if ((m & fsapi_process_umask()) != 0 && fchmod(fd, m) < 0)
		return -errno;
	if (own.owner_known == 0 && (e = fsapi_root_owner(root, &own)) < 0)
		return e;
	/* The job runs as the workspace's owner (workspace.h). */
	if (own.owner_known > 0 && fchown(fd, own.uid, own.gid) < 0)
		return -errno;
	return 0;
}

/*
 * Puts the data into the new file FD: W's FILL, else a copy of IN_FD,
 * *COPIED bytes, refused past MAX (the lower of W's FILE_BYTES and SPACE,
 * the room the workspace has for it). Returns 0 or a negative errno with
 * *WHY set.
 */
static int
write_fill(int in_fd, int fd, const struct fsapi_wreq *w, uint64_t max,
    uint64_t space, uint64_t *copied, enum fs_error *why)
{
	uint64_t limit;
	bool out_side;
	int e;

	/* MAX + 1 tells a file of exactly the limit from a larger one
	 * without reading all of a huge one. */
	limit = add_sat(max, 1);
	e = w->fill != NULL
	    ? w->fill(w->fill_arg, fd, limit, copied, &out_side)
	    : fsapi_copy_fd(in_fd, fd, limit, copied, &out_side);
	if (e < 0) {
		*why = out_side ? fs_error_from_errno(-e) : FS_IO_ERROR;
		if (*why != FS_QUOTA_EXCEEDED && *why != FS_TOO_LARGE)
			*why = FS_IO_ERROR;
		return e;
	}
	if (*copied > max) {
		/* The lower limit decides: the per-file one is too_large,
		 * the workspace's quota_exceeded. */
		if (w->file_bytes <= space)
			return fsapi_fail(why, FS_TOO_LARGE, -EFBIG);
		return fsapi_fail(why, FS_QUOTA_EXCEEDED, -EDQUOT);
	}
	return 0;
}

/*
 * Gives the complete new file its NAME in PARENT: the unnamed file PROC
 * linked there, or (TMP, TMP_NAME_SIZE bytes, naming it or getting a
 * name for it) renamed over it. *REPLACED set when a name taken since
 * the probe is replaced. Returns 0 or a negative errno with *WHY set;
 * TMP is removed when the rename fails.
 */
static int
write_publish(int parent, const char *name, const struct fsapi_wreq *w,
    const char *proc, char *tmp, bool *replaced, enum fs_error *why)
{
	struct stat st;
	int e;

	if (proc[0] != '\0' && (!w->overwrite || !*replaced)) {
		/* linkat never replaces: a name taken since is EEXIST. With
		 * OVERWRITE and no file there a moment ago, the link is
		 * tried first (one directory insert, the common case of a
		 * new file) and a name taken since falls through to the
		 * rename below, which replaces it atomically. */
		if (linkat(AT_FDCWD, proc, parent, name, AT_SYMLINK_FOLLOW) ==
		    0)
			return 0;
		if (errno != EEXIST || !w->overwrite) {
			e = errno;
			if (e == EEXIST &&
			    fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) ==
				0 &&
			    S_ISDIR(st.st_mode))
				e = EISDIR;
			return fsapi_fail(why, fs_error_from_errno(e), -e);
		}
		*replaced = true;
	}
	if (proc[0] != '\0' &&
	    (e = make_tmp_name(parent, proc, 0, tmp, TMP_NAME_SIZE, NULL)) <
		0) {
		*why = fs_error_from_errno(-e);
		return e;
	}
	/* TMP now names the complete file. rename replaces the directory
	 * entry NAME itself: a symlink or FIFO there is never followed. */
	if (renameat2(parent, tmp, parent, name,
		w->overwrite ? 0 : RENAME_NOREPLACE) == 0)
		return 0;
	e = -errno;
	if (e == -EINVAL && !w->overwrite) {
		/* No RENAME_NOREPLACE here: linkat never replaces either. */
		if (linkat(parent, tmp, parent, name, 0) == 0) {
			(void)unlinkat(parent, tmp, 0);
			return 0;
		}
		e = -errno;
	}
	*why = fs_error_from_errno(-e);
	if (tmp[0] != '\0')
		(void)unlinkat(parent, tmp, 0);
	return e;
}

int
fsapi_write_req(int root, const char *path, int in_fd, struct fsapi_wreq *w,
    enum fs_error *why)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_close_ int fd = -1;
	char tmp[TMP_NAME_SIZE] = "", proc[PROC_PATH_SIZE] = "";
	const mode_t m = w->mode & 0777; /* never setuid, setgid or sticky */
	uint64_t copied = 0, space, max;
	bool replaced = false;
	int parent;
	uint64_t old_size = 0;
	const char *name;
	int e;

	*why = FS_OK;
	w->written = 0;
	w->replaced = false;
	w->old_size = 0;
	if (w->name != NULL) {
		name = w->name; /* a batch's: DIRFD is borrowed */
	} else if ((dirfd = fsapi_open_parent(root, path, w->lim, &name, why)) <
	    0) {
		return dirfd;
	}
	parent = w->name != NULL ? w->dirfd : dirfd;
	if ((e = write_probe_name(parent, name, w, &replaced, &old_size, why)) <
	    0)
		return e;
	/* The file may take what the workspace has left plus what the file
	 * it replaces frees. */
	space = add_sat(w->space_left, old_size);
	max = w->file_bytes < space ? w->file_bytes : space;

	if ((fd = write_create(parent, name, m, tmp, proc, why)) < 0)
		return fd;
	if ((e = write_set_owner(root, fd, m, w)) < 0) {
		*why = FS_IO_ERROR;
		goto out_unlink;
	}
	if ((e = write_fill(in_fd, fd, w, max, space, &copied, why)) < 0)
		goto out_unlink;
	if ((e = write_publish(parent, name, w, proc, tmp, &replaced, why)) < 0)
		return e;
	w->written = copied;
	w->replaced = replaced;
	w->old_size = old_size;
	return 0;

out_unlink:
	if (tmp[0] != '\0')
		(void)unlinkat(parent, tmp, 0);
	return e;
}

int
fsapi_write(int root, const char *path, int in_fd, uint64_t max_bytes,
    mode_t mode, bool overwrite, enum fs_error *why)
{
	struct fsapi_wreq w = {
	    .lim = NULL,
	    .file_bytes = max_bytes,
	    .space_left = UINT64_MAX,
	    .entry_room = true,
	    .mode = mode,
	    .overwrite = overwrite,
	};

	return fsapi_write_req(root, path, in_fd, &w, why);
}

int
fsapi_stage(int root, int in_fd, uint64_t limit, uint64_t *got,
    enum fs_error *why)
{
	_cleanup_close_ int tmp = -1;
	bool out_side;
	int e;

	*got = 0;
	*why = FS_OK;
	if (limit == UINT64_MAX)
		limit--;
	tmp = openat_tmpfile(root, O_RDWR, 0600);
	if (tmp < 0)
		tmp = memfd_create("stockade-stage", MFD_CLOEXEC);
	if (tmp < 0)
		return fsapi_fail(why, FS_IO_ERROR, -errno);
	if ((e = fsapi_copy_fd(in_fd, tmp, limit + 1, got, &out_side)) < 0)
		return fsapi_fail(why,
		    out_side && (e == -ENOSPC || e == -EDQUOT)
			? FS_QUOTA_EXCEEDED
			: FS_IO_ERROR,
		    e);
	if (lseek(tmp, 0, SEEK_SET) < 0)
		return fsapi_fail(why, FS_IO_ERROR, -errno);
	e = tmp;
	tmp = -1;
	return e;
}
