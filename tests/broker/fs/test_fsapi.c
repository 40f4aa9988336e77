/*
 * test_fsapi.c: the host file API (broker/fs/fsapi.c) against a hostile
 * workspace, as the test user, without a jail: the test plants what a
 * jailed program could (symlinks out, magic links, FIFOs, hard links,
 * sparse files) and asserts the exact named error, and that a canary
 * file outside the workspace keeps its content, size and mtime.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsapi.h"
#include "fstest.h"
#include "fsutil.h"

static void
fs_setup(void)
{
	fstest_setup("fsapi", true);
}

TestSuite(fsapi, .init = fs_setup, .fini = fstest_teardown, .timeout = 60);

static void
plant_link(const char *target, const char *name)
{
	cr_assert_eq(symlinkat(target, root, name), 0, "%s: %s", name,
	    strerror(errno));
}

/* A memfd holding LEN bytes of DATA, at offset 0. */
static int
source(const void *data, size_t len)
{
	int fd = memfd_create("src", MFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write_all(fd, data, len), 0);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* Reads PATH; asserts the named error WANT; returns the memfd output. */
static int
expect_read(const char *path, uint64_t max, enum fs_error want)
{
	int out = memfd_create("out", MFD_CLOEXEC);
	enum fs_error why = FS_IO_ERROR;
	uint64_t copied = 99;
	int rc;

	cr_assert_geq(out, 0);
	rc = fsapi_read(root, path, max, out, &copied, &why);
	cr_assert_eq(why, want, "read %s: %s, expected %s", path,
	    fs_error_name(why), fs_error_name(want));
	cr_assert_eq(rc < 0, want != FS_OK);
	if (want != FS_OK) {
		cr_assert_eq(copied, 0);
		cr_assert_eq(lseek(out, 0, SEEK_END), 0, "%s leaked bytes",
		    path);
	}
	return out;
}

static void
expect_write(const char *path, bool overwrite, enum fs_error want)
{
	int in = source("EVIL\n", 5);
	enum fs_error why = FS_IO_ERROR;
	int rc = fsapi_write(root, path, in, 1 << 20, 0644, overwrite, &why);

	close(in);
	cr_assert_eq(why, want, "write %s: %s, expected %s", path,
	    fs_error_name(why), fs_error_name(want));
	cr_assert_eq(rc < 0, want != FS_OK);
}

/* Number of entries in the workspace directory DIR ("" for the root). */
static int
count_entries(const char *dir)
{
	char path[256];
	struct stat st;
	int n = 0;
	FILE *p;
	char cmd[300];

	snprintf(path, sizeof(path), "%s/%s", ws, dir);
	cr_assert_eq(stat(path, &st), 0);
	snprintf(cmd, sizeof(cmd), "ls -A '%s'", path);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(cmd, sizeof(cmd), p) != NULL)
		n++;
	pclose(p);
	return n;
}

Test(fsapi, absolute_symlink_to_canary)
{
	char path[256];

	plant_link(canary, "abs");
	plant_link(outside, "absdir");
	close(expect_read("abs", 1 << 20, FS_SYMLINK_REFUSED));
	expect_write("absdir/canary", true, FS_SYMLINK_REFUSED);
	expect_write("absdir/new", false, FS_SYMLINK_REFUSED);
	snprintf(path, sizeof(path), "absdir/canary");
	close(expect_read(path, 1 << 20, FS_SYMLINK_REFUSED));
	fstest_assert_canary_intact();
}

Test(fsapi, relative_symlink_climbing_out)
{
	char path[300];

	cr_assert_eq(mkdirat(root, "sub", 0755), 0);
	plant_link("../../../../../../../..", "sub/up");
	snprintf(path, sizeof(path), "sub/up%s", canary);
	close(expect_read(path, 1 << 20, FS_SYMLINK_REFUSED));
	expect_write(path, true, FS_SYMLINK_REFUSED);
	fstest_assert_canary_intact();
}

Test(fsapi, chain_of_two_symlinks)
{
	plant_link("c2", "c1");
	plant_link(canary, "c2");
	plant_link("d2", "d1");
	plant_link(outside, "d2");
	close(expect_read("c1", 1 << 20, FS_SYMLINK_REFUSED));
	expect_write("d1/canary", true, FS_SYMLINK_REFUSED);
	close(expect_read("d1/canary", 1 << 20, FS_SYMLINK_REFUSED));
	fstest_assert_canary_intact();
}

Test(fsapi, symlink_as_parent_directory)
{
	char name[64], host[128];
	struct stat st;

	snprintf(name, sizeof(name), "out/stockade-fsapi-%ld-%d",
	    (long)time(NULL), getpid());
	snprintf(host, sizeof(host), "/tmp/%s", name + 4);
	plant_link("/tmp", "out");
	expect_write(name, false, FS_SYMLINK_REFUSED);
	expect_write(name, true, FS_SYMLINK_REFUSED);
	cr_assert_eq(lstat(host, &st), -1);
	cr_assert_eq(errno, ENOENT);
	fstest_assert_canary_intact();
}

Test(fsapi, magic_link_proc_self_root)
{
	char path[300];

	plant_link("/proc/self/root", "procroot");
	snprintf(path, sizeof(path), "procroot%s", canary);
	close(expect_read(path, 1 << 20, FS_SYMLINK_REFUSED));
	expect_write(path, true, FS_SYMLINK_REFUSED);
	snprintf(path, sizeof(path), "procroot%s/new", outside);
	expect_write(path, false, FS_SYMLINK_REFUSED);
	fstest_assert_canary_intact();
}

Test(fsapi, magic_link_proc_self_fd)
{
	int fd = open(canary, O_RDWR | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_geq(dup2(fd, 0), 0);
	plant_link("/proc/self/fd/0", "fd0");
	close(expect_read("fd0", 1 << 20, FS_SYMLINK_REFUSED));
	expect_write("fd0/x", true, FS_SYMLINK_REFUSED);
	close(fd);
	fstest_assert_canary_intact();
}

Test(fsapi, fifo_refused_at_once)
{
	struct timespec a, b;
	long ms;

	cr_assert_eq(mkfifoat(root, "result.txt", 0644), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	close(expect_read("result.txt", 1 << 20, FS_NOT_REGULAR_FILE));
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	cr_assert_lt(ms, 1000, "read of a FIFO took %ld ms", ms);
}

Test(fsapi, hard_link_refused)
{
	int fd = openat(root, "h1", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(linkat(root, "h1", root, "h2", 0), 0);
	close(expect_read("h1", 1 << 20, FS_HARDLINKED_FILE));
	close(expect_read("h2", 1 << 20, FS_HARDLINKED_FILE));
}

Test(fsapi, sparse_terabyte_too_large_unread)
{
	int fd = openat(root, "big", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	struct timespec a, b;

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)1 << 40), 0);
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &a);
	close(expect_read("big", 64 << 20, FS_TOO_LARGE));
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_assert_lt(b.tv_sec - a.tv_sec, 2);
}

Test(fsapi, other_refusals)
{
	cr_assert_eq(mkdirat(root, "dir", 0755), 0);
	close(expect_read("dir", 1 << 20, FS_IS_A_DIRECTORY));
	expect_write("dir", true, FS_IS_A_DIRECTORY);
	expect_write("dir", false, FS_IS_A_DIRECTORY);
	close(expect_read("missing", 1 << 20, FS_NOT_FOUND));
	expect_write("nodir/x", false, FS_NOT_FOUND);
	close(expect_read("../x", 1 << 20, FS_INVALID_PATH));
	expect_write("a//b", false, FS_INVALID_PATH);
	expect_write("/abs", false, FS_INVALID_PATH);
	expect_write("x", false, FS_OK);
	expect_write("x/y", false, FS_NOT_A_DIRECTORY);
	cr_assert_eq(count_entries(""), 2);
}

Test(fsapi, write_over_limit_leaves_nothing)
{
	static char data[1001];
	enum fs_error why;
	int in;

	memset(data, 'z', sizeof(data));
	cr_assert_eq(mkdirat(root, "d", 0755), 0);
	in = source(data, 1001);
	cr_assert_lt(fsapi_write(root, "d/f", in, 1000, 0644, false, &why), 0);
	cr_assert_eq(why, FS_TOO_LARGE);
	close(in);
	cr_assert_eq(count_entries("d"), 0);
	/* Overwrite goes through a temporary name: none left either. */
	in = source(data, 1001);
	cr_assert_lt(fsapi_write(root, "d/f", in, 1000, 0644, true, &why), 0);
	cr_assert_eq(why, FS_TOO_LARGE);
	close(in);
	cr_assert_eq(count_entries("d"), 0);
	/* Exactly the limit is fine. */
	in = source(data, 1000);
	cr_assert_eq(fsapi_write(root, "d/f", in, 1000, 0644, true, &why), 0);
	close(in);
	cr_assert_eq(count_entries("d"), 1);
}

