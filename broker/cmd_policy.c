/*
 * cmd_policy.c: `stockade policy show [--policy FILE]` prints the
 * effective policy in canonical form; `stockade policy default` prints the
 * embedded default byte for byte; `stockade policy check FILE` only
 * validates. Also the steps every command shares (commands.h,
 * *_or_complain): load the policy, open the workspace, confine.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "log.h"
#include "preflight.h"

int
load_policy_or_complain(struct policy *p, const char *file)
{
	char err[POLICY_ERR_MAX];
	int e;

	memset(p, 0, sizeof(*p));
	e = file ? policy_load_file(p, file, err, sizeof(err)) :
		   policy_load_default(p, err, sizeof(err));
	if (e < 0) {
		log_error("%s", err);
		return EXIT_USAGE;
	}
	return 0;
}

int
open_workspace_or_complain(struct workspace *ws, const char *dir)
{
	char err[POLICY_ERR_MAX + 256];
	int e = workspace_open(ws, dir, err, sizeof(err));

	if (e == 0)
		return 0;
	/* No openat2: refuse, never fall back (style.md rule 18). */
	log_error("%s%s", e == -ENOSYS ? "refused: " : "", err);
	return e == -ENOSYS ? EXIT_REFUSED : EXIT_USAGE;
}

int
confine_or_complain(const struct confine_rule *rules, size_t nrules)
{
	char err[512];
	int e = confine_broker(rules, nrules, err, sizeof(err));

	if (e == 0)
		return 0;
	log_error("%s%s", e == -EOPNOTSUPP ? "refused: " : "", err);
	return e == -EOPNOTSUPP ? EXIT_REFUSED : EXIT_SANDBOX;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: stockade policy show [--policy FILE]\n"
		   "       stockade policy default\n"
		   "       stockade policy check FILE\n");
}

int
cmd_policy(int argc, char **argv)
{
	struct policy p;
	const char *file = NULL;
	int rc;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "default") == 0 && argc == 2) {
		fputs(policy_default_text, stdout);
		return fflush(stdout) == 0 ? 0 : EXIT_SANDBOX;
	}
	if (strcmp(argv[1], "show") == 0) {
		if (argc == 4 && strcmp(argv[2], "--policy") == 0)
			file = argv[3];
		else if (argc != 2) {
			usage(stderr);
			return EXIT_USAGE;
		}
	} else if (strcmp(argv[1], "check") == 0 && argc == 3) {
		file = argv[2];
	} else {
		usage(stderr);
		return strcmp(argv[1], "--help") == 0 ? 0 : EXIT_USAGE;
	}
	if ((rc = load_policy_or_complain(&p, file)) != 0)
		return rc;
	if (strcmp(argv[1], "show") == 0 && policy_format(&p, stdout) < 0)
		rc = EXIT_SANDBOX;
	else if (strcmp(argv[1], "check") == 0)
		printf("%s: ok\n", file);
	policy_clear(&p);
	return rc;
}
