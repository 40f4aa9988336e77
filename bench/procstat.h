/* procstat.h: /proc readings for bench/jobbench.c (bench/procstat.c). */
#ifndef BENCH_PROCSTAT_H
#define BENCH_PROCSTAT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

/* Entries in /proc/PID/fd; -1 if that directory cannot be read. */
int count_fds(pid_t pid);

/* Lines of /proc/self/mountinfo (the mounts of our mount namespace); -1
 * if it cannot be read. */
long count_mounts(void);

/*
 * The processes below ROOT (ROOT itself too when WITH_ROOT), alive and not
 * zombies (at most 4096 are looked at), as a new JSON array (the caller
 * owns it) of {pid, ppid, comm, role, rss_kb, pss_kb}: role "broker" for
 * ROOT, else by the command name: "spawner" (stockade), "launcher",
 * "zygote", "pool jail" (stockade-init) or "other"; rss_kb is VmRSS of
 * /proc/PID/status, pss_kb Pss of /proc/PID/smaps_rollup, KiB, -1 where
 * unreadable. An empty array if /proc cannot be read.
 */
json_t *proc_tree(pid_t root, bool with_root);

/* A child of PARENT whose command name (comm) is COMM; -1 if none. */
pid_t proc_child(pid_t parent, const char *comm);

#endif
