/*
 * fdcount.c: what the monitor's descriptor count
 * (launcher/supervisor/fdcharge.c) costs a sample: 61 processes holding 200
 * descriptors each (97 pipes and stdio), counted 2000 times by one stat of
 * /proc/PID/fd each (Linux >= 6.2: st_size is the count) and 200 times by
 * reading the directory (older kernels). Prints milliseconds per sample of
 * each. Not built by meson; run by hand:
 *     cc -O2 -o /tmp/fdcount bench/fdcount.c && /tmp/fdcount
 * Bounded: 61 children that pause and are killed at the end, 12,000
 * descriptors, a few seconds.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROCS 61
#define PIPES 97
#define ROUNDS 2000

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int
main(void)
{
	pid_t kids[PROCS];
	char path[64], buf[8192];
	struct stat st;
	long size = 0, entries = 0;
	double t0, t1, t2;
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (proc < 0)
		return 1;
	for (int i = 0; i < PROCS; i++) {
		if ((kids[i] = fork()) < 0)
			return 1;
		if (kids[i] == 0) {
			int p[2];

			for (int j = 0; j < PIPES; j++)
				if (pipe(p) < 0)
					_exit(1);
			pause();
			_exit(0);
		}
	}
	sleep(1);
	t0 = now();
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < PROCS; i++) {
			snprintf(path, sizeof(path), "%d/fd", (int)kids[i]);
			if (fstatat(proc, path, &st, 0) == 0)
				size += (long)st.st_size;
		}
	t1 = now();
	for (int r = 0; r < ROUNDS / 10; r++)
		for (int i = 0; i < PROCS; i++) {
			ssize_t got;
			int d;

			snprintf(path, sizeof(path), "%d/fd", (int)kids[i]);
			if ((d = openat(proc, path, O_RDONLY | O_DIRECTORY)) <
			    0)
				continue;
			while ((got = getdents64(d, buf, sizeof(buf))) > 0)
				for (ssize_t o = 0; o < got; o +=
				     ((struct dirent64 *)(buf + o))->d_reclen)
					entries++;
			close(d);
		}
	t2 = now();
	printf("%d processes, %ld descriptors each (st_size); per sample: "
	       "stat %.3f ms, getdents %.3f ms\n",
	    PROCS, size / ROUNDS / PROCS, (t1 - t0) / ROUNDS * 1e3,
	    (t2 - t1) / (ROUNDS / 10) * 1e3);
	for (int i = 0; i < PROCS; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}
