/*
 * check_fs_tree.c: the file_api checks of `stockade check` (check.h,
 * check_fs.h) for the commands that name entries of the tree: ls, stat,
 * rm, mkdir, mv, names with control bytes, the path rules of wspath.h
 * (.., absolute, max_depth, max_path_bytes) and the files a job leaves
 * for `run --put/--get` (README.md, "Files in and out").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "check_fs.h"

/* ---- names, ls, stat, rm, mkdir, mv ----------------------------------- */

/* Counts the bytes C in the LEN bytes of S. */
static size_t
count_byte(const char *s, size_t len, char ch)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += s[i] == ch;
	return n;
}

/*
 * Runs `CMD NAME` for a NAME that does not exist and expects one error
 * line "stockade: SHOWN: not_found: ..." (the name escaped as SHOWN, the
 * line not split by a raw newline) and no raw ESC on standard error;
 * fails R otherwise. Returns true when it was so.
 */
static bool
error_names(const struct scene *s, struct check_result *r, const char *cmd,
    const char *name, const char *shown_as)
{
	struct check_proc p;
	char what[512], how[160], want[300], line[512];
	const char *l;
	bool ok;

	if (fsc_cmd(s, &p, cmd, ARGS(name), what, sizeof(what)) < 0) {
		check_fail(r, "%s: could not be started", what);
		check_proc_free(&p);
		return false;
	}
	snprintf(want, sizeof(want), "stockade: %s: not_found: ", shown_as);
	l = strstr(p.err, ": not_found: ");
	while (l != NULL && l > p.err && l[-1] != '\n')
		l--;
	ok = p.status == 1 && l != NULL &&
	    strncmp(l, want, strlen(want)) == 0 &&
	    memchr(p.err, 0x1b, p.errlen) == NULL;
	if (!ok)
		check_fail(r,
		    "%s: %s, stderr \"%s\"%s (a sound stockade: one "
		    "line \"%s...\")",
		    what, fsc_outcome(&p, how, sizeof(how)),
		    fsc_error_line(&p, line, sizeof(line)),
		    memchr(p.err, 0x1b, p.errlen) ? " with a raw ESC" : "",
		    want);
	check_proc_free(&p);
	return ok;
}

/* file_api.control_char_names_escaped: names a job gave a newline, an
 * ESC sequence and U+202E are listed by ls one line each, escaped (\n,
 * \e, \xe2\x80\xae), never raw; such a name can be fetched by its raw
 * bytes; an error names it escaped on one line (README.md, "Files in
 * and out"; CVE-2021-42574). */
static void
control_names(struct check_ctx *c, struct check_result *r)
{
	static const char *const want[] = {
	    "a\\nb",
	    "c\\e[31md",
	    "e\\xe2\\x80\\xaef",
	};
	struct check_proc p;
	struct scene s;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_FILE, "a\nb", "nl\n", 3) ||
	    !fsc_plant(&s, r, FSC_FILE, "c\x1b[31md", "esc\n", 4) ||
	    !fsc_plant(&s, r, FSC_FILE,
		"e\xe2\x80\xae"
		"f",
		"rlo\n", 4))
		return;
	if (!fsc_expect_ok(&s, r, "ls", ARGS("."), &p))
		return;
	if (count_byte(p.out, p.outlen, '\n') != 3 ||
	    memchr(p.out, 0x1b, p.outlen) != NULL ||
	    strstr(p.out, "\xe2\x80\xae") != NULL) {
		check_fail(r,
		    "ls printed %zu lines for 3 names (raw ESC: %s, "
		    "raw U+202E: %s)",
		    count_byte(p.out, p.outlen, '\n'),
		    memchr(p.out, 0x1b, p.outlen) ? "yes" : "no",
		    strstr(p.out, "\xe2\x80\xae") ? "yes" : "no");
		check_proc_free(&p);
		return;
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(p.out, want[i]) == NULL) {
			check_fail(r,
			    "ls does not show the name escaped as "
			    "%s",
			    want[i]);
			check_proc_free(&p);
			return;
		}
	check_proc_free(&p);
	if (!fsc_expect_ok(&s, r, "get", ARGS("a\nb", "-"), &p))
		return;
	if (p.outlen != 3 || memcmp(p.out, "nl\n", 3) != 0) {
		check_fail(r,
		    "get of the name with a newline gave %zu bytes, "
		    "not its 3",
		    p.outlen);
		check_proc_free(&p);
		return;
	}
	check_proc_free(&p);
	if (!error_names(&s, r, "stat", "x\ny\x1b[2J", "x\\ny\\e[2J"))
		return;
	check_pass(r,
	    "ls: 3 lines, names as a\\nb, c\\e[31md, "
	    "e\\xe2\\x80\\xaef; get by raw name works; the error for "
	    "x\\ny\\e[2J is one escaped line");
}

