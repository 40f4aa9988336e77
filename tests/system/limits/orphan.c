/*
 * orphan.c MARKER: leaves a process behind the way a daemon does: fork,
 * setsid in the child, fork again, and the grandchild ignores SIGTERM and
 * SIGHUP and sleeps. The grandchild keeps this program's argv, so MARKER
 * is in its /proc/PID/cmdline; it reports through a pipe that it is
 * ready, the intermediate child exits, and the program itself exits 0.
 *
 * Expected status: ok; afterwards no process carrying MARKER is alive
 * anywhere on the host (the whole jail is killed when its job ends).
 *
 * Bound when run bare: one sleeper left, which exits 10 s after it
 * started (SIGKILL ends it sooner).
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLEEP_SECONDS 10

int
main(int argc, char **argv)
{
	int p[2];
	pid_t child;
	char c = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: orphan MARKER\n");
		return 2;
	}
	if (pipe(p) != 0)
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		pid_t grandchild;

		(void)setsid();
		grandchild = fork();
		if (grandchild < 0)
			_exit(1);
		if (grandchild == 0) {
			signal(SIGTERM, SIG_IGN);
			signal(SIGHUP, SIG_IGN);
			signal(SIGINT, SIG_IGN);
			close(p[0]);
			if (write(p[1], "r", 1) != 1)
				_exit(1);
			close(p[1]);
			for (int i = 0; i < SLEEP_SECONDS; i++)
				sleep(1);
			_exit(0);
		}
		_exit(0);
	}
	close(p[1]);
	(void)waitpid(child, NULL, 0);
	if (read(p[0], &c, 1) != 1 || c != 'r') {
		fprintf(stderr, "orphan: the sleeper did not start\n");
		return 1;
	}
	printf("orphan: sleeper started, marker %s\n", argv[1]);
	return 0;
}
