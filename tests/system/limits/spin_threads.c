/*
 * spin_threads.c: burns CPU in two threads at once (the main thread and
 * one pthread), so that the jail's CPU time grows about twice as fast as
 * the wall clock.
 *
 * Expected status: cpu_limit, under a --cpu-time lower than --timeout
 * (test_limits.py runs it with --cpu-time 1 --timeout 45).
 *
 * Each thread stops once it has used SPIN_CPU_SECONDS of CPU time
 * (CLOCK_THREAD_CPUTIME_ID), not after a wall-clock time: on a loaded
 * machine it only takes longer to reach a CPU limit, never ends first
 * (issue 23 point 10: with a 10 s wall-clock spin and --timeout 6 a
 * busy 2-core machine could make it "timeout").
 *
 * Bound when run bare: SPIN_CPU_SECONDS of CPU per thread, at most
 * SPIN_WALL_SECONDS of wall-clock time (CLOCK_MONOTONIC); no memory, no
 * files.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define SPIN_CPU_SECONDS 3
#define SPIN_WALL_SECONDS 60

static volatile unsigned long sink;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CPU time of the calling thread, seconds. */
static double
thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *
spin(void *arg)
{
	double end = *(const double *)arg;

	while (now() < end && thread_cpu() < SPIN_CPU_SECONDS)
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
	return NULL;
}

int
main(void)
{
	double end = now() + SPIN_WALL_SECONDS;
	pthread_t t;

	if (pthread_create(&t, NULL, spin, &end) != 0) {
		fprintf(stderr, "spin-threads: pthread_create failed\n");
		return 1;
	}
	spin(&end);
	pthread_join(t, NULL);
	printf("spin-threads: spun %d s of CPU in each of 2 threads\n",
	    SPIN_CPU_SECONDS);
	return 0;
}
