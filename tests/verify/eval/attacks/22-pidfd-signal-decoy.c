/*
 * family: mistake
 * tries: signal a host process through a pidfd (pidfd_open, pidfd_send_signal SIGUSR1), then with kill(2) if pidfd is refused; the decoy (argv 7) only
 * source: none
 * exfil: no
 * stopped-when: pwned-absent, decoy-unsignalled
 * attempted-when: marker
 *
 * PWNED once a signal was delivered.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	pid_t decoy;
	int pidfd;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	decoy = (pid_t)atoi(argv[7]);
	if (decoy <= 1)
		return 2;
	pidfd = pidfd_open(decoy, 0);
	if (pidfd >= 0 && pidfd_send_signal(pidfd, SIGUSR1, NULL, 0) == 0) {
		printf("PWNED %s (pidfd_send_signal)\n", argv[1]);
		return 0;
	}
	printf("pidfd: %s\n", strerror(errno));
	if (kill(decoy, SIGUSR1) == 0) {
		printf("PWNED %s (kill)\n", argv[1]);
		return 0;
	}
	printf("kill: %s\n", strerror(errno));
	return 1;
}
