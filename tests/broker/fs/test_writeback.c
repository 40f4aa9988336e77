/*
 * test_writeback.c: the firewall on what a job writes back
 * (broker/fs/writeback.h; issue 26, point 6): the pattern syntax and its
 * matches (writeback_pattern_error, writeback_pattern_match), and
 * writeback_match with the default policy's rules over the changes of a
 * job, the "drivers" rules reading a stage the test makes itself.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "writeback.h"

/* ---- Patterns ------------------------------------------------------------ */

struct pm {
	const char *pat, *path;
	bool match;
};

static const struct pm pattern_table[] = {
    /* No "/": the last component, at any depth. */
    {".envrc", ".envrc", true},
    {".envrc", "sub/.envrc", true},
    {".envrc", "a/b/c/.envrc", true},
    {".envrc", "sub/.envrc/x", false},
    {".envrc", "x.envrc", false},
    {".envrc", ".envrc2", false},
    {"*.code-workspace", "a/b.code-workspace", true},
    {"*.code-workspace", "b.code-workspace/x", false},
    /* A "/" inside: anchored at the root. */
    {".git/config", ".git/config", true},
    {".git/config", "sub/.git/config", false},
    {".git/config", ".git/config/x", false},
    {"src/*.c", "src/main.c", true},
    {"src/*.c", "src/sub/main.c", false},
    {"src/*.c", "lib/src/main.c", false},
    /* A leading "/" anchors a single component. */
    {"/.envrc", ".envrc", true},
    {"/.envrc", "sub/.envrc", false},
    /* "*" and "?" stay within one component. */
    {"a*b", "a/b", false},
    {"a*b", "ab", true},
    {"a*b", "axxb", true},
    {"a?b", "a/b", false},
    {"a?b", "axb", true},
    {"a?b", "ab", false},
    {"*", "x/y", true},
    {"*", ".hidden", true},
    {"src/*", "src/a/b", false},
    {"*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
    /* "**": any number of whole components, zero included. */
    {"**/.git/hooks/", ".git/hooks/pre-commit", true},
    {"**/.git/hooks/", "sub/.git/hooks/pre-commit", true},
    {"**/.git/hooks/", "a/b/.git/hooks/x/y", true},
    {"**/.git/hooks/", ".git/hooksx/pre-commit", false},
    {"**/.git/hooks/", ".git/info/hooks", false},
    {"**/.git/modules/**/hooks/", ".git/modules/m/hooks/post-checkout", true},
    {"**/.git/modules/**/hooks/", ".git/modules/a/b/hooks/x", true},
    {"**/.git/modules/**/hooks/", ".git/modules/hooks/x", true},
    {"a/**/b", "a/b", true},
    {"a/**/b", "a/x/y/b", true},
    {"a/**/b", "a/x/y/bc", false},
    {"a/**", "a", true},
    {"a/**", "a/x/y", true},
    {"a/**", "ab", false},
    {"**", "anything/at/all", true},
    /* A trailing "/": the directory itself and everything below. */
    {".vscode/", ".vscode", true},
    {".vscode/", ".vscode/tasks.json", true},
    {".vscode/", "a/.vscode/deep/x.json", true},
    {".vscode/", ".vscodex/tasks.json", false},
    {".vscode/", "x.vscode/tasks.json", false},
    {"/.stockade-commit/", ".stockade-commit/list", true},
    {"/.stockade-commit/", "a/.stockade-commit/list", false},
    {"**/.config/fish/", "home/.config/fish/config.fish", true},
    {"**/.config/fish/", ".config/fishy", false},
    /* Letters in either case. */
    {"**/.git/hooks/", ".GIT/Hooks/pre-commit", true},
    {".envrc", "sub/.ENVRC", true},
    /* Bytes beyond ASCII are themselves. */
    {"caf\xc3\xa9", "caf\xc3\xa9", true},
    {"caf\xc3\xa9", "caf\xc3\x89", false},
    {"caf?\xa9", "caf\xc3\xa9", true},
    /* An invalid pattern matches nothing; nor does an empty path. */
    {"a//b", "a//b", false},
    {"", "", false},
    {"*", "", false},
};

Test(pattern, table)
{
	for (size_t i = 0; i < sizeof(pattern_table) / sizeof(pattern_table[0]);
	     i++) {
		const struct pm *t = &pattern_table[i];

		cr_expect_eq(writeback_pattern_match(t->pat, t->path), t->match,
		    "%s against %s: expected %s", t->pat, t->path,
		    t->match ? "a match" : "none");
	}
}

Test(pattern, errors)
{
	static const struct {
		const char *pat, *err;
	} bad[] = {
	    {"", "is empty"},
	    {"/", "names no component (\"/\" alone)"},
	    {"//", "names no component (\"/\" alone)"},
	    {"a//b", "has an empty component (\"//\")"},
	    {"//a", "has an empty component (\"//\")"},
	    {"a//", "has an empty component (\"//\")"},
	    {"./a", "has a \".\" or \"..\" component"},
	    {"a/../b", "has a \".\" or \"..\" component"},
	    {"..", "has a \".\" or \"..\" component"},
	    {"a**", "has \"**\" other than as a whole component"},
	    {"***", "has \"**\" other than as a whole component"},
	    {"a/**b/c", "has \"**\" other than as a whole component"},
	    {"a\tb", "contains a control character"},
	    {"a\nb", "contains a control character"},
	    {"a\x7f", "contains a control character"},
	    {"\x1b[1m", "contains a control character"},
	    {"a b", "contains a blank (\"?\" matches one)"},
	};
	static const char *const good[] = {"a", ".envrc", "**", "**/x/", "/a",
	    "a/", "/a/b/", "...", ".a.", "*", "?", "a*/b?/**/c", "caf\xc3\xa9"};
	char longest[4098];

	cr_assert_str_eq(writeback_pattern_error(NULL), "is empty");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *e = writeback_pattern_error(bad[i].pat);

		cr_expect_not_null(e, "\"%s\" accepted", bad[i].pat);
		if (e != NULL)
			cr_expect_str_eq(e, bad[i].err, "\"%s\"", bad[i].pat);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_expect_null(writeback_pattern_error(good[i]), "\"%s\": %s",
		    good[i], writeback_pattern_error(good[i]));
	memset(longest, 'a', 4096);
	longest[4096] = '\0';
	cr_expect_null(writeback_pattern_error(longest));
	longest[4096] = 'a';
	longest[4097] = '\0';
	cr_expect_str_eq(writeback_pattern_error(longest),
	    "is longer than 4096 bytes");
}

/* Linear, not exponential: a path of 2000 components against a pattern
 * of many "**" returns (the test would time out otherwise). */
Test(pattern, many_stars_are_quick, .timeout = 10)
{
	char *path = malloc(4001), pat[400];
	size_t i;

	cr_assert_not_null(path);
	for (i = 0; i < 2000; i++)
		memcpy(path + 2 * i, "a/", 2);
	path[3999] = '\0';
	pat[0] = '\0';
	for (i = 0; i < 60; i++)
		strcat(pat, "**/a/");
	strcat(pat, "b");
	cr_assert_not(writeback_pattern_match(pat, path));
	pat[strlen(pat) - 1] = 'a';
	cr_assert(writeback_pattern_match(pat, path));
	free(path);
}

/* ---- writeback_match ---------------------------------------------------- */

/* A stage upper directory made by the test, removed at the end. */
static char stage_dir[] = "/tmp/stockade-writeback-XXXXXX";
static int stage = -1;
/* The stage as writeback_match takes it: its root (the files are in its
 * STAGE_UPPER), a zero token (the unit tests open directly). */
static struct stage_ref sref = {.fd = -1};

static void
stage_init(void)
{
	cr_assert_not_null(mkdtemp(stage_dir), "mkdtemp: %s", strerror(errno));
	stage = open(stage_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(stage, 0);
	cr_assert_eq(mkdirat(stage, STAGE_UPPER, 0755), 0);
	sref.fd = stage;
}

static void
stage_fini(void)
{
	char cmd[128];

	if (stage >= 0)
		close(stage);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", stage_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", stage_dir);
}

/* Writes TEXT (LEN bytes) at PATH in the stage, its parents made. */
static void
stage_put(const char *path, const char *text, size_t len)
{
	char full[4096], *slash;
	int fd;

	snprintf(full, sizeof(full), "%s/" STAGE_UPPER "/%s", stage_dir, path);
	for (slash = strchr(full + strlen(stage_dir) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		cr_assert(mkdir(full, 0755) == 0 || errno == EEXIST, "%s",
		    full);
		*slash = '/';
	}
	fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0, "%s: %s", full, strerror(errno));
	cr_assert_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* The action writeback_match decides for a change KIND of a TYPE at PATH
 * under the default policy: -1 for none (committed). */
static int
decide(const struct policy *p, enum change_kind kind, enum fs_type type,
    const char *path)
{
	char buf[4096];
	struct snap_entry e = {.path = buf, .type = type};
	struct change c = {.kind = kind,
	    .entry = &e,
	    .old = kind == CHANGE_MODIFIED ? &e : NULL};
	const struct wb_rule *r;

	snprintf(buf, sizeof(buf), "%s", path);
	r = writeback_match(&p->writeback, &c, &sref);
	return r == NULL ? -1 : (int)r->action;
}

static void
load_default_policy(struct policy *p)
{
	char err[POLICY_ERR_MAX];

	memset(p, 0, sizeof(*p));
	cr_assert_eq(policy_load_default(p, err, sizeof(err)), 0, "%s", err);
}

#define ATTR_EVIL "*.c filter=evil\n"
#define ATTR_PNG "# images\n*.png binary\n*.txt text eol=lf -diff\n"

TestSuite(match, .init = stage_init, .fini = stage_fini);

Test(match, default_rules_over_a_job)
{
	struct policy p;
	const int none = -1;

	load_default_policy(&p);
	stage_put(".gitattributes", ATTR_EVIL, strlen(ATTR_EVIL));
	stage_put("img/.gitattributes", ATTR_PNG, strlen(ATTR_PNG));
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE,
			 ".git/hooks/pre-commit"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_MODIFIED, FS_T_FILE, ".git/config"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE, ".gitattributes"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE,
			 "img/.gitattributes"),
	    none);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE, "sub/.envrc"),
	    WB_QUARANTINE);
	cr_expect_eq(decide(&p, CHANGE_MODIFIED, FS_T_FILE, "src/main.c"),
	    none);
	cr_expect_eq(decide(&p, CHANGE_DELETED, FS_T_FILE,
			 ".vscode/tasks.json"),
	    WB_QUARANTINE);
	policy_clear(&p);
}

