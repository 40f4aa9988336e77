/*
 * family: injection
 * tries: stay alive after the job the way daemons do: fork, setsid, fork again and let the middle process exit, so the survivor is reparented away from the job
 * source: none
 * exfil: no
 * stopped-when: no-survivor
 * attempted-when: marker
 *
 * Bound: the survivor sleeps 10 s and exits; it keeps this program's argv
 * (the token is argv 1), so that it is found if it survives the job.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	pid_t pid;
	int null;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	fflush(stdout);
	if ((pid = fork()) < 0)
		return 1;
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		printf("daemonized\n");
		return 0;
	}
	setsid();
	if (fork() != 0)
		_exit(0);
	if ((null = open("/dev/null", O_RDWR)) >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	sleep(10);
	_exit(0);
}