/* file_api.stat_shows_symlink_not_target: stat of link -> the canary
 * describes the link (type symlink, size the length of its target),
 * never the file outside (lstat semantics, fsapi.h fsapi_stat). */
static void
stat_symlink(struct check_ctx *c, struct check_result *r)
{
	struct check_proc p;
	struct scene s;
	json_t *o;
	const char *type;
	long long size;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_LINK, "link", s.canary, 0))
		return;
	if (!fsc_expect_ok(&s, r, "stat", ARGS("--json", "link"), &p))
		return;
	o = json_loads(p.out, 0, NULL);
	type = json_string_value(json_object_get(o, "type"));
	size = (long long)json_integer_value(json_object_get(o, "size"));
	if (type == NULL)
		check_fail(r, "stat --json link printed no type");
	else if (strcmp(type, "symlink") != 0 ||
	    size != (long long)strlen(s.canary))
		check_fail(r,
		    "stat link (-> the canary outside) says type "
		    "%s, size %lld: the file outside (a sound "
		    "stockade: symlink, %zu)",
		    type, size, strlen(s.canary));
	else
		check_pass(r,
		    "stat link (-> the canary outside): type "
		    "symlink, size %lld, the link itself",
		    size);
	json_decref(o);
	check_proc_free(&p);
}

/* file_api.ls_shows_symlinks_as_links: ls --recursive --json lists link
 * (-> the canary) and dlink (-> a directory outside) as type symlink and
 * nothing beneath dlink: the walk never follows a link (wswalk.h). */
static void
ls_symlinks(struct check_ctx *c, struct check_result *r)
{
	struct check_proc p;
	struct scene s;
	const char *lt = NULL, *dt = NULL;
	size_t below = 0, i;
	json_t *o, *ents, *e;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_LINK, "link", s.canary, 0) ||
	    !fsc_plant(&s, r, FSC_LINK, "dlink", s.out, 0))
		return;
	if (!fsc_expect_ok(&s, r, "ls", ARGS("--recursive", "--json", "."), &p))
		return;
	o = json_loads(p.out, 0, NULL);
	ents = json_object_get(o, "entries");
	json_array_foreach(ents, i, e)
	{
		const char *path = json_string_value(
		    json_object_get(e, "path"));
		const char *type = json_string_value(
		    json_object_get(e, "type"));

		if (path == NULL || type == NULL)
			continue;
		if (strcmp(path, "link") == 0)
			lt = type;
		else if (strcmp(path, "dlink") == 0)
			dt = type;
		else if (strncmp(path, "dlink/", 6) == 0)
			below++;
	}
	if (lt == NULL || dt == NULL)
		check_fail(r,
		    "ls --recursive --json did not list link and "
		    "dlink: %.200s",
		    p.out);
	else if (strcmp(lt, "symlink") != 0 || strcmp(dt, "symlink") != 0 ||
	    below > 0)
		check_fail(r,
		    "ls lists link as %s, dlink as %s, and %zu "
		    "entries beneath dlink (a sound stockade: symlink, "
		    "symlink, none)",
		    lt, dt, below);
	else
		check_pass(r,
		    "ls --recursive: link and dlink (-> outside) "
		    "listed as symlink, nothing beneath dlink");
	json_decref(o);
	check_proc_free(&p);
}

/* file_api.rm_removes_link_not_target: rm link (-> the canary), rm
 * --recursive dlink (-> a directory outside) and rm --recursive tree
 * (holding up -> that directory) remove the links, never what they name:
 * entries examined with AT_SYMLINK_NOFOLLOW, unlinkat(2) on the entry
 * (README.md, "Files in and out"; fsutil.h, remove_tree_at). */
static void
rm_symlinks(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	mode_t t, u;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_LINK, "link", s.canary, 0) ||
	    !fsc_plant(&s, r, FSC_LINK, "dlink", s.out, 0) ||
	    !fsc_plant(&s, r, FSC_DIR, "tree", NULL, 0) ||
	    !fsc_plant(&s, r, FSC_FILE, "tree/f", "f\n", 2) ||
	    !fsc_plant(&s, r, FSC_LINK, "tree/up", s.out, 0))
		return;
	if (!fsc_expect_ok(&s, r, "rm", ARGS("link"), NULL) ||
	    !fsc_expect_ok(&s, r, "rm", ARGS("--recursive", "dlink"), NULL) ||
	    !fsc_expect_ok(&s, r, "rm", ARGS("--recursive", "tree"), NULL) ||
	    !fsc_outside_intact(&s, r))
		return;
	if (fsc_ws_size(&s, "link", &t) >= 0 ||
	    fsc_ws_size(&s, "dlink", &u) >= 0 ||
	    fsc_ws_size(&s, "tree", &t) >= 0)
		check_fail(r,
		    "rm exit 0 but a link or the tree is still "
		    "there");
	else
		check_pass(r,
		    "rm link, rm --recursive dlink (-> outside) and "
		    "tree (holding up -> outside): removed, the canary "
		    "and the directory outside intact");
}