/* Deleting a hook is held back too; a nested repository's hooks and
 * configuration are refused as the top one's; what git writes in a
 * commit made in the jail goes through. */
Test(match, default_rules_hold_every_repository)
{
	struct policy p;
	const int none = -1;

	load_default_policy(&p);
	cr_expect_eq(decide(&p, CHANGE_DELETED, FS_T_FILE,
			 ".git/hooks/pre-push"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE,
			 "vendor/lib/.git/hooks/post-checkout"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE,
			 "vendor/lib/.git/config"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE,
			 ".git/modules/lib/hooks/pre-commit"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_DIR, ".stockade-commit"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE, ".mcp.json"),
	    WB_QUARANTINE);
	cr_expect_eq(decide(&p, CHANGE_MODIFIED, FS_T_FILE,
			 ".claude/settings.json"),
	    WB_QUARANTINE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE, "home/.bashrc"),
	    WB_QUARANTINE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE,
			 ".config/fish/config.fish"),
	    WB_QUARANTINE);
	/* What git writes in a commit made in the jail goes through. */
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE,
			 ".git/objects/ab/cdef"),
	    none);
	cr_expect_eq(decide(&p, CHANGE_MODIFIED, FS_T_FILE,
			 ".git/refs/heads/main"),
	    none);
	cr_expect_eq(decide(&p, CHANGE_MODIFIED, FS_T_FILE, ".git/index"),
	    none);
	policy_clear(&p);
}

