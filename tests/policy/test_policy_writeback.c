/*
 * test_policy_writeback.c: the [writeback] section of the policy language
 * and [files] commit (policy/policy_writeback.c, policy_wbpattern.c,
 * policy_format.c; issue 26, point 6): the default's rules, a file's laid
 * over them or replacing them, their lines, the canonical form and round
 * trip, `stockade policy show`, and `stockade policy check`'s report of
 * every refused rule. Fixtures: tests/policy/valid-writeback*.ini and
 * invalid-writeback-*.ini, each invalid one with a test below asserting
 * its exact message.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policy_fixture.h"

/* policy_format (or policy_show, SHOW) of P as a string the caller
 * frees; R gets what it returned. */
static char *
format_as(const struct policy *p, bool show, int *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	*r = show ? policy_show(p, f) : policy_format(p, f);
	cr_assert_eq(fclose(f), 0);
	return text;
}

static char *
format(const struct policy *p, bool show)
{
	int r;
	char *text = format_as(p, show, &r);

	cr_assert_eq(r, 0, "policy_format: %d", r);
	return text;
}

static void
expect_format_refused(const struct policy *p)
{
	int r;
	char *text = format_as(p, false, &r);

	cr_assert_eq(r, -EINVAL);
	cr_assert_str_eq(text, "");
	free(text);
}

/* Formats P (or shows it), loads the text back, expects the same rules
 * and commit, and the canonical text again. */
static void
assert_round_trip(const struct policy *p, bool show)
{
	char err[POLICY_ERR_MAX];
	struct policy q;
	char *text = format(p, show), *again;

	memset(&q, 0, sizeof(q));
	cr_assert_eq(policy_load_string(&q, text, p->name, err, sizeof(err)), 0,
	    "%s\n%s", err, text);
	assert_wb_eq(&p->writeback, &q.writeback);
	cr_assert_eq(q.commit, p->commit);
	cr_assert_eq(q.replace, p->replace);
	free(text);
	text = format(p, false);
	again = format(&q, false);
	cr_assert_str_eq(again, text);
	free(again);
	free(text);
	policy_clear(&q);
}

/* The index of P's rule PAT (qualifier DRIVERS), asserting it is there. */
static size_t
rule_at(const struct policy *p, const char *pat, bool drivers)
{
	for (size_t i = 0; i < p->writeback.n; i++)
		if (strcmp(p->writeback.rules[i].pattern, pat) == 0 &&
		    p->writeback.rules[i].drivers == drivers)
			return i;
	cr_assert_fail("no rule %s%s", pat, drivers ? " drivers" : "");
	return 0;
}

Test(writeback, default_rules)
{
	static const struct {
		const char *pat;
		bool drivers;
		enum wb_action action;
	} want[] = {
	    {"**/.git/hooks/", false, WB_REFUSE},
	    {"**/.git/config", false, WB_REFUSE},
	    {".gitattributes", true, WB_REFUSE},
	    {"/.stockade-commit/", false, WB_REFUSE},
	    {".vscode/", false, WB_QUARANTINE},
	    {".idea/", false, WB_QUARANTINE},
	    {".devcontainer/", false, WB_QUARANTINE},
	    {".envrc", false, WB_QUARANTINE},
	    {".bashrc", false, WB_QUARANTINE},
	    {".bash_profile", false, WB_QUARANTINE},
	    {".bash_login", false, WB_QUARANTINE},
	    {".bash_logout", false, WB_QUARANTINE},
	    {".profile", false, WB_QUARANTINE},
	    {".zshrc", false, WB_QUARANTINE},
	    {".zprofile", false, WB_QUARANTINE},
	    {".zshenv", false, WB_QUARANTINE},
	    {".zlogin", false, WB_QUARANTINE},
	    {"**/.config/fish/", false, WB_QUARANTINE},
	    {".claude/", false, WB_QUARANTINE},
	    {".cursor/", false, WB_QUARANTINE},
	    {".mcp.json", false, WB_QUARANTINE},
	};
	struct policy p;

	load_default(&p);
	cr_assert_eq(p.commit, COMMIT_ALWAYS);
	cr_assert_gt(p.writeback.n, sizeof(want) / sizeof(want[0]));
	cr_assert_not_null(p.wb_from);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		size_t j = rule_at(&p, want[i].pat, want[i].drivers);

		cr_assert_eq(p.writeback.rules[j].action, want[i].action, "%s",
		    want[i].pat);
	}
	/* The refusals come first: no quarantine before them hides one. */
	cr_assert_lt(rule_at(&p, "/.stockade-commit/", false),
	    rule_at(&p, ".git", false));
	for (size_t i = 0; i < p.writeback.n; i++) {
		cr_assert_not(p.wb_from[i].in_file);
		cr_assert_gt(p.wb_from[i].line, 0);
		cr_assert_null(
		    writeback_pattern_error(p.writeback.rules[i].pattern));
	}
	assert_round_trip(&p, false);
	assert_round_trip(&p, true);
	policy_clear(&p);
}

