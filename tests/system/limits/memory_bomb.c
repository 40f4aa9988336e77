/*
 * memory_bomb.c: allocates memory 4 MiB at a time with malloc and touches
 * every byte (memset), so each chunk is resident, then sleeps holding it.
 *
 * Expected status: memory_limit under --memory (test_limits.py: 128 MiB),
 * with a peak near the limit.
 *
 * Bound when run bare: stops allocating at 600 MiB, then sleeps until
 * 10 s after it started and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (4u << 20)
#define MAX_BYTES (600ul << 20)
#define RUN_SECONDS 10

int
main(void)
{
	time_t end = time(NULL) + RUN_SECONDS;
	unsigned long total = 0;
	char **chunks = calloc(MAX_BYTES / CHUNK, sizeof(*chunks));

	if (chunks == NULL)
		return 1;
	while (total < MAX_BYTES && time(NULL) < end) {
		char *p = malloc(CHUNK);

		if (p == NULL) {
			/* RLIMIT_DATA, the backstop, refused it. */
			fprintf(stderr,
			    "memory-bomb: malloc failed after %lu MiB\n",
			    total >> 20);
			return 1;
		}
		memset(p, 0x5a, CHUNK);
		chunks[total / CHUNK] = p;
		total += CHUNK;
	}
	printf("memory-bomb: holding %lu MiB\n", total >> 20);
	fflush(stdout);
	while (time(NULL) < end)
		sleep(1);
	return 0;
}
