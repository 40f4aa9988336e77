/*
 * epollbench: the cost of one count of the kernel objects of a jail
 * (usage_kernel_objects: epoll watches, memory maps, file locks, files
 * in flight; what the zygote does for the monitor every 250 ms at least;
 * issue 23, point 1).
 *
 *     epollbench PROCS FDS ROUNDS [MAPS]
 *
 * Makes a tree of PROCS processes (this one's child and PROCS - 1 of its
 * children), each holding FDS descriptors: a tenth of them epoll
 * instances, each watching 8 of the process's pipes, the rest pipe ends.
 * With MAPS (0 to 10,000), each process also splits one anonymous
 * mapping into MAPS maps (a Python process has about 300). Then counts
 * the tree's objects ROUNDS times and prints the counts and the mean,
 * least and most ms a count took. Bounded: PROCS <= 100, FDS <= 250
 * (RLIMIT_NOFILE permitting), a few MiB; the tree is killed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "usage.h"

static void
hold_fds(int fds)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int neps = fds / 10, p[2], have = 3, pipes[256], np = 0;

	while (have + neps + 2 <= fds && np < 254) {
		if (pipe(p) < 0)
			break;
		pipes[np++] = p[0];
		pipes[np++] = p[1];
		have += 2;
	}
	for (int i = 0; i < neps; i++) {
		int ep = epoll_create1(0);

		for (int k = 0; ep >= 0 && k < 8 && np > 0; k++)
			(void)epoll_ctl(ep, EPOLL_CTL_ADD,
			    pipes[(i * 8 + k) % np & ~1], &ev);
	}
}

/* Splits one PROT_NONE mapping into MAPS maps (every other page
 * readable: unlike neighbours never merge). */
static void
hold_maps(int maps)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	if (maps < 1)
		return;
	p = mmap(NULL, (size_t)maps * (size_t)page, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	for (int i = 1; p != MAP_FAILED && i + 1 < maps; i += 2)
		(void)mprotect(p + (size_t)i * (size_t)page, (size_t)page,
		    PROT_READ);
}

static double
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

int
main(int argc, char **argv)
{
	struct usage_walker w;
	struct timespec t0;
	double sum = 0, lo = 1e9, hi = 0;
	int procs, fds, rounds, maps = 0, proc_fd, ready[2];
	struct kernel_objects n = {0};
	pid_t root;
	char c;

	if ((argc != 4 && argc != 5) || (procs = atoi(argv[1])) < 1 ||
	    procs > 100 || (fds = atoi(argv[2])) < 10 || fds > 250 ||
	    (rounds = atoi(argv[3])) < 1 ||
	    (argc == 5 && ((maps = atoi(argv[4])) < 0 || maps > 10000))) {
		fprintf(stderr,
		    "usage: epollbench PROCS(1-100) FDS(10-250) "
		    "ROUNDS [MAPS(0-10000)]\n");
		return 2;
	}
	proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc_fd < 0 || pipe(ready) < 0 ||
	    usage_walker_init(&w, (size_t)procs + 16) < 0)
		return 1;
	root = fork();
	if (root == 0) {
		setpgid(0, 0);
		close(ready[0]);
		for (int i = 1; i < procs; i++)
			if (fork() == 0) {
				hold_fds(fds);
				hold_maps(maps);
				if (write(ready[1], "x", 1) != 1)
					_exit(1);
				pause();
				_exit(0);
			}
		hold_fds(fds);
		hold_maps(maps);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	for (int i = 0; i < procs; i++)
		if (read(ready[0], &c, 1) != 1)
			return 1;
	for (int i = 0; i < rounds; i++) {
		double ms;
		int r;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		r = usage_kernel_objects(&w, proc_fd, root, UINT64_MAX, &n);
		ms = ms_since(&t0);
		if (r < 0) {
			fprintf(stderr, "usage_kernel_objects: %d\n", r);
			break;
		}
		sum += ms;
		lo = ms < lo ? ms : lo;
		hi = ms > hi ? ms : hi;
	}
	printf("%d processes x %d fds: %llu watches, %llu maps, %llu locks, "
	       "%llu in flight; count %.2f ms mean (%.2f .. %.2f) over %d\n",
	    procs, fds, (unsigned long long)n.watches,
	    (unsigned long long)n.maps, (unsigned long long)n.locks,
	    (unsigned long long)n.inflight, sum / rounds, lo, hi, rounds);
	kill(-root, SIGKILL);
	kill(root, SIGKILL);
	usage_walker_free(&w);
	return 0;
}
