/*
 * x86_abi.h: a system call through the i386 entry (`int $0x80`) from an
 * x86-64 process, for the tests that check foreign ABIs are killed
 * (try_syscall.c, limits/int80.c, test_launcher_confine_host.c). A filter
 * written for x86-64 numbers reads i386 numbers wrongly (seccomp(2),
 * "Caveats"), so every stockade filter kills the process on it.
 */
#ifndef STOCKADE_X86_ABI_H
#define STOCKADE_X86_ABI_H

#include <errno.h>

/* i386 getpid (20) through `int $0x80`: the raw return (a pid, or
 * -errno), or -ENOSYS on another architecture. Harmless where it works;
 * without IA32 emulation the kernel sends SIGSEGV. The i386 entry may
 * clobber r8-r11. */
static inline long
x86_int80_getpid(void)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(20L)
			 : "r8", "r9", "r10", "r11", "memory", "cc");
	return ret;
#else
	return -ENOSYS;
#endif
}

#endif