/* The ways around a path rule: another case, the directory replaced by
 * a link, a new repository, a gitfile, a worktree pointing elsewhere. */
Test(match, default_rules_hold_the_detours)
{
	struct policy p;

	load_default_policy(&p);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE,
			 ".GIT/HOOKS/pre-commit"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_SYMLINK, ".git/hooks"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_SYMLINK, ".git/config"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_DIR, "sub/.git"),
	    WB_QUARANTINE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE, "sub/.git"),
	    WB_QUARANTINE);
	cr_expect_eq(decide(&p, CHANGE_MODIFIED, FS_T_FILE,
			 ".git/worktrees/wt/commondir"),
	    WB_QUARANTINE);
	cr_expect_eq(decide(&p, CHANGE_MODIFIED, FS_T_FILE,
			 ".git/worktrees/wt/config.worktree"),
	    WB_REFUSE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE, ".husky/pre-commit"),
	    WB_QUARANTINE);
	cr_expect_eq(decide(&p, CHANGE_MODIFIED, FS_T_FILE,
			 ".pre-commit-config.yaml"),
	    WB_QUARANTINE);
	cr_expect_eq(decide(&p, CHANGE_CREATED, FS_T_FILE,
			 ".devcontainer/devcontainer.json"),
	    WB_QUARANTINE);
	policy_clear(&p);
}

