/* commands.h: the broker's subcommands; each returns the exit status. */
#ifndef STOCKADE_COMMANDS_H
#define STOCKADE_COMMANDS_H

#include "policy.h"

/* Exit statuses shared by every command (README.md, "Exit status"). */
#define EXIT_USAGE 2        /* bad arguments or a bad policy file */
#define EXIT_SANDBOX 70     /* stockade itself failed (EX_SOFTWARE) */

int cmd_run(int argc, char **argv);
int cmd_policy(int argc, char **argv);
/* `stockade put` and `stockade get` (cmd_fs.c): exit 0, 1 for a named
 * file error, 2 for usage, 69 without openat2. */
int cmd_put(int argc, char **argv);
int cmd_get(int argc, char **argv);

/*
 * Loads the policy FILE (NULL: the embedded default) into P, printing
 * "stockade: FILE:LINE: message" on failure. Returns 0 or EXIT_USAGE.
 */
int load_policy_or_complain(struct policy *p, const char *file);

#endif
