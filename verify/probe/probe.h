/*
 * probe.h: stockade-probe, the program `stockade check` runs inside the
 * jail (check.h). It is static, so it runs alike in any jail, and each
 * command makes one observation or one attack and prints what it saw as
 * "KEY=value" lines on stdout, which the check reads back from the
 * job's result (check_value). Values are one line: newlines are printed
 * as "\n".
 */
#ifndef STOCKADE_PROBE_H
#define STOCKADE_PROBE_H

#include <stddef.h>

struct probe_cmd {
	const char *name;
	const char *usage; /* one line: arguments and what it prints */
	int (*fn)(int argc, char **argv); /* argv[0] is the command */
};

/* The commands of each group, each ending with a {NULL} entry. */
extern const struct probe_cmd probe_jail_cmds[];
extern const struct probe_cmd probe_process_cmds[];
extern const struct probe_cmd probe_syscalls_cmds[];
extern const struct probe_cmd probe_seccomp_cmds[];
extern const struct probe_cmd probe_results_cmds[];
extern const struct probe_cmd probe_boundary_cmds[];
extern const struct probe_cmd probe_egress_cmds[];

/*
 * One system call of probe_syscalls.c or probe_seccomp.c, as the
 * command "call.NAME" makes it, without printing: CALL makes the call
 * once (with the arguments its comment gives: it fails before it acts,
 * or acts only on this short-lived process, so it is safe run bare, even
 * as root on the host) and returns a negative value with errno set when
 * the call failed, 0 or more when it succeeded (a descriptor it made is
 * closed, a child it made is reaped). A call through a foreign ABI
 * (x32, int80) may end the process instead of returning.
 */
struct probe_call {
	const char *name; /* NAME, as in "call.NAME" and `sys NAME` */
	long (*call)(void);
};

/* The calls of each file, each ending with a {NULL} entry. */
extern const struct probe_call probe_syscalls_calls[];
extern const struct probe_call probe_seccomp_calls[];

/* The call named NAME in either table, or NULL. Used by `sys` and by
 * tests/lib/try_syscall.c, which is built from these files. */
const struct probe_call *probe_call_find(const char *name);

/* Prints "KEY=value" (printf-style value; a newline in it is printed
 * as "\n") and flushes. */
void probe_kv(const char *key, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "KEY=<errno name>" for ERR (an errno value; 0 prints "ok"),
 * as "EPERM", "ENOSYS": the names the checks compare. */
void probe_errno(const char *key, int err);

/* Milliseconds of CLOCK_MONOTONIC. */
long long probe_now_ms(void);

/* The name of errno value ERR ("EPERM"), "ok" for 0, or "E<number>". */
const char *probe_errname(int err);

#endif