/* A file's rules come after the default's; one of the same pattern and
 * qualifier takes its place; [files] commit is read. */
Test(writeback, file_laid_over_the_default)
{
	struct policy d, p;
	size_t gattr;

	load_default(&d);
	load_fixture("valid-writeback.ini", &p);
	cr_assert_eq(p.commit, COMMIT_ON_OK);
	cr_assert_eq(p.writeback.n, d.writeback.n + 3);
	gattr = rule_at(&d, ".gitattributes", true);
	cr_assert_eq(rule_at(&p, ".gitattributes", true), gattr);
	cr_assert_eq(p.writeback.rules[gattr].action, WB_ALLOW);
	cr_assert(p.wb_from[gattr].in_file);
	cr_assert_eq(p.wb_from[gattr].line, 4);
	for (size_t i = 0; i < d.writeback.n; i++)
		cr_assert_str_eq(p.writeback.rules[i].pattern,
		    d.writeback.rules[i].pattern);
	cr_assert_str_eq(p.writeback.rules[d.writeback.n].pattern, "secrets/");
	cr_assert_eq(p.writeback.rules[d.writeback.n].action, WB_REFUSE);
	cr_assert_eq(p.wb_from[d.writeback.n].line, 5);
	cr_assert_str_eq(p.writeback.rules[d.writeback.n + 1].pattern,
	    "**/*.sh");
	cr_assert_eq(p.writeback.rules[d.writeback.n + 1].action,
	    WB_QUARANTINE);
	cr_assert_str_eq(p.writeback.rules[d.writeback.n + 2].pattern,
	    "Makefile");
	cr_assert(p.writeback.rules[d.writeback.n + 2].drivers);
	assert_round_trip(&p, false);
	assert_round_trip(&p, true);
	policy_clear(&p);
	policy_clear(&d);
}

Test(writeback, replace_is_the_whole_list)
{
	struct policy p;
	char *text;

	load_fixture("valid-writeback-replace.ini", &p);
	cr_assert_eq(p.replace, POLICY_LIST_WRITEBACK);
	cr_assert_eq(p.writeback.n, 2);
	cr_assert_str_eq(p.writeback.rules[0].pattern, ".vscode/settings.json");
	cr_assert_eq(p.writeback.rules[0].action, WB_ALLOW);
	cr_assert_str_eq(p.writeback.rules[1].pattern, "**");
	cr_assert_eq(p.writeback.rules[1].action, WB_QUARANTINE);
	cr_assert_eq(p.wb_from[1].line, 6);
	text = format(&p, true);
	cr_assert_not_null(strstr(text,
			       "\n[writeback]\n; the file's list alone: "
			       "[policy] replace = writeback (file:2) leaves "
			       "out the default's\n"
			       "allow = .vscode/settings.json ; file:5\n"
			       "quarantine = ** ; file:6\n"),
	    "%s", text);
	free(text);
	assert_round_trip(&p, true);
	policy_clear(&p);
	/* Replaced by none: no rule, and no section written. */
	load_text("[policy]\nreplace = writeback, network\n", &p);
	cr_assert_eq(p.writeback.n, 0);
	text = format(&p, false);
	cr_assert_null(strstr(text, "[writeback]"), "%s", text);
	cr_assert_not_null(strstr(text, "replace = network, writeback\n"));
	free(text);
	assert_round_trip(&p, false);
	policy_clear(&p);
}

Test(writeback, repeated_sections_and_commit_words)
{
	static const char *const words[] = {"always", "on_ok", "keep"};
	char text[128];
	struct policy p;

	load_text("[policy]\nreplace = writeback\n[writeback]\nrefuse = a\n"
		  "[limits]\nprocesses = 9\n[writeback]\nallow = b drivers\n",
	    &p);
	cr_assert_eq(p.writeback.n, 2);
	cr_assert_str_eq(p.writeback.rules[1].pattern, "b");
	cr_assert(p.writeback.rules[1].drivers);
	cr_assert_eq(p.wb_from[1].line, 8);
	policy_clear(&p);
	for (int i = 0; i < 3; i++) {
		snprintf(text, sizeof(text), "[files]\ncommit = %s\n",
		    words[i]);
		load_text(text, &p);
		cr_assert_eq((int)p.commit, i, "%s", words[i]);
		assert_round_trip(&p, false);
		policy_clear(&p);
	}
}

