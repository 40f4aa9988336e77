/*
 * test_fscli.c: `stockade put`, `get`, `ls`, `stat`, `rm`, `mkdir` and
 * `mv` (broker/cli/cmd_fs.c), run as programs, against workspaces a real
 * jailed job prepared; canary files outside the workspace must not
 * change.
 *
 * Registered twice in tests/meson.build, as the invoking user and as uid
 * 65534 (tests/lib/harness.h).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

extern char **environ;

TestSuite(fscli, .init = harness_setup, .fini = harness_cleanup, .timeout = 60);

static int
count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/*
 * As job(), for a SCRIPT that also makes entries the file API never makes
 * (FIFOs, a second hard link): a job's writes are staged and committed
 * through the file API (issue 26), so the result's workspace.unapplicable
 * must count UNAPPLICABLE of them and none of the NAMES (NULL-ended,
 * relative to WS) may be in the workspace after the job.
 */
static void
job_leaves_out(const char *ws, const char *script, long unapplicable,
    const char *const names[])
{
	struct run_out o;
	json_t *w;
	char path[4200];
	struct stat st;

	RUN(&o, "run", "--json", "--workspace", ws, "--", "sh", "-c", script);
	cr_assert_eq(o.status, 0, "job `%s`: %s%s", script, o.out, o.err);
	cr_assert_not_null(o.json, "not JSON: %s", o.out);
	cr_assert_str_eq(json_string_value(json_object_get(o.json, "status")),
	    "ok");
	w = json_object_get(o.json, "workspace");
	cr_assert(json_is_integer(json_object_get(w, "unapplicable")), "%s",
	    o.out);
	cr_assert_eq(json_integer_value(json_object_get(w, "unapplicable")),
	    unapplicable, "%s", o.out);
	run_out_free(&o);
	for (size_t i = 0; names[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", ws, names[i]);
		cr_assert_eq(lstat(path, &st), -1,
		    "the job's %s reached the workspace", names[i]);
	}
}

/*
 * Runs SCRIPT with /bin/sh -c on the host, in WS, as the workspace's owner
 * (harness_workspace_owner(): dropped to it in the child when the test runs
 * as root): what a job can no longer leave in a workspace, a host program
 * can, and the CLI must still meet it. Asserts it exited 0.
 */
static void
host_sh(const char *ws, const char *script)
{
	uid_t owner = harness_workspace_owner();
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (geteuid() == 0 && owner != 0 &&
		    (setgroups(0, NULL) != 0 ||
			setresgid(owner, owner, owner) != 0 ||
			setresuid(owner, owner, owner) != 0))
			_exit(126);
		if (chdir(ws) != 0)
			_exit(126);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "host `%s`: status %#x", script, status);
}

Test(fscli, put_then_get_round_trip)
{
	const char *ws = harness_workspace();
	const char *tmp = harness_tmpdir("stockade-fscli-");
	const char *text = "line one\nline two \xe2\x9c\x93\n";
	char in[4096], out[4096];
	struct run_out o;
	char *got;
	size_t len;

	snprintf(in, sizeof(in), "%s/in.txt", tmp);
	snprintf(out, sizeof(out), "%s/out.txt", tmp);
	harness_write_file(in, text);
	RUN(&o, "put", "--workspace", ws, in, "f.txt");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);

	RUN(&o, "get", "--workspace", ws, "f.txt", "-");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_str_eq(o.out, text);
	run_out_free(&o);

	/* The job sees what was put. */
	RUN(&o, "run", "--workspace", ws, "--", "cat", "/work/f.txt");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_str_eq(o.out, text);
	run_out_free(&o);

	/* No replacing without --overwrite. */
	RUN(&o, "put", "--workspace", ws, in, "f.txt");
	cr_assert_eq(o.status, 1);
	cr_assert_not_null(strstr(o.err, "stockade: f.txt: exists: "), "%s",
	    o.err);
	run_out_free(&o);
	RUN(&o, "put", "--workspace", ws, "--overwrite", in, "f.txt");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);

	/* Into a host file: complete, and no temporary file left. */
	RUN(&o, "get", "--workspace", ws, "f.txt", out);
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	got = harness_read_file(out, &len);
	cr_assert_not_null(got);
	cr_assert_str_eq(got, text);
	free(got);
	cr_assert_eq(count_entries(tmp), 2);

	RUN(&o, "get", "--workspace", ws, "../f.txt", "-");
	cr_assert_eq(o.status, 1);
	cr_assert_not_null(strstr(o.err, "stockade: ../f.txt: invalid_path: "),
	    "%s", o.err);
	run_out_free(&o);
	RUN(&o, "get", "f.txt", "-");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
}

Test(fscli, get_symlink_planted_by_job)
{
	const char *ws = harness_workspace();
	const char *tmp = harness_tmpdir("stockade-fscli-");
	char out[4096];
	struct run_out o;

	RUN(&o, "run", "--workspace", ws, "--", "ln", "-s", "/etc/passwd",
	    "/work/leak");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);

	RUN(&o, "get", "--workspace", ws, "leak", "-");
	cr_assert_eq(o.status, 1, "%s", o.err);
	cr_assert_not_null(strstr(o.err, "stockade: leak: symlink_refused: "),
	    "%s", o.err);
	cr_assert_eq(o.out_len, 0, "leaked: %s", o.out);
	cr_assert_null(strstr(o.err, "root:"), "%s", o.err);
	run_out_free(&o);

	/* Into a host file: nothing is created, not even a temporary. */
	snprintf(out, sizeof(out), "%s/leak", tmp);
	RUN(&o, "get", "--workspace", ws, "leak", out);
	cr_assert_eq(o.status, 1, "%s", o.err);
	run_out_free(&o);
	cr_assert_eq(count_entries(tmp), 0);
}

