/*
 * stockade: the broker. Owns the host side: the workspace, the policy, the
 * client's commands; runs code only through stockade-launcher.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "config.h"
#include "log.h"
#include "proto.h"

static void
usage(FILE *f)
{
	fputs("usage: stockade COMMAND [options] [ARGS...]\n"
	      "\n"
	      "Runs a program, such as code an AI agent wrote, in a namespace "
	      "jail and\nreturns one typed result (README.md, docs/results.md)."
	      "\n\n"
	      "Commands:\n"
	      "  run -- PROGRAM [ARGS...]  run one program in a fresh jail; "
	      "print its result\n"
	      "  serve                     JSON-RPC 2.0 sessions over stdio or "
	      "a unix socket\n"
	      "  mcp                       a Model Context Protocol server "
	      "over stdio\n"
	      "  put HOST SANDBOX          copy a host file into the "
	      "workspace\n"
	      "  get SANDBOX HOST|-        copy a workspace file out\n"
	      "  ls|stat PATH...           list or describe workspace paths\n"
	      "  rm|mkdir|mv PATH...       remove, make or rename in the "
	      "workspace\n"
	      "  unpack ARCHIVE|- [DIR]    unpack a tar stream into the "
	      "workspace\n"
	      "  pack [PATH] ARCHIVE|-     pack workspace files as a tar "
	      "stream\n"
	      "  policy show|default|check  show, print or check a policy\n"
	      "  doctor [--json]           what this host's kernel allows, and "
	      "the fixes\n"
	      "  check [--json]            prove every layer on this host "
	      "(docs/check.md)\n"
	      "  eval layers|isolation|filter|corpus  measure what each layer "
	      "stops\n"
	      "  --version | --help        this program's version, or this "
	      "text\n"
	      "\n"
	      "The file commands take --workspace DIR. Run `stockade COMMAND "
	      "--help` for a\ncommand's options; man stockade for the whole "
	      "manual.\n",
	    f);
}

/*
 * Makes sure descriptors 0, 1 and 2 are open (on /dev/null when they were
 * closed), so that nothing stockade opens later (a workspace, a socket)
 * lands on one and gets a program's output or input meant for the
 * standard streams (OpenSSH's sanitise_stdfd does the same). Returns 0,
 * or -1 when /dev/null cannot be opened.
 */
static int
sanitise_stdfd(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int nfd;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if ((nfd = open("/dev/null", O_RDWR)) < 0)
			return -1;
		if (nfd != fd) {
			/* A lower descriptor was closed too and took it. */
			close(nfd);
			return -1;
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (sanitise_stdfd() < 0)
		return EXIT_SANDBOX;
	log_set_program("stockade");
	/* A closed stdout must end in EPIPE that we handle (the temporary
	 * workspace still removed), not in death by SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if (getenv("STOCKADE_DEBUG") != NULL)
		log_set_level(LOG_LVL_DEBUG);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("stockade %s (protocol %u)\n", STOCKADE_VERSION,
		    PROTO_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "put") == 0)
		return cmd_put(argc - 1, argv + 1);
	if (strcmp(argv[1], "get") == 0)
		return cmd_get(argc - 1, argv + 1);
	if (strcmp(argv[1], "ls") == 0)
		return cmd_ls(argc - 1, argv + 1);
	if (strcmp(argv[1], "stat") == 0)
		return cmd_stat(argc - 1, argv + 1);
	if (strcmp(argv[1], "rm") == 0)
		return cmd_rm(argc - 1, argv + 1);
	if (strcmp(argv[1], "mkdir") == 0)
		return cmd_mkdir(argc - 1, argv + 1);
	if (strcmp(argv[1], "mv") == 0)
		return cmd_mv(argc - 1, argv + 1);
	if (strcmp(argv[1], "unpack") == 0)
		return cmd_unpack(argc - 1, argv + 1);
	if (strcmp(argv[1], "pack") == 0)
		return cmd_pack(argc - 1, argv + 1);
	if (strcmp(argv[1], "serve") == 0)
		return cmd_serve(argc - 1, argv + 1);
	if (strcmp(argv[1], "mcp") == 0)
		return cmd_mcp(argc - 1, argv + 1);
	if (strcmp(argv[1], "policy") == 0)
		return cmd_policy(argc - 1, argv + 1);
	if (strcmp(argv[1], "doctor") == 0)
		return cmd_doctor(argc - 1, argv + 1);
	if (strcmp(argv[1], "eval") == 0)
		return cmd_exec_verify("eval", "stockade-eval", argc - 1,
		    argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return cmd_exec_verify("check", "stockade-check", argc - 1,
		    argv + 1);
	fprintf(stderr, "stockade: unknown command \"%s\"\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
