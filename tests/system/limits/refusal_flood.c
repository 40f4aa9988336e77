/*
 * refusal_flood.c: calls socket(AF_VSOCK, ...) in a loop in FLOODERS
 * threads for SECONDS (argv[1], default 2.5) of wall time while one more
 * thread spins, then prints "refused N other M" (N calls that failed
 * with EAFNOSUPPORT, M that failed otherwise or succeeded) and exits 0.
 * Several flooders keep a notification waiting whenever the launcher
 * looks, as a program with several threads would.
 *
 * In the jail every such call is refused by the seccomp filter and
 * answered by the launcher (SCMP_ACT_NOTIFY; launcher/supervisor/denials.c):
 * issue 23 point 6 measures what the flood costs the launcher against
 * what the job itself used
 * (tests/launcher/supervisor/test_refusal_flood.py). The spinning
 * thread makes the job's own CPU time what a busy program's is, about
 * its wall time, whatever the refusals cost.
 *
 * Bound when run bare: SECONDS of wall time (at most 10), five threads,
 * no memory to speak of; outside a jail the calls fail at once (no vsock
 * module) or make sockets that are closed at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

#define FLOODERS 3

static atomic_bool stop;
static atomic_ulong refused, other;
static double end;

static void *
spin(void *arg)
{
	volatile unsigned long n = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		n++;
	return NULL;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *
flood(void *arg)
{
	(void)arg;
	while (now_s() < end) {
		int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

		if (fd < 0 && errno == EAFNOSUPPORT)
			atomic_fetch_add(&refused, 1);
		else
			atomic_fetch_add(&other, 1);
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.5;
	pthread_t t, f[FLOODERS];
	int n = 0;

	if (!(secs > 0 && secs <= 10))
		secs = 2.5;
	end = now_s() + secs;
	if (pthread_create(&t, NULL, spin, NULL) != 0)
		return 1;
	while (n < FLOODERS && pthread_create(&f[n], NULL, flood, NULL) == 0)
		n++;
	flood(NULL);
	while (n > 0)
		pthread_join(f[--n], NULL);
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	printf("refused %lu other %lu\n", atomic_load(&refused),
	    atomic_load(&other));
	return 0;
}
