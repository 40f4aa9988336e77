/*
 * spin_threads.c: burns CPU in two threads at once (the main thread and
 * one pthread), so that the jail's CPU time grows about twice as fast as
 * the wall clock.
 *
 * Expected status: cpu_limit, under a --cpu-time lower than --timeout
 * (test_limits.py runs it with --cpu-time 1 --timeout 6).
 *
 * Bound when run bare: each thread stops after 10 s of wall-clock time
 * (CLOCK_MONOTONIC), so at most 20 s of CPU; no memory, no files.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define SPIN_SECONDS 10

static volatile unsigned long sink;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *
spin(void *arg)
{
	double end = *(const double *)arg;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
	return NULL;
}

int
main(void)
{
	double end = now() + SPIN_SECONDS;
	pthread_t t;

	if (pthread_create(&t, NULL, spin, &end) != 0) {
		fprintf(stderr, "spin-threads: pthread_create failed\n");
		return 1;
	}
	spin(&end);
	pthread_join(t, NULL);
	printf("spin-threads: spun for %d s in 2 threads\n", SPIN_SECONDS);
	return 0;
}