/* A job's FIFO never reaches the workspace (issue 26: unapplicable); a
 * host program's does, and get must not block on it. */
Test(fscli, get_fifo_planted_by_job)
{
	static const char *const names[] = {"out.txt", NULL};
	const char *ws = harness_workspace();
	struct run_out o;

	job_leaves_out(ws, "mkfifo /work/out.txt", 1, names);
	host_sh(ws, "mkfifo out.txt");
	RUN(&o, "get", "--workspace", ws, "out.txt", "-");
	cr_assert_eq(o.status, 1, "%s", o.err);
	cr_assert_not_null(strstr(o.err,
			       "stockade: out.txt: not_regular_file: "),
	    "%s", o.err);
	cr_assert_lt(o.wall_ms, 1000, "took %ld ms", o.wall_ms);
	run_out_free(&o);
}

/* --- ls, stat, rm, mkdir, mv (issue 3) ------------------------------ */

/* Runs SCRIPT with sh -c in a job on WS; asserts it succeeded. */
static void
job(const char *ws, const char *script)
{
	struct run_out o;

	RUN(&o, "run", "--workspace", ws, "--", "sh", "-c", script);
	cr_assert_eq(o.status, 0, "job `%s`: %s%s", script, o.out, o.err);
	run_out_free(&o);
}

static size_t
count_char(const char *s, size_t len, char c)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += s[i] == c;
	return n;
}

/* A canary file outside the workspace (in its own directory) and what it
 * was when made. */
struct canary {
	char dir[4096], path[4200];
	struct stat st;
};

#define CANARY_TEXT "CANARY-fscli-secret-7f3a\n"

static void
canary_make(struct canary *c)
{
	snprintf(c->dir, sizeof(c->dir), "%s",
	    harness_tmpdir("stockade-fscli-canary"));
	snprintf(c->path, sizeof(c->path), "%s/canary", c->dir);
	harness_write_file(c->path, CANARY_TEXT);
	/* The job may look, but nobody may change it (mode, not luck). */
	cr_assert_eq(chmod(c->dir, 0755), 0);
	cr_assert_eq(stat(c->path, &c->st), 0);
}

/* The canary and its directory are as canary_make left them. */
static void
canary_check(const struct canary *c)
{
	struct stat st;
	size_t len;
	char *got = harness_read_file(c->path, &len);

	cr_assert_not_null(got, "canary %s: %s", c->path, strerror(errno));
	cr_assert_str_eq(got, CANARY_TEXT);
	free(got);
	cr_assert_eq(stat(c->path, &st), 0);
	cr_assert_eq(st.st_ino, c->st.st_ino);
	cr_assert_eq(st.st_size, c->st.st_size);
	cr_assert_eq(st.st_mtim.tv_sec, c->st.st_mtim.tv_sec);
	cr_assert_eq(st.st_mtim.tv_nsec, c->st.st_mtim.tv_nsec);
	cr_assert_eq(st.st_mode, c->st.st_mode);
	cr_assert_eq(count_entries(c->dir), 1, "%s gained entries", c->dir);
}

/* OUT (a run's stdout or stderr) does not hold the canary's text. */
static void
no_leak(const char *what, const char *out)
{
	cr_assert_null(strstr(out, "CANARY-fscli"), "%s leaked: %s", what, out);
}

/* Asserts that stockade failed with the named error for PATH. */
#define ASSERT_FS_ERROR(o, path, name)                                     \
	do {                                                               \
		char want_[512];                                           \
		snprintf(want_, sizeof(want_), "stockade: %s: %s: ", path, \
		    name);                                                 \
		cr_assert_eq((o)->status, 1, "exit %d: %s", (o)->status,   \
		    (o)->err);                                             \
		cr_assert_not_null(strstr((o)->err, want_),                \
		    "want \"%s\", got: %s", want_, (o)->err);              \
	} while (0)

/* The entry of a parsed `ls --json` whose "path" is PATH, or NULL. */
static json_t *
find_entry(json_t *listing, const char *path)
{
	json_t *entries = json_object_get(listing, "entries"), *e;
	size_t i;

	cr_assert(json_is_array(entries), "no entries array");
	json_array_foreach(entries, i, e)
	{
		const char *p = json_string_value(json_object_get(e, "path"));

		cr_assert_not_null(p, "an entry without a path");
		if (strcmp(p, path) == 0)
			return e;
	}
	return NULL;
}

static json_int_t
int_field(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	cr_assert(json_is_integer(v), "\"%s\" is not an integer", key);
	return json_integer_value(v);
}

static const char *
str_field(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	cr_assert_not_null(s, "\"%s\" is not a string", key);
	return s;
}

/* A tree the job makes: d/ (0750), d/f (3 bytes, 0640, mtime 10^9),
 * fifo, link -> /etc/passwd. */
static const char *const tree_script =
    "set -e; cd /work; mkdir d; chmod 750 d; printf abc > d/f; "
    "chmod 640 d/f; touch -d @1000000000 d/f; mkfifo fifo; "
    "ln -s /etc/passwd link";

/*
 * The job runs SCRIPT (tree_script and more): its fifo never reaches the
 * workspace (issue 26: unapplicable), so the test plants it on the host,
 * where the CLI must still meet it.
 */
static void
make_tree(const char *ws, const char *script)
{
	static const char *const fifo[] = {"fifo", NULL};

	job_leaves_out(ws, script, 1, fifo);
	host_sh(ws, "mkfifo fifo");
}

