/*
 * probe_seccomp.h: what probe_seccomp.c (the `sys` command and the
 * tables of calls) and probe_seccomp_modes.c (the calls that make or
 * change a file's mode) share. Built into stockade-probe and into
 * tests/lib/try_syscall.c's try-syscall.
 */
#ifndef STOCKADE_PROBE_SECCOMP_H
#define STOCKADE_PROBE_SECCOMP_H

/* The file the chmod calls change: made in the working directory (the
 * workspace), its mode printed and the file removed at the end. */
#define MODE_FILE "stockade-probe-mode"

/* What the calls that make a file or directory with a mode make; removed
 * at once where a call went through. */
#define MADE "stockade-probe-made"

/* FD, a call's answer, closed when it is a descriptor (only the answer
 * matters). Returns FD. */
long probe_closed(long fd);

/*
 * The mode calls (probe_seccomp_modes.c): try_KIND_setuid and
 * try_KIND_setgid make or change a file with mode 04755 or 02755 by
 * the call KIND; try_chmod_plain chmods MODE_FILE 0640. Each returns the
 * raw system call's answer (-1 with errno set on failure).
 */
#define MODE_TRY_DECL(kind)             \
	long try_##kind##_setuid(void); \
	long try_##kind##_setgid(void);
MODE_TRY_DECL(chmod)
MODE_TRY_DECL(fchmod)
MODE_TRY_DECL(fchmodat)
MODE_TRY_DECL(mkdir)
MODE_TRY_DECL(mkdirat)
MODE_TRY_DECL(mknod)
MODE_TRY_DECL(mknodat)
MODE_TRY_DECL(creat)
MODE_TRY_DECL(open)
MODE_TRY_DECL(openat)
MODE_TRY_DECL(tmpfile)
#undef MODE_TRY_DECL
long try_chmod_plain(void);

#endif