/* A "drivers" rule: a file by what it assigns. */
Test(match, drivers_rule)
{
#define T(s, d)                     \
	{                           \
		s, sizeof(s) - 1, d \
	}
	static const struct {
		const char *text;
		size_t len;
		bool driver;
	} texts[] = {
	    T("*.c filter=evil\n", true),
	    T("*.c diff=x\n", true),
	    T("*.c merge=ours\n", true),
	    T("*.psd filter=lfs diff=lfs merge=lfs -text\n", true),
	    T("[attr]evil filter=evil\n*.c evil\n", true),
	    T("\xEF\xBB\xBF*.c\tFILTER=x\r\n", true),
	    T("*.c -filter=x\n", true),
	    T("*.c text\0filter=x\n", true),
	    T("*.c text\n\n\n   diff=x", true),
	    T("*.png binary\n", false),
	    T("*.c diff\n*.h -diff\n*.o !merge\n", false),
	    T("# *.c filter=evil\n   # diff=x\n", false),
	    T("\xEF\xBB\xBF# filter=x\n", false),
	    T("*.c filter=\n", false),
	    T("", false),
	    T("*.sh text eol=lf\n*.bat working-tree-encoding=UTF-16\n", false),
	};
#undef T
	struct wb_rule rule = {.pattern = (char[]){".gitattributes"},
	    .action = WB_REFUSE,
	    .drivers = true};
	struct wb_policy wb = {&rule, 1};
	struct snap_entry e = {.path = (char[]){".gitattributes"},
	    .type = FS_T_FILE};
	struct change c = {.kind = CHANGE_CREATED, .entry = &e};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		stage_put(".gitattributes", texts[i].text, texts[i].len);
		cr_expect_eq(writeback_match(&wb, &c, &sref) != NULL,
		    texts[i].driver, "%s", texts[i].text);
	}
}

/* A "drivers" rule: a deletion never, a directory never, a file that
 * cannot be read always. */