Test(fscli, ls_shows_what_the_job_made)
{
	const char *ws = harness_workspace();
	struct run_out o;

	make_tree(ws, tree_script);
	RUN(&o, "ls", "--workspace", ws);
	cr_assert_eq(o.status, 0, "%s", o.err);
	/* One level, byte-wise order: d, fifo, link. */
	cr_assert_eq(count_char(o.out, o.out_len, '\n'), 3, "%s", o.out);
	cr_assert_eq(strncmp(o.out, "d 0750 ", 7), 0, "%s", o.out);
	cr_assert_not_null(strstr(o.out, "\np 06"), "%s", o.out);
	cr_assert_not_null(strstr(o.out, " fifo\nl 0777           11 "), "%s",
	    o.out);
	cr_assert_null(strstr(o.out, "d/f"), "not recursive: %s", o.out);
	cr_assert_null(strstr(o.out, "root:"), "%s", o.out);
	run_out_free(&o);

	RUN(&o, "ls", "--workspace", ws, "--recursive", ".");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_eq(count_char(o.out, o.out_len, '\n'), 4, "%s", o.out);
	/* A directory before its contents; the exact line of a file. */
	cr_assert_not_null(strstr(o.out,
			       " d\nf 0640            3 "
			       "2001-09-09T01:46:40Z d/f\n"),
	    "%s", o.out);
	run_out_free(&o);

	/* A directory of the workspace, its entries named from the top. */
	RUN(&o, "ls", "--workspace", ws, "d");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_str_eq(o.out,
	    "f 0640            3 2001-09-09T01:46:40Z d/f\n");
	run_out_free(&o);

	/* Never through a symlink; a file is not a directory. */
	RUN(&o, "ls", "--workspace", ws, "link");
	ASSERT_FS_ERROR(&o, "link", "symlink_refused");
	cr_assert_eq(o.out_len, 0, "%s", o.out);
	run_out_free(&o);
	RUN(&o, "ls", "--workspace", ws, "d/f");
	ASSERT_FS_ERROR(&o, "d/f", "not_a_directory");
	cr_assert_eq(o.out_len, 0, "%s", o.out);
	run_out_free(&o);
	RUN(&o, "ls", "--workspace", ws, "nothing");
	ASSERT_FS_ERROR(&o, "nothing", "not_found");
	run_out_free(&o);
	RUN(&o, "ls", "--workspace", ws, "../");
	ASSERT_FS_ERROR(&o, "../", "invalid_path");
	run_out_free(&o);
}

Test(fscli, ls_json_and_limit)
{
	const char *ws = harness_workspace();
	struct run_out o;
	json_t *e;

	make_tree(ws, tree_script);
	RUN(&o, "ls", "--workspace", ws, "--recursive", "--json", ".");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_not_null(o.json, "not JSON: %s", o.out);
	cr_assert(json_is_false(json_object_get(o.json, "truncated")));
	cr_assert_eq(json_array_size(json_object_get(o.json, "entries")), 4);
	e = find_entry(o.json, "d/f");
	cr_assert_not_null(e, "%s", o.out);
	cr_assert_str_eq(str_field(e, "type"), "file");
	cr_assert_eq(int_field(e, "size"), 3);
	cr_assert_eq(int_field(e, "mode"), 0640);
	cr_assert(json_is_number(json_object_get(e, "mtime")));
	cr_assert_float_eq(json_number_value(json_object_get(e, "mtime")),
	    1000000000.0, 1e-3);
	cr_assert_null(json_object_get(e, "path_b64"), "a plain name");
	e = find_entry(o.json, "link");
	cr_assert_not_null(e);
	cr_assert_str_eq(str_field(e, "type"), "symlink");
	cr_assert_eq(int_field(e, "size"), 11); /* "/etc/passwd" */
	cr_assert_str_eq(str_field(find_entry(o.json, "fifo"), "type"), "fifo");
	cr_assert_str_eq(str_field(find_entry(o.json, "d"), "type"),
	    "directory");
	run_out_free(&o);

	/* Cut at the limit, and said so. */
	RUN(&o, "ls", "--workspace", ws, "--recursive", "--json", "--limit",
	    "2");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_not_null(o.json, "not JSON: %s", o.out);
	cr_assert(json_is_true(json_object_get(o.json, "truncated")));
	cr_assert_eq(json_array_size(json_object_get(o.json, "entries")), 2);
	cr_assert_not_null(find_entry(o.json, "d"));
	cr_assert_not_null(find_entry(o.json, "d/f"));
	run_out_free(&o);
	RUN(&o, "ls", "--workspace", ws, "--recursive", "--limit", "3");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_eq(count_char(o.out, o.out_len, '\n'), 3, "%s", o.out);
	cr_assert_not_null(strstr(o.err, "truncated"), "%s", o.err);
	run_out_free(&o);

	/* A policy's max_files is the ceiling of any --limit. */
	{
		const char *tmp = harness_tmpdir("stockade-fscli-pol");
		char pol[4200];

		snprintf(pol, sizeof(pol), "%s/p.ini", tmp);
		harness_write_file(pol, "[files]\nmax_files = 1\n");
		RUN(&o, "ls", "--workspace", ws, "--policy", pol, "--json",
		    "--limit", "100");
		cr_assert_eq(o.status, 0, "%s", o.err);
		cr_assert_not_null(o.json, "not JSON: %s", o.out);
		cr_assert(json_is_true(json_object_get(o.json, "truncated")));
		cr_assert_eq(json_array_size(
				 json_object_get(o.json, "entries")),
		    1);
		run_out_free(&o);
	}

	/* A refused listing prints no JSON at all. */
	RUN(&o, "ls", "--workspace", ws, "--json", "link");
	ASSERT_FS_ERROR(&o, "link", "symlink_refused");
	cr_assert_eq(o.out_len, 0, "%s", o.out);
	run_out_free(&o);
}

