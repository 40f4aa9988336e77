/*
 * fork_bomb.c: keeps forking children that only sleep, retrying every
 * failed fork (EAGAIN at a process limit) 10 ms later, so that it stays
 * at whatever process limit holds it.
 *
 * Expected status: process_limit under --processes 16 (the jail is seen
 * at its limit and still near it a second later).
 *
 * Arguments are ignored (a test passes a marker to find its processes).
 *
 * Bound when run bare: at most 40 processes in all (itself and 39
 * children); the parent stops forking and every child exits 10 s after
 * the parent started; the parent then reaps them and exits 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS 40
#define RUN_SECONDS 10

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
sleep_until(double end)
{
	while (now() < end)
		usleep(50000);
}

int
main(void)
{
	double end = now() + RUN_SECONDS;
	int procs = 1, failed = 0;

	while (procs < MAX_PROCS && now() < end) {
		pid_t pid = fork();

		if (pid == 0) {
			sleep_until(end);
			_exit(0);
		}
		if (pid < 0) {
			failed++;
			usleep(10000);
			continue;
		}
		procs++;
	}
	printf("fork-bomb: %d processes, %d failed forks\n", procs, failed);
	fflush(stdout);
	sleep_until(end);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return 0;
}