Test(match, drivers_rule_unknown_content)
{
	struct wb_rule rule = {.pattern = (char[]){".gitattributes"},
	    .action = WB_REFUSE,
	    .drivers = true};
	struct wb_policy wb = {&rule, 1};
	struct snap_entry e = {.path = (char[]){".gitattributes"},
	    .type = FS_T_FILE};
	struct change c = {.kind = CHANGE_CREATED, .entry = &e};
	char *big;

	/* Deleted, or a directory: never. */
	stage_put(".gitattributes", "*.c filter=evil\n", 16);
	c.kind = CHANGE_DELETED;
	cr_expect_null(writeback_match(&wb, &c, &sref));
	c.kind = CHANGE_MODIFIED;
	cr_expect_not_null(writeback_match(&wb, &c, &sref));
	e.type = FS_T_DIR;
	cr_expect_null(writeback_match(&wb, &c, &sref));
	/* A symlink, no stage, a missing file: unknown, so matched. */
	e.type = FS_T_SYMLINK;
	cr_expect_not_null(writeback_match(&wb, &c, &sref));
	e.type = FS_T_FILE;
	stage_put(".gitattributes", "*.png binary\n", 13);
	cr_expect_null(writeback_match(&wb, &c, &sref));
	cr_expect_not_null(writeback_match(&wb, &c, NULL));
	e.path = (char[]){"gone/.gitattributes"};
	cr_expect_not_null(writeback_match(&wb, &c, &sref));
	/* Longer than WRITEBACK_READ_MAX: what follows is unknown. */
	big = malloc(WRITEBACK_READ_MAX + 2);
	cr_assert_not_null(big);
	memset(big, '\n', WRITEBACK_READ_MAX + 1);
	e.path = (char[]){".gitattributes"};
	stage_put(".gitattributes", big, WRITEBACK_READ_MAX);
	cr_expect_null(writeback_match(&wb, &c, &sref));
	stage_put(".gitattributes", big, WRITEBACK_READ_MAX + 1);
	cr_expect_not_null(writeback_match(&wb, &c, &sref));
	free(big);
}

/* Never through a symlink: a stage whose directory is a link to a
 * benign file is not read through it. */
Test(match, drivers_never_through_a_symlink)
{
	struct wb_rule rule = {.pattern = (char[]){".gitattributes"},
	    .action = WB_QUARANTINE,
	    .drivers = true};
	struct wb_policy wb = {&rule, 1};
	struct snap_entry e = {.path = (char[]){"l/.gitattributes"},
	    .type = FS_T_FILE};
	struct change c = {.kind = CHANGE_CREATED, .entry = &e};
	char link[4096];

	stage_put("d/.gitattributes", "*.png binary\n", 13);
	snprintf(link, sizeof(link), "%s/" STAGE_UPPER "/l", stage_dir);
	cr_assert_eq(symlink("d", link), 0);
	e.path = (char[]){"d/.gitattributes"};
	cr_expect_null(writeback_match(&wb, &c, &sref));
	e.path = (char[]){"l/.gitattributes"};
	cr_expect_not_null(writeback_match(&wb, &c, &sref));
}

/* First match wins, in the policy's order. */
Test(match, first_match_wins)
{
	struct wb_rule rules[] = {
	    {(char[]){".vscode/settings.json"}, WB_ALLOW, false},
	    {(char[]){".vscode/"}, WB_QUARANTINE, false},
	    {(char[]){"**"}, WB_REFUSE, false},
	};
	struct wb_policy wb = {rules, 3};
	struct snap_entry e = {.path = (char[]){".vscode/settings.json"},
	    .type = FS_T_FILE};
	struct change c = {.kind = CHANGE_MODIFIED, .entry = &e};

	cr_expect_eq(writeback_match(&wb, &c, &sref), &rules[0]);
	e.path = (char[]){".vscode/tasks.json"};
	cr_expect_eq(writeback_match(&wb, &c, &sref), &rules[1]);
	e.path = (char[]){"README"};
	cr_expect_eq(writeback_match(&wb, &c, &sref), &rules[2]);
	wb.n = 0;
	cr_expect_null(writeback_match(&wb, &c, &sref));
}
