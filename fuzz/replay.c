/*
 * replay.c: a fuzzer without libFuzzer (fuzz/README.md). Runs
 * LLVMFuzzerTestOneInput once on every regular file of each argument (a
 * directory, not recursed, in name order, or a file). Exits 0 when every
 * input ran (a broken property aborts), 1 when an argument cannot be
 * read or when no input at all was found: an empty or missing corpus
 * must fail its test, never pass it vacuously.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* Runs the file NAME in the directory DIRFD; returns 0 or -errno. */
static int
run_file(int dirfd, const char *name)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	/* One byte more than needed, so that an empty input is a valid
	 * pointer too. */
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			int e = n < 0 ? -errno : -EIO;

			free(buf);
			close(fd);
			return e;
		}
		got += (size_t)n;
	}
	close(fd);
	/* A copy of exactly its size, so that ASan sees a read past it. */
	{
		uint8_t *in = malloc(got ? got : 1);

		if (in == NULL) {
			free(buf);
			return -ENOMEM;
		}
		memcpy(in, buf, got);
		free(buf);
		LLVMFuzzerTestOneInput(in, got);
		free(in);
	}
	return 0;
}

static int
cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int
not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

int
main(int argc, char **argv)
{
	size_t ran = 0;
	int status = 0;

	for (int i = 1; i < argc; i++) {
		struct dirent **names;
		int dirfd, n, e;

		dirfd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0 && errno == ENOTDIR) {
			if ((e = run_file(AT_FDCWD, argv[i])) < 0) {
				fprintf(stderr, "replay: %s: %s\n", argv[i],
				    strerror(-e));
				status = 1;
			} else {
				ran++;
			}
			continue;
		}
		if (dirfd < 0 ||
		    (n = scandir(argv[i], &names, not_dot, cmp_names)) < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
			    strerror(errno));
			status = 1;
			if (dirfd >= 0)
				close(dirfd);
			continue;
		}
		for (int j = 0; j < n; j++) {
			if ((e = run_file(dirfd, names[j]->d_name)) < 0) {
				fprintf(stderr, "replay: %s/%s: %s\n", argv[i],
				    names[j]->d_name, strerror(-e));
				status = 1;
			} else {
				ran++;
			}
			free(names[j]);
		}
		free(names);
		close(dirfd);
	}
	if (ran == 0) {
		fprintf(stderr,
		    "replay: no input found (an empty or missing "
		    "corpus)\n");
		return 1;
	}
	printf("replay: %zu inputs ran\n", ran);
	return status;
}