/* A name of 255 bytes: "n" repeated (NAME_MAX, the longest allowed). */
static void
long_name(char *buf, size_t size)
{
	cr_assert_geq(size, 256);
	memset(buf, 'n', 255);
	buf[255] = '\0';
}

Test(fscli, ls_shows_strange_names_escaped)
{
	const char *ws = harness_workspace();
	char name255[256], line[512];
	struct run_out o;
	json_t *e;

	/* Made by the job: a newline, a terminal escape (ESC [31m), bytes
	 * that are not UTF-8, a backslash, and the longest component. */
	job(ws,
	    "set -e; cd /work; touch \"$(printf 'a\\nb')\" "
	    "\"$(printf 'x\\033[31mred')\" \"$(printf 'bad\\377')\" "
	    "'back\\slash' \"$(printf 'n%.0s' $(seq 255))\"");
	RUN(&o, "ls", "--workspace", ws);
	cr_assert_eq(o.status, 0, "%s", o.err);
	/* One line per entry: no raw newline, no raw ESC, no raw 0xff. */
	cr_assert_eq(count_char(o.out, o.out_len, '\n'), 5, "%s", o.out);
	cr_assert_null(memchr(o.out, '\033', o.out_len), "raw ESC: %s", o.out);
	cr_assert_null(memchr(o.out, '\377', o.out_len), "raw 0xff");
	cr_assert_not_null(strstr(o.out, " a\\nb\n"), "%s", o.out);
	cr_assert_not_null(strstr(o.out, " x\\e[31mred\n"), "%s", o.out);
	cr_assert_not_null(strstr(o.out, " bad\\xff\n"), "%s", o.out);
	cr_assert_not_null(strstr(o.out, " back\\\\slash\n"), "%s", o.out);
	long_name(name255, sizeof(name255));
	snprintf(line, sizeof(line), " %s\n", name255);
	cr_assert_not_null(strstr(o.out, line), "%s", o.out);
	run_out_free(&o);

	/* JSON: the escaped form in path, the raw bytes in path_b64. */
	RUN(&o, "ls", "--workspace", ws, "--json");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_not_null(o.json, "not JSON: %s", o.out);
	cr_assert_null(memchr(o.out, '\033', o.out_len), "raw ESC");
	cr_assert_eq(count_char(o.out, o.out_len, '\n'), 1, "%s", o.out);
	e = find_entry(o.json, "a\\nb");
	cr_assert_not_null(e, "%s", o.out);
	cr_assert_str_eq(str_field(e, "path_b64"), "YQpi");
	e = find_entry(o.json, "x\\e[31mred");
	cr_assert_not_null(e, "%s", o.out);
	cr_assert_str_eq(str_field(e, "path_b64"), "eBtbMzFtcmVk");
	e = find_entry(o.json, "bad\\xff");
	cr_assert_not_null(e, "%s", o.out);
	cr_assert_str_eq(str_field(e, "path_b64"), "YmFk/w==");
	cr_assert_not_null(find_entry(o.json, name255), "%s", o.out);
	cr_assert_null(
	    json_object_get(find_entry(o.json, name255), "path_b64"));
	run_out_free(&o);

	/* The raw name addresses the file; it is shown escaped. */
	RUN(&o, "stat", "--workspace", ws, "a\nb");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_not_null(strstr(o.out, "path: a\\nb\n"), "%s", o.out);
	cr_assert_eq(count_char(o.out, o.out_len, '\n'), 6, "%s", o.out);
	run_out_free(&o);
	/* An error message shows it escaped too. */
	RUN(&o, "get", "--workspace", ws, "x\033[31mred/none", "-");
	ASSERT_FS_ERROR(&o, "x\\e[31mred/none", "not_a_directory");
	cr_assert_null(memchr(o.err, '\033', o.err_len), "raw ESC: %s", o.err);
	run_out_free(&o);
}

/* Invisible characters (Unicode Cf, Zl, Zp: broker/fs/fsname.h): escaped
 * in ls, and in ls --json with the raw name in path_b64. */
Test(fscli, ls_escapes_invisible_characters)
{
	static const char *const names[][3] = {
	    /* raw, shown, path_b64 */
	    {"a\xc2\xad", "a\\xc2\\xad", "YcKt"}, /* soft hyphen */
	    {"b\xe2\x80\xae"
	     "fdp.exe",
		"b\\xe2\\x80\\xaefdp.exe", "YuKArmZkcC5leGU="}, /* RLO */
	    {"c\xe2\x80\x8b", "c\\xe2\\x80\\x8b", "Y+KAiw=="}, /* ZWSP */
	    {"d\xe2\x80\xa8", "d\\xe2\\x80\\xa8", "ZOKAqA=="}, /* Zl */
	    {"e\xe2\x80\xa9", "e\\xe2\\x80\\xa9", "ZeKAqQ=="}, /* Zp */
	    {"f\xf3\xa0\x80\x81", "f\\xf3\\xa0\\x80\\x81",
		"ZvOggIE="}, /* tag */
	    {"g\xef\xbb\xbf", "g\\xef\\xbb\\xbf", "Z++7vw=="}, /* BOM */
	};
	const size_t n = sizeof(names) / sizeof(names[0]);
	const char *ws = harness_workspace();
	char path[4096], line[256];
	struct run_out o;
	json_t *e;

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", ws, names[i][0]);
		harness_write_file(path, "");
	}
	RUN(&o, "ls", "--workspace", ws);
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_eq(count_char(o.out, o.out_len, '\n'), n, "%s", o.out);
	for (size_t i = 0; i < n; i++) {
		snprintf(line, sizeof(line), " %s\n", names[i][1]);
		cr_assert_not_null(strstr(o.out, line), "no \"%s\" in %s",
		    names[i][1], o.out);
		cr_assert_null(strstr(o.out, names[i][0]), "raw %s",
		    names[i][1]);
	}
	run_out_free(&o);

	RUN(&o, "ls", "--workspace", ws, "--json");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_not_null(o.json, "not JSON: %s", o.out);
	for (size_t i = 0; i < n; i++) {
		e = find_entry(o.json, names[i][1]);
		cr_assert_not_null(e, "no %s in %s", names[i][1], o.out);
		cr_assert_str_eq(str_field(e, "path_b64"), names[i][2]);
		cr_assert_null(strstr(o.out, names[i][0]), "raw %s",
		    names[i][1]);
	}
	run_out_free(&o);
}

