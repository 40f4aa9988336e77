/*
 * with_enosys.c: `with-enosys SYSCALL PROGRAM [ARGS...]` runs PROGRAM with
 * the system call SYSCALL answering ENOSYS, as on a kernel that predates
 * it (a seccomp filter under no_new_privs, inherited across exec). Tests
 * use it to check that stockade refuses, rather than falls back, when a
 * kernel feature it needs is missing (style.md rule 18).
 *
 * Exit status: PROGRAM's, or 125 when the filter cannot be installed,
 * 127 when PROGRAM cannot be executed.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	scmp_filter_ctx ctx;
	int nr, e;

	if (argc < 3) {
		fprintf(stderr,
		    "usage: with-enosys SYSCALL PROGRAM [ARGS...]\n");
		return 125;
	}
	nr = seccomp_syscall_resolve_name(argv[1]);
	if (nr == __NR_SCMP_ERROR) {
		fprintf(stderr, "with-enosys: unknown system call %s\n",
		    argv[1]);
		return 125;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("with-enosys: PR_SET_NO_NEW_PRIVS");
		return 125;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL) {
		fprintf(stderr, "with-enosys: seccomp_init failed\n");
		return 125;
	}
	e = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	if (e == 0)
		e = seccomp_load(ctx);
	seccomp_release(ctx);
	if (e < 0) {
		fprintf(stderr, "with-enosys: %s\n", strerror(-e));
		return 125;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "with-enosys: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
