/*
 * family: mistake
 * tries: a runaway allocation: allocate 600 MiB and touch every page, as a program loading "the whole data set" into memory would
 * source: none
 * exfil: no
 * stopped-when: pwned-absent
 * attempted-when: marker
 *
 * Bound: 600 MiB, freed at exit. PWNED once every page was written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BOMB_BYTES (600UL << 20)

int
main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	if ((p = malloc(BOMB_BYTES)) == NULL) {
		printf("malloc of %lu bytes failed\n", BOMB_BYTES);
		return 1;
	}
	for (size_t i = 0; i < BOMB_BYTES; i += (size_t)page)
		p[i] = 1;
	printf("PWNED %s\n", argv[1]);
	free(p);
	return 0;
}