/* Runs `printf DATA | stockade put --workspace WS ARGS... - PATH` through
 * sh (DATA without '%' or '\\'), into O. */
static void
put_piped(struct run_out *o, const char *ws, const char *data, const char *size,
    const char *path)
{
	const char *full[] = {
	    "sh",
	    "-c",
	    "printf '%s' \"$2\" | \"$0\" put --workspace \"$1\" "
	    "--size \"$3\" - \"$4\"",
	    harness_stockade(),
	    ws,
	    data,
	    size,
	    path,
	    NULL,
	};

	harness_spawn(full, o);
}

/*
 * put --size: the bytes expected. From a pipe, a producer that died early
 * (fewer bytes) is io_error, more is too_large, and either leaves no file
 * and no temporary name; exactly that many is written. A host file is
 * checked on its size.
 */
Test(fscli, put_with_size)
{
	const char *ws = harness_workspace();
	const char *tmp = harness_tmpdir("stockade-fscli-");
	char in[4096], path[4096];
	struct run_out o;
	char *got;
	size_t len;

	put_piped(&o, ws, "hello", "5", "exact");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	snprintf(path, sizeof(path), "%s/exact", ws);
	got = harness_read_file(path, &len);
	cr_assert_not_null(got);
	cr_assert_eq(len, 5);
	cr_assert_eq(memcmp(got, "hello", 5), 0);
	free(got);

	put_piped(&o, ws, "hel", "5", "short");
	ASSERT_FS_ERROR(&o, "short", "io_error");
	cr_assert_not_null(strstr(o.err,
			       "standard input gave 3 bytes, "
			       "--size said 5: nothing written"),
	    "%s", o.err);
	run_out_free(&o);
	put_piped(&o, ws, "", "5", "empty");
	ASSERT_FS_ERROR(&o, "empty", "io_error");
	run_out_free(&o);
	put_piped(&o, ws, "hello!", "5", "long");
	ASSERT_FS_ERROR(&o, "long", "too_large");
	cr_assert_not_null(strstr(o.err, "gave more than 5 bytes"), "%s",
	    o.err);
	run_out_free(&o);
	/* Over the policy's per-file limit: refused before reading. */
	put_piped(&o, ws, "x", "99999999999999", "huge");
	ASSERT_FS_ERROR(&o, "huge", "too_large");
	run_out_free(&o);
	cr_assert_eq(count_entries(ws), 1, "a file or a temporary name left");

	/* A host file: its size from its offset. */
	snprintf(in, sizeof(in), "%s/in.txt", tmp);
	harness_write_file(in, "four");
	RUN(&o, "put", "--workspace", ws, "--size", "5", in, "hf");
	ASSERT_FS_ERROR(&o, "hf", "io_error");
	cr_assert_not_null(strstr(o.err, "the host file holds 4 bytes"), "%s",
	    o.err);
	run_out_free(&o);
	cr_assert_eq(count_entries(ws), 1);
	RUN(&o, "put", "--workspace", ws, "--size", "4", in, "hf");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	cr_assert_eq(count_entries(ws), 2);

	/* Not a number; an option of put only. */
	RUN(&o, "put", "--workspace", ws, "--size", "5k", in, "x");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "ls", "--workspace", ws, "--size", "5");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
}

Test(fscli, stat_describes_never_follows)
{
	const char *ws = harness_workspace();
	struct canary c;
	struct run_out o;
	char script[9000];

	canary_make(&c);
	snprintf(script, sizeof(script),
	    "%s; ln -s '%s' /work/canary; ln -s '%s' /work/cdir", tree_script,
	    c.path, c.dir);
	make_tree(ws, script);

	RUN(&o, "stat", "--workspace", ws, "d/f");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_str_eq(o.out,
	    "path: d/f\ntype: file\nsize: 3\nmode: 0640\n"
	    "mtime: 2001-09-09T01:46:40Z\nnlink: 1\n");
	run_out_free(&o);

	RUN(&o, "stat", "--workspace", ws, "--json", "canary");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_not_null(o.json, "not JSON: %s", o.out);
	cr_assert_str_eq(str_field(o.json, "type"), "symlink");
	cr_assert_str_eq(str_field(o.json, "path"), "canary");
	cr_assert_eq(int_field(o.json, "size"), (json_int_t)strlen(c.path));
	cr_assert_eq(int_field(o.json, "nlink"), 1);
	no_leak("stat", o.out);
	run_out_free(&o);

	RUN(&o, "stat", "--workspace", ws, "--json", ".");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_not_null(o.json, "not JSON: %s", o.out);
	cr_assert_str_eq(str_field(o.json, "type"), "directory");
	run_out_free(&o);

	/* Through the link to the canary's directory: refused. */
	RUN(&o, "stat", "--workspace", ws, "cdir/canary");
	ASSERT_FS_ERROR(&o, "cdir/canary", "symlink_refused");
	cr_assert_eq(o.out_len, 0, "%s", o.out);
	run_out_free(&o);
	RUN(&o, "stat", "--workspace", ws, "d/none");
	ASSERT_FS_ERROR(&o, "d/none", "not_found");
	run_out_free(&o);
	RUN(&o, "stat", "--workspace", ws, "/etc/passwd");
	ASSERT_FS_ERROR(&o, "/etc/passwd", "invalid_path");
	run_out_free(&o);
	canary_check(&c);
}

