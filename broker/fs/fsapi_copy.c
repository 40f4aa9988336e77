/*
 * fsapi_copy.c: the file API's data copy (fsapi_internal.h): descriptor
 * to descriptor by the best method the pair allows, under the front's
 * stop check and progress hook (fsapi.h). Resolution, reading and
 * writing are in fsapi.c.
 */
#include "fsapi.h"
#include "fsapi_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define COPY_BUF 65536
/* The least a copy preallocates its output for (copy_preallocate). */
#define PREALLOC_MIN (1u << 20)
/* How fsapi_copy_fd moves data, best first. */
enum copy_how {
	COPY_RANGE, /* copy_file_range: file to file, in the kernel */
	COPY_SENDFILE, /* sendfile: a file to anything (pipe, socket) */
	COPY_SPLICE, /* splice: a pipe to anything */
	COPY_RW, /* read/write through a buffer */
};

/* Whether ERR from a kernel copy means "not for these descriptors" (a
 * pipe or socket, another file system, an O_APPEND output) rather than a
 * failure of the data: the next method is then tried. */
static bool
copy_unsupported(int err)
{
	return err == EXDEV || err == EINVAL || err == ENOSYS ||
	    err == EOPNOTSUPP || err == EBADF || err == ESPIPE;
}

/* The front's stop check (fsapi_set_interrupted); NULL: never stop. */
static int (*copy_interrupted)(void);

void
fsapi_set_interrupted(int (*fn)(void))
{
	copy_interrupted = fn;
}

/* The front's progress hook (fsapi_set_progress); NULL: none. */
static void (*copy_progress_fn)(void *, uint64_t);
static void *copy_progress_arg;

void
fsapi_set_progress(void (*fn)(void *arg, uint64_t bytes), void *arg)
{
	copy_progress_fn = fn;
	copy_progress_arg = arg;
}

/* Tells the progress hook that N bytes moved (N <= 0: none did). */
static void
copy_progress(ssize_t n)
{
	if (copy_progress_fn != NULL && n > 0)
		copy_progress_fn(copy_progress_arg, (uint64_t)n);
}

bool
fsapi_copy_stopped(void)
{
	return copy_interrupted != NULL && copy_interrupted() != 0;
}

/* Writes all LEN bytes of BUF to OUT, as write_all, but gives up with
 * -EINTR once copy_stopped says so (checked before each write, so also
 * after one the signal cut short or interrupted). Returns 0 or -errno. */