/* file_api.mkdir_symlinked_parent_refused: d -> a directory outside;
 * mkdir d/new and mkdir --parents d/new/x are symlink_refused and make
 * nothing outside; mkdir --parents of real directories works: each
 * component is opened beneath the previous one without following a link
 * (fsapi.h, fsapi_mkdir). */
static void
mkdir_symlinked_parent(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	mode_t t;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_LINK, "d", s.out, 0) ||
	    !fsc_plant(&s, r, FSC_DIR, "real", NULL, 0))
		return;
	if (!fsc_expect_refused(&s, r, "symlink_refused", "mkdir",
		ARGS("d/new")) ||
	    !fsc_expect_refused(&s, r, "symlink_refused", "mkdir",
		ARGS("--parents", "d/new/x")) ||
	    !fsc_expect_ok(&s, r, "mkdir", ARGS("--parents", "real/sub/x"),
		NULL))
		return;
	if (fsc_outside_has(&s, "new"))
		check_fail(r,
		    "mkdir through d made \"new\" in the directory "
		    "outside");
	else if (fsc_ws_size(&s, "real/sub/x", &t) < 0 || t != S_IFDIR)
		check_fail(r,
		    "mkdir --parents real/sub/x exit 0 but made no "
		    "directory");
	else
		check_pass(r,
		    "mkdir d/new and --parents d/new/x (d -> "
		    "outside): exit 1, symlink_refused, nothing made "
		    "outside");
}

/* file_api.mv_refuses_taken_name_and_links: mv onto an existing name
 * without --overwrite is exists and keeps the target (renameat2(2)
 * RENAME_NOREPLACE); mv into or out of d -> a directory outside is
 * symlink_refused and moves nothing. */
static void
mv_cases(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	long long n;
	mode_t t;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_FILE, "a.txt", "AAAA\n", 5) ||
	    !fsc_plant(&s, r, FSC_FILE, "b.txt", "BB\n", 3) ||
	    !fsc_plant(&s, r, FSC_LINK, "d", s.out, 0))
		return;
	if (!fsc_expect_refused(&s, r, "exists", "mv", ARGS("a.txt", "b.txt")))
		return;
	if ((n = fsc_ws_size(&s, "b.txt", &t)) != 3 ||
	    fsc_ws_size(&s, "a.txt", &t) != 5) {
		check_fail(r,
		    "after the refused mv a.txt b.txt, b.txt has "
		    "%lld bytes (a sound stockade: its own 3)",
		    n);
		return;
	}
	if (!fsc_expect_refused(&s, r, "symlink_refused", "mv",
		ARGS("a.txt", "d/a.txt")) ||
	    !fsc_expect_refused(&s, r, "symlink_refused", "mv",
		ARGS("d/secret", "stolen")) ||
	    !fsc_outside_intact(&s, r))
		return;
	if (fsc_outside_has(&s, "a.txt") || fsc_ws_size(&s, "stolen", &t) >= 0)
		check_fail(r, "a refused mv through d moved a file");
	else
		check_pass(r,
		    "mv a.txt b.txt: exists, b.txt kept; mv a.txt "
		    "d/a.txt and d/secret stolen (d -> outside): "
		    "symlink_refused, nothing moved");
}

/* file_api.dotdot_and_absolute_invalid: "../canary", "sub/../../canary"
 * and an absolute path are invalid_path for get, stat and put, refused
 * as strings before any lookup (wspath.h), and openat2 RESOLVE_BENEATH
 * stops any that got through; nothing outside is read or written. */
