/*
 * exit3.c: writes one line to stderr and exits with code 3.
 *
 * Expected status: exit_nonzero, exit_code 3, signal null.
 *
 * Bound when run bare: none needed; exits at once.
 */
#include <stdio.h>
#include <stdlib.h>

int
main(void)
{
	fprintf(stderr, "exit3: giving up with code 3\n");
	exit(3);
}
