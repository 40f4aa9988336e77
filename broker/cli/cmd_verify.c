/*
 * cmd_verify.c: `stockade check` and `stockade eval` are other programs,
 * stockade-check and stockade-eval (verify/; docs/decisions.md, "The
 * check suite as its own program"), so that the broker carries none of
 * the test tooling: no honeypot, no decoy, no build-tree path. The broker
 * finds the program the way it finds its launcher (install_path.h) and
 * executes it with the command's arguments: its output and its exit
 * status are the program's own.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "install_path.h"

extern char **environ;

int
cmd_exec_verify(const char *command, const char *name, int argc, char **argv)
{
	char found[PATH_MAX], tried[INSTALL_PATHS_MAX * PATH_MAX + 64];
	char self[PATH_MAX];
	ssize_t n;
	int fd;

	(void)argc;
	fd = install_open_helper(NULL, name, true, found, sizeof(found), tried,
	    sizeof(tried));
	if (fd < 0) {
		fprintf(stderr,
		    "stockade %s: %s not found (%s) in %s; `stockade "
		    "%s` runs that program: build it beside this stockade "
		    "(meson compile -C BUILDDIR %s) or install it with "
		    "stockade (meson install puts it in libexecdir/stockade)"
		    "\n",
		    command, name, strerror(-fd), tried, command, name);
		return EXIT_SANDBOX;
	}
	/* The broker to check or evaluate is this one, the one the user
	 * ran, not another found from the program's own directory. */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0 && (size_t)n < sizeof(self) - 1) {
		self[n] = '\0';
		if (setenv("STOCKADE_BROKER", self, 1) < 0) {
			fprintf(stderr, "stockade %s: %s\n", command,
			    strerror(errno));
			close(fd);
			return EXIT_SANDBOX;
		}
	}
	/* ARGV[0] stays the command's name ("check", "eval"), as when the
	 * command was part of the broker: getopt's messages begin with it. */
	fexecve(fd, argv, environ);
	fprintf(stderr, "stockade %s: cannot execute %s: %s\n", command, found,
	    strerror(errno));
	close(fd);
	return EXIT_SANDBOX;
}
