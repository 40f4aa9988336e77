/*
 * probe_limits.h: stockade-probe's commands for the limits checks
 * (probe_limits.c), whose entries are in probe_process.c's table
 * (probe_process_cmds). Each takes the command's ARGC and ARGV, prints
 * its "KEY=value" lines and returns the probe's exit status.
 */
#ifndef STOCKADE_PROBE_LIMITS_H
#define STOCKADE_PROBE_LIMITS_H

/* rlimits: "rlimit.NAME=soft hard" for each resource. */
int limits_cmd_rlimits(int argc, char **argv);
/* kmem: the calls that pin kernel memory no process maps, refused or
 * not ("kmem.*" errno names), and the inotify watches allowed. */
int limits_cmd_kmem(int argc, char **argv);
/* userquotas: /proc/sys/user/NAME as "userquota.NAME=value", and
 * RLIMIT_SIGPENDING. */
int limits_cmd_userquotas(int argc, char **argv);

#endif