static void
dotdot_paths(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char up[4200], up2[4200], host[4096], esc[4200], upput[4200];
	struct stat st;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_DIR, "sub", NULL, 0) ||
	    !fsc_host_file(c, r, host, sizeof(host), 12, 'd'))
		return;
	snprintf(up, sizeof(up), "..%s", strrchr(s.canary, '/'));
	snprintf(up2, sizeof(up2), "sub/../..%s", strrchr(s.canary, '/'));
	snprintf(esc, sizeof(esc), "%s-escaped", s.ws);
	snprintf(upput, sizeof(upput), "..%s-escaped", strrchr(s.ws, '/'));
	if (!fsc_expect_refused(&s, r, "invalid_path", "stat", ARGS(up)) ||
	    !fsc_expect_refused(&s, r, "invalid_path", "get", ARGS(up, "-")) ||
	    !fsc_expect_refused(&s, r, "invalid_path", "get", ARGS(up2, "-")) ||
	    !fsc_expect_refused(&s, r, "invalid_path", "get",
		ARGS(s.canary, "-")) ||
	    !fsc_expect_refused(&s, r, "invalid_path", "put",
		ARGS(host, upput)) ||
	    !fsc_outside_intact(&s, r))
		return;
	if (lstat(esc, &st) == 0)
		check_fail(r, "put ../NAME made a file beside the workspace");
	else
		check_pass(r,
		    "stat/get ../canary, get sub/../../canary, get "
		    "/abs/canary, put ../x: exit 1, invalid_path, "
		    "nothing read or written");
}

/* file_api.path_depth_and_length_limits: with max_depth = 3 and
 * max_path_bytes = 16, mkdir --parents a/b/c and put a/b/x (3
 * components) and a 16-byte name work; mkdir --parents a/b/c/d, put
 * a/b/c/f (4 components) and a 17-byte name are invalid_path and make
 * nothing (policy/default.ini, [files] max_depth, max_path_bytes;
 * wspath.h). */
static void
path_limits(struct check_ctx *c, struct check_result *r)
{
	static const char policy[] = "[files]\nmax_depth = 3\n"
				     "max_path_bytes = 16\n";
	struct scene s;
	char host[4096];
	mode_t t;

	if (fsc_scene_init(c, &s, policy, r) < 0 ||
	    !fsc_host_file(c, r, host, sizeof(host), 6, 'l'))
		return;
	if (!fsc_expect_ok(&s, r, "mkdir", ARGS("--parents", "a/b/c"), NULL) ||
	    !fsc_expect_ok(&s, r, "put", ARGS(host, "a/b/x"), NULL) ||
	    !fsc_expect_ok(&s, r, "put", ARGS(host, "0123456789abcdef"),
		NULL) ||
	    !fsc_expect_refused(&s, r, "invalid_path", "mkdir",
		ARGS("--parents", "a/b/c/d")) ||
	    !fsc_expect_refused(&s, r, "invalid_path", "put",
		ARGS(host, "a/b/c/f")) ||
	    !fsc_expect_refused(&s, r, "invalid_path", "put",
		ARGS(host, "0123456789abcdefg")))
		return;
	if (fsc_ws_size(&s, "a/b/c/d", &t) >= 0 ||
	    fsc_ws_size(&s, "a/b/c/f", &t) >= 0 ||
	    fsc_ws_size(&s, "0123456789abcdefg", &t) >= 0)
		check_fail(r, "a refused path was made in the workspace");
	else
		check_pass(r,
		    "max_depth = 3, max_path_bytes = 16: a/b/c, "
		    "a/b/x and a 16-byte name made; a/b/c/d, a/b/c/f "
		    "and a 17-byte name: exit 1, invalid_path");
}

/* Whether what the command P did is seen outside S's workspace. */
typedef bool (*escape_fn)(const struct scene *s, const struct check_proc *p);

/* Runs CMD ARGS in S, whose workspace holds d -> the directory outside,
 * and fails R when it did not end with exit 1, symlink_refused, saying
 * that the path escaped when ESCAPED sees the command's effect outside.
 * Returns true when refused. */
static bool
refused_at_link(const struct scene *s, struct check_result *r, const char *cmd,
    const char *const *args, escape_fn escaped)
{
	struct check_proc p;
	char what[512], how[160];
	bool ok;

	if (fsc_cmd(s, &p, cmd, args, what, sizeof(what)) < 0) {
		check_fail(r, "%s: could not be started", what);
		check_proc_free(&p);
		return false;
	}
	ok = !p.timed_out && p.status == 1 &&
	    strcmp(fsc_named_error(&p), "symlink_refused") == 0;
	if (!ok && escaped(s, &p))
		check_fail(r,
		    "%s (d -> a directory outside): %s, and it "
		    "reached the file outside: the path escaped the "
		    "workspace",
		    what, fsc_outcome(&p, how, sizeof(how)));
	else if (!ok)
		check_fail(r,
		    "%s (d -> a directory outside): %s (a sound "
		    "stockade: exit 1, symlink_refused)",
		    what, fsc_outcome(&p, how, sizeof(how)));
	check_proc_free(&p);
	return ok;
}