Test(writeback, format_writes_canonical_rules)
{
	struct policy p;
	char *text;

	load_fixture("valid-writeback.ini", &p);
	text = format(&p, false);
	cr_assert_not_null(strstr(text, "\ncommit = on_ok\n"), "%s", text);
	cr_assert_not_null(strstr(text,
			       "\n[writeback]\nrefuse = **/.git/hooks/\n"),
	    "%s", text);
	cr_assert_not_null(strstr(text, "\nallow = .gitattributes drivers\n"));
	cr_assert_not_null(strstr(text,
	    "\nrefuse = secrets/\nquarantine = **/*.sh\n"
	    "allow = Makefile drivers\n"));
	free(text);
	text = format(&p, true);
	cr_assert_not_null(strstr(text, "\nrefuse = **/.git/hooks/ ; default:"),
	    "%s", text);
	cr_assert_not_null(
	    strstr(text, "\nallow = .gitattributes drivers ; file:4\n"));
	cr_assert_not_null(strstr(text, "\ncommit = on_ok ; file:9\n"));
	cr_assert_not_null(strstr(text,
	    "\n[writeback]\n; the default's list, the file's entries added "
	    "or in place of the default's\n"));
	free(text);
	policy_clear(&p);
}

Test(writeback, format_refuses_hand_built_rules)
{
	char blank[] = "a b", dotdot[] = "../x", empty[] = "";
	struct policy p;
	struct wb_rule r;

	load_default(&p);
	r = p.writeback.rules[0];
	p.writeback.rules[0].pattern = blank;
	expect_format_refused(&p);
	p.writeback.rules[0].pattern = dotdot;
	expect_format_refused(&p);
	p.writeback.rules[0].pattern = empty;
	expect_format_refused(&p);
	p.writeback.rules[0] = r;
	p.writeback.rules[0].action = (enum wb_action)7;
	expect_format_refused(&p);
	p.writeback.rules[0] = p.writeback.rules[1]; /* the same rule twice */
	expect_format_refused(&p);
	p.writeback.rules[0] = r;
	p.commit = (enum commit_mode)3;
	expect_format_refused(&p);
	p.commit = COMMIT_KEEP;
	assert_round_trip(&p, false);
	policy_clear(&p);
}

Test(writeback, too_many_rules)
{
	char err[POLICY_ERR_MAX], *text = NULL, want[128];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct policy p, d;

	load_default(&d);
	cr_assert_not_null(f);
	fprintf(f, "[writeback]\n");
	for (unsigned i = 0; i <= POLICY_MAX_WB_RULES; i++)
		fprintf(f, "refuse = f%u\n", i);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(policy_load_string(&p, text, "many", err, sizeof(err)),
	    -EINVAL);
	cr_assert_str_eq(err,
	    "many:258: too many [writeback] rules (at most "
	    "256)");
	free(text);
	/* With the default's, fewer are enough. */
	text = NULL;
	f = open_memstream(&text, &len);
	fprintf(f, "[writeback]\n");
	for (unsigned i = 0; i < POLICY_MAX_WB_RULES; i++)
		fprintf(f, "refuse = f%u\n", i);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(policy_load_string(&p, text, "many", err, sizeof(err)),
	    -EINVAL);
	snprintf(want, sizeof(want),
	    "many:%zu: too many [writeback] rules (at most 256, the "
	    "default's %zu included; [policy] replace = writeback leaves "
	    "them out)",
	    POLICY_MAX_WB_RULES - d.writeback.n + 2, d.writeback.n);
	cr_assert_str_eq(err, want);
	free(text);
	policy_clear(&d);
}

/* The messages policy_load_file_report passes on, in order. */
struct reports {
	char *msg[8];
	size_t n;
};

static void
collect(const char *msg, void *arg)
{
	struct reports *r = arg;

	cr_assert_lt(r->n, 8);
	r->msg[r->n++] = strdup(msg);
}

#define NOT_ONE_WORD                                                       \
	": expected PATTERN, or PATTERN drivers (a pattern has no blank: " \
	"\"?\" matches one)"

/* `stockade policy check` names every refused rule, each at its line;
 * ERR holds the first. */