Test(fscli, rm_removes_links_not_targets)
{
	const char *ws = harness_workspace();
	struct canary c;
	struct run_out o;
	char script[9000], path[4200];
	struct stat st;

	canary_make(&c);
	snprintf(script, sizeof(script),
	    "%s; ln -s '%s' /work/canary; ln -s '%s' /work/cdir; "
	    "mkdir -p /work/e/g/h; touch /work/e/g/h/i /work/e/j",
	    tree_script, c.path, c.dir);
	make_tree(ws, script);

	RUN(&o, "rm", "--workspace", ws, "canary");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	snprintf(path, sizeof(path), "%s/canary", ws);
	cr_assert_eq(lstat(path, &st), -1, "the link is still there");
	/* Through a link to the canary's directory: refused, even with
	 * --recursive. */
	RUN(&o, "rm", "--workspace", ws, "--recursive", "cdir/canary");
	ASSERT_FS_ERROR(&o, "cdir/canary", "symlink_refused");
	run_out_free(&o);
	/* The link to a directory goes as a link, even asked recursively. */
	RUN(&o, "rm", "--workspace", ws, "--recursive", "cdir");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	canary_check(&c);

	RUN(&o, "rm", "--workspace", ws, "fifo");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "rm", "--workspace", ws, "e");
	ASSERT_FS_ERROR(&o, "e", "not_empty");
	run_out_free(&o);
	RUN(&o, "rm", "--workspace", ws, "--recursive", "e");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "rm", "--workspace", ws, "e");
	ASSERT_FS_ERROR(&o, "e", "not_found");
	run_out_free(&o);
	RUN(&o, "rm", "--workspace", ws, "--recursive", ".");
	ASSERT_FS_ERROR(&o, ".", "invalid_path");
	run_out_free(&o);
	RUN(&o, "rm", "--workspace", ws, "d/../d");
	ASSERT_FS_ERROR(&o, "d/../d", "invalid_path");
	run_out_free(&o);

	/* What is left is what was not removed. */
	RUN(&o, "ls", "--workspace", ws, "--recursive");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_eq(count_char(o.out, o.out_len, '\n'), 3, "%s", o.out);
	cr_assert_not_null(strstr(o.out, " d/f\n"), "%s", o.out);
	cr_assert_not_null(strstr(o.out, " link\n"), "%s", o.out);
	run_out_free(&o);
	canary_check(&c);
	cr_assert_eq(stat(ws, &st), 0, "the workspace is gone");
}

Test(fscli, mkdir_with_parents_and_mode)
{
	const char *ws = harness_workspace();
	struct canary c;
	struct run_out o;
	char script[9000], path[4200];
	struct stat st;

	canary_make(&c);
	snprintf(script, sizeof(script), "ln -s '%s' /work/cdir", c.dir);
	job(ws, script);

	RUN(&o, "mkdir", "--workspace", ws, "a/b/c");
	ASSERT_FS_ERROR(&o, "a/b/c", "not_found");
	run_out_free(&o);
	RUN(&o, "mkdir", "--workspace", ws, "--parents", "--mode", "0700",
	    "a/b/c");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	snprintf(path, sizeof(path), "%s/a/b/c", ws);
	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0700, "mode %o", st.st_mode & 07777);
	/* Owned by whoever the jobs run as: the job can use it. */
	cr_assert_eq(st.st_uid, harness_workspace_owner());
	job(ws, "touch /work/a/b/c/made-by-job");

	/* Existing: an error without --parents, success with. */
	RUN(&o, "mkdir", "--workspace", ws, "a/b");
	ASSERT_FS_ERROR(&o, "a/b", "exists");
	run_out_free(&o);
	RUN(&o, "mkdir", "--workspace", ws, "--parents", "a/b");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);

	/* The policy's mode_mask (0755 by default): no write for others,
	 * never setuid, setgid or sticky. */
	RUN(&o, "mkdir", "--workspace", ws, "--mode", "7777", "wide");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	snprintf(path, sizeof(path), "%s/wide", ws);
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0755, "mode %o", st.st_mode & 07777);

	/* Never through a planted link. */
	RUN(&o, "mkdir", "--workspace", ws, "cdir/x");
	ASSERT_FS_ERROR(&o, "cdir/x", "symlink_refused");
	run_out_free(&o);
	RUN(&o, "mkdir", "--workspace", ws, "--parents", "cdir/x/y");
	ASSERT_FS_ERROR(&o, "cdir/x/y", "symlink_refused");
	run_out_free(&o);
	canary_check(&c);

	RUN(&o, "mkdir", "--workspace", ws, "--mode", "8", "bad");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "mkdir", "--workspace", ws, "--mode", "010000", "bad");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	snprintf(path, sizeof(path), "%s/bad", ws);
	cr_assert_eq(lstat(path, &st), -1);
}

