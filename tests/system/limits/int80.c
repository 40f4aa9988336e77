/*
 * int80.c: makes a system call through the i386 ABI from an x86-64
 * process (`int $0x80`, eax = 20, getpid on i386). Foreign ABIs are a
 * classic seccomp bypass (a filter written for x86-64 numbers reads i386
 * numbers wrongly), so stockade's filter kills the process with SIGSYS.
 *
 * Expected status: policy_violation.
 *
 * Bound when run bare: one getpid through the i386 entry (which works on
 * a kernel with IA32 emulation, or fails with ENOSYS/SIGSEGV without
 * it); exits at once. On another architecture it prints why and exits
 * 77, which test_limits.py reports as a skip.
 */
#include <stdio.h>

#include "../../lib/x86_abi.h"

int
main(void)
{
#if defined(__x86_64__)
	long ret;

	fflush(stdout);
	ret = x86_int80_getpid();
	printf("int80: the i386 getpid returned %ld\n", ret);
	return 0;
#else
	printf("int80: not an x86-64 build, nothing to try\n");
	return 77;
#endif
}
