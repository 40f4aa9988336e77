/*
 * test_doctor_cache.c: where the doctor's cached verdict may live when
 * XDG_RUNTIME_DIR is not set (broker/host/doctor_cache.c,
 * doctor_cache_private_dir; doctor.h says the rules), issue 9 item 2.
 *
 * The fallback directory is made mode 0700 and used only when it is a
 * directory of the effective uid that no one else may write, reached
 * without following a symbolic link; anything else means "do not cache".
 * Driven in-process under a temporary directory that stands for /tmp
 * (mode 1777). test_doctor.c shows, end to end, that a pass is cached
 * with XDG_RUNTIME_DIR unset and that a cache file another user could
 * write or owns is ignored.
 *
 * Registered twice (tests/meson.build), as root and as 65534.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "harness.h"

TestSuite(doctor_cache, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 30);

/* A fresh stand-in for /tmp: sticky, writable by all. Returns its
 * descriptor; its path into DIR. */
static int
fake_tmp(const char **dir)
{
	int fd;

	*dir = harness_tmpdir("stockade-doctor-cache-");
	cr_assert_eq(chmod(*dir, 01777), 0);
	fd = open(*dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	return fd;
}

/* doctor_cache_private_dir(PARENT, NAME) refuses (-1). */
static void
assert_refused(int parent, const char *name, const char *what)
{
	int fd = doctor_cache_private_dir(parent, name);

	if (fd >= 0)
		close(fd);
	cr_assert_eq(fd, -1, "%s: used", what);
}

Test(doctor_cache, fallback_dir_is_made_0700_and_ours)
{
	const char *dir;
	char path[4096];
	struct stat st, fst;
	int tmp = fake_tmp(&dir), fd;

	fd = doctor_cache_private_dir(tmp, "stockade-x");
	cr_assert_geq(fd, 0, "refused: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/stockade-x", dir);
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0700, "mode %o", st.st_mode & 07777);
	cr_assert_eq(st.st_uid, geteuid());
	/* The descriptor is that directory, and it is kept across calls. */
	cr_assert_eq(fstat(fd, &fst), 0);
	cr_assert(fst.st_dev == st.st_dev && fst.st_ino == st.st_ino);
	close(fd);
	fd = doctor_cache_private_dir(tmp, "stockade-x");
	cr_assert_geq(fd, 0);
	close(fd);
	close(tmp);
}

Test(doctor_cache, fallback_dir_refused_when_a_symlink_or_shared)
{
	const char *dir;
	char path[4096], real[4096];
	int tmp = fake_tmp(&dir), fd;

	/* A symbolic link, even to a private directory of ours. */
	snprintf(real, sizeof(real), "%s/real", dir);
	cr_assert_eq(mkdir(real, 0700), 0);
	snprintf(path, sizeof(path), "%s/stockade-x", dir);
	cr_assert_eq(symlink(real, path), 0);
	assert_refused(tmp, "stockade-x", "a symbolic link");
	cr_assert_eq(unlink(path), 0);

	/* Group- or other-writable. */
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(chmod(path, 0770), 0);
	assert_refused(tmp, "stockade-x", "group-writable");
	cr_assert_eq(chmod(path, 0703), 0);
	assert_refused(tmp, "stockade-x", "other-writable");
	cr_assert_eq(rmdir(path), 0);

	/* Not a directory. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	assert_refused(tmp, "stockade-x", "a regular file");
	close(tmp);
}

Test(doctor_cache, fallback_dir_refused_when_another_user_owns_it)
{
	const char *dir;
	char path[4096];
	int tmp = fake_tmp(&dir), root;

	if (geteuid() == 0) {
		/* Planted by 65534 before we came. */
		snprintf(path, sizeof(path), "%s/stockade-x", dir);
		cr_assert_eq(mkdir(path, 0700), 0);
		cr_assert_eq(chown(path, 65534, 65534), 0);
		assert_refused(tmp, "stockade-x", "owned by 65534");
	} else {
		/* root's, and not ours to make: /etc. */
		root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		cr_assert_geq(root, 0);
		assert_refused(root, "etc", "owned by root");
		close(root);
	}
	close(tmp);
}
