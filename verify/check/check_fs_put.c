/*
 * check_fs_put.c: the file_api checks of `stockade check` (check.h,
 * check_fs.h) for put and the workspace's quotas: symlinked parents,
 * links and FIFOs at the target, a hard link to a file outside, a failed
 * put, and the limits max_file_mb, max_files and workspace_mb at their
 * exact boundary (docs/architecture.md, "Writing"; policy/default.ini).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "check_fs.h"

/* Whether the workspace holds a leftover temporary name of a put. */
static bool
ws_has_temporary(const struct scene *s)
{
	int dfd = open(s->ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (dfd < 0 || (d = fdopendir(dfd)) == NULL) {
		if (dfd >= 0)
			close(dfd);
		return false;
	}
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, ".stockade-tmp-", 14) == 0)
			found = true;
	closedir(d);
	return found;
}

/* ---- put -------------------------------------------------------------- */

/* file_api.put_symlinked_parent_refused: keys -> a directory outside;
 * put keys/authorized_keys (new) and keys/secret (--overwrite) are
 * symlink_refused and nothing appears or changes outside
 * (CVE-2018-15664; tests/verify/eval/attacks/39-symlink-dir-put.sh). */
static void
put_symlinked_parent(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char host[4096];

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_LINK, "keys", s.out, 0) ||
	    !fsc_host_file(c, r, host, sizeof(host), 40, 'k'))
		return;
	if (!fsc_expect_refused(&s, r, "symlink_refused", "put",
		ARGS(host, "keys/authorized_keys")) ||
	    !fsc_expect_refused(&s, r, "symlink_refused", "put",
		ARGS("--overwrite", host, "keys/secret")))
		return;
	if (fsc_outside_has(&s, "authorized_keys")) {
		check_fail(r,
		    "put keys/authorized_keys made authorized_keys "
		    "in the directory outside");
		return;
	}
	if (fsc_outside_intact(&s, r))
		check_pass(r,
		    "put keys/authorized_keys and --overwrite "
		    "keys/secret (keys -> outside): exit 1, "
		    "symlink_refused, nothing written outside");
}

/* file_api.put_replaces_symlink_not_target: out.txt -> the canary is
 * exists without --overwrite; with it the link itself is replaced by a
 * regular file and the canary is untouched; a FIFO at fifo.txt is
 * replaced too, never opened: data goes to an unnamed file linked or
 * renamed into place (docs/architecture.md, "Writing";
 * tests/verify/eval/attacks/36-symlink-put-userfiles.py). */
static void
put_replaces_symlink(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char host[4096];
	long long n, m;
	mode_t t, u;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_LINK, "out.txt", s.canary, 0) ||
	    !fsc_plant(&s, r, FSC_FIFO, "fifo.txt", NULL, 0) ||
	    !fsc_host_file(c, r, host, sizeof(host), 33, 'p'))
		return;
	if (!fsc_expect_refused(&s, r, "exists", "put",
		ARGS(host, "out.txt")) ||
	    !fsc_expect_ok(&s, r, "put", ARGS("--overwrite", host, "out.txt"),
		NULL) ||
	    !fsc_expect_ok(&s, r, "put", ARGS("--overwrite", host, "fifo.txt"),
		NULL) ||
	    !fsc_outside_intact(&s, r))
		return;
	n = fsc_ws_size(&s, "out.txt", &t);
	m = fsc_ws_size(&s, "fifo.txt", &u);
	if (t != S_IFREG || n != 33 || u != S_IFREG || m != 33)
		check_fail(r,
		    "after put --overwrite: out.txt type 0%o size "
		    "%lld, fifo.txt type 0%o size %lld (a sound "
		    "stockade: regular files of 33 bytes)",
		    (unsigned)t, n, (unsigned)u, m);
	else
		check_pass(r,
		    "put out.txt (-> the canary): exists; with "
		    "--overwrite the link and a FIFO are replaced by "
		    "33-byte files, canary intact");
}

/* file_api.put_keeps_hardlinked_outside_file: out.txt is a hard link to
 * the canary outside; put --overwrite gives out.txt the new data and
 * leaves the other link's content as it was: a new inode renamed over
 * the name, never written in place (docs/architecture.md, "Writing"). */