Test(fscli, mv_within_the_workspace)
{
	static const struct {
		const char *from, *to, *culprit, *error;
	} refused[] = {
	    {"g", "cdir/g", "cdir/g", "symlink_refused"},
	    {"cdir/canary", "stolen", "cdir/canary", "symlink_refused"},
	    {"none", "x", "none", "not_found"},
	    {"g", "nodir/x", "nodir/x", "not_found"},
	    {"g", "../x", "../x", "invalid_path"},
	};
	const char *ws = harness_workspace();
	struct canary c;
	struct run_out o;
	char script[9000];

	canary_make(&c);
	snprintf(script, sizeof(script),
	    "%s; ln -s '%s' /work/cdir; printf new > /work/g; "
	    "ln -s '%s' /work/canary",
	    tree_script, c.dir, c.path);
	make_tree(ws, script);

	RUN(&o, "mv", "--workspace", ws, "d/f", "f2");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "get", "--workspace", ws, "f2", "-");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_str_eq(o.out, "abc");
	run_out_free(&o);

	/* Not over an existing name without --overwrite. */
	RUN(&o, "mv", "--workspace", ws, "f2", "g");
	ASSERT_FS_ERROR(&o, "g", "exists");
	run_out_free(&o);
	RUN(&o, "mv", "--workspace", ws, "--overwrite", "f2", "g");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "get", "--workspace", ws, "g", "-");
	cr_assert_str_eq(o.out, "abc");
	run_out_free(&o);

	/* A link moves as a link. */
	RUN(&o, "mv", "--workspace", ws, "canary", "d/moved");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "stat", "--workspace", ws, "--json", "d/moved");
	cr_assert_not_null(o.json, "not JSON: %s", o.out);
	cr_assert_str_eq(str_field(o.json, "type"), "symlink");
	run_out_free(&o);

	/* Never into or out of a planted link; the message names the
	 * operand at fault. */
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		RUN(&o, "mv", "--workspace", ws, refused[i].from,
		    refused[i].to);
		ASSERT_FS_ERROR(&o, refused[i].culprit, refused[i].error);
		run_out_free(&o);
	}
	canary_check(&c);
	RUN(&o, "get", "--workspace", ws, "g", "-");
	cr_assert_str_eq(o.out, "abc");
	run_out_free(&o);
}

/*
 * The job makes big (1 MiB + 1 byte) and a with a second hard link b: the
 * pair never reaches the workspace (issue 26: both names unapplicable), so
 * the test plants it on the host, where the CLI must still meet it.
 */
static void
big_and_linked_pair(const char *ws)
{
	static const char *const pair[] = {"a", "b", NULL};

	job_leaves_out(ws,
	    "head -c 1048577 /dev/zero > /work/big; echo hi > /work/a; "
	    "ln /work/a /work/b",
	    2, pair);
	host_sh(ws, "echo hi > a; ln a b");
}

Test(fscli, quotas_from_the_policy)
{
	const char *ws = harness_workspace();
	const char *tmp = harness_tmpdir("stockade-fscli-");
	char pol[4200], hard[4200], big[4200], big_put[4300];
	struct run_out o;
	int fd;

	snprintf(pol, sizeof(pol), "%s/small.ini", tmp);
	harness_write_file(pol, "[files]\nmax_file_mb = 1\nmax_files = 4\n");
	snprintf(hard, sizeof(hard), "%s/hard.ini", tmp);
	harness_write_file(hard, "[files]\nallow_hardlinks = true\n");
	snprintf(big, sizeof(big), "%s/big", tmp);
	fd = open(big, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1024 * 1024 + 1), 0);
	close(fd);
	snprintf(big_put, sizeof(big_put), "%s:big3", big);

	/* One byte over max_file_mb, either way; nothing is left. */
	RUN(&o, "put", "--workspace", ws, "--policy", pol, big, "big");
	ASSERT_FS_ERROR(&o, "big", "too_large");
	run_out_free(&o);
	cr_assert_eq(count_entries(ws), 0);
	big_and_linked_pair(ws);
	RUN(&o, "get", "--workspace", ws, "--policy", pol, "big", "-");
	ASSERT_FS_ERROR(&o, "big", "too_large");
	cr_assert_eq(o.out_len, 0);
	run_out_free(&o);
	RUN(&o, "get", "--workspace", ws, "big", "-");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_eq(o.out_len, 1024 * 1024 + 1);
	run_out_free(&o);

	/* too_large and quota_exceeded name the limit in bytes and the key
	 * that raises it (issue 22). */
	RUN(&o, "put", "--workspace", ws, "--policy", pol, big, "big2");
	ASSERT_FS_ERROR(&o, "big2", "too_large");
	cr_assert_not_null(strstr(o.err, "per-file limit of 1048576 bytes"),
	    "%s", o.err);
	cr_assert_not_null(strstr(o.err, "max_file_mb"), "%s", o.err);
	run_out_free(&o);
	RUN(&o, "run", "--workspace", ws, "--policy", pol, "--put", big_put,
	    "--", "true");
	cr_assert_eq(o.status, 1, "%s", o.err);
	cr_assert_not_null(strstr(o.err,
			       "big3: too_large: the file is larger "
			       "than the per-file limit of 1048576 bytes"),
	    "%s", o.err);
	run_out_free(&o);

	/* A second hard link: refused unless the policy allows it. */
	RUN(&o, "get", "--workspace", ws, "a", "-");
	ASSERT_FS_ERROR(&o, "a", "hardlinked_file");
	run_out_free(&o);
	RUN(&o, "get", "--workspace", ws, "--policy", hard, "a", "-");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_str_eq(o.out, "hi\n");
	run_out_free(&o);

	/* max_files: the workspace holds 3 entries; one more, not two. */
	RUN(&o, "mkdir", "--workspace", ws, "--policy", pol, "d");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "put", "--workspace", ws, "--policy", pol, hard, "d/x");
	ASSERT_FS_ERROR(&o, "d/x", "quota_exceeded");
	run_out_free(&o);
	RUN(&o, "mkdir", "--workspace", ws, "--policy", pol, "e");
	ASSERT_FS_ERROR(&o, "e", "quota_exceeded");
	cr_assert_not_null(strstr(o.err, "([files] max_files)"), "%s", o.err);
	run_out_free(&o);
	cr_assert_eq(count_entries(ws), 4);
}