static int
copy_write_all(int out, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n;

		if (fsapi_copy_stopped())
			return -EINTR;
		n = write(out, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The first read of a regular file IN (ST its fstat) from its current
 * offset: a small file (most of a workspace) in one read of its remaining
 * size + 1 into BUF (COPY_BUF bytes), written to OUT; a short count is its
 * end, so no second call probes for it, and no splice set-up for 4 KiB.
 * A file that grew meanwhile goes on in fsapi_copy_fd's loop. Adds to
 * *COPIED (below LIMIT). Returns 0 when the file is copied, 1 when the
 * copy goes on, or -errno (*OUT_SIDE set when writing OUT failed).
 */
static int
copy_small_file(int in, int out, const struct stat *st, uint64_t limit,
    uint64_t *copied, bool *out_side, char *buf)
{
	off_t pos = lseek(in, 0, SEEK_CUR);
	uint64_t left = limit - *copied;
	ssize_t n;
	int e;

	if (pos >= 0 && st->st_size >= pos &&
	    (uint64_t)(st->st_size - pos) < COPY_BUF) {
		size_t want = (size_t)(st->st_size - pos) + 1;

		if (want > left)
			want = (size_t)left;
		do
			n = fsapi_copy_stopped() ? -2 : read(in, buf, want);
		while (n == -1 && errno == EINTR);
		if (n == -2)
			return -EINTR;
		if (n < 0)
			return -errno;
		if (n > 0 && (e = copy_write_all(out, buf, (size_t)n)) < 0) {
			*out_side = true;
			return e;
		}
		*copied += (uint64_t)n;
		copy_progress(n);
		if ((size_t)n < want)
			return 0;
	}
	return 1;
}

/*
 * Before a kernel copy from the regular file IN (IST its fstat) of at most
 * LEFT bytes: reserves the blocks the copy will write in OUT, when OUT is
 * a regular file on ext4 opened without O_APPEND, with fallocate(2)
 * FALLOC_FL_KEEP_SIZE over [OUT's offset, + min(LEFT, what IN holds from
 * its offset)). The size does not change and no byte is written: the copy
 * then fills blocks ext4 already has instead of reserving each one as it
 * goes (delayed allocation: about a quarter of the kernel's time in a
 * 1 GiB copy, docs/benchmarks.md). Only ext4: tmpfs clears every page
 * it preallocates (a second pass over the data), and a file system that
 * clones (XFS, Btrfs) would allocate what the clone then shares. A hint
 * only: any failure (ENOSPC) is left for the copy to meet and name.
 * Blocks reserved past what a failed copy wrote stay past OUT's end of
 * file until it is truncated or removed (the new file of a write is
 * removed). Skipped under PREALLOC_MIN bytes.
 */
static void
copy_preallocate(int in, int out, const struct stat *ist, uint64_t left)
{
	struct statfs sf;
	off_t ipos, opos;
	struct stat ost;
	uint64_t want;
	int fl;

	if (left < PREALLOC_MIN || fstat(out, &ost) < 0 ||
	    !S_ISREG(ost.st_mode) || (fl = fcntl(out, F_GETFL)) < 0 ||
	    (fl & O_APPEND) != 0 || fstatfs(out, &sf) < 0 ||
	    sf.f_type != EXT4_SUPER_MAGIC)
		return;
	ipos = lseek(in, 0, SEEK_CUR);
	opos = lseek(out, 0, SEEK_CUR);
	if (ipos < 0 || opos < 0 || ist->st_size <= ipos)
		return;
	want = (uint64_t)(ist->st_size - ipos);
	if (want > left)
		want = left;
	if (want < PREALLOC_MIN || want > (uint64_t)(INT64_MAX - opos) ||
	    (off_t)want + opos <= ost.st_size)
		return;
	(void)fallocate(out, FALLOC_FL_KEEP_SIZE, opos, (off_t)want);
}

/* One call of the kernel method HOW (not COPY_RW) for at most WANT bytes
 * from IN to OUT, each at its offset: what it returns, errno set. */
static ssize_t
copy_kernel(enum copy_how how, int in, int out, size_t want)
{
	switch (how) {
	case COPY_RANGE:
		return copy_file_range(in, NULL, out, NULL, want, 0);
	case COPY_SENDFILE:
		return sendfile(out, in, NULL, want);
	case COPY_SPLICE:
		return splice(in, NULL, out, NULL, want, SPLICE_F_MOVE);
	case COPY_RW:
	default:
		errno = ENOSYS; /* not a kernel method: copy_rw_once's */
		return -1;
	}
}

/* One read of at most WANT bytes (and COPY_BUF) from IN into BUF, written
 * whole to OUT; a read a signal interrupted is made again unless the copy
 * was stopped. Returns the bytes moved, 0 at IN's end, or -errno (-EINTR:
 * stopped; *OUT_SIDE set when writing OUT failed). */
static ssize_t
copy_rw_once(int in, int out, size_t want, char *buf, bool *out_side)
{
	ssize_t n;
	int e;

	if (want > COPY_BUF)
		want = COPY_BUF;
	do
		n = read(in, buf, want);
	while (n < 0 && errno == EINTR && !fsapi_copy_stopped());
	if (n < 0)
		return -errno;
	if (n > 0 && (e = copy_write_all(out, buf, (size_t)n)) < 0) {
		*out_side = true;
		return e;
	}
	return n;
}

int
fsapi_copy_fd(int in, int out, uint64_t limit, uint64_t *copied, bool *out_side)
{
	/* With a progress hook, calls of 8 MiB so that it hears of each. */
	const size_t chunk = copy_progress_fn != NULL ? 8u << 20 : 1u << 30;
	enum copy_how how = COPY_RW;
	char buf[COPY_BUF];
	struct stat st;

	*out_side = false;
	if (fstat(in, &st) < 0)
		st.st_mode = 0;
	if (S_ISREG(st.st_mode))
		how = COPY_RANGE;
	else if (S_ISFIFO(st.st_mode))
		how = COPY_SPLICE;
	if (how == COPY_RANGE && *copied < limit) {
		int r = copy_small_file(in, out, &st, limit, copied, out_side,
		    buf);

		if (r <= 0)
			return r;
		copy_preallocate(in, out, &st, limit - *copied);
	}
	while (*copied < limit) {
		uint64_t left = limit - *copied;
		size_t want = left < chunk ? (size_t)left : chunk;
		ssize_t n;

		if (fsapi_copy_stopped())
			return -EINTR;
		if (how == COPY_RW) {
			if ((n = copy_rw_once(in, out, want, buf, out_side)) <
			    0)
				return (int)n;
		} else if ((n = copy_kernel(how, in, out, want)) < 0) {
			if (errno == EINTR)
				continue;
			if (copy_unsupported(errno)) {
				how = how == COPY_RANGE ? COPY_SENDFILE
							: COPY_RW;
				continue;
			}
			/* Cannot tell which side: the write side's errors
			 * (ENOSPC, EFBIG...) are the ones named. */
			*out_side = true;
			return -errno;
		}
		if (n == 0)
			return 0;
		*copied += (uint64_t)n;
		copy_progress(n);
	}
	return 0;
}