static void
put_over_hardlink(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char host[4096];
	long long n;
	mode_t t;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_HARDLINK, "out.txt", s.canary, 0) ||
	    !fsc_host_file(c, r, host, sizeof(host), 21, 'h'))
		return;
	if (!fsc_expect_ok(&s, r, "put", ARGS("--overwrite", host, "out.txt"),
		NULL))
		return;
	if (!fsc_holds_canary(s.canary)) {
		check_fail(r,
		    "put --overwrite out.txt (a hard link to the "
		    "canary) wrote the canary outside the workspace: "
		    "the file was written in place");
		return;
	}
	n = fsc_ws_size(&s, "out.txt", &t);
	if (t != S_IFREG || n != 21)
		check_fail(r,
		    "after put --overwrite out.txt: type 0%o size "
		    "%lld (a sound stockade: a 21-byte file)",
		    (unsigned)t, n);
	else
		check_pass(r,
		    "put --overwrite out.txt (hard link to the "
		    "canary): out.txt has the new 21 bytes, the "
		    "canary is unchanged");
}

/* file_api.failed_put_keeps_old_file: with max_file_mb = 1, put
 * --overwrite of 1 MiB + 1 bytes over data.bin is too_large and leaves
 * data.bin as it was and no temporary name: a failed transfer leaves no
 * partial file (docs/architecture.md, "Writing"). */
static void
failed_put_keeps_old(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char host[4096];
	long long n;
	mode_t t;

	if (fsc_scene_init(c, &s, fsc_small_policy, r) < 0 ||
	    !fsc_plant(&s, r, FSC_FILE, "data.bin", "old data\n", 9) ||
	    !fsc_host_file(c, r, host, sizeof(host), FSC_MIB + 1, 'n'))
		return;
	if (!fsc_expect_refused(&s, r, "too_large", "put",
		ARGS("--overwrite", host, "data.bin")))
		return;
	n = fsc_ws_size(&s, "data.bin", &t);
	if (t != S_IFREG || n != 9)
		check_fail(r,
		    "after the refused put, data.bin has type 0%o "
		    "size %lld (a sound stockade: the old 9 bytes)",
		    (unsigned)t, n);
	else if (ws_has_temporary(&s))
		check_fail(r,
		    "the refused put left a .stockade-tmp- name in "
		    "the workspace");
	else
		check_pass(r,
		    "put --overwrite of 1 MiB + 1 over data.bin: "
		    "exit 1, too_large; data.bin keeps its 9 bytes, no "
		    "temporary left");
}

/* file_api.put_size_limit_exact: with max_file_mb = 1, a put of exactly
 * 1 MiB is stored whole and one of 1 MiB + 1 is too_large with nothing
 * stored: at most limit + 1 bytes are read to tell the two apart
 * (fsapi.h, fsapi_write). */
static void
put_size_limit(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char exact[4096], over[4096];
	long long n;
	mode_t t;

	if (fsc_scene_init(c, &s, fsc_small_policy, r) < 0 ||
	    !fsc_host_file(c, r, exact, sizeof(exact), FSC_MIB, 'e') ||
	    !fsc_host_file(c, r, over, sizeof(over), FSC_MIB + 1, 'o'))
		return;
	if (!fsc_expect_ok(&s, r, "put", ARGS(exact, "exact.bin"), NULL))
		return;
	if ((n = fsc_ws_size(&s, "exact.bin", &t)) != FSC_MIB || t != S_IFREG) {
		check_fail(r, "put of 1 MiB (the limit) stored %lld bytes", n);
		return;
	}
	if (!fsc_expect_refused(&s, r, "too_large", "put",
		ARGS(over, "over.bin")))
		return;
	if ((n = fsc_ws_size(&s, "over.bin", &t)) >= 0)
		check_fail(r,
		    "the refused put of 1 MiB + 1 left over.bin "
		    "(%lld bytes)",
		    n);
	else
		check_pass(r,
		    "max_file_mb = 1: put of 1 MiB stored whole; of "
		    "1 MiB + 1: exit 1, too_large, nothing stored");
}

/* file_api.file_count_quota_exact: with max_files = 3 and two entries,
 * a third put is stored, a fourth put and a mkdir are quota_exceeded and
 * make nothing, an overwrite at the limit is allowed (policy/default.ini,
 * max_files). */
