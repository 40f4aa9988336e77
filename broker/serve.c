/* serve.c: being written (issue 3). TEMPORARY scaffold. */
#include "commands.h"
#include "log.h"

int
cmd_serve(int argc, char **argv)
{
	log_error("serve: not built yet");
	return EXIT_USAGE;
}
