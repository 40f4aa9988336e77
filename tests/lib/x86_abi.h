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
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

/*
 * Whether this kernel has the i386 entry at all: a forked child, outside
 * any filter, makes the i386 getpid and gets its pid back (true), or dies
 * of SIGSEGV, as on a kernel built without IA32 emulation or booted with
 * ia32_emulation=0 (false). Anything else (not x86-64, fork failed)
 * counts as "it may exist" (true), so a test never excuses a job on a
 * guess. Safe to call anywhere: one getpid.
 */
static inline bool
x86_has_i386_entry(void)
{
#if defined(__x86_64__)
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return true;
	if (pid == 0) {
		(void)signal(SIGSEGV, SIG_DFL);
		(void)setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0});
		_exit(x86_int80_getpid() == (long)getpid() ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return true;
	return !(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
#else
	return true;

#endif
}

#endif
