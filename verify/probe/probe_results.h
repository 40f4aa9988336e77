/*
 * probe_results.h: what the files of stockade-probe's results commands
 * share: probe_results.c (the table, probe_results_cmds in probe.h) and
 * probe_results_held.c (the commands that hold kernel memory, processes
 * or descriptors up to a limit).
 */
#ifndef STOCKADE_PROBE_RESULTS_H
#define STOCKADE_PROBE_RESULTS_H

/* Argument I of ARGV (ARGC of them) as a decimal in [0, MAX], or DEF
 * when absent or malformed. */
long results_arg_num(int argc, char **argv, int i, long max, long def);

/* probe_results_held.c: the commands result-sockets, result-epoll,
 * result-maps, result-locks, result-pte, result-fork and result-pipes
 * (each commented there). Each returns the probe's exit status. */
int results_cmd_sockets(int argc, char **argv);
int results_cmd_epoll(int argc, char **argv);
int results_cmd_maps(int argc, char **argv);
int results_cmd_locks(int argc, char **argv);
int results_cmd_pte(int argc, char **argv);
int results_cmd_fork(int argc, char **argv);
int results_cmd_pipes(int argc, char **argv);

#endif
