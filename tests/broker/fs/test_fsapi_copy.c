/*
 * test_fsapi_copy.c: the data copy of the file API (broker/fs/fsapi_copy.c)
 * with regular files on both sides, where it preallocates the output on
 * ext4 (issue 27): the bytes and the size are the copy's, whatever the
 * offsets, and no block is reserved past what was copied. On a file
 * system other than ext4 ($TMPDIR elsewhere) the same checks hold with
 * nothing preallocated.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsapi.h"
#include "fstest.h"
#include "fsutil.h"
#include "policy.h"

#define MIB (1u << 20)

static void
copy_setup(void)
{
	fstest_setup("fsapi-copy", false);
}

TestSuite(fsapi_copy, .init = copy_setup, .fini = fstest_teardown,
    .timeout = 60);

/* The default policy's [files] quotas, for ROOT. */
static void
ctx_default(struct fs_ctx *ctx)
{
	char err[POLICY_ERR_MAX];
	struct policy p;

	memset(&p, 0, sizeof(p));
	cr_assert_eq(policy_load_default(&p, err, sizeof(err)), 0, "%s", err);
	fsapi_ctx_init(ctx, root, &p.files);
	policy_clear(&p);
}

/* The byte at offset I of every test file. */
static char
pattern(size_t i)
{
	return (char)(i * 7 + i / 4096);
}

/* Writes N bytes of the pattern to FD at its offset. */
static void
fill(int fd, size_t n)
{
	char *buf = malloc(n);

	cr_assert_not_null(buf);
	for (size_t i = 0; i < n; i++)
		buf[i] = pattern(i);
	cr_assert_eq(write_all(fd, buf, n), 0);
	free(buf);
}

/* Opens OUTSIDE/NAME with FLAGS (O_CREAT, 0644). */
static int
open_outside(const char *name, int flags)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", outside, name);
	fd = open(path, flags | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	return fd;
}

/* Asserts that FD (a regular file) is SIZE bytes, of which the N from
 * FROM on are the pattern from offset SRC on, and holds no block past
 * its end (st_blocks counts preallocated and delayed blocks alike). */
static void
assert_file(int fd, off_t size, off_t from, size_t n, size_t src)
{
	char *buf = malloc(n);
	struct stat st;

	cr_assert_not_null(buf);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_size, size);
	cr_assert_eq(pread(fd, buf, n, from), (ssize_t)n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(buf[i], pattern(src + i), "byte %zu", i);
	free(buf);
	/* Whole 4 KiB blocks (ext4's, tmpfs's pages), plus one block of
	 * slack for a file system's own rounding; a preallocation past the
	 * copy is at least 1 MiB (PREALLOC_MIN) and shows. */
	cr_assert_leq((uint64_t)st.st_blocks * 512,
	    (((uint64_t)size + 4095) & ~UINT64_C(4095)) + 4096,
	    "%lld bytes allocated for %lld", (long long)st.st_blocks * 512,
	    (long long)size);
}

Test(fsapi_copy, read_range_into_file_at_offset)
{
	_cleanup_close_ int out = -1, ws_fd = -1;
	struct fs_ctx ctx;
	enum fs_error why;
	uint64_t n = 0;

	ctx_default(&ctx);
	ws_fd = openat(root, "big", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(ws_fd, 0);
	fill(ws_fd, 5 * MIB);
	/* The output already holds 4 KiB and is read at that offset; the
	 * range asked for is 2 MiB + 1 from 1 MiB in: what is reserved must
	 * follow the output's offset and the range, not the source's size. */
	out = open_outside("got", O_RDWR);
	fill(out, 4096);
	cr_assert_eq(fsapi_get(&ctx, "big", MIB, 2 * MIB + 1, out, &n, &why), 0,
	    "%s", fs_error_name(why));
	cr_assert_eq(n, 2 * MIB + 1);
	assert_file(out, 4096 + 2 * MIB + 1, 4096, 2 * MIB + 1, MIB);
	cr_assert_eq(lseek(out, 0, SEEK_CUR), 4096 + 2 * MIB + 1);
}

Test(fsapi_copy, read_into_append_only_file)
{
	_cleanup_close_ int out = -1, ws_fd = -1;
	struct fs_ctx ctx;
	enum fs_error why;
	uint64_t n = 0;

	ctx_default(&ctx);
	ws_fd = openat(root, "big", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(ws_fd, 0);
	fill(ws_fd, 3 * MIB + 7);
	out = open_outside("log", O_WRONLY);
	fill(out, 10);
	close(out);
	/* O_APPEND: copy_file_range refuses it (EBADF); the copy goes on
	 * by read and write, at the end of the file whatever the offset. */
	out = open_outside("log", O_RDWR | O_APPEND);
	cr_assert_eq(fsapi_get(&ctx, "big", 0, UINT64_MAX, out, &n, &why), 0,
	    "%s", fs_error_name(why));
	cr_assert_eq(n, 3 * MIB + 7);
	assert_file(out, 10 + 3 * MIB + 7, 10, 3 * MIB + 7, 0);
}

Test(fsapi_copy, write_from_file_at_offset)
{
	_cleanup_close_ int in = -1, got = -1;
	struct fs_ctx ctx;
	enum fs_error why;
	uint64_t n = 0;

	ctx_default(&ctx);
	in = open_outside("src", O_RDWR);
	fill(in, 2 * MIB + 100);
	/* Written from the descriptor's offset: 100 bytes in. */
	cr_assert_eq(lseek(in, 100, SEEK_SET), 100);
	cr_assert_eq(fsapi_put(&ctx, "copy", in, 0644, false, &n, &why), 0,
	    "%s", fs_error_name(why));
	cr_assert_eq(n, 2 * MIB);
	got = openat(root, "copy", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(got, 0);
	assert_file(got, 2 * MIB, 0, 2 * MIB, 100);
	/* Over the per-file limit: too_large, nothing named, whatever was
	 * reserved gone with the unnamed file. */
	ctx.quota.file_bytes = MIB;
	cr_assert_eq(lseek(in, 0, SEEK_SET), 0);
	cr_assert_lt(fsapi_put(&ctx, "over", in, 0644, false, &n, &why), 0);
	cr_assert_eq(why, FS_TOO_LARGE);
	cr_assert_eq(faccessat(root, "over", F_OK, AT_SYMLINK_NOFOLLOW), -1);
}
