/*
 * pssbench.c: the cost of one poll of the memory monitor (launcher/
 * usage.c) against the size of the job, for docs/benchmarks.md (issue
 * 23, point 8). Not run by the tests.
 *
 *   pssbench MIB WORKERS [ROUNDS]
 *
 * Makes a tree like a pre-forking pool: this process touches MIB MiB,
 * then forks WORKERS children that sleep holding those pages without
 * writing them. Then it times ROUNDS (default 200) polls of each kind,
 * as the launcher's /proc walk sees the tree (from outside, as root or
 * as the tree's user): usage_walk (the resident sum, every poll) and
 * usage_pss_settled with one try (what a poll past the limit adds: a
 * walk reading every process's smaps_rollup, then a check walk; in the
 * launcher the zygote does this, plus one socket round trip). Prints one
 * JSON line: the figures and the mean and largest microseconds per poll
 * of each kind. The children are killed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "usage.h"

static uint64_t
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

int
main(int argc, char **argv)
{
	long mib = argc > 2 ? atol(argv[1]) : -1;
	long workers = argc > 2 ? atol(argv[2]) : -1;
	long rounds = argc > 3 ? atol(argv[3]) : 200;
	uint64_t sum[2] = {0, 0}, max[2] = {0, 0};
	struct jail_usage u, p;
	struct usage_walker w;
	pid_t root, kids[256];
	int proc_fd, ready[2];
	char *mem;

	if (mib < 0 || mib > 4096 || workers < 0 || workers > 256 ||
	    rounds < 1 || rounds > 100000) {
		fprintf(stderr,
		    "usage: pssbench MIB(0-4096) WORKERS(0-256) "
		    "[ROUNDS]\n");
		return 2;
	}
	proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc_fd < 0 || pipe(ready) < 0 ||
	    usage_walker_init(&w, (size_t)workers + 16) < 0) {
		perror("pssbench: set-up");
		return 1;
	}
	/* The tree's root is a child, walked from outside as the monitor
	 * walks a jail's init. */
	root = fork();
	if (root == 0) {
		close(ready[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		mem = malloc((size_t)mib << 20);
		if (mem == NULL && mib > 0)
			_exit(1);
		for (size_t i = 0; i < ((size_t)mib << 20); i += 4096)
			mem[i] = 1;
		for (long i = 0; i < workers; i++) {
			kids[i] = fork();
			if (kids[i] == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				pause();
				_exit(0);
			}
		}
		(void)!write(ready[1], "x", 1);
		close(ready[1]);
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (root < 0 || read(ready[0], &mem, 1) != 1) {
		fprintf(stderr, "pssbench: the tree did not start\n");
		return 1;
	}
	for (long r = 0; r < rounds; r++) {
		uint64_t t0 = now_us(), t1, t2;

		if (usage_walk(&w, proc_fd, root, &u) < 0)
			break;
		t1 = now_us();
		if (usage_pss_settled(&w, proc_fd, root, 1, 0, &p) < 0)
			break;
		t2 = now_us();
		sum[0] += t1 - t0;
		sum[1] += t2 - t1;
		if (t1 - t0 > max[0])
			max[0] = t1 - t0;
		if (t2 - t1 > max[1])
			max[1] = t2 - t1;
	}
	printf("{\"mib\": %ld, \"workers\": %ld, \"processes\": %u, "
	       "\"rss_sum_mib\": %.1f, \"pss_sum_mib\": %.1f, "
	       "\"rss_poll_us\": %.0f, \"rss_poll_max_us\": %llu, "
	       "\"pss_poll_us\": %.0f, \"pss_poll_max_us\": %llu}\n",
	    mib, workers, u.processes, (double)u.rss_bytes / 1048576.0,
	    (double)p.rss_bytes / 1048576.0, (double)sum[0] / rounds,
	    (unsigned long long)max[0], (double)sum[1] / rounds,
	    (unsigned long long)max[1]);
	kill(root, SIGKILL);
	waitpid(root, NULL, 0);
	usage_walker_free(&w);
	return 0;
}
