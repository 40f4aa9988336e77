/*
 * test_fscli.c: `stockade put` and `stockade get` (broker/cmd_fs.c), run
 * as programs, against workspaces a real jailed job prepared.
 *
 * Registered twice in tests/meson.build, as the invoking user and as uid
 * 65534 (tests/harness.h).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

TestSuite(fscli, .init = harness_setup, .fini = harness_cleanup,
	  .timeout = 60);

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

Test(fscli, get_fifo_planted_by_job)
{
	const char *ws = harness_workspace();
	struct run_out o;

	RUN(&o, "run", "--workspace", ws, "--", "mkfifo", "/work/out.txt");
	cr_assert_eq(o.status, 0, "%s", o.err);
	run_out_free(&o);
	RUN(&o, "get", "--workspace", ws, "out.txt", "-");
	cr_assert_eq(o.status, 1, "%s", o.err);
	cr_assert_not_null(
		strstr(o.err, "stockade: out.txt: not_regular_file: "), "%s",
		o.err);
	cr_assert_lt(o.wall_ms, 1000, "took %ld ms", o.wall_ms);
	run_out_free(&o);
}
