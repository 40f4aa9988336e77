/*
 * stockade-check: the checks of a stockade on this host (docs/check.md): what `stockade check` runs.
 * Executed by the broker (broker/cli/cmd_verify.c) with the command's
 * arguments; it can also be run by hand, and then checks the stockade
 * verify_find_broker finds (verify.h).
 */
#include <signal.h>
#include <stdlib.h>

#include "log.h"
#include "verify.h"

int
main(int argc, char **argv)
{
	/* As the broker's main (broker/cli/main.c): its messages keep the
	 * program name the user typed, "stockade". */
	log_set_program("stockade");
	signal(SIGPIPE, SIG_IGN);
	if (getenv("STOCKADE_DEBUG") != NULL)
		log_set_level(LOG_LVL_DEBUG);
	return cmd_check(argc, argv);
}
