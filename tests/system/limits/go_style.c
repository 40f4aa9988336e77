/*
 * go_style.c: what the Go runtime (and the JVM) do at start: reserve a
 * large range of address space that is never backed, then make a small
 * part of it usable. Here: 8 GiB PROT_NONE (MAP_PRIVATE | MAP_ANONYMOUS |
 * MAP_NORESERVE), then mprotect 50 MiB of it read-write and touch every
 * page, print one line and exit 0.
 *
 * Expected status: ok under --memory 256 (a limit on resident memory, not
 * on address space: RLIMIT_AS would refuse the reservation).
 *
 * Bound when run bare: 50 MiB resident; the 8 GiB are address space only
 * (never touched, not committed); exits at once.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define RESERVE (8ul << 30)
#define USE (50ul << 20)

int
main(void)
{
	char *base = mmap(NULL, RESERVE, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (base == MAP_FAILED) {
		perror("go-style: mmap 8 GiB PROT_NONE");
		return 1;
	}
	if (mprotect(base, USE, PROT_READ | PROT_WRITE) != 0) {
		perror("go-style: mprotect 50 MiB");
		return 1;
	}
	memset(base, 1, USE);
	printf("go-style: reserved 8 GiB, using 50 MiB\n");
	return 0;
}