Test(fsapi, planted_symlink_at_target)
{
	struct stat st;
	char buf[16];
	ssize_t n;
	int fd;

	plant_link(canary, "target");
	expect_write("target", false, FS_EXISTS);
	cr_assert_eq(fstatat(root, "target", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISLNK(st.st_mode));
	expect_write("target", true, FS_OK);
	cr_assert_eq(fstatat(root, "target", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISREG(st.st_mode));
	fd = openat(root, "target", O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	cr_assert_eq(n, 5);
	cr_assert_eq(memcmp(buf, "EVIL\n", 5), 0);
	/* A FIFO planted there is replaced too, never opened. */
	cr_assert_eq(mkfifoat(root, "pipe", 0644), 0);
	expect_write("pipe", false, FS_EXISTS);
	expect_write("pipe", true, FS_OK);
	cr_assert_eq(fstatat(root, "pipe", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISREG(st.st_mode));
	fstest_assert_canary_intact();
	cr_assert_eq(count_entries(""), 2);
}

Test(fsapi, round_trip_one_mebibyte)
{
	static uint8_t data[1 << 20];
	enum fs_error why;
	size_t got = 0;
	int in, out;

	while (got < sizeof(data)) {
		ssize_t n = getrandom(data + got, sizeof(data) - got, 0);

		cr_assert_gt(n, 0);
		got += (size_t)n;
	}
	cr_assert_eq(mkdirat(root, "d", 0755), 0);
	in = source(data, sizeof(data));
	cr_assert_eq(fsapi_write(root, "d/blob", in, sizeof(data), 0640, false,
			 &why),
	    0);
	cr_assert_eq(why, FS_OK);
	close(in);
	out = expect_read("d/blob", sizeof(data), FS_OK);
	cr_assert_eq(lseek(out, 0, SEEK_END), (off_t)sizeof(data));
	{
		uint8_t *m = mmap(NULL, sizeof(data), PROT_READ, MAP_SHARED,
		    out, 0);

		cr_assert_neq(m, MAP_FAILED);
		cr_assert_eq(memcmp(m, data, sizeof(data)), 0);
		munmap(m, sizeof(data));
	}
	close(out);
	/* Read at most MAX_BYTES: a limit below the size is too_large. */
	close(expect_read("d/blob", sizeof(data) - 1, FS_TOO_LARGE));
}

Test(fsapi, through_pipes)
{
	int p[2], q[2];
	enum fs_error why;
	uint64_t copied;
	char buf[16];

	/* A pipe as the source of a write and the sink of a read: the
	 * read/write fallback of copy_file_range. */
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(write(p[1], "hello\n", 6), 6);
	close(p[1]);
	cr_assert_eq(fsapi_write(root, "f", p[0], 100, 0600, false, &why), 0);
	close(p[0]);
	cr_assert_eq(pipe2(q, O_CLOEXEC), 0);
	cr_assert_eq(fsapi_read(root, "f", 100, q[1], &copied, &why), 0);
	cr_assert_eq(copied, 6);
	close(q[1]);
	cr_assert_eq(read(q[0], buf, sizeof(buf)), 6);
	cr_assert_eq(memcmp(buf, "hello\n", 6), 0);
	close(q[0]);
}

Test(fsapi, setuid_bits_dropped)
{
	struct stat st;
	mode_t um = umask(077);

	expect_write("x", false, FS_OK);
	umask(um);
	{
		int in = source("#!/bin/sh\n", 10);
		enum fs_error why;

		cr_assert_eq(fsapi_write(root, "s", in, 100, 07755, false,
				 &why),
		    0);
		close(in);
	}
	cr_assert_eq(fstatat(root, "s", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(st.st_mode & 07777, 0755, "mode %o", st.st_mode & 07777);
	/* The mode is set exactly, whatever the umask. */
	cr_assert_eq(fstatat(root, "x", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(st.st_mode & 07777, 0644, "mode %o", st.st_mode & 07777);
}

/* ==== Names (broker/fs/fsname.c) ========================================== */

#include "fsname.h"
#include "utf8.h"

/* Undoes fsname_escape (the test's own decoder, from the header's
 * contract): returns the raw bytes in OUT, their number in *LEN. */
static void
unescape(const char *s, char *out, size_t *len)
{
	size_t o = 0;

	while (*s != '\0') {
		if (*s != '\\') {
			out[o++] = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case '\\':
			out[o++] = '\\';
			s++;
			break;
		case 'n':
			out[o++] = '\n';
			s++;
			break;
		case 't':
			out[o++] = '\t';
			s++;
			break;
		case 'r':
			out[o++] = '\r';
			s++;
			break;
		case 'e':
			out[o++] = 0x1b;
			s++;
			break;
		case 'x': {
			char hex[3] = {s[1], s[2], '\0'};

			cr_assert(strspn(hex, "0123456789abcdef") == 2,
			    "bad \\x escape");
			out[o++] = (char)strtoul(hex, NULL, 16);
			s += 3;
			break;
		}
		default:
			cr_assert_fail("unknown escape \\%c", *s);
		}
	}
	*len = o;
}

/* The escaped form is valid UTF-8 without any control character. */
static void
assert_displayable(const char *s)
{
	size_t n = strlen(s), m;
	char *clean = utf8_sanitize(s, n, &m);
	const unsigned char *u;

	cr_assert_not_null(clean);
	cr_assert(m == n && memcmp(clean, s, n) == 0, "not UTF-8: %s", s);
	free(clean);
	for (u = (const unsigned char *)s; *u != '\0'; u++) {
		cr_assert(*u >= 0x20 && *u != 0x7f, "control byte %02x", *u);
		/* C1 controls as UTF-8: C2 80..C2 9F. */
		cr_assert(!(u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f),
		    "C1 control in %s", s);
	}
}

/* Escapes NAME (LEN bytes), expects WANT, and checks the contract. */
static void
expect_escape(const char *name, size_t len, const char *want)
{
	char *got = fsname_escape(name, len);
	char back[4 * 300];
	size_t blen;

	cr_assert_not_null(got);
	cr_assert_str_eq(got, want);
	cr_assert_eq(fsname_is_plain(name, len),
	    strcmp(got, want) == 0 && len == strlen(want) &&
		memcmp(name, want, len) == 0);
	assert_displayable(got);
	cr_assert_leq(strlen(got), 4 * len);
	unescape(got, back, &blen);
	cr_assert_eq(blen, len);
	cr_assert_eq(memcmp(back, name, len), 0);
	free(got);
}

#define ESC(lit, want) expect_escape(lit, sizeof(lit) - 1, want)

Test(fsname, plain_names_unchanged)
{
	ESC("hello.txt", "hello.txt");
	ESC("with space & 'quotes'", "with space & 'quotes'");
	ESC("caf\xc3\xa9", "caf\xc3\xa9"); /* é */
	ESC("\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac"); /* 日本 */
	ESC("\xf0\x9f\x8e\x89", "\xf0\x9f\x8e\x89"); /* U+1F389 */
	ESC("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
	ESC("\xc2\xa0nbsp", "\xc2\xa0nbsp"); /* U+00A0 */
	cr_assert(fsname_is_plain("", 0));
}

Test(fsname, controls)
{
	ESC("a\nb", "a\\nb");
	ESC("tab\there", "tab\\there");
	ESC("cr\r", "cr\\r");
	/* A terminal escape sequence: colour, then retitle the window. */
	ESC("\x1b[31mred\x1b]0;owned\x07", "\\e[31mred\\e]0;owned\\x07");
	ESC("del\x7f", "del\\x7f");
	ESC("\x01", "\\x01");
	/* C1 controls, valid UTF-8 but acted on by terminals (U+009B: CSI). */
	ESC("\xc2\x9b"
	    "2J",
	    "\\xc2\\x9b2J");
	ESC("\xc2\x85", "\\xc2\\x85");
	ESC("\xc2\x80", "\\xc2\\x80");
}

Test(fsname, backslash)
{
	ESC("a\\b", "a\\\\b");
	/* What looks like an escape is escaped itself: reversible. */
	ESC("\\n", "\\\\n");
	ESC("\\x41", "\\\\x41");
}

Test(fsname, invalid_utf8)
{
	ESC("\xff", "\\xff");
	ESC("a\xfe"
	    "b",
	    "a\\xfeb");
	/* Overlong NUL and overlong '/', refused by RFC 3629. */
	ESC("\xc0\x80", "\\xc0\\x80");
	ESC("\xc0\xaf", "\\xc0\\xaf");
	ESC("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	ESC("\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf");
	/* A UTF-16 surrogate (U+D800) encoded as UTF-8. */
	ESC("\xed\xa0\x80", "\\xed\\xa0\\x80");
	ESC("\xed\xbf\xbf", "\\xed\\xbf\\xbf");
	/* Above U+10FFFF; a lone continuation; a truncated sequence. */
	ESC("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	ESC("\x80", "\\x80");
	ESC("x\xe2\x82", "x\\xe2\\x82");
	/* A valid character right after an invalid byte is kept. */
	ESC("\xe2\xe2\x82\xac", "\\xe2\xe2\x82\xac");
}

Test(fsname, names_of_255_bytes)
{
	char name[255], want[4 * 255 + 1];
	size_t i;

	memset(name, 'a', sizeof(name));
	memcpy(want, name, sizeof(name));
	want[sizeof(name)] = '\0';
	expect_escape(name, sizeof(name), want);
	/* 85 three-byte characters: 255 bytes kept as they are. */
	for (i = 0; i < 255; i += 3)
		memcpy(name + i, "\xe2\x82\xac", 3);
	memcpy(want, name, sizeof(name));
	want[sizeof(name)] = '\0';
	expect_escape(name, sizeof(name), want);
	/* The worst case: every byte becomes \xHH. */
	memset(name, 0xff, sizeof(name));
	for (i = 0; i < 255; i++)
		memcpy(want + 4 * i, "\\xff", 4);
	want[4 * 255] = '\0';
	expect_escape(name, sizeof(name), want);
}

/* Format characters (Cf) and line/paragraph separators (Zl, Zp): bidi
 * controls, zero-width characters, soft hyphen, tag characters. Each is
 * escaped byte by byte (CVE-2021-42574, "Trojan Source"); neighbours that
 * are not Cf, Zl or Zp are kept. */
Test(fsname, invisible_characters)
{
	ESC("\xc2\xad", "\\xc2\\xad"); /* U+00AD soft hyphen */
	ESC("\xd8\x9c", "\\xd8\\x9c"); /* U+061C ALM */
	ESC("\xe1\xa0\x8e", "\\xe1\\xa0\\x8e"); /* U+180E */
	ESC("\xe2\x80\x8b", "\\xe2\\x80\\x8b"); /* U+200B ZWSP */
	ESC("\xe2\x80\x8f", "\\xe2\\x80\\x8f"); /* U+200F RLM */
	ESC("\xe2\x80\xa8", "\\xe2\\x80\\xa8"); /* U+2028 Zl */
	ESC("\xe2\x80\xa9", "\\xe2\\x80\\xa9"); /* U+2029 Zp */
	ESC("\xe2\x80\xae", "\\xe2\\x80\\xae"); /* U+202E RLO */
	ESC("\xe2\x81\xa0", "\\xe2\\x81\\xa0"); /* U+2060 WJ */
	ESC("\xe2\x81\xa4", "\\xe2\\x81\\xa4"); /* U+2064 */
	ESC("\xe2\x81\xa6", "\\xe2\\x81\\xa6"); /* U+2066 LRI */
	ESC("\xe2\x81\xaf", "\\xe2\\x81\\xaf"); /* U+206F */
	ESC("\xef\xbb\xbf", "\\xef\\xbb\\xbf"); /* U+FEFF BOM */
	ESC("\xef\xbf\xb9", "\\xef\\xbf\\xb9"); /* U+FFF9 */
	ESC("\xef\xbf\xbb", "\\xef\\xbf\\xbb"); /* U+FFFB */
	ESC("\xf3\xa0\x80\x81", "\\xf3\\xa0\\x80\\x81"); /* U+E0001 */
	ESC("\xf3\xa0\x80\xa0", "\\xf3\\xa0\\x80\\xa0"); /* U+E0020 */
	ESC("\xf3\xa0\x81\xbf", "\\xf3\\xa0\\x81\\xbf"); /* U+E007F */
	/* "invoice<RLO>fdp.exe" shows as "invoiceexe.pdf" raw. */
	ESC("invoice\xe2\x80\xae"
	    "fdp.exe",
	    "invoice\\xe2\\x80\\xaefdp.exe");
	/* Neighbours that stay plain: U+00AC, U+00AE, U+200A (Zs), U+2010,
	 * U+2030, U+FFFC, U+1D17B, U+3163, U+3165, U+FE10, U+E1000. */
	ESC("\xc2\xac\xc2\xae\xe2\x80\x8a\xe2\x80\x90\xe2\x80\xb0",
	    "\xc2\xac\xc2\xae\xe2\x80\x8a\xe2\x80\x90\xe2\x80\xb0");
	ESC("\xef\xbf\xbc\xf0\x9d\x85\xbb\xe3\x85\xa3\xe3\x85\xa5"
	    "\xef\xb8\x90\xf3\xa1\x80\x80",
	    "\xef\xbf\xbc\xf0\x9d\x85\xbb\xe3\x85\xa3\xe3\x85\xa5"
	    "\xef\xb8\x90\xf3\xa1\x80\x80");
	/* Default ignorables, which render as nothing: U+2065 and U+E0080
	 * (unassigned but ignorable), U+E0000, the Hangul fillers U+115F and
	 * U+3164, the combining grapheme joiner U+034F, the variation
	 * selector U+FE0F (the security re-check's look-alike names). */
	ESC("a\xe2\x81\xa5"
	    "b",
	    "a\\xe2\\x81\\xa5b");
	ESC("a\xf3\xa0\x82\x80"
	    "b",
	    "a\\xf3\\xa0\\x82\\x80b");
	ESC("a\xf3\xa0\x80\x80"
	    "b",
	    "a\\xf3\\xa0\\x80\\x80b");
	ESC("a\xe1\x85\x9f"
	    "b",
	    "a\\xe1\\x85\\x9fb");
	ESC("a\xe3\x85\xa4"
	    "b",
	    "a\\xe3\\x85\\xa4b");
	ESC("a\xcd\x8f"
	    "b",
	    "a\\xcd\\x8fb");
	ESC("a\xef\xb8\x8f"
	    "b",
	    "a\\xef\\xb8\\x8fb");
}

/* Random names: whatever the bytes, the result is displayable and
 * decodes back to them. */
Test(fsname, random_bytes_round_trip)
{
	char name[64], back[4 * 64 + 1];
	int round;

	for (round = 0; round < 2000; round++) {
		size_t len = (size_t)(round % 64), blen;
		char *got;

		cr_assert_eq(getrandom(name, len, 0), (ssize_t)len);
		got = fsname_escape(name, len);
		cr_assert_not_null(got);
		assert_displayable(got);
		unescape(got, back, &blen);
		cr_assert_eq(blen, len);
		cr_assert_eq(memcmp(back, name, len), 0);
		free(got);
	}
}

/* ==== Operations under quotas (broker/fs/fsops.c) ========================= */

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "policy.h"

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
	cr_assert_eq(ctx->usage_valid, false);
	cr_assert_eq(ctx->quota.file_bytes, UINT64_C(64) << 20);
}

/* fsapi_put of the string DATA; returns the named error. */
static enum fs_error
put(struct fs_ctx *ctx, const char *path, const char *data, mode_t mode,
    bool overwrite)
{
	int in = source(data, strlen(data));
	enum fs_error why = FS_IO_ERROR;
	uint64_t written = 99;
	int rc = fsapi_put(ctx, path, in, mode, overwrite, &written, &why);

	close(in);
	cr_assert_eq(rc < 0, why != FS_OK, "put %s: rc %d, %s", path, rc,
	    fs_error_name(why));
	cr_assert_eq(written, why == FS_OK ? strlen(data) : 0);
	return why;
}

/* fsapi_get into BUF (NUL-terminated); returns the named error. */
static enum fs_error
get(struct fs_ctx *ctx, const char *path, uint64_t off, uint64_t len, char *buf,
    size_t size)
{
	int out = memfd_create("get", MFD_CLOEXEC);
	enum fs_error why = FS_IO_ERROR;
	uint64_t copied = 99;
	ssize_t n;
	int rc;

	cr_assert_geq(out, 0);
	rc = fsapi_get(ctx, path, off, len, out, &copied, &why);
	cr_assert_eq(rc < 0, why != FS_OK);
	cr_assert_eq(lseek(out, 0, SEEK_END), (off_t)copied);
	cr_assert_lt(copied, size);
	n = pread(out, buf, size - 1, 0);
	cr_assert_eq(n, (ssize_t)copied);
	buf[n] = '\0';
	close(out);
	if (why != FS_OK)
		cr_assert_eq(copied, 0, "%s leaked %llu bytes", path,
		    (unsigned long long)copied);
	return why;
}

#define EXPECT(call, want)                                               \
	do {                                                             \
		enum fs_error got_ = (call);                             \
		cr_assert_eq(got_, (want), "%s: %s, expected %s", #call, \
		    fs_error_name(got_), fs_error_name(want));           \
	} while (0)

/* Plants a regular file PATH (relative to the workspace) holding DATA. */
static void
plant_file(const char *path, const char *data)
{
	int fd = openat(root, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write_all(fd, data, strlen(data)), 0);
	close(fd);
}

/* The type of the workspace entry PATH (lstat), or 0 when missing. */
static mode_t
type_at(const char *path)
{
	struct stat st;

	if (fstatat(root, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		cr_assert_eq(errno, ENOENT);
		return 0;
	}
	return st.st_mode & S_IFMT;
}

static enum fs_error
do_stat(struct fs_ctx *ctx, const char *path, struct fs_entry *e)
{
	enum fs_error why = FS_IO_ERROR;
	int rc = fsapi_stat(ctx, path, e, &why);

	cr_assert_eq(rc < 0, why != FS_OK);
	return why;
}

static enum fs_error
do_mkdir(struct fs_ctx *ctx, const char *path, mode_t mode, bool parents)
{
	enum fs_error why = FS_IO_ERROR;
	int rc = fsapi_mkdir(ctx, path, mode, parents, &why);

	cr_assert_eq(rc < 0, why != FS_OK);
	return why;
}

static enum fs_error
do_remove(struct fs_ctx *ctx, const char *path, bool recursive)
{
	enum fs_error why = FS_IO_ERROR;
	int rc = fsapi_remove(ctx, path, recursive, &why);

	cr_assert_eq(rc < 0, why != FS_OK);
	return why;
}

static enum fs_error
do_rename(struct fs_ctx *ctx, const char *from, const char *to, bool overwrite)
{
	enum fs_error why = FS_IO_ERROR;
	int rc = fsapi_rename(ctx, from, to, overwrite, &why);

	cr_assert_eq(rc < 0, why != FS_OK);
	return why;
}

/* A listing collected as "path type size;" ... */
struct listing {
	char text[4096];
	size_t n;
	int stop_after; /* > 0: the callback fails after this many */
	int full_after; /* > 0: the callback says "truncated" after this
			 * many */
};

static int
collect(void *arg, const struct fs_entry *e)
{
	struct listing *l = arg;
	size_t len = strlen(l->text);

	if (l->stop_after > 0 && (int)l->n == l->stop_after)
		return -ECANCELED;
	if (l->full_after > 0 && (int)l->n == l->full_after)
		return 1;
	/* A directory's st_size depends on the file system: left out. */
	if (e->type == FS_T_DIR)
		snprintf(l->text + len, sizeof(l->text) - len, "%s d;",
		    e->path);
	else
		snprintf(l->text + len, sizeof(l->text) - len, "%s %c %llu;",
		    e->path, (char)e->type, (unsigned long long)e->size);
	l->n++;
	return 0;
}

static enum fs_error
do_list(struct fs_ctx *ctx, const char *path, bool recursive, size_t limit,
    struct listing *l, bool *truncated)
{
	enum fs_error why = FS_IO_ERROR;
	int rc;

	memset(l->text, 0, sizeof(l->text));
	l->n = 0;
	*truncated = true;
	rc = fsapi_list(ctx, path, recursive, limit, collect, l, truncated,
	    &why);
	cr_assert_eq(rc < 0, why != FS_OK);
	return why;
}

/* The entries of the canary's directory are exactly the canary. */
static void
assert_outside_untouched(void)
{
	fstest_assert_canary_intact();
	{
		char cmd[128], line[256];
		FILE *p;
		int n = 0;

		snprintf(cmd, sizeof(cmd), "ls -A '%s'", outside);
		p = popen(cmd, "r");
		cr_assert_not_null(p);
		while (fgets(line, sizeof(line), p) != NULL) {
			cr_assert_str_eq(line, "canary\n");
			n++;
		}
		pclose(p);
		cr_assert_eq(n, 1);
	}
}

Test(fsapi, ctx_and_limits)
{
	struct fs_ctx ctx;
	struct wspath_limits lim;

	ctx_default(&ctx);
	cr_assert_eq(ctx.root, root);
	lim = fsapi_path_limits(&ctx);
	cr_assert_eq(lim.max_path, 4096);
	cr_assert_eq(lim.max_depth, 64);
	cr_assert_str_eq(fs_type_name(FS_T_FILE), "file");
	cr_assert_str_eq(fs_type_name(FS_T_DIR), "directory");
	cr_assert_str_eq(fs_type_name(FS_T_SYMLINK), "symlink");
	cr_assert_str_eq(fs_type_name(FS_T_FIFO), "fifo");
	cr_assert_str_eq(fs_type_name(FS_T_SOCKET), "socket");
	cr_assert_str_eq(fs_type_name(FS_T_CHAR), "char_device");
	cr_assert_str_eq(fs_type_name(FS_T_BLOCK), "block_device");
}

Test(fsapi, put_get_ranges)
{
	struct fs_ctx ctx;
	char buf[64];

	ctx_default(&ctx);
	EXPECT(put(&ctx, "f", "hello world", 0644, false), FS_OK);
	EXPECT(get(&ctx, "f", 0, UINT64_MAX, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "hello world");
	EXPECT(get(&ctx, "f", 6, 5, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "world");
	EXPECT(get(&ctx, "f", 6, UINT64_MAX, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "world");
	EXPECT(get(&ctx, "f", 0, 5, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "hello");
	/* Past the end, or nothing asked: nothing, as pread. */
	EXPECT(get(&ctx, "f", 11, UINT64_MAX, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "");
	EXPECT(get(&ctx, "f", UINT64_MAX, 1, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "");
	EXPECT(get(&ctx, "f", 3, 0, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "");
	EXPECT(put(&ctx, "f", "again", 0644, false), FS_EXISTS);
	EXPECT(put(&ctx, "f", "again", 0644, true), FS_OK);
	EXPECT(get(&ctx, "f", 0, UINT64_MAX, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "again");
}

/* A file over the per-file limit is too_large as a whole, but a range
 * within the limit can be read. */
Test(fsapi, get_limit_applies_to_what_is_copied)
{
	struct fs_ctx ctx;
	char buf[64];

	ctx_default(&ctx);
	ctx.quota.file_bytes = 4;
	plant_file("f", "0123456789");
	EXPECT(get(&ctx, "f", 0, UINT64_MAX, buf, sizeof(buf)), FS_TOO_LARGE);
	EXPECT(get(&ctx, "f", 0, 5, buf, sizeof(buf)), FS_TOO_LARGE);
	EXPECT(get(&ctx, "f", 2, 4, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "2345");
	EXPECT(get(&ctx, "f", 6, UINT64_MAX, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "6789");
	/* The sparse terabyte: refused from its size, at once. */
	{
		int fd = openat(root, "big", O_WRONLY | O_CREAT | O_CLOEXEC,
		    0644);

		cr_assert_geq(fd, 0);
		cr_assert_eq(ftruncate(fd, (off_t)1 << 40), 0);
		close(fd);
	}
	EXPECT(get(&ctx, "big", 0, UINT64_MAX, buf, sizeof(buf)), FS_TOO_LARGE);
	EXPECT(get(&ctx, "big", ((uint64_t)1 << 40) - 3, UINT64_MAX, buf,
		   sizeof(buf)),
	    FS_OK);
	cr_assert_eq(memcmp(buf, "\0\0\0", 3), 0);
}

Test(fsapi, get_refusals)
{
	struct fs_ctx ctx;
	char buf[64];

	ctx_default(&ctx);
	plant_file("h1", "linked");
	cr_assert_eq(linkat(root, "h1", root, "h2", 0), 0);
	cr_assert_eq(mkfifoat(root, "fifo", 0644), 0);
	plant_link(canary, "link");
	plant_link(outside, "dirlink");
	fstest_mkdir("d");
	EXPECT(get(&ctx, "h1", 0, UINT64_MAX, buf, sizeof(buf)),
	    FS_HARDLINKED_FILE);
	EXPECT(get(&ctx, "fifo", 0, UINT64_MAX, buf, sizeof(buf)),
	    FS_NOT_REGULAR_FILE);
	EXPECT(get(&ctx, "link", 0, UINT64_MAX, buf, sizeof(buf)),
	    FS_SYMLINK_REFUSED);
	EXPECT(get(&ctx, "dirlink/canary", 0, UINT64_MAX, buf, sizeof(buf)),
	    FS_SYMLINK_REFUSED);
	EXPECT(get(&ctx, "d", 0, UINT64_MAX, buf, sizeof(buf)),
	    FS_IS_A_DIRECTORY);
	EXPECT(get(&ctx, "h1/x", 0, UINT64_MAX, buf, sizeof(buf)),
	    FS_NOT_A_DIRECTORY);
	EXPECT(get(&ctx, "nothing", 0, UINT64_MAX, buf, sizeof(buf)),
	    FS_NOT_FOUND);
	EXPECT(get(&ctx, "d/../h1", 0, UINT64_MAX, buf, sizeof(buf)),
	    FS_INVALID_PATH);
	/* The policy may allow hard links. */
	ctx.quota.allow_hardlinks = true;
	EXPECT(get(&ctx, "h2", 0, UINT64_MAX, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "linked");
	assert_outside_untouched();
}

Test(fsapi, open_regular_at)
{
	enum fs_error why;
	struct stat st;
	int fd;

	plant_file("f", "abc");
	plant_file("h", "abc");
	cr_assert_eq(linkat(root, "h", root, "h2", 0), 0);
	cr_assert_eq(mkfifoat(root, "p", 0644), 0);
	plant_link("f", "l");
	fstest_mkdir("d");
	fd = fsapi_open_regular_at(root, "f", false, &st, &why);
	cr_assert_geq(fd, 0);
	cr_assert_eq(why, FS_OK);
	cr_assert_eq(st.st_size, 3);
	/* Opened for reading, not O_PATH. */
	{
		char b[4];

		cr_assert_eq(read(fd, b, sizeof(b)), 3);
	}
	close(fd);
	cr_assert_lt(fsapi_open_regular_at(root, "p", false, &st, &why), 0);
	cr_assert_eq(why, FS_NOT_REGULAR_FILE);
	cr_assert_lt(fsapi_open_regular_at(root, "l", false, &st, &why), 0);
	cr_assert_eq(why, FS_SYMLINK_REFUSED);
	cr_assert_lt(fsapi_open_regular_at(root, "d", false, &st, &why), 0);
	cr_assert_eq(why, FS_IS_A_DIRECTORY);
	cr_assert_lt(fsapi_open_regular_at(root, "h", false, &st, &why), 0);
	cr_assert_eq(why, FS_HARDLINKED_FILE);
	fd = fsapi_open_regular_at(root, "h", true, &st, &why);
	cr_assert_geq(fd, 0);
	cr_assert_eq(st.st_nlink, 2);
	close(fd);
	cr_assert_lt(fsapi_open_regular_at(root, "none", false, &st, &why), 0);
	cr_assert_eq(why, FS_NOT_FOUND);
}

Test(fsapi, put_never_through_links)
{
	struct fs_ctx ctx;

	ctx_default(&ctx);
	plant_link(outside, "out");
	plant_link(canary, "target");
	EXPECT(put(&ctx, "out/canary", "EVIL", 0644, true), FS_SYMLINK_REFUSED);
	EXPECT(put(&ctx, "out/new", "EVIL", 0644, false), FS_SYMLINK_REFUSED);
	EXPECT(put(&ctx, "target", "EVIL", 0644, false), FS_EXISTS);
	cr_assert_eq(type_at("target"), S_IFLNK);
	EXPECT(put(&ctx, "target", "EVIL", 0644, true), FS_OK);
	cr_assert_eq(type_at("target"), S_IFREG);
	cr_assert_eq(mkfifoat(root, "fifo", 0644), 0);
	EXPECT(put(&ctx, "fifo", "data", 0644, true), FS_OK);
	cr_assert_eq(type_at("fifo"), S_IFREG);
	assert_outside_untouched();
}

Test(fsapi, put_per_file_quota)
{
	struct fs_ctx ctx;

	ctx_default(&ctx);
	ctx.quota.file_bytes = 8;
	EXPECT(put(&ctx, "ok", "12345678", 0644, false), FS_OK);
	EXPECT(put(&ctx, "big", "123456789", 0644, false), FS_TOO_LARGE);
	EXPECT(put(&ctx, "ok", "123456789", 0644, true), FS_TOO_LARGE);
	cr_assert_eq(count_entries(""), 1);
	cr_assert_eq(ctx.used_bytes, 8);
	cr_assert_eq(ctx.used_entries, 1);
}

Test(fsapi, put_workspace_quota)
{
	struct fs_ctx ctx;
	char buf[64];

	ctx_default(&ctx);
	ctx.quota.workspace_bytes = 20;
	plant_file("old", "0123456789"); /* 10 bytes before the session */
	EXPECT(put(&ctx, "a", "012345", 0644, false), FS_OK); /* 16 */
	cr_assert(ctx.usage_valid);
	cr_assert_eq(ctx.used_bytes, 16);
	cr_assert_eq(ctx.used_entries, 2);
	/* 5 bytes would make 21: over the workspace, not the file limit. */
	EXPECT(put(&ctx, "b", "01234", 0644, false), FS_QUOTA_EXCEEDED);
	EXPECT(put(&ctx, "b", "0123", 0644, false), FS_OK); /* 20 */
	EXPECT(put(&ctx, "c", "x", 0644, false), FS_QUOTA_EXCEEDED);
	/* Overwriting frees the old size first: 20 - 6 + 10 = 24 no, + 6
	 * yes. */
	EXPECT(put(&ctx, "a", "0123456789", 0644, true), FS_QUOTA_EXCEEDED);
	EXPECT(put(&ctx, "a", "abcdef", 0644, true), FS_OK);
	EXPECT(get(&ctx, "a", 0, UINT64_MAX, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "abcdef");
	cr_assert_eq(ctx.used_bytes, 20);
	/* The lower bound names the error: here the per-file one. */
	ctx.quota.workspace_bytes = 1000;
	ctx.quota.file_bytes = 3;
	EXPECT(put(&ctx, "d", "0123", 0644, false), FS_TOO_LARGE);
	cr_assert_eq(count_entries(""), 3);
	/* After a job the figures are walked again. */
	{
		enum fs_error why;

		ctx.usage_valid = false;
		cr_assert_eq(fsapi_remove(&ctx, "old", false, &why), 0);
		cr_assert_eq(fsapi_usage(&ctx), 0);
		cr_assert_eq(ctx.used_bytes, 10);
		cr_assert_eq(ctx.used_entries, 2);
	}
}

Test(fsapi, put_and_mkdir_file_count)
{
	struct fs_ctx ctx;

	ctx_default(&ctx);
	ctx.quota.max_files = 3;
	EXPECT(put(&ctx, "a", "1", 0644, false), FS_OK);
	EXPECT(do_mkdir(&ctx, "d", 0755, false), FS_OK);
	EXPECT(put(&ctx, "d/b", "2", 0644, false), FS_OK);
	EXPECT(put(&ctx, "c", "3", 0644, false), FS_QUOTA_EXCEEDED);
	EXPECT(do_mkdir(&ctx, "e", 0755, false), FS_QUOTA_EXCEEDED);
	EXPECT(do_mkdir(&ctx, "e/f", 0755, true), FS_QUOTA_EXCEEDED);
	/* An overwrite adds no entry; an existing directory is no new one. */
	EXPECT(put(&ctx, "a", "11", 0644, true), FS_OK);
	EXPECT(do_mkdir(&ctx, "d", 0755, true), FS_OK);
	cr_assert_eq(ctx.used_entries, 3);
	EXPECT(do_remove(&ctx, "a", false), FS_OK);
	cr_assert_eq(ctx.used_entries, 2);
	EXPECT(put(&ctx, "c", "3", 0644, false), FS_OK);
	cr_assert_eq(type_at("e"), 0);
	/* A job that left more entries than the quota: full until some are
	 * removed. */
	plant_file("job1", "x");
	plant_file("job2", "x");
	ctx.usage_valid = false;
	cr_assert_eq(fsapi_usage(&ctx), -E2BIG);
	cr_assert(ctx.usage_valid);
	EXPECT(put(&ctx, "c", "overwrite", 0644, true), FS_QUOTA_EXCEEDED);
	EXPECT(do_remove(&ctx, "job1", false), FS_OK);
	EXPECT(do_remove(&ctx, "job2", false), FS_OK);
	ctx.usage_valid = false;
	EXPECT(put(&ctx, "c", "overwrite", 0644, true), FS_OK);
}

Test(fsapi, depth_and_path_length)
{
	struct fs_ctx ctx;
	char name[300];

	ctx_default(&ctx);
	ctx.quota.max_depth = 3;
	EXPECT(do_mkdir(&ctx, "a/b/c", 0755, true), FS_OK);
	EXPECT(do_mkdir(&ctx, "a/b/c/d", 0755, true), FS_INVALID_PATH);
	EXPECT(put(&ctx, "a/b/f", "x", 0644, false), FS_OK);
	EXPECT(put(&ctx, "a/b/c/f", "x", 0644, false), FS_INVALID_PATH);
	cr_assert_eq(count_entries("a/b/c"), 0);
	ctx.quota.max_depth = 64;
	ctx.quota.max_path = 10;
	EXPECT(put(&ctx, "0123456789", "x", 0644, false), FS_OK);
	EXPECT(put(&ctx, "0123456789a", "x", 0644, false), FS_INVALID_PATH);
	EXPECT(do_mkdir(&ctx, "a/b/cdefgh", 0755, false), FS_OK);
	EXPECT(do_mkdir(&ctx, "a/b/cdefghi", 0755, false), FS_INVALID_PATH);
	EXPECT(do_rename(&ctx, "0123456789", "abcdefghijk", false),
	    FS_INVALID_PATH);
	/* 255-byte components are fine, 256 are not. */
	ctx.quota.max_path = 4096;
	memset(name, 'n', 255);
	name[255] = '\0';
	EXPECT(put(&ctx, name, "x", 0644, false), FS_OK);
	name[255] = 'n';
	name[256] = '\0';
	EXPECT(put(&ctx, name, "x", 0644, false), FS_INVALID_PATH);
	/* Deeper than the default 64 when the policy allows it. */
	ctx.quota.max_depth = 100;
	{
		char deep[300] = "";
		int i;

		for (i = 0; i < 100; i++)
			strcat(deep, i ? "/z" : "z");
		EXPECT(do_mkdir(&ctx, deep, 0755, true), FS_OK);
		strcat(deep, "/f");
		EXPECT(put(&ctx, deep, "x", 0644, false), FS_INVALID_PATH);
	}
}

Test(fsapi, mode_mask)
{
	struct fs_ctx ctx;
	struct fs_entry e;
	mode_t um = umask(0777);

	ctx_default(&ctx);
	/* Default mask 0755: setuid, setgid, sticky and group/other write
	 * go, whatever the umask. */
	EXPECT(put(&ctx, "s", "#!/bin/sh\n", 07777, false), FS_OK);
	EXPECT(do_stat(&ctx, "s", &e), FS_OK);
	cr_assert_eq(e.mode, 0755, "mode %o", e.mode);
	EXPECT(do_mkdir(&ctx, "d", 07777, false), FS_OK);
	EXPECT(do_stat(&ctx, "d", &e), FS_OK);
	cr_assert_eq(e.mode, 0755, "mode %o", e.mode);
	ctx.quota.mode_mask = 0640;
	EXPECT(put(&ctx, "t", "x", 0777, false), FS_OK);
	EXPECT(do_stat(&ctx, "t", &e), FS_OK);
	cr_assert_eq(e.mode, 0640, "mode %o", e.mode);
	EXPECT(put(&ctx, "u", "x", 0604, false), FS_OK);
	EXPECT(do_stat(&ctx, "u", &e), FS_OK);
	cr_assert_eq(e.mode, 0600, "mode %o", e.mode);
	/* mkdir -p with a mode without u+wx still makes the whole chain. */
	ctx.quota.mode_mask = 0755;
	EXPECT(do_mkdir(&ctx, "p/q/r", 0555, true), FS_OK);
	EXPECT(do_stat(&ctx, "p", &e), FS_OK);
	cr_assert_eq(e.mode, 0555, "mode %o", e.mode);
	EXPECT(do_stat(&ctx, "p/q/r", &e), FS_OK);
	cr_assert_eq(e.mode, 0555, "mode %o", e.mode);
	umask(um);
}

Test(fsapi, stat_entries)
{
	struct fs_ctx ctx;
	struct fs_entry e;
	struct timespec ts[2] = {{0, UTIME_OMIT}, {1234567890, 5}};

	ctx_default(&ctx);
	plant_file("f", "12345");
	cr_assert_eq(utimensat(root, "f", ts, 0), 0);
	plant_link(canary, "l");
	plant_link(outside, "dl");
	cr_assert_eq(mkfifoat(root, "p", 0600), 0);
	fstest_mkdir("d");
	EXPECT(do_stat(&ctx, "f", &e), FS_OK);
	cr_assert_str_eq(e.path, "f");
	cr_assert_eq(e.type, FS_T_FILE);
	cr_assert_eq(e.size, 5);
	cr_assert_eq(e.mtime_ns, INT64_C(1234567890000000005));
	cr_assert_eq(e.nlink, 1);
	/* A symlink is described, not followed: its size is the length of
	 * its target, not the canary's. */
	EXPECT(do_stat(&ctx, "l", &e), FS_OK);
	cr_assert_eq(e.type, FS_T_SYMLINK);
	cr_assert_eq(e.size, strlen(canary));
	EXPECT(do_stat(&ctx, "dl/canary", &e), FS_SYMLINK_REFUSED);
	EXPECT(do_stat(&ctx, "p", &e), FS_OK);
	cr_assert_eq(e.type, FS_T_FIFO);
	cr_assert_eq(e.mode, 0600);
	EXPECT(do_stat(&ctx, "d", &e), FS_OK);
	cr_assert_eq(e.type, FS_T_DIR);
	EXPECT(do_stat(&ctx, ".", &e), FS_OK);
	cr_assert_eq(e.type, FS_T_DIR);
	cr_assert_str_eq(e.path, ".");
	EXPECT(do_stat(&ctx, "missing", &e), FS_NOT_FOUND);
	EXPECT(do_stat(&ctx, "f/x", &e), FS_NOT_A_DIRECTORY);
	EXPECT(do_stat(&ctx, "../x", &e), FS_INVALID_PATH);
	EXPECT(do_stat(&ctx, "", &e), FS_INVALID_PATH);
	assert_outside_untouched();
}

Test(fsapi, list_order_limit_truncated)
{
	struct fs_ctx ctx;
	struct listing l;
	char want[256];
	bool trunc;

	ctx_default(&ctx);
	plant_file("b", "22");
	plant_file("a", "1");
	fstest_mkdir("c");
	plant_file("c/x", "333");
	plant_file("a-b", "");
	plant_file("B", "4444");
	plant_link(outside, "z");
	EXPECT(do_list(&ctx, ".", false, 0, &l, &trunc), FS_OK);
	snprintf(want, sizeof(want), "B f 4;a f 1;a-b f 0;b f 2;c d;z l %zu;",
	    strlen(outside));
	cr_assert_str_eq(l.text, want);
	cr_assert_not(trunc);
	/* Byte-wise order, each directory's entries right after it. */
	EXPECT(do_list(&ctx, ".", true, 0, &l, &trunc), FS_OK);
	snprintf(want, sizeof(want),
	    "B f 4;a f 1;a-b f 0;b f 2;c d;c/x f 3;z l %zu;", strlen(outside));
	cr_assert_str_eq(l.text, want);
	cr_assert_eq(l.n, 7);
	cr_assert_not(trunc);
	EXPECT(do_list(&ctx, ".", true, 3, &l, &trunc), FS_OK);
	cr_assert_str_eq(l.text, "B f 4;a f 1;a-b f 0;");
	cr_assert(trunc);
	EXPECT(do_list(&ctx, ".", true, 7, &l, &trunc), FS_OK);
	cr_assert_not(trunc);
	/* The quota is the ceiling of the limit. */
	ctx.quota.max_files = 2;
	EXPECT(do_list(&ctx, ".", false, 100, &l, &trunc), FS_OK);
	cr_assert_eq(l.n, 2);
	cr_assert(trunc);
	ctx.quota.max_files = 100000;
	EXPECT(do_list(&ctx, "c", false, 0, &l, &trunc), FS_OK);
	cr_assert_str_eq(l.text, "c/x f 3;");
	/* Never through a link, never of a file. */
	EXPECT(do_list(&ctx, "z", false, 0, &l, &trunc), FS_SYMLINK_REFUSED);
	EXPECT(do_list(&ctx, "a", false, 0, &l, &trunc), FS_NOT_A_DIRECTORY);
	EXPECT(do_list(&ctx, "none", false, 0, &l, &trunc), FS_NOT_FOUND);
	cr_assert_eq(l.n, 0);
	/* A callback's failure stops the listing. */
	l.stop_after = 2;
	EXPECT(do_list(&ctx, ".", true, 0, &l, &trunc), FS_IO_ERROR);
	cr_assert_eq(l.n, 2);
	/* A callback that is full stops it too, truncated. */
	l.stop_after = 0;
	l.full_after = 3;
	EXPECT(do_list(&ctx, ".", true, 0, &l, &trunc), FS_OK);
	cr_assert_str_eq(l.text, "B f 4;a f 1;a-b f 0;");
	cr_assert(trunc);
	assert_outside_untouched();
}

Test(fsapi, list_depth_bounded)
{
	struct fs_ctx ctx;
	struct listing l;
	bool trunc;

	ctx_default(&ctx);
	ctx.quota.max_depth = 2;
	fstest_mkdir("a");
	fstest_mkdir("a/b");
	fstest_mkdir("a/b/c");
	plant_file("a/b/c/deep", "x");
	EXPECT(do_list(&ctx, ".", true, 0, &l, &trunc), FS_OK);
	cr_assert_str_eq(l.text, "a d;a/b d;");
	cr_assert(trunc);
	EXPECT(do_list(&ctx, "a", true, 0, &l, &trunc), FS_OK);
	cr_assert_str_eq(l.text, "a/b d;");
	cr_assert(trunc);
	/* A directory at the quota's depth: its entries cannot be named. */
	EXPECT(do_list(&ctx, "a/b", false, 0, &l, &trunc), FS_OK);
	cr_assert_eq(l.n, 0);
	cr_assert(trunc);
	ctx.quota.max_depth = 4;
	EXPECT(do_list(&ctx, "a/b", false, 0, &l, &trunc), FS_OK);
	cr_assert_str_eq(l.text, "a/b/c d;");
	cr_assert_not(trunc);
}

Test(fsapi, mkdir_cases)
{
	struct fs_ctx ctx;

	ctx_default(&ctx);
	plant_file("file", "x");
	plant_link(outside, "out");
	plant_link("real", "rel");
	fstest_mkdir("real");
	EXPECT(do_mkdir(&ctx, "d", 0755, false), FS_OK);
	EXPECT(do_mkdir(&ctx, "d", 0755, false), FS_EXISTS);
	EXPECT(do_mkdir(&ctx, "d", 0755, true), FS_OK);
	EXPECT(do_mkdir(&ctx, "x/y", 0755, false), FS_NOT_FOUND);
	cr_assert_eq(type_at("x"), 0);
	EXPECT(do_mkdir(&ctx, "x/y", 0755, true), FS_OK);
	cr_assert_eq(type_at("x/y"), S_IFDIR);
	EXPECT(do_mkdir(&ctx, "file", 0755, false), FS_EXISTS);
	EXPECT(do_mkdir(&ctx, "file", 0755, true), FS_EXISTS);
	EXPECT(do_mkdir(&ctx, "file/sub", 0755, true), FS_NOT_A_DIRECTORY);
	/* Through a symlink, even one to a directory inside: refused, and
	 * nothing made where it points. */
	EXPECT(do_mkdir(&ctx, "out/new", 0755, true), FS_SYMLINK_REFUSED);
	EXPECT(do_mkdir(&ctx, "out/new", 0755, false), FS_SYMLINK_REFUSED);
	EXPECT(do_mkdir(&ctx, "rel/new", 0755, true), FS_SYMLINK_REFUSED);
	EXPECT(do_mkdir(&ctx, "out", 0755, true), FS_SYMLINK_REFUSED);
	cr_assert_eq(count_entries("real"), 0);
	EXPECT(do_mkdir(&ctx, "out", 0755, false), FS_EXISTS);
	assert_outside_untouched();
}

Test(fsapi, remove_cases)
{
	struct fs_ctx ctx;
	char path[200];

	ctx_default(&ctx);
	plant_file("f", "x");
	plant_link(canary, "l");
	plant_link(outside, "dl");
	cr_assert_eq(mkfifoat(root, "p", 0644), 0);
	fstest_mkdir("empty");
	fstest_mkdir("full");
	plant_file("full/f", "x");
	/* The tree holds links out: removing it removes the links only. */
	fstest_mkdir("full/sub");
	plant_link(outside, "full/sub/out");
	plant_link(canary, "full/sub/canary");
	EXPECT(do_remove(&ctx, "l", false), FS_OK);
	cr_assert_eq(type_at("l"), 0);
	EXPECT(do_remove(&ctx, "dl/canary", false), FS_SYMLINK_REFUSED);
	EXPECT(do_remove(&ctx, "dl", true), FS_OK);
	EXPECT(do_remove(&ctx, "p", false), FS_OK);
	EXPECT(do_remove(&ctx, "f", false), FS_OK);
	EXPECT(do_remove(&ctx, "f", false), FS_NOT_FOUND);
	EXPECT(do_remove(&ctx, "empty", false), FS_OK);
	EXPECT(do_remove(&ctx, "full", false), FS_NOT_EMPTY);
	cr_assert_eq(type_at("full/f"), S_IFREG);
	EXPECT(do_remove(&ctx, "full/f/x", false), FS_NOT_A_DIRECTORY);
	EXPECT(do_remove(&ctx, ".", true), FS_INVALID_PATH);
	EXPECT(do_remove(&ctx, "", true), FS_INVALID_PATH);
	EXPECT(do_remove(&ctx, "full", true), FS_OK);
	cr_assert_eq(type_at("full"), 0);
	cr_assert_eq(count_entries(""), 0);
	assert_outside_untouched();
	snprintf(path, sizeof(path), "%s/canary", outside);
	cr_assert_eq(access(path, F_OK), 0);
}

Test(fsapi, rename_cases)
{
	struct fs_ctx ctx;
	char buf[64];
	ssize_t n;

	ctx_default(&ctx);
	plant_file("a", "A");
	plant_file("b", "B");
	plant_link(canary, "l");
	plant_link(outside, "dl");
	fstest_mkdir("d");
	fstest_mkdir("e");
	plant_file("e/x", "x");
	EXPECT(do_rename(&ctx, "a", "b", false), FS_EXISTS);
	EXPECT(get(&ctx, "b", 0, UINT64_MAX, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "B");
	EXPECT(do_rename(&ctx, "a", "b", true), FS_OK);
	cr_assert_eq(type_at("a"), 0);
	EXPECT(get(&ctx, "b", 0, UINT64_MAX, buf, sizeof(buf)), FS_OK);
	cr_assert_str_eq(buf, "A");
	/* A symlink moves as a link: same target, canary untouched. */
	EXPECT(do_rename(&ctx, "l", "d/l2", false), FS_OK);
	cr_assert_eq(type_at("d/l2"), S_IFLNK);
	n = readlinkat(root, "d/l2", buf, sizeof(buf) - 1);
	cr_assert_eq(n, (ssize_t)strlen(canary));
	buf[n] = '\0';
	cr_assert_str_eq(buf, canary);
	/* Never into or out of a linked directory. */
	EXPECT(do_rename(&ctx, "b", "dl/b", false), FS_SYMLINK_REFUSED);
	EXPECT(do_rename(&ctx, "dl/canary", "stolen", false),
	    FS_SYMLINK_REFUSED);
	EXPECT(do_rename(&ctx, "b", "d", true), FS_IS_A_DIRECTORY);
	EXPECT(do_rename(&ctx, "d", "e", true), FS_NOT_EMPTY);
	EXPECT(do_rename(&ctx, "d", "b", true), FS_NOT_A_DIRECTORY);
	EXPECT(do_rename(&ctx, "d", "d/sub", false), FS_INVALID_PATH);
	EXPECT(do_rename(&ctx, "none", "x", false), FS_NOT_FOUND);
	EXPECT(do_rename(&ctx, "b", "none/x", false), FS_NOT_FOUND);
	EXPECT(do_rename(&ctx, ".", "x", false), FS_INVALID_PATH);
	/* A directory with what it holds. */
	EXPECT(do_rename(&ctx, "e", "d/e", false), FS_OK);
	cr_assert_eq(type_at("d/e/x"), S_IFREG);
	assert_outside_untouched();
}

/* Usage figures: walked, then kept by every operation, equal to a fresh
 * walk at each step. */
Test(fsapi, usage_figures)
{
	struct fs_ctx ctx, fresh;
	enum fs_error why;

	ctx_default(&ctx);
	plant_file("a", "12345");
	fstest_mkdir("d");
	plant_file("d/b", "123");
	plant_link("a", "l");
	cr_assert_eq(mkfifoat(root, "p", 0644), 0);
	cr_assert_eq(linkat(root, "a", root, "d/hard", 0), 0);
	cr_assert_eq(fsapi_usage(&ctx), 0);
	cr_assert(ctx.usage_valid);
	/* Each link of a regular file counts its size. */
	cr_assert_eq(ctx.used_bytes, 5 + 3 + 5);
	cr_assert_eq(ctx.used_entries, 6);

#define CHECK_FRESH()                                               \
	do {                                                        \
		fresh = ctx;                                        \
		cr_assert_eq(fsapi_usage(&fresh), 0);               \
		cr_assert_eq(ctx.used_bytes, fresh.used_bytes);     \
		cr_assert_eq(ctx.used_entries, fresh.used_entries); \
	} while (0)

	EXPECT(put(&ctx, "d/new", "1234567", 0644, false), FS_OK);
	CHECK_FRESH();
	EXPECT(put(&ctx, "a", "1", 0644, true), FS_OK);
	CHECK_FRESH();
	EXPECT(put(&ctx, "l", "12", 0644, true), FS_OK); /* over a link */
	CHECK_FRESH();
	EXPECT(do_mkdir(&ctx, "m/n/o", 0755, true), FS_OK);
	CHECK_FRESH();
	EXPECT(do_remove(&ctx, "d/b", false), FS_OK);
	CHECK_FRESH();
	EXPECT(do_rename(&ctx, "d/new", "a", true), FS_OK);
	CHECK_FRESH();
	EXPECT(do_remove(&ctx, "p", false), FS_OK);
	CHECK_FRESH();
	cr_assert_eq(fsapi_remove(&ctx, "m", true, &why), 0);
	cr_assert_not(ctx.usage_valid);
	EXPECT(put(&ctx, "z", "zz", 0644, false), FS_OK);
	cr_assert(ctx.usage_valid);
	CHECK_FRESH();
#undef CHECK_FRESH
	/* Deeper than the quota: counted as full. */
	ctx.quota.max_depth = 1;
	cr_assert_eq(fsapi_usage(&ctx), -E2BIG);
	cr_assert_gt(ctx.used_entries, ctx.quota.max_files);
	EXPECT(put(&ctx, "y", "y", 0644, false), FS_QUOTA_EXCEEDED);
}

/* Pipes in and out, large enough for several splice/sendfile rounds. */
Test(fsapi, put_get_through_pipes)
{
	static char data[3 << 20];
	struct fs_ctx ctx;
	enum fs_error why;
	uint64_t n = 0;
	int p[2], q[2];
	pid_t pid;
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + i / 4096);
	ctx_default(&ctx);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		_exit(write_all(p[1], data, sizeof(data)) == 0 ? 0 : 1);
	}
	close(p[1]);
	cr_assert_eq(fsapi_put(&ctx, "blob", p[0], 0644, false, &n, &why), 0,
	    "%s", fs_error_name(why));
	close(p[0]);
	cr_assert_eq(n, sizeof(data));
	cr_assert_eq(waitpid(pid, NULL, 0), pid);

	cr_assert_eq(pipe2(q, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* Reads it all back and compares. */
		static char back[sizeof(data)];
		size_t got = 0;
		ssize_t r;

		close(q[1]);
		while ((r = read(q[0], back + got, sizeof(back) - got)) > 0)
			got += (size_t)r;
		_exit(
		    got == sizeof(data) && memcmp(back, data, sizeof(data)) == 0
			? 0
			: 1);
	}
	close(q[0]);
	cr_assert_eq(fsapi_get(&ctx, "blob", 0, UINT64_MAX, q[1], &n, &why), 0,
	    "%s", fs_error_name(why));
	close(q[1]);
	cr_assert_eq(n, sizeof(data));
	{
		int st;

		cr_assert_eq(waitpid(pid, &st, 0), pid);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	/* Over the per-file limit from a pipe: too_large, nothing left. */
	ctx.quota.file_bytes = 1 << 20;
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		(void)write_all(p[1], data, sizeof(data));
		_exit(0);
	}
	close(p[1]);
	cr_assert_lt(fsapi_put(&ctx, "big", p[0], 0644, false, &n, &why), 0);
	cr_assert_eq(why, FS_TOO_LARGE);
	close(p[0]);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	cr_assert_eq(type_at("big"), 0);
	cr_assert_eq(count_entries(""), 1);
}

/*
 * A child swaps a directory and a symlink to the canary's directory
 * with renameat2(RENAME_EXCHANGE) as fast as it can while puts and gets
 * go through that path: each either works inside the workspace or is
 * refused; the canary never changes and never shows up in an answer.
 */
Test(fsapi, directory_swapped_with_symlink)
{
	struct fs_ctx ctx;
	int ok_put = 0, ok_get = 0, i;
	char buf[64];
	pid_t pid;

	ctx_default(&ctx);
	fstest_mkdir("d");
	plant_file("d/canary", "inside\n");
	plant_link(outside, "s");
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* Dies with the test, even one that fails midway. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(60);
		for (;;)
			(void)renameat2(root, "d", root, "s", RENAME_EXCHANGE);
	}
	for (i = 0; i < 2000; i++) {
		enum fs_error w = put(&ctx, "d/canary", "EVIL\n", 0644, true);
		enum fs_error r = get(&ctx, "d/canary", 0, UINT64_MAX, buf,
		    sizeof(buf));

		cr_assert(w == FS_OK || w == FS_SYMLINK_REFUSED ||
			w == FS_NOT_FOUND,
		    "put: %s", fs_error_name(w));
		cr_assert(r == FS_OK || r == FS_SYMLINK_REFUSED ||
			r == FS_NOT_FOUND,
		    "get: %s", fs_error_name(r));
		ok_put += w == FS_OK;
		ok_get += r == FS_OK;
		if (r == FS_OK)
			cr_assert(strcmp(buf, "inside\n") == 0 ||
				strcmp(buf, "EVIL\n") == 0,
			    "read %s", buf);
	}
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	assert_outside_untouched();
	cr_log_info("swap race: %d puts and %d gets went through", ok_put,
	    ok_get);
}

/* Paths over quota.max_path are not listed (no client could name them
 * back), nor what is below them; the listing is truncated. */
Test(fsapi, list_skips_long_paths)
{
	struct fs_ctx ctx;
	struct listing l;
	bool trunc;

	ctx_default(&ctx);
	fstest_mkdir("dir4567890"); /* 10 bytes */
	plant_file("dir4567890/x", ""); /* 12 */
	plant_file("file567890", ""); /* 10 */
	plant_file("file5678901", ""); /* 11 */
	fstest_mkdir("longdir8901"); /* 11 */
	plant_file("longdir8901/f", "");
	ctx.quota.max_path = 10;
	EXPECT(do_list(&ctx, ".", true, 0, &l, &trunc), FS_OK);
	cr_assert_str_eq(l.text, "dir4567890 d;file567890 f 0;");
	cr_assert(trunc);
	EXPECT(do_list(&ctx, "dir4567890", false, 0, &l, &trunc), FS_OK);
	cr_assert_eq(l.n, 0);
	cr_assert(trunc);
	ctx.quota.max_path = 13;
	EXPECT(do_list(&ctx, ".", true, 0, &l, &trunc), FS_OK);
	cr_assert_eq(l.n, 6);
	cr_assert_not(trunc);
}

/* ---- Directories the walk is denied (security review, finding 3) ---- */

#define CHECK(c) FSTEST_CHECK(c)

static struct fs_ctx denied_ctx;

static int
denied_checks(void)
{
	struct listing l;
	enum fs_error why = FS_OK;
	bool trunc = false;

	memset(&l, 0, sizeof(l));
	CHECK(fsapi_list(&denied_ctx, ".", true, 0, collect, &l, &trunc,
		  &why) == 0);
	CHECK(strcmp(l.text, "locked d;open d;open/f f 1;") == 0);
	CHECK(trunc);
	/* A directory beside it is listed whole. */
	memset(&l, 0, sizeof(l));
	trunc = false;
	why = FS_OK;
	(void)fsapi_list(&denied_ctx, "open", true, 0, collect, &l, &trunc,
	    &why);
	CHECK(why == FS_OK && !trunc && l.n == 1);
	/* Usage fails closed: the workspace counts as full. */
	CHECK(fsapi_usage(&denied_ctx) == -E2BIG);
	CHECK(denied_ctx.usage_valid);
	CHECK(denied_ctx.used_entries > denied_ctx.quota.max_files);
	CHECK(fsapi_mkdir(&denied_ctx, "new", 0755, false, &why) < 0);
	CHECK(why == FS_QUOTA_EXCEEDED);
	return 0;
}

/* A directory the job made 000: a broker that is not root cannot enter
 * it, so a listing of what holds it is truncated and the usage count
 * fails closed (it is not a race to skip quietly). */
Test(fsapi, denied_directory_list_truncated_usage_full)
{
	ctx_default(&denied_ctx);
	fstest_mkdir("locked");
	plant_file("locked/f", "f");
	fstest_mkdir("open");
	plant_file("open/f", "f");
	cr_assert_eq(fchmodat(root, "locked", 0, 0), 0);
	fstest_as_nobody(denied_checks);
	cr_assert_eq(fchmodat(root, "locked", 0755, 0), 0);
}
