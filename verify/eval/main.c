/*
 * stockade-eval: the attack corpus against configurations of the jail
 * (docs/evidence.md): what `stockade eval` runs, and, as
 * `stockade-eval __decoy CANARY`, the decoy process an attack tries to
 * reach (eval_decoy.h). A build-tree tool: not installed (README.md).
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
	return cmd_eval(argc, argv);
}