static void
file_count_quota(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char host[4096];
	mode_t t;

	if (fsc_scene_init(c, &s, fsc_small_policy, r) < 0 ||
	    !fsc_plant(&s, r, FSC_FILE, "a", "a\n", 2) ||
	    !fsc_plant(&s, r, FSC_FILE, "b", "b\n", 2) ||
	    !fsc_host_file(c, r, host, sizeof(host), 10, 'q'))
		return;
	if (!fsc_expect_ok(&s, r, "put", ARGS(host, "c"), NULL) ||
	    !fsc_expect_refused(&s, r, "quota_exceeded", "put",
		ARGS(host, "d")) ||
	    !fsc_expect_refused(&s, r, "quota_exceeded", "mkdir", ARGS("e")) ||
	    !fsc_expect_ok(&s, r, "put", ARGS("--overwrite", host, "a"), NULL))
		return;
	if (fsc_ws_size(&s, "d", &t) >= 0 || fsc_ws_size(&s, "e", &t) >= 0)
		check_fail(r, "a refused put or mkdir left its entry");
	else
		check_pass(r,
		    "max_files = 3: the 3rd entry stored, a 4th put "
		    "and mkdir: exit 1, quota_exceeded; overwrite at "
		    "the limit allowed");
}

/* file_api.workspace_quota_exact: with workspace_mb = 1, puts of 700
 * KiB and 324 KiB fill the workspace to exactly 1 MiB and are stored; a
 * put of one byte more is quota_exceeded and stores nothing; an
 * overwrite of the same size is allowed, the file it replaces freeing
 * its room: a file takes at most what the workspace has left
 * (policy/default.ini, workspace_mb; fsapi.h, fsapi_put). */
static void
workspace_quota(struct check_ctx *c, struct check_result *r)
{
	enum { A = 700 * 1024, B = FSC_MIB - A };
	struct scene s;
	char a[4096], b[4096], one[4096];
	mode_t t;

	if (fsc_scene_init(c, &s, "[files]\nworkspace_mb = 1\n", r) < 0 ||
	    !fsc_host_file(c, r, a, sizeof(a), A, 'a') ||
	    !fsc_host_file(c, r, b, sizeof(b), B, 'b') ||
	    !fsc_host_file(c, r, one, sizeof(one), 1, '1'))
		return;
	if (!fsc_expect_ok(&s, r, "put", ARGS(a, "a.bin"), NULL) ||
	    !fsc_expect_ok(&s, r, "put", ARGS(b, "b.bin"), NULL) ||
	    !fsc_expect_refused(&s, r, "quota_exceeded", "put",
		ARGS(one, "c.bin")) ||
	    !fsc_expect_ok(&s, r, "put", ARGS("--overwrite", b, "b.bin"), NULL))
		return;
	if (fsc_ws_size(&s, "c.bin", &t) >= 0)
		check_fail(r,
		    "the refused put left c.bin in the full "
		    "workspace");
	else
		check_pass(r,
		    "workspace_mb = 1: 700 KiB + 324 KiB stored "
		    "(exactly 1 MiB); 1 byte more: exit 1, "
		    "quota_exceeded; overwrite of the same size "
		    "allowed");
}

/* ---- run --put and --get ---------------------------------------------- */

/*
 * run_get_planted's verdict on the N = 5 entries of the result's
 * files.get (GETS, borrowed): entry I is refused with error WANT[I] and
 * HOST[I] not made, or (WANT[I] NULL) served as HOST[I]'s 5 bytes.
 * Returns true when all are; otherwise fails R naming NAME[I].
 */
static bool
gets_as_wanted(struct check_result *r, json_t *gets, const char *const name[5],
    const char *const want[5], char host[5][4096])
{
	for (size_t i = 0; i < 5; i++) {
		json_t *e = json_array_get(gets, i);
		const char *err = json_string_value(
		    json_object_get(e, "error"));
		struct stat st;

		if (e == NULL) {
			check_fail(r,
			    "the result has no files.get[%zu] for "
			    "%s",
			    i, name[i]);
			return false;
		}
		if (want[i] != NULL &&
		    (err == NULL || strcmp(err, want[i]) != 0)) {
			check_fail(r,
			    "--get %s: error %s (a sound stockade: "
			    "%s)",
			    name[i], err ? err : "null (served)", want[i]);
			return false;
		}
		if (want[i] != NULL && lstat(host[i], &st) == 0) {
			check_fail(r,
			    "--get %s was refused (%s) but the host "
			    "file was made",
			    name[i], err);
			return false;
		}
		if (want[i] == NULL &&
		    (err != NULL || lstat(host[i], &st) < 0 ||
			st.st_size != 5)) {
			check_fail(r, "--get ok.txt: error %s, host file %s",
			    err ? err : "null",
			    lstat(host[i], &st) < 0 ? "missing"
						    : "of another size");
			return false;
		}
	}
	return true;
}