/* Whether stat --json printed the size of the file outside. */
static bool
stat_saw_outside(const struct scene *s, const struct check_proc *p)
{
	json_t *o = json_loads(p->out, 0, NULL);
	json_int_t size = json_integer_value(json_object_get(o, "size"));

	json_decref(o);
	return p->status == 0 && size == (json_int_t)strlen(fsc_canary_text);
}

/* Whether the file outside was removed. */
static bool
rm_removed_outside(const struct scene *s, const struct check_proc *p)
{
	return !fsc_outside_has(s, "secret");
}

/* file_api.stat_through_symlinked_parent_refused: d -> a directory
 * outside; stat d/secret is symlink_refused and describes nothing
 * outside: AT_SYMLINK_NOFOLLOW guards only the final component
 * (fstatat(2)), so the parent is opened by openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS (CVE-2018-15664). */
static void
stat_symlinked_parent(struct check_ctx *c, struct check_result *r)
{
	struct scene s;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_LINK, "d", s.out, 0))
		return;
	if (refused_at_link(&s, r, "stat", ARGS("--json", "d/secret"),
		stat_saw_outside))
		check_pass(r,
		    "stat d/secret (d -> a directory outside): exit "
		    "1, symlink_refused, nothing described");
}

/* file_api.rm_through_symlinked_parent_refused: d -> a directory
 * outside, alias -> real inside; rm d/secret and rm alias/f are
 * symlink_refused and remove nothing: only the last component of a
 * parent opened beneath the workspace is unlinked, unlinkat(2)
 * following every other component (CVE-2018-15664). */
static void
rm_symlinked_parent(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	mode_t t;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_LINK, "d", s.out, 0) ||
	    !fsc_plant(&s, r, FSC_DIR, "real", NULL, 0) ||
	    !fsc_plant(&s, r, FSC_FILE, "real/f", "f\n", 2) ||
	    !fsc_plant(&s, r, FSC_LINK, "alias", "real", 0))
		return;
	if (!refused_at_link(&s, r, "rm", ARGS("d/secret"),
		rm_removed_outside) ||
	    !fsc_outside_intact(&s, r))
		return;
	if (!fsc_expect_refused(&s, r, "symlink_refused", "rm",
		ARGS("alias/f")))
		return;
	if (fsc_ws_size(&s, "real/f", &t) < 0)
		check_fail(r,
		    "rm alias/f (alias -> real) removed real/f "
		    "through the symlinked parent");
	else
		check_pass(r,
		    "rm d/secret (d -> outside) and alias/f (alias "
		    "-> real): exit 1, symlink_refused, nothing "
		    "removed");
}

const struct check checks_fs_tree[] = {
    {"file_api.control_char_names_escaped", "file_api",
	"names with a newline, ESC, U+202E: ls one line each, escaped",
	control_names},
    {"file_api.stat_shows_symlink_not_target", "file_api",
	"stat of a symlink to a file outside: type symlink, never the "
	"target",
	stat_symlink},
    {"file_api.ls_shows_symlinks_as_links", "file_api",
	"ls --recursive lists symlinks as symlink, never what they name",
	ls_symlinks},
    {"file_api.rm_removes_link_not_target", "file_api",
	"rm of a symlink to a file or directory outside: the link goes, "
	"the target stays",
	rm_symlinks},
    {"file_api.mkdir_symlinked_parent_refused", "file_api",
	"mkdir [--parents] through a symlinked parent: exit 1, "
	"symlink_refused",
	mkdir_symlinked_parent},
    {"file_api.mv_refuses_taken_name_and_links", "file_api",
	"mv onto a taken name: exists; through a symlinked parent: "
	"symlink_refused",
	mv_cases},
    {"file_api.dotdot_and_absolute_invalid", "file_api",
	"get/stat/put of ../x, a/../../x, /abs: exit 1, invalid_path",
	dotdot_paths},
    {"file_api.path_depth_and_length_limits", "file_api",
	"max_depth = 3, max_path_bytes = 16: one component or byte more "
	"is invalid_path",
	path_limits},
    {"file_api.stat_through_symlinked_parent_refused", "file_api",
	"stat d/secret with d -> outside: exit 1, symlink_refused, nothing "
	"described",
	stat_symlinked_parent},
    {"file_api.rm_through_symlinked_parent_refused", "file_api",
	"rm d/secret (d -> outside), alias/f (alias -> inside): exit 1, "
	"symlink_refused",
	rm_symlinked_parent},
    {NULL, NULL, NULL, NULL},
};