/*
 * put and run --put make a missing parent directory, as MCP's write_file
 * does (issue 22: "not_found" read as the host file), one component at a
 * time beneath the workspace: never through a symlink the job planted,
 * and a file where a parent must be is not_a_directory.
 */
Test(fscli, put_makes_missing_parents)
{
	const char *ws = harness_workspace();
	const char *tmp = harness_tmpdir("stockade-fscli-");
	struct canary c;
	char in[4096], spec[4200], script[4500];
	struct run_out o;
	struct stat st;

	canary_make(&c);
	snprintf(in, sizeof(in), "%s/in.txt", tmp);
	harness_write_file(in, "data\n");
	RUN(&o, "put", "--workspace", ws, in, "src/app/in.txt");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	snprintf(spec, sizeof(spec), "%s/src/app/in.txt", ws);
	cr_assert_eq(stat(spec, &st), 0);
	snprintf(spec, sizeof(spec), "%s:new/dir/in.txt", in);
	RUN(&o, "run", "--workspace", ws, "--put", spec, "--", "cat",
	    "/work/new/dir/in.txt", "/work/src/app/in.txt");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_str_eq(o.out, "data\ndata\n");
	run_out_free(&o);

	/* A file where a directory must be; a symlink the job planted. */
	snprintf(script, sizeof(script), "ln -s '%s' /work/link", c.dir);
	job(ws, script);
	RUN(&o, "put", "--workspace", ws, in, "src/app/in.txt/x");
	ASSERT_FS_ERROR(&o, "src/app/in.txt/x", "not_a_directory");
	run_out_free(&o);
	RUN(&o, "put", "--workspace", ws, in, "link/sub/x");
	ASSERT_FS_ERROR(&o, "link/sub/x", "symlink_refused");
	run_out_free(&o);
	snprintf(spec, sizeof(spec), "%s:link/sub/x", in);
	RUN(&o, "run", "--workspace", ws, "--put", spec, "--", "true");
	ASSERT_FS_ERROR(&o, "link/sub/x", "symlink_refused");
	run_out_free(&o);
	snprintf(spec, sizeof(spec), "%s/sub", c.dir);
	cr_assert_eq(lstat(spec, &st), -1,
	    "a directory made through the "
	    "symlink, outside the workspace");
	canary_check(&c);
}

Test(fscli, usage_errors)
{
	const char *ws = harness_workspace();
	struct run_out o;

	RUN(&o, "ls", "--workspace", ws, "--overwrite");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "ls", "--workspace", ws, "--limit", "0");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "ls", "--workspace", ws, "--limit", "-1");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "ls", "--workspace", ws, "a", "b");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "stat", "--workspace", ws);
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "rm", "--workspace", ws, "--parents", "x");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "mv", "--workspace", ws, "x");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "get", "--workspace", ws, "--recursive", "x", "-");
	cr_assert_eq(o.status, 2, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "mkdir", "x");
	cr_assert_eq(o.status, 2, "%s", o.err);
	cr_assert_not_null(strstr(o.err, "usage: stockade mkdir"), "%s", o.err);
	run_out_free(&o);
	RUN(&o, "ls", "--help");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_not_null(strstr(o.out, "usage: stockade ls"), "%s", o.out);
	run_out_free(&o);
	cr_assert_eq(count_entries(ws), 0);
}

/* The value of FIELD ("Seccomp:") in /proc/PID/status, or -1. */
static long
status_field(pid_t pid, const char *field)
{
	char path[64], *st, *p;
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((st = harness_read_file(path, NULL)) == NULL)
		return -1;
	if ((p = strstr(st, field)) != NULL)
		v = strtol(p + strlen(field), NULL, 10);
	free(st);
	return v;
}

Test(fscli, confined_before_it_reads)
{
	const char *ws = harness_workspace();
	const char *argv[] = {harness_stockade(), "put", "--workspace", ws, "-",
	    "in.txt", NULL};
	posix_spawn_file_actions_t fa;
	long deadline, filter = -1;
	int in[2], st;
	char path[4200];
	size_t len;
	char *got;
	pid_t pid;

	/* While `put` waits for its standard input, it is already under its
	 * seccomp filter (mode 2) with no_new_privs: confined before any
	 * byte from the workspace or the host moved (cmd_fs.c). */
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(posix_spawn_file_actions_init(&fa), 0);
	cr_assert_eq(posix_spawn_file_actions_adddup2(&fa, in[0], 0), 0);
	cr_assert_eq(posix_spawn(&pid, argv[0], &fa, NULL,
			 (char *const *)(uintptr_t)argv, environ),
	    0);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	deadline = harness_now_ms() + 10000;
	while (harness_now_ms() < deadline &&
	    (filter = status_field(pid, "\nSeccomp:")) != 2)
		usleep(10000);
	cr_assert_eq(status_field(pid, "\nNoNewPrivs:"), 1);
	cr_assert_eq(write(in[1], "piped\n", 6), 6);
	close(in[1]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(filter, 2, "Seccomp: %ld", filter);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x", st);
	snprintf(path, sizeof(path), "%s/in.txt", ws);
	got = harness_read_file(path, &len);
	cr_assert_not_null(got, "%s: %s", path, strerror(errno));
	cr_assert_str_eq(got, "piped\n");
	free(got);
}