/* A FIFO data.csv in S's workspace, owned as the workspace: a job's
 * FIFO is never written back (issue 26: a commit makes none), so the
 * host plants it, as another tool might. False with R failed. */
static bool
plant_fifo(const struct scene *s, struct check_result *r)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/data.csv", s->ws);
	if (stat(s->ws, &st) < 0 || mkfifo(path, 0644) < 0 ||
	    lchown(path, st.st_uid, st.st_gid) < 0) {
		check_fail(r, "cannot make a FIFO in the workspace: %s",
		    strerror(errno));
		return false;
	}
	return true;
}

/* file_api.run_get_refuses_job_planted: the job makes report.txt -> the
 * canary, logs -> real (inside), up -> a directory outside, and ok.txt,
 * beside a FIFO data.csv the host made (plant_fifo); `run --get` of each after the job gives
 * symlink_refused, not_regular_file (without blocking), symlink_refused,
 * symlink_refused, and ok.txt's 5 bytes; no host file is made for a
 * refused get, and a failed get turns the job's 0 into exit status 1
 * (README.md, "--put, --get"; CVE-2018-15664). */
static void
run_get_planted(struct check_ctx *c, struct check_result *r)
{
	static const char *const name[5] = {
	    "report.txt",
	    "data.csv",
	    "logs/f",
	    "up/secret",
	    "ok.txt",
	};
	static const char *const want[5] = {
	    "symlink_refused",
	    "not_regular_file",
	    "symlink_refused",
	    "symlink_refused",
	    NULL,
	};
	static const char script[] =
	    "ln -s \"$1\" report.txt && mkdir real && "
	    "echo x > real/f && ln -s real logs && ln -s \"$2\" up && "
	    "echo fine > ok.txt";
	char host[5][4096], arg[5][4200], why[512];
	const char *run_args[11];
	struct check_job j;
	struct scene s;
	json_t *gets;

	if (fsc_scene_init(c, &s, NULL, r) < 0 || !plant_fifo(&s, r))
		return;
	for (size_t i = 0; i < 5; i++) {
		check_tmpname(c, "got", host[i], sizeof(host[i]));
		if (snprintf(arg[i], sizeof(arg[i]), "%s:%s", name[i],
			host[i]) >= (int)sizeof(arg[i])) {
			check_fail(r, "the scratch path is too long");
			return;
		}
		run_args[2 * i] = "--get";
		run_args[2 * i + 1] = arg[i];
	}
	run_args[10] = NULL;
	if (fsc_run_job(&s, r,
		ARGS("/bin/sh", "-c", script, "sh", s.canary, s.out), run_args,
		&j) < 0)
		return;
	if (j.proc.timed_out) {
		check_fail(r,
		    "stockade run --get hung: killed after %lld ms "
		    "(the job's FIFO data.csv blocked the get?)",
		    (long long)j.proc.elapsed_ms);
		goto out;
	}
	if (strcmp(j.status, "ok") != 0) {
		check_fail(r, "the job that plants the files failed: %s",
		    fsc_job_line(&j, why, sizeof(why)));
		goto out;
	}
	gets = json_object_get(json_object_get(j.result, "files"), "get");
	if (!gets_as_wanted(r, gets, name, want, host))
		goto out;
	if (j.proc.status != 1)
		check_fail(r,
		    "stockade run exit %d after refused gets of an "
		    "ok job (a sound stockade: 1)",
		    j.proc.status);
	else if (fsc_outside_intact(&s, r))
		check_pass(r,
		    "--get of the job's report.txt -> canary, FIFO, "
		    "logs/f, up/secret: symlink_refused, "
		    "not_regular_file, symlink_refused x2; ok.txt "
		    "served; exit 1");
out:
	check_job_free(&j);
}

/* file_api.run_put_replaces_job_symlink: a first job leaves out.txt ->
 * the canary and keys -> a directory outside; the next `run --put
 * HOST:out.txt` replaces the link (the job reads the new data, the canary
 * is unchanged) and `run --put HOST:keys/authorized_keys` is
 * symlink_refused with exit status 1, nothing written outside (README.md,
 * "--put, --get"; tests/verify/eval/attacks/36-*, 39-*). */