Test(writeback, check_reports_every_refused_rule)
{
	static const char *const want[] = {
	    "3: refuse \"a//b\" has an empty component (\"//\")",
	    "4: unknown action \"deny\" in [writeback] (expected refuse, "
	    "quarantine or allow)",
	    "5: allow \"x drivers please\"" NOT_ONE_WORD,
	    "6: duplicate rule quarantine = ok/ (line 2 has the same pattern "
	    "and qualifier)",
	    "7: refuse \"../x\" has a \".\" or \"..\" component",
	};
	char err[POLICY_ERR_MAX], line[POLICY_ERR_MAX];
	char *path = fixture("invalid-writeback-several.ini");
	struct reports r = {0};
	struct policy p;

	cr_assert_eq(policy_load_file_report(&p, path, collect, &r, err,
			 sizeof(err)),
	    -EINVAL);
	assert_cleared(&p);
	cr_assert_eq(r.n, 5, "%zu reports", r.n);
	for (size_t i = 0; i < 5; i++) {
		snprintf(line, sizeof(line), "%s:%s", path, want[i]);
		cr_assert_str_eq(r.msg[i], line);
		free(r.msg[i]);
	}
	snprintf(line, sizeof(line), "%s:%s", path, want[0]);
	cr_assert_str_eq(err, line);
	free(path);
}

#define WB_FIXTURES(X)                                                         \
	X(wb_empty_component, "invalid-writeback-empty-component.ini", 2,      \
	    "refuse \"a//b\" has an empty component (\"//\")")                 \
	X(wb_dotdot, "invalid-writeback-dotdot.ini", 3,                        \
	    "refuse \"src/../.git/config\" has a \".\" or \"..\" component")   \
	X(wb_action, "invalid-writeback-action.ini", 2,                        \
	    "unknown action \"deny\" in [writeback] (expected refuse, "        \
	    "quarantine or allow)")                                            \
	X(wb_qualifier, "invalid-writeback-qualifier.ini", 2,                  \
	    "refuse \".gitattributes filters\"" NOT_ONE_WORD)                  \
	X(wb_blank, "invalid-writeback-blank.ini", 2,                          \
	    "refuse \"my dir/\"" NOT_ONE_WORD)                                 \
	X(wb_star, "invalid-writeback-star.ini", 2,                            \
	    "refuse \"a**/b\" has \"**\" other than as a whole component")     \
	X(wb_duplicate, "invalid-writeback-duplicate.ini", 3,                  \
	    "duplicate rule refuse = .envrc (line 2 has the same pattern and " \
	    "qualifier)")                                                      \
	X(wb_empty_section, "invalid-writeback-empty-section.ini", 1,          \
	    "empty [writeback] section (it adds nothing to the default's "     \
	    "list; [policy] replace = writeback without the section empties "  \
	    "it)")                                                             \
	X(wb_root, "invalid-writeback-root.ini", 2,                            \
	    "refuse \"/\" names no component (\"/\" alone)")                   \
	X(wb_several, "invalid-writeback-several.ini", 3,                      \
	    "refuse \"a//b\" has an empty component (\"//\")")                 \
	X(wb_control, "invalid-writeback-control.ini", 2,                      \
	    "line contains control character 0x01")                            \
	X(wb_tab, "invalid-writeback-tab.ini", 2,                              \
	    "value of \"refuse\" contains a control character")

#define X_TEST(id, file, line, msg)              \
	Test(invalid, id)                        \
	{                                        \
		expect_invalid(file, line, msg); \
	}
WB_FIXTURES(X_TEST)

#define X_FILE(id, file, line, msg) file,
static const char *const invalid_files[] = {WB_FIXTURES(X_FILE)};

/* No invalid-writeback-* fixture goes untested (test_policy.c checks
 * the others). */
Test(invalid, every_writeback_fixture_has_a_test)
{
	char *dir;
	struct dirent *e;
	DIR *d;
	size_t i, n = 0, max = sizeof(invalid_files) / sizeof(invalid_files[0]);

	cr_assert(asprintf(&dir, "%s/tests/policy", source_root()) > 0);
	d = opendir(dir);
	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "invalid-writeback-", 18) != 0)
			continue;
		for (i = 0; i < max; i++)
			if (strcmp(invalid_files[i], e->d_name) == 0)
				break;
		cr_assert_lt(i, max, "%s has no test", e->d_name);
		n++;
	}
	closedir(d);
	free(dir);
	cr_assert_eq(n, max);
}
