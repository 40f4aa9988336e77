/*
 * doctor_internal.h: what doctor.c and doctor_probe.c share. Not for other
 * callers: doctor.h is the interface.
 */
#ifndef STOCKADE_DOCTOR_INTERNAL_H
#define STOCKADE_DOCTOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "doctor.h"

/* Seconds a probe child may take before SIGALRM ends it. */
#define PROBE_SECONDS 5
/* The errno the probe filters answer with: one no real getppid returns. */
#define PROBE_ERRNO ENOTUNIQ
/* The Landlock ABI that has every rule type the jail uses (ABI 6: scoped
 * abstract unix sockets and signals; landlock(7)). */
#define LANDLOCK_FULL_ABI 6

/* A probe: fills MSG (LEN bytes) with one line, returns 0 when it passed. */
typedef int (*probe_fn)(char *msg, size_t len);

/* "EPERM (Operation not permitted)" for errno E, into BUF; returns BUF. */
const char *doctor_errname(int e, char *buf, size_t len);

/*
 * Runs FN in a child (alarm PROBE_SECONDS), which writes its message MSG
 * to a pipe and exits with FN's result. Returns that result (0: the probe
 * passed), or -1 with MSG saying why the child did not report (killed by
 * a signal: a container's seccomp profile may answer with SIGSYS).
 */
int doctor_run_probe(probe_fn fn, char *msg, size_t len);

/* The probes (doctor_probe.c; each says what it does). */
int doctor_probe_namespaces(char *msg, size_t len);
int doctor_probe_proc(char *msg, size_t len);
int doctor_probe_seccomp(char *msg, size_t len);
int doctor_probe_notify(char *msg, size_t len);
int doctor_probe_landlock(char *msg, size_t len);

#endif