static void
run_put_planted(struct check_ctx *c, struct check_result *r)
{
	static const char script[] =
	    "ln -s \"$1\" out.txt && ln -s \"$2\" keys";
	char host[4096], put1[4200], put2[4200], why[512];
	struct check_job j;
	struct scene s;
	long long n;
	mode_t t;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_host_file(c, r, host, sizeof(host), 17, 'r'))
		return;
	snprintf(put1, sizeof(put1), "%s:out.txt", host);
	snprintf(put2, sizeof(put2), "%s:keys/authorized_keys", host);
	if (fsc_run_job(&s, r,
		ARGS("/bin/sh", "-c", script, "sh", s.canary, s.out), NULL,
		&j) < 0)
		return;
	if (strcmp(j.status, "ok") != 0) {
		check_fail(r, "the job that plants the links failed: %s",
		    fsc_job_line(&j, why, sizeof(why)));
		check_job_free(&j);
		return;
	}
	check_job_free(&j);
	if (fsc_run_job(&s, r, ARGS("/bin/cat", "out.txt"), ARGS("--put", put1),
		&j) < 0)
		return;
	if (strcmp(j.status, "ok") != 0 || strlen(j.out) != 17 ||
	    strspn(j.out, "r") != 17) {
		check_fail(r,
		    "run --put HOST:out.txt (out.txt -> the canary) "
		    "-- cat out.txt: %s, %zu bytes read (a sound "
		    "stockade: ok, the 17 bytes put)",
		    fsc_job_line(&j, why, sizeof(why)), strlen(j.out));
		check_job_free(&j);
		return;
	}
	check_job_free(&j);
	if (!fsc_outside_intact(&s, r))
		return;
	if ((n = fsc_ws_size(&s, "out.txt", &t)) != 17 || t != S_IFREG) {
		check_fail(r, "after run --put, out.txt has type 0%o size %lld",
		    (unsigned)t, n);
		return;
	}
	if (fsc_run_job(&s, r, ARGS("/bin/true"), ARGS("--put", put2), &j) < 0)
		return;
	if (j.proc.timed_out || j.proc.status != 1 ||
	    strstr(j.proc.err, ": symlink_refused: ") == NULL)
		check_fail(r,
		    "run --put HOST:keys/authorized_keys (keys -> "
		    "outside): %s (a sound stockade: exit 1, "
		    "symlink_refused)",
		    fsc_job_line(&j, why, sizeof(why)));
	else if (fsc_outside_has(&s, "authorized_keys"))
		check_fail(r, "run --put made authorized_keys outside");
	else if (fsc_outside_intact(&s, r))
		check_pass(r,
		    "run --put over the job's out.txt -> canary "
		    "replaced the link, canary intact; --put "
		    "keys/authorized_keys (keys -> outside): exit 1, "
		    "symlink_refused");
	check_job_free(&j);
}

const struct check checks_fs_put[] = {
    {"file_api.put_symlinked_parent_refused", "file_api",
	"put through a symlinked parent: exit 1, symlink_refused, nothing "
	"outside",
	put_symlinked_parent},
    {"file_api.put_replaces_symlink_not_target", "file_api",
	"put --overwrite over a symlink or FIFO replaces the entry, target "
	"intact",
	put_replaces_symlink},
    {"file_api.put_keeps_hardlinked_outside_file", "file_api",
	"put --overwrite over a hard link to a file outside leaves that "
	"file unchanged",
	put_over_hardlink},
    {"file_api.failed_put_keeps_old_file", "file_api",
	"a put refused as too_large leaves the old file and no temporary",
	failed_put_keeps_old},
    {"file_api.put_size_limit_exact", "file_api",
	"max_file_mb = 1: put of 1 MiB stored, of 1 MiB + 1 too_large",
	put_size_limit},
    {"file_api.file_count_quota_exact", "file_api",
	"max_files = 3: 3rd entry stored, 4th put/mkdir quota_exceeded",
	file_count_quota},
    {"file_api.workspace_quota_exact", "file_api",
	"workspace_mb = 1: puts up to exactly 1 MiB stored, 1 byte more "
	"quota_exceeded",
	workspace_quota},
    {"file_api.run_get_refuses_job_planted", "file_api",
	"run --get of a job's symlink, FIFO, symlinked parents: refused, "
	"exit 1",
	run_get_planted},
    {"file_api.run_put_replaces_job_symlink", "file_api",
	"run --put over a job's symlink replaces it; into a symlinked dir: "
	"refused",
	run_put_planted},
    {NULL, NULL, NULL, NULL},
};
