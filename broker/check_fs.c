/*
 * check_fs.c: the file_api checks of `stockade check` (check.h): the host
 * file API against a hostile workspace (docs/architecture.md, "The host
 * file API"; README.md, "Files in and out").
 *
 * Each check builds the workspace a hostile job would leave (symlinks to
 * a file or a directory outside, a symlinked parent, a FIFO, a socket, a
 * hard link to a file outside, names with control bytes, files at and
 * one byte over a quota) in a fresh check_workspace directory, or has a
 * real job plant it, then runs the real commands (`stockade get`, `put`,
 * `ls`, `stat`, `rm`, `mkdir`, `mv`, `run --put/--get`) and compares
 * their exit status and the named error on standard error (shared/
 * fserr.h) with what a sound stockade answers. Beside the workspace lie a
 * canary file and a directory with a copy of it: nothing may read them
 * (their content must never appear on standard output) or change them.
 *
 * Every command has a short deadline (DEADLINE_MS): a get that blocks on
 * a FIFO costs seconds and is reported as hung.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "fserr.h"

#define DEADLINE_MS 3000	/* one file command or one small job */
#define MIB (1024 * 1024)

/* What the files outside the workspace hold; it must never be read. */
static const char canary_text[] = "stockade-check canary: must never be "
				  "read or changed through the workspace\n";

/* A policy with small quotas: max_file_mb and max_files. */
static const char small_policy[] = "[files]\nmax_file_mb = 1\n"
				   "max_files = 3\n";

/*
 * The scene of one check: a workspace, and beside it (never inside) a
 * canary file and a directory holding "secret", a copy of the canary.
 */
struct scene {
	struct check_ctx *c;
	char ws[4096];		/* the --workspace directory */
	char out[4096];		/* the directory outside */
	char canary[4096];	/* the canary file outside */
	char policy[4096];	/* a policy file, or "" for the default */
};

/* PATH (a file under the check's tmpdir) holds exactly the canary. */
static bool
holds_canary(const char *path)
{
	char buf[sizeof(canary_text) + 16];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == (ssize_t)strlen(canary_text) &&
	       memcmp(buf, canary_text, (size_t)n) == 0;
}

/*
 * Sets up S for C: a fresh workspace (given to 65534 as root), the canary
 * and the directory outside, and the policy POLICY (NULL: the default).
 * Returns 0, or fails R and returns -1.
 */
static int
scene_init(struct check_ctx *c, struct scene *s, const char *policy,
	   struct check_result *r)
{
	char secret[4200];
	int e;

	memset(s, 0, sizeof(*s));
	s->c = c;
	check_tmpname(c, "outside", s->out, sizeof(s->out));
	check_tmpname(c, "canary", s->canary, sizeof(s->canary));
	snprintf(secret, sizeof(secret), "%s/secret", s->out);
	if ((e = check_workspace(c, s->ws, sizeof(s->ws))) < 0 ||
	    (e = mkdir(s->out, 0755) < 0 ? -errno : 0) < 0 ||
	    (e = check_write_file(s->canary, canary_text,
				  strlen(canary_text), false, c->root)) < 0 ||
	    (e = check_write_file(secret, canary_text, strlen(canary_text),
				  false, c->root)) < 0)
		goto fail;
	if (policy != NULL) {
		check_tmpname(c, "policy", s->policy, sizeof(s->policy));
		if ((e = check_write_file(s->policy, policy, strlen(policy),
					  false, c->root)) < 0)
			goto fail;
	}
	return 0;
fail:
	check_fail(r, "cannot set the scene up under %s: %s", c->tmpdir,
		   strerror(-e));
	return -1;
}

/* The path of REL in S's workspace, in BUF. Returns BUF. */
static char *
in_ws(const struct scene *s, const char *rel, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", s->ws, rel);
	return buf;
}

/* Gives PATH (not followed) to the job's ids when the check is root. */
static int
own(const struct scene *s, const char *path)
{
	return s->c->root && lchown(path, 65534, 65534) < 0 ? -errno : 0;
}

/*
 * Plants what a hostile job would in S's workspace, each a negative errno
 * or 0: a symlink REL -> TARGET, a file REL with LEN bytes of DATA, a
 * directory, a FIFO, a unix socket, a hard link REL to the file SRC.
 */
static int
plant_link(const struct scene *s, const char *target, const char *rel)
{
	char p[4400];

	if (symlink(target, in_ws(s, rel, p, sizeof(p))) < 0)
		return -errno;
	return own(s, p);
}

static int
plant_file(const struct scene *s, const char *rel, const void *data,
	   size_t len)
{
	char p[4400];

	return check_write_file(in_ws(s, rel, p, sizeof(p)), data, len, true,
				s->c->root);
}

static int
plant_dir(const struct scene *s, const char *rel)
{
	char p[4400];

	if (mkdir(in_ws(s, rel, p, sizeof(p)), 0755) < 0)
		return -errno;
	return own(s, p);
}

static int
plant_fifo(const struct scene *s, const char *rel)
{
	char p[4400];

	if (mkfifo(in_ws(s, rel, p, sizeof(p)), 0644) < 0)
		return -errno;
	return own(s, p);
}

static int
plant_socket(const struct scene *s, const char *rel)
{
	struct sockaddr_un sa;
	char p[4400];
	int dfd, fd, e = 0;

	/* Bound through the directory's descriptor: a long TMPDIR does not
	 * overflow sun_path. */
	if ((dfd = open(s->ws, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		e = -errno;
		close(dfd);
		return e;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s",
		 dfd, rel);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		e = -errno;
	close(fd);
	close(dfd);
	return e < 0 ? e : own(s, in_ws(s, rel, p, sizeof(p)));
}

static int
plant_hardlink(const struct scene *s, const char *src, const char *rel)
{
	char p[4400];

	return link(src, in_ws(s, rel, p, sizeof(p))) < 0 ? -errno : 0;
}

/* Fails R for a planting step that went wrong (E < 0). Returns E < 0. */
static bool
plant_failed(struct check_result *r, int e, const char *what)
{
	if (e < 0)
		check_fail(r, "cannot plant %s in the workspace: %s", what,
			   strerror(-e));
	return e < 0;
}

/* Copies IN into OUT (LEN bytes, truncated) for an observation, control
 * bytes as \xHH, so that a raw name cannot break the line. */
static void
shown(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (; *in != '\0' && o + 5 < len; in++) {
		unsigned char ch = (unsigned char)*in;

		if (ch < 0x20 || ch == 0x7f)
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", ch);
		else
			out[o++] = (char)ch;
	}
	out[o] = '\0';
}

/*
 * Runs `STOCKADE CMD --workspace WS [--policy P] ARGS...` (ARGS
 * NULL-terminated) with DEADLINE_MS into P, and writes what was run (for
 * observations, escaped) into WHAT (WLEN bytes). Returns 0 or the
 * negative errno of a process that could not be started.
 */
static int
fs_cmd(const struct scene *s, struct check_proc *p, const char *cmd,
       const char *const *args, char *what, size_t wlen)
{
	const char *argv[32];
	char raw[1024];
	size_t n = 0, o;

	argv[n++] = s->c->stockade;
	argv[n++] = cmd;
	argv[n++] = "--workspace";
	argv[n++] = s->ws;
	if (s->policy[0] != '\0') {
		argv[n++] = "--policy";
		argv[n++] = s->policy;
	}
	o = (size_t)snprintf(raw, sizeof(raw), "%s", cmd);
	for (size_t i = 0; args[i] != NULL && n < 31; i++) {
		size_t tl = strlen(s->c->tmpdir);
		const char *a = args[i];
		bool tmp = strncmp(a, s->c->tmpdir, tl) == 0;

		argv[n++] = a;
		/* A scratch path is shown from the check's directory on. */
		if (o < sizeof(raw))
			o += (size_t)snprintf(raw + o, sizeof(raw) - o,
					      " %s%s", tmp ? "TMP" : "",
					      tmp ? a + tl : a);
	}
	argv[n] = NULL;
	shown(raw, what, wlen);
	return check_exec(s->c, argv, NULL, NULL, 0, DEADLINE_MS, p);
}

/* The file error named on P's standard error ("stockade: PATH: NAME:
 * explanation"), or "" when none is. Static storage. */
static const char *
named_error(const struct check_proc *p)
{
	char pat[64];

	for (int i = 1; i <= FS_ERROR_MAX; i++) {
		snprintf(pat, sizeof(pat), ": %s: ",
			 fs_error_name((enum fs_error)i));
		if (p->err != NULL && strstr(p->err, pat) != NULL)
			return fs_error_name((enum fs_error)i);
	}
	return "";
}

/* How P ended, for an observation: "exit 1, symlink_refused". */
static const char *
outcome(const struct check_proc *p, char *buf, size_t len)
{
	const char *name = named_error(p);

	if (p->timed_out)
		snprintf(buf, len, "hung: killed after %lld ms",
			 (long long)p->elapsed_ms);
	else if (p->status < 0)
		snprintf(buf, len, "could not be started");
	else
		snprintf(buf, len, "exit %d%s%s, %zu bytes on stdout",
			 p->status, *name != '\0' ? ", " : "", name,
			 p->outlen);
	return buf;
}

/* The first line of P's standard error that is not a warning (a planted
 * defect's build warns first), escaped into BUF. Returns BUF. */
static const char *
error_line(const struct check_proc *p, char *buf, size_t len)
{
	const char *l = p->err != NULL ? p->err : "";
	char line[400];
	size_t n;

	while (strncmp(l, "stockade: warning: ", 19) == 0 &&
	       strchr(l, '\n') != NULL)
		l = strchr(l, '\n') + 1;
	n = strcspn(l, "\n");
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	memcpy(line, l, n);
	line[n] = '\0';
	shown(line, buf, len);
	return buf;
}

/* Whether P's standard output holds the canary's text. */
static bool
leaked(const struct check_proc *p)
{
	return p->out != NULL && strstr(p->out, "stockade-check canary") !=
				      NULL;
}

/*
 * Runs the file command CMD ARGS (NULL-terminated) and expects it
 * refused with the named error WANT (exit status 1), nothing of the
 * canary on its standard output, within the deadline. Otherwise fails R
 * with what was seen. Returns true when it was as expected.
 */
static bool
expect_refused(const struct scene *s, struct check_result *r,
	       const char *want, const char *cmd, const char *const *args)
{
	struct check_proc p;
	char what[512], how[160];
	bool ok;

	if (fs_cmd(s, &p, cmd, args, what, sizeof(what)) < 0) {
		check_fail(r, "%s: could not be started", what);
		check_proc_free(&p);
		return false;
	}
	ok = !p.timed_out && p.status == 1 &&
	     strcmp(named_error(&p), want) == 0 && !leaked(&p);
	if (!ok)
		check_fail(r, "%s: %s%s (a sound stockade: exit 1, %s)", what,
			   outcome(&p, how, sizeof(how)),
			   leaked(&p) ? ", the canary's content" : "", want);
	check_proc_free(&p);
	return ok;
}

/*
 * Runs the file command CMD ARGS and expects exit status 0 within the
 * deadline; fails R otherwise. P (may be NULL) keeps what it gave (free
 * it with check_proc_free when the call returned true). Returns true when
 * it succeeded.
 */
static bool
expect_ok(const struct scene *s, struct check_result *r, const char *cmd,
	  const char *const *args, struct check_proc *keep)
{
	struct check_proc p;
	char what[512], how[160];
	bool ok;

	if (fs_cmd(s, &p, cmd, args, what, sizeof(what)) < 0) {
		check_fail(r, "%s: could not be started", what);
		check_proc_free(&p);
		return false;
	}
	ok = !p.timed_out && p.status == 0 && !leaked(&p);
	if (!ok) {
		char err[512];

		error_line(&p, err, sizeof(err));
		check_fail(r, "%s: %s%s (a sound stockade: exit 0): %s", what,
			   outcome(&p, how, sizeof(how)),
			   leaked(&p) ? ", the canary's content" : "", err);
	}
	if (ok && keep != NULL)
		*keep = p;
	else
		check_proc_free(&p);
	return ok;
}

/* The canary and OUT/secret still hold the canary; else fails R. */
static bool
outside_intact(const struct scene *s, struct check_result *r)
{
	char secret[4200];

	snprintf(secret, sizeof(secret), "%s/secret", s->out);
	if (!holds_canary(s->canary)) {
		check_fail(r, "the canary file outside the workspace was "
			   "changed");
		return false;
	}
	if (!holds_canary(secret)) {
		check_fail(r, "the file outside the workspace, in the "
			   "directory a symlink named, was changed");
		return false;
	}
	return true;
}

/* Whether NAME exists in the directory outside (lstat). */
static bool
outside_has(const struct scene *s, const char *name)
{
	char p[4400];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", s->out, name);
	return lstat(p, &st) == 0;
}

/* A host file (the invoking user's) with LEN bytes of FILL, at PATH. */
static int
host_file(struct check_ctx *c, char *path, size_t plen, size_t len,
	  int fill)
{
	char *buf = malloc(len + 1);
	int e;

	if (buf == NULL)
		return -ENOMEM;
	memset(buf, fill, len);
	check_tmpname(c, "host", path, plen);
	e = check_write_file(path, buf, len, false, c->root);
	free(buf);
	return e;
}

/* The size and type of REL in S's workspace (lstat); -1 size when it is
 * missing. */
static long long
ws_size(const struct scene *s, const char *rel, mode_t *type)
{
	char p[4400];
	struct stat st;

	if (lstat(in_ws(s, rel, p, sizeof(p)), &st) < 0) {
		*type = 0;
		return -1;
	}
	*type = st.st_mode & S_IFMT;
	return (long long)st.st_size;
}

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

/* A NULL-terminated argument list for fs_cmd. */
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- get -------------------------------------------------------------- */

/* file_api.get_symlink_to_outside_refused: report.txt, a symlink to a
 * file outside (absolute), and up.txt, one climbing out ("../canary-N"),
 * are refused as symlink_refused and nothing of the file is read
 * (CVE-2018-15664; tests/attacks/35-symlink-get-key.sh). */
static void
get_symlink_to_outside(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char rel[4200];

	if (scene_init(c, &s, NULL, r) < 0)
		return;
	snprintf(rel, sizeof(rel), "..%s", strrchr(s.canary, '/'));
	if (plant_failed(r, plant_link(&s, s.canary, "report.txt"),
			 "a symlink") ||
	    plant_failed(r, plant_link(&s, rel, "up.txt"), "a symlink"))
		return;
	if (expect_refused(&s, r, "symlink_refused", "get",
			   ARGS("report.txt", "-")) &&
	    expect_refused(&s, r, "symlink_refused", "get",
			   ARGS("up.txt", "-")))
		check_pass(r, "get report.txt (-> the canary outside) and "
			   "up.txt (-> ../canary): exit 1, symlink_refused, "
			   "nothing read");
}

/* file_api.get_symlinked_parent_refused: a symlink in the middle of the
 * path is refused as symlink_refused, whether it leads outside (logs ->
 * a directory outside) or stays inside (alias -> real): openat2(2)
 * RESOLVE_NO_SYMLINKS (CVE-2018-15664; tests/attacks/40-*). */
static void
get_symlinked_parent(struct check_ctx *c, struct check_result *r)
{
	struct scene s;

	if (scene_init(c, &s, NULL, r) < 0)
		return;
	if (plant_failed(r, plant_link(&s, s.out, "logs"), "a symlink") ||
	    plant_failed(r, plant_dir(&s, "real"), "a directory") ||
	    plant_failed(r, plant_file(&s, "real/f", "inside\n", 7),
			 "a file") ||
	    plant_failed(r, plant_link(&s, "real", "alias"), "a symlink"))
		return;
	if (expect_refused(&s, r, "symlink_refused", "get",
			   ARGS("logs/secret", "-")) &&
	    expect_refused(&s, r, "symlink_refused", "stat",
			   ARGS("logs/secret")) &&
	    expect_refused(&s, r, "symlink_refused", "get",
			   ARGS("alias/f", "-")))
		check_pass(r, "get and stat logs/secret (logs -> a directory "
			   "outside), get alias/f (alias -> real, inside): "
			   "exit 1, symlink_refused");
}

/* file_api.get_fifo_refused_without_hanging: a FIFO at the name is
 * not_regular_file at once; the read is opened O_PATH first (or
 * O_NONBLOCK), never blocking for a writer (fifo(7);
 * tests/attacks/37-fifo-get.sh). */
static void
get_fifo(struct check_ctx *c, struct check_result *r)
{
	struct scene s;

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_fifo(&s, "data.csv"), "a FIFO"))
		return;
	if (expect_refused(&s, r, "not_regular_file", "get",
			   ARGS("data.csv", "-")))
		check_pass(r, "get data.csv (a FIFO with no writer): exit 1, "
			   "not_regular_file, without blocking");
}

/* file_api.get_socket_and_dir_refused: a unix socket is
 * not_regular_file, a directory is_a_directory: get serves regular files
 * only (docs/architecture.md, "Reading"). */
static void
get_socket_and_dir(struct check_ctx *c, struct check_result *r)
{
	struct scene s;

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_socket(&s, "sock"), "a unix socket") ||
	    plant_failed(r, plant_dir(&s, "dir"), "a directory"))
		return;
	if (expect_refused(&s, r, "not_regular_file", "get",
			   ARGS("sock", "-")) &&
	    expect_refused(&s, r, "is_a_directory", "get", ARGS("dir", "-")))
		check_pass(r, "get sock (a unix socket): not_regular_file; "
			   "get dir: is_a_directory; exit 1 both");
}

/* file_api.get_hardlink_refused: notes.txt, a hard link to the canary
 * outside the workspace, is hardlinked_file and nothing is read: no
 * symlink to refuse, the second link is the sign (README.md, "Files in
 * and out"; tests/attacks/38-hardlink-get.sh). */
static void
get_hardlink(struct check_ctx *c, struct check_result *r)
{
	struct scene s;

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_hardlink(&s, s.canary, "notes.txt"),
			 "a hard link"))
		return;
	if (expect_refused(&s, r, "hardlinked_file", "get",
			   ARGS("notes.txt", "-")))
		check_pass(r, "get notes.txt (a hard link to the canary "
			   "outside): exit 1, hardlinked_file, nothing read");
}

/* file_api.get_size_limit_exact: with max_file_mb = 1, a file of exactly
 * 1 MiB is served whole, one of 1 MiB + 1 and a sparse 1 GiB one are
 * too_large with nothing served: decided on the descriptor before any
 * byte is read (README.md, "Files in and out"). */
static void
get_size_limit(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	struct stat st;
	char *buf = NULL;
	char sparse[4400], got[4096];
	int fd, e = 0;

	if (scene_init(c, &s, small_policy, r) < 0)
		return;
	if ((buf = malloc(MIB + 1)) == NULL) {
		check_fail(r, "out of memory");
		return;
	}
	memset(buf, 'g', MIB + 1);
	if ((e = plant_file(&s, "exact.bin", buf, MIB)) == 0)
		e = plant_file(&s, "over.bin", buf, MIB + 1);
	free(buf);
	if (e == 0) {
		fd = open(in_ws(&s, "sparse.bin", sparse, sizeof(sparse)),
			  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, 1LL << 30) < 0)
			e = -errno;
		if (fd >= 0)
			close(fd);
		if (e == 0)
			e = own(&s, sparse);
	}
	if (plant_failed(r, e, "the files"))
		return;
	/* Into a host file: check_exec gives the command a non-blocking
	 * standard output, which a 1 MiB copy would fill (EAGAIN). */
	check_tmpname(c, "got", got, sizeof(got));
	if (!expect_ok(&s, r, "get", ARGS("exact.bin", got), NULL))
		return;
	if (stat(got, &st) < 0 || st.st_size != MIB) {
		check_fail(r, "get exact.bin (1 MiB, the limit): exit 0 but "
			   "the host file has %lld bytes, not 1048576",
			   stat(got, &st) < 0 ? -1LL : (long long)st.st_size);
		return;
	}
	check_tmpname(c, "got", got, sizeof(got));
	if (expect_refused(&s, r, "too_large", "get",
			   ARGS("over.bin", got)) &&
	    expect_refused(&s, r, "too_large", "get",
			   ARGS("sparse.bin", got))) {
		if (lstat(got, &st) == 0)
			check_fail(r, "a refused get made the host file (%lld "
				   "bytes)", (long long)st.st_size);
		else
			check_pass(r, "max_file_mb = 1: get of 1 MiB served "
				   "whole; of 1 MiB + 1 and of a sparse 1 GiB: "
				   "exit 1, too_large, no host file");
	}
}

/* ---- put -------------------------------------------------------------- */

/* file_api.put_symlinked_parent_refused: keys -> a directory outside;
 * put keys/authorized_keys (new) and keys/secret (--overwrite) are
 * symlink_refused and nothing appears or changes outside
 * (CVE-2018-15664; tests/attacks/39-symlink-dir-put.sh). */
static void
put_symlinked_parent(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char host[4096];

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_link(&s, s.out, "keys"), "a symlink") ||
	    plant_failed(r, host_file(c, host, sizeof(host), 40, 'k'),
			 "the host file"))
		return;
	if (!expect_refused(&s, r, "symlink_refused", "put",
			    ARGS(host, "keys/authorized_keys")) ||
	    !expect_refused(&s, r, "symlink_refused", "put",
			    ARGS("--overwrite", host, "keys/secret")))
		return;
	if (outside_has(&s, "authorized_keys")) {
		check_fail(r, "put keys/authorized_keys made authorized_keys "
			   "in the directory outside");
		return;
	}
	if (outside_intact(&s, r))
		check_pass(r, "put keys/authorized_keys and --overwrite "
			   "keys/secret (keys -> outside): exit 1, "
			   "symlink_refused, nothing written outside");
}

/* file_api.put_replaces_symlink_not_target: out.txt -> the canary is
 * exists without --overwrite; with it the link itself is replaced by a
 * regular file and the canary is untouched; a FIFO at fifo.txt is
 * replaced too, never opened: data goes to an unnamed file linked or
 * renamed into place (docs/architecture.md, "Writing";
 * tests/attacks/36-symlink-put-userfiles.py). */
static void
put_replaces_symlink(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char host[4096];
	long long n, m;
	mode_t t, u;

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_link(&s, s.canary, "out.txt"),
			 "a symlink") ||
	    plant_failed(r, plant_fifo(&s, "fifo.txt"), "a FIFO") ||
	    plant_failed(r, host_file(c, host, sizeof(host), 33, 'p'),
			 "the host file"))
		return;
	if (!expect_refused(&s, r, "exists", "put", ARGS(host, "out.txt")) ||
	    !expect_ok(&s, r, "put", ARGS("--overwrite", host, "out.txt"),
		       NULL) ||
	    !expect_ok(&s, r, "put", ARGS("--overwrite", host, "fifo.txt"),
		       NULL) ||
	    !outside_intact(&s, r))
		return;
	n = ws_size(&s, "out.txt", &t);
	m = ws_size(&s, "fifo.txt", &u);
	if (t != S_IFREG || n != 33 || u != S_IFREG || m != 33)
		check_fail(r, "after put --overwrite: out.txt type 0%o size "
			   "%lld, fifo.txt type 0%o size %lld (a sound "
			   "stockade: regular files of 33 bytes)",
			   (unsigned)t, n, (unsigned)u, m);
	else
		check_pass(r, "put out.txt (-> the canary): exists; with "
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

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_hardlink(&s, s.canary, "out.txt"),
			 "a hard link") ||
	    plant_failed(r, host_file(c, host, sizeof(host), 21, 'h'),
			 "the host file"))
		return;
	if (!expect_ok(&s, r, "put", ARGS("--overwrite", host, "out.txt"),
		       NULL))
		return;
	if (!holds_canary(s.canary)) {
		check_fail(r, "put --overwrite out.txt (a hard link to the "
			   "canary) wrote the canary outside the workspace: "
			   "the file was written in place");
		return;
	}
	n = ws_size(&s, "out.txt", &t);
	if (t != S_IFREG || n != 21)
		check_fail(r, "after put --overwrite out.txt: type 0%o size "
			   "%lld (a sound stockade: a 21-byte file)",
			   (unsigned)t, n);
	else
		check_pass(r, "put --overwrite out.txt (hard link to the "
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

	if (scene_init(c, &s, small_policy, r) < 0 ||
	    plant_failed(r, plant_file(&s, "data.bin", "old data\n", 9),
			 "a file") ||
	    plant_failed(r, host_file(c, host, sizeof(host), MIB + 1, 'n'),
			 "the host file"))
		return;
	if (!expect_refused(&s, r, "too_large", "put",
			    ARGS("--overwrite", host, "data.bin")))
		return;
	n = ws_size(&s, "data.bin", &t);
	if (t != S_IFREG || n != 9)
		check_fail(r, "after the refused put, data.bin has type 0%o "
			   "size %lld (a sound stockade: the old 9 bytes)",
			   (unsigned)t, n);
	else if (ws_has_temporary(&s))
		check_fail(r, "the refused put left a .stockade-tmp- name in "
			   "the workspace");
	else
		check_pass(r, "put --overwrite of 1 MiB + 1 over data.bin: "
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

	if (scene_init(c, &s, small_policy, r) < 0 ||
	    plant_failed(r, host_file(c, exact, sizeof(exact), MIB, 'e'),
			 "the host file") ||
	    plant_failed(r, host_file(c, over, sizeof(over), MIB + 1, 'o'),
			 "the host file"))
		return;
	if (!expect_ok(&s, r, "put", ARGS(exact, "exact.bin"), NULL))
		return;
	if ((n = ws_size(&s, "exact.bin", &t)) != MIB || t != S_IFREG) {
		check_fail(r, "put of 1 MiB (the limit) stored %lld bytes",
			   n);
		return;
	}
	if (!expect_refused(&s, r, "too_large", "put",
			    ARGS(over, "over.bin")))
		return;
	if ((n = ws_size(&s, "over.bin", &t)) >= 0)
		check_fail(r, "the refused put of 1 MiB + 1 left over.bin "
			   "(%lld bytes)", n);
	else
		check_pass(r, "max_file_mb = 1: put of 1 MiB stored whole; of "
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

	if (scene_init(c, &s, small_policy, r) < 0 ||
	    plant_failed(r, plant_file(&s, "a", "a\n", 2), "a file") ||
	    plant_failed(r, plant_file(&s, "b", "b\n", 2), "a file") ||
	    plant_failed(r, host_file(c, host, sizeof(host), 10, 'q'),
			 "the host file"))
		return;
	if (!expect_ok(&s, r, "put", ARGS(host, "c"), NULL) ||
	    !expect_refused(&s, r, "quota_exceeded", "put", ARGS(host, "d")) ||
	    !expect_refused(&s, r, "quota_exceeded", "mkdir", ARGS("e")) ||
	    !expect_ok(&s, r, "put", ARGS("--overwrite", host, "a"), NULL))
		return;
	if (ws_size(&s, "d", &t) >= 0 || ws_size(&s, "e", &t) >= 0)
		check_fail(r, "a refused put or mkdir left its entry");
	else
		check_pass(r, "max_files = 3: the 3rd entry stored, a 4th put "
			   "and mkdir: exit 1, quota_exceeded; overwrite at "
			   "the limit allowed");
}

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

	if (fs_cmd(s, &p, cmd, ARGS(name), what, sizeof(what)) < 0) {
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
		check_fail(r, "%s: %s, stderr \"%s\"%s (a sound stockade: one "
			   "line \"%s...\")", what,
			   outcome(&p, how, sizeof(how)),
			   error_line(&p, line, sizeof(line)),
			   memchr(p.err, 0x1b, p.errlen) ? " with a raw ESC" :
							   "", want);
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
		"a\\nb", "c\\e[31md", "e\\xe2\\x80\\xaef",
	};
	struct check_proc p;
	struct scene s;

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_file(&s, "a\nb", "nl\n", 3), "a file") ||
	    plant_failed(r, plant_file(&s, "c\x1b[31md", "esc\n", 4),
			 "a file") ||
	    plant_failed(r, plant_file(&s, "e\xe2\x80\xae" "f", "rlo\n", 4),
			 "a file"))
		return;
	if (!expect_ok(&s, r, "ls", ARGS("."), &p))
		return;
	if (count_byte(p.out, p.outlen, '\n') != 3 ||
	    memchr(p.out, 0x1b, p.outlen) != NULL ||
	    strstr(p.out, "\xe2\x80\xae") != NULL) {
		check_fail(r, "ls printed %zu lines for 3 names (raw ESC: %s, "
			   "raw U+202E: %s)", count_byte(p.out, p.outlen, '\n'),
			   memchr(p.out, 0x1b, p.outlen) ? "yes" : "no",
			   strstr(p.out, "\xe2\x80\xae") ? "yes" : "no");
		check_proc_free(&p);
		return;
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(p.out, want[i]) == NULL) {
			check_fail(r, "ls does not show the name escaped as "
				   "%s", want[i]);
			check_proc_free(&p);
			return;
		}
	check_proc_free(&p);
	if (!expect_ok(&s, r, "get", ARGS("a\nb", "-"), &p))
		return;
	if (p.outlen != 3 || memcmp(p.out, "nl\n", 3) != 0) {
		check_fail(r, "get of the name with a newline gave %zu bytes, "
			   "not its 3", p.outlen);
		check_proc_free(&p);
		return;
	}
	check_proc_free(&p);
	if (!error_names(&s, r, "stat", "x\ny\x1b[2J", "x\\ny\\e[2J"))
		return;
	check_pass(r, "ls: 3 lines, names as a\\nb, c\\e[31md, "
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

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_link(&s, s.canary, "link"), "a symlink"))
		return;
	if (!expect_ok(&s, r, "stat", ARGS("--json", "link"), &p))
		return;
	o = json_loads(p.out, 0, NULL);
	type = json_string_value(json_object_get(o, "type"));
	size = (long long)json_integer_value(json_object_get(o, "size"));
	if (type == NULL)
		check_fail(r, "stat --json link printed no type");
	else if (strcmp(type, "symlink") != 0 ||
		 size != (long long)strlen(s.canary))
		check_fail(r, "stat link (-> the canary outside) says type "
			   "%s, size %lld: the file outside (a sound "
			   "stockade: symlink, %zu)", type, size,
			   strlen(s.canary));
	else
		check_pass(r, "stat link (-> the canary outside): type "
			   "symlink, size %lld, the link itself", size);
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

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_link(&s, s.canary, "link"), "a symlink") ||
	    plant_failed(r, plant_link(&s, s.out, "dlink"), "a symlink"))
		return;
	if (!expect_ok(&s, r, "ls", ARGS("--recursive", "--json", "."), &p))
		return;
	o = json_loads(p.out, 0, NULL);
	ents = json_object_get(o, "entries");
	json_array_foreach(ents, i, e) {
		const char *path = json_string_value(json_object_get(e,
								     "path"));
		const char *type = json_string_value(json_object_get(e,
								     "type"));

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
		check_fail(r, "ls --recursive --json did not list link and "
			   "dlink: %.200s", p.out);
	else if (strcmp(lt, "symlink") != 0 || strcmp(dt, "symlink") != 0 ||
		 below > 0)
		check_fail(r, "ls lists link as %s, dlink as %s, and %zu "
			   "entries beneath dlink (a sound stockade: symlink, "
			   "symlink, none)", lt, dt, below);
	else
		check_pass(r, "ls --recursive: link and dlink (-> outside) "
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

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_link(&s, s.canary, "link"), "a symlink") ||
	    plant_failed(r, plant_link(&s, s.out, "dlink"), "a symlink") ||
	    plant_failed(r, plant_dir(&s, "tree"), "a directory") ||
	    plant_failed(r, plant_file(&s, "tree/f", "f\n", 2), "a file") ||
	    plant_failed(r, plant_link(&s, s.out, "tree/up"), "a symlink"))
		return;
	if (!expect_ok(&s, r, "rm", ARGS("link"), NULL) ||
	    !expect_ok(&s, r, "rm", ARGS("--recursive", "dlink"), NULL) ||
	    !expect_ok(&s, r, "rm", ARGS("--recursive", "tree"), NULL) ||
	    !outside_intact(&s, r))
		return;
	if (ws_size(&s, "link", &t) >= 0 || ws_size(&s, "dlink", &u) >= 0 ||
	    ws_size(&s, "tree", &t) >= 0)
		check_fail(r, "rm exit 0 but a link or the tree is still "
			   "there");
	else
		check_pass(r, "rm link, rm --recursive dlink (-> outside) and "
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

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_link(&s, s.out, "d"), "a symlink") ||
	    plant_failed(r, plant_dir(&s, "real"), "a directory"))
		return;
	if (!expect_refused(&s, r, "symlink_refused", "mkdir",
			    ARGS("d/new")) ||
	    !expect_refused(&s, r, "symlink_refused", "mkdir",
			    ARGS("--parents", "d/new/x")) ||
	    !expect_ok(&s, r, "mkdir", ARGS("--parents", "real/sub/x"), NULL))
		return;
	if (outside_has(&s, "new"))
		check_fail(r, "mkdir through d made \"new\" in the directory "
			   "outside");
	else if (ws_size(&s, "real/sub/x", &t) < 0 || t != S_IFDIR)
		check_fail(r, "mkdir --parents real/sub/x exit 0 but made no "
			   "directory");
	else
		check_pass(r, "mkdir d/new and --parents d/new/x (d -> "
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

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_file(&s, "a.txt", "AAAA\n", 5), "a file") ||
	    plant_failed(r, plant_file(&s, "b.txt", "BB\n", 3), "a file") ||
	    plant_failed(r, plant_link(&s, s.out, "d"), "a symlink"))
		return;
	if (!expect_refused(&s, r, "exists", "mv", ARGS("a.txt", "b.txt")))
		return;
	if ((n = ws_size(&s, "b.txt", &t)) != 3 ||
	    ws_size(&s, "a.txt", &t) != 5) {
		check_fail(r, "after the refused mv a.txt b.txt, b.txt has "
			   "%lld bytes (a sound stockade: its own 3)", n);
		return;
	}
	if (!expect_refused(&s, r, "symlink_refused", "mv",
			    ARGS("a.txt", "d/a.txt")) ||
	    !expect_refused(&s, r, "symlink_refused", "mv",
			    ARGS("d/secret", "stolen")) ||
	    !outside_intact(&s, r))
		return;
	if (outside_has(&s, "a.txt") || ws_size(&s, "stolen", &t) >= 0)
		check_fail(r, "a refused mv through d moved a file");
	else
		check_pass(r, "mv a.txt b.txt: exists, b.txt kept; mv a.txt "
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

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, plant_dir(&s, "sub"), "a directory") ||
	    plant_failed(r, host_file(c, host, sizeof(host), 12, 'd'),
			 "the host file"))
		return;
	snprintf(up, sizeof(up), "..%s", strrchr(s.canary, '/'));
	snprintf(up2, sizeof(up2), "sub/../..%s", strrchr(s.canary, '/'));
	snprintf(esc, sizeof(esc), "%s-escaped", s.ws);
	snprintf(upput, sizeof(upput), "..%s-escaped", strrchr(s.ws, '/'));
	if (!expect_refused(&s, r, "invalid_path", "stat", ARGS(up)) ||
	    !expect_refused(&s, r, "invalid_path", "get", ARGS(up, "-")) ||
	    !expect_refused(&s, r, "invalid_path", "get", ARGS(up2, "-")) ||
	    !expect_refused(&s, r, "invalid_path", "get",
			    ARGS(s.canary, "-")) ||
	    !expect_refused(&s, r, "invalid_path", "put",
			    ARGS(host, upput)) ||
	    !outside_intact(&s, r))
		return;
	if (lstat(esc, &st) == 0)
		check_fail(r, "put ../NAME made a file beside the workspace");
	else
		check_pass(r, "stat/get ../canary, get sub/../../canary, get "
			   "/abs/canary, put ../x: exit 1, invalid_path, "
			   "nothing read or written");
}

/* ---- run --put and --get ---------------------------------------------- */

/* Runs the job ARGV in S's workspace with RUN_ARGS (no probe, the
 * default policy, DEADLINE_MS) into J. Returns 0 or fails R. */
static int
run_job(const struct scene *s, struct check_result *r,
	const char *const *argv, const char *const *run_args,
	struct check_job *j)
{
	struct check_job_opts o;

	memset(&o, 0, sizeof(o));
	o.argv = argv;
	o.run_args = run_args;
	o.workspace = s->ws;
	o.no_probe = true;
	o.deadline_ms = DEADLINE_MS;
	if (check_job_run(s->c, &o, j) < 0) {
		check_fail(r, "stockade run could not be started");
		check_job_free(j);
		return -1;
	}
	return 0;
}

/* How the job J ended, for an observation: "hung: ..." or "stockade
 * exit N, status S: <first error line>". Returns BUF. */
static const char *
job_line(const struct check_job *j, char *buf, size_t len)
{
	char line[400];

	if (j->proc.timed_out)
		snprintf(buf, len, "hung: killed after %lld ms",
			 (long long)j->proc.elapsed_ms);
	else
		snprintf(buf, len, "stockade exit %d, status \"%s\": %s",
			 j->proc.status, j->status,
			 error_line(&j->proc, line, sizeof(line)));
	return buf;
}

/* file_api.run_get_refuses_job_planted: the job makes report.txt -> the
 * canary, a FIFO data.csv, logs -> real (inside), up -> a directory
 * outside, and ok.txt; `run --get` of each after the job gives
 * symlink_refused, not_regular_file (without blocking), symlink_refused,
 * symlink_refused, and ok.txt's 5 bytes; no host file is made for a
 * refused get, and a failed get turns the job's 0 into exit status 1
 * (README.md, "--put, --get"; CVE-2018-15664). */
static void
run_get_planted(struct check_ctx *c, struct check_result *r)
{
	static const char *const name[5] = {
		"report.txt", "data.csv", "logs/f", "up/secret", "ok.txt",
	};
	static const char *const want[5] = {
		"symlink_refused", "not_regular_file", "symlink_refused",
		"symlink_refused", NULL,
	};
	static const char script[] =
		"ln -s \"$1\" report.txt && mkfifo data.csv && mkdir real && "
		"echo x > real/f && ln -s real logs && ln -s \"$2\" up && "
		"echo fine > ok.txt";
	char host[5][4096], arg[5][4200], why[512];
	const char *run_args[11];
	struct check_job j;
	struct scene s;
	json_t *gets;

	if (scene_init(c, &s, NULL, r) < 0)
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
	if (run_job(&s, r, ARGS("/bin/sh", "-c", script, "sh", s.canary,
				s.out), run_args, &j) < 0)
		return;
	if (j.proc.timed_out) {
		check_fail(r, "stockade run --get hung: killed after %lld ms "
			   "(the job's FIFO data.csv blocked the get?)",
			   (long long)j.proc.elapsed_ms);
		goto out;
	}
	if (strcmp(j.status, "ok") != 0) {
		check_fail(r, "the job that plants the files failed: %s",
			   job_line(&j, why, sizeof(why)));
		goto out;
	}
	gets = json_object_get(json_object_get(j.result, "files"), "get");
	for (size_t i = 0; i < 5; i++) {
		json_t *e = json_array_get(gets, i);
		const char *err = json_string_value(json_object_get(e,
								    "error"));
		struct stat st;

		if (e == NULL) {
			check_fail(r, "the result has no files.get[%zu] for "
				   "%s", i, name[i]);
			goto out;
		}
		if (want[i] != NULL && (err == NULL ||
					strcmp(err, want[i]) != 0)) {
			check_fail(r, "--get %s: error %s (a sound stockade: "
				   "%s)", name[i], err ? err : "null (served)",
				   want[i]);
			goto out;
		}
		if (want[i] != NULL && lstat(host[i], &st) == 0) {
			check_fail(r, "--get %s was refused (%s) but the host "
				   "file was made", name[i], err);
			goto out;
		}
		if (want[i] == NULL &&
		    (err != NULL || lstat(host[i], &st) < 0 ||
		     st.st_size != 5)) {
			check_fail(r, "--get ok.txt: error %s, host file %s",
				   err ? err : "null",
				   lstat(host[i], &st) < 0 ? "missing" :
							     "of another size");
			goto out;
		}
	}
	if (j.proc.status != 1)
		check_fail(r, "stockade run exit %d after refused gets of an "
			   "ok job (a sound stockade: 1)", j.proc.status);
	else if (outside_intact(&s, r))
		check_pass(r, "--get of the job's report.txt -> canary, FIFO, "
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
 * "--put, --get"; tests/attacks/36-*, 39-*). */
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

	if (scene_init(c, &s, NULL, r) < 0 ||
	    plant_failed(r, host_file(c, host, sizeof(host), 17, 'r'),
			 "the host file"))
		return;
	snprintf(put1, sizeof(put1), "%s:out.txt", host);
	snprintf(put2, sizeof(put2), "%s:keys/authorized_keys", host);
	if (run_job(&s, r, ARGS("/bin/sh", "-c", script, "sh", s.canary,
				s.out), NULL, &j) < 0)
		return;
	if (strcmp(j.status, "ok") != 0) {
		check_fail(r, "the job that plants the links failed: %s",
			   job_line(&j, why, sizeof(why)));
		check_job_free(&j);
		return;
	}
	check_job_free(&j);
	if (run_job(&s, r, ARGS("/bin/cat", "out.txt"),
		    ARGS("--put", put1), &j) < 0)
		return;
	if (strcmp(j.status, "ok") != 0 || strlen(j.out) != 17 ||
	    strspn(j.out, "r") != 17) {
		check_fail(r, "run --put HOST:out.txt (out.txt -> the canary) "
			   "-- cat out.txt: %s, %zu bytes read (a sound "
			   "stockade: ok, the 17 bytes put)",
			   job_line(&j, why, sizeof(why)),
			   strlen(j.out));
		check_job_free(&j);
		return;
	}
	check_job_free(&j);
	if (!outside_intact(&s, r))
		return;
	if ((n = ws_size(&s, "out.txt", &t)) != 17 || t != S_IFREG) {
		check_fail(r, "after run --put, out.txt has type 0%o size %lld",
			   (unsigned)t, n);
		return;
	}
	if (run_job(&s, r, ARGS("/bin/true"), ARGS("--put", put2), &j) < 0)
		return;
	if (j.proc.timed_out || j.proc.status != 1 ||
	    strstr(j.proc.err, ": symlink_refused: ") == NULL)
		check_fail(r, "run --put HOST:keys/authorized_keys (keys -> "
			   "outside): %s (a sound stockade: exit 1, "
			   "symlink_refused)",
			   job_line(&j, why, sizeof(why)));
	else if (outside_has(&s, "authorized_keys"))
		check_fail(r, "run --put made authorized_keys outside");
	else if (outside_intact(&s, r))
		check_pass(r, "run --put over the job's out.txt -> canary "
			   "replaced the link, canary intact; --put "
			   "keys/authorized_keys (keys -> outside): exit 1, "
			   "symlink_refused");
	check_job_free(&j);
}

const struct check checks_fs[] = {
	{"file_api.get_symlink_to_outside_refused", "file_api",
	 "get of a symlink to a file outside: exit 1, symlink_refused, "
	 "nothing read", get_symlink_to_outside},
	{"file_api.get_symlinked_parent_refused", "file_api",
	 "get/stat through a symlinked parent (outside or inside): exit 1, "
	 "symlink_refused", get_symlinked_parent},
	{"file_api.get_fifo_refused_without_hanging", "file_api",
	 "get of a FIFO: exit 1, not_regular_file, at once",
	 get_fifo},
	{"file_api.get_socket_and_dir_refused", "file_api",
	 "get of a unix socket: not_regular_file; of a directory: "
	 "is_a_directory", get_socket_and_dir},
	{"file_api.get_hardlink_refused", "file_api",
	 "get of a hard link to a file outside: exit 1, hardlinked_file",
	 get_hardlink},
	{"file_api.get_size_limit_exact", "file_api",
	 "max_file_mb = 1: 1 MiB served, 1 MiB + 1 and sparse 1 GiB "
	 "too_large", get_size_limit},
	{"file_api.put_symlinked_parent_refused", "file_api",
	 "put through a symlinked parent: exit 1, symlink_refused, nothing "
	 "outside", put_symlinked_parent},
	{"file_api.put_replaces_symlink_not_target", "file_api",
	 "put --overwrite over a symlink or FIFO replaces the entry, target "
	 "intact", put_replaces_symlink},
	{"file_api.put_keeps_hardlinked_outside_file", "file_api",
	 "put --overwrite over a hard link to a file outside leaves that "
	 "file unchanged", put_over_hardlink},
	{"file_api.failed_put_keeps_old_file", "file_api",
	 "a put refused as too_large leaves the old file and no temporary",
	 failed_put_keeps_old},
	{"file_api.put_size_limit_exact", "file_api",
	 "max_file_mb = 1: put of 1 MiB stored, of 1 MiB + 1 too_large",
	 put_size_limit},
	{"file_api.file_count_quota_exact", "file_api",
	 "max_files = 3: 3rd entry stored, 4th put/mkdir quota_exceeded",
	 file_count_quota},
	{"file_api.control_char_names_escaped", "file_api",
	 "names with a newline, ESC, U+202E: ls one line each, escaped",
	 control_names},
	{"file_api.stat_shows_symlink_not_target", "file_api",
	 "stat of a symlink to a file outside: type symlink, never the "
	 "target", stat_symlink},
	{"file_api.ls_shows_symlinks_as_links", "file_api",
	 "ls --recursive lists symlinks as symlink, never what they name",
	 ls_symlinks},
	{"file_api.rm_removes_link_not_target", "file_api",
	 "rm of a symlink to a file or directory outside: the link goes, "
	 "the target stays", rm_symlinks},
	{"file_api.mkdir_symlinked_parent_refused", "file_api",
	 "mkdir [--parents] through a symlinked parent: exit 1, "
	 "symlink_refused", mkdir_symlinked_parent},
	{"file_api.mv_refuses_taken_name_and_links", "file_api",
	 "mv onto a taken name: exists; through a symlinked parent: "
	 "symlink_refused", mv_cases},
	{"file_api.dotdot_and_absolute_invalid", "file_api",
	 "get/stat/put of ../x, a/../../x, /abs: exit 1, invalid_path",
	 dotdot_paths},
	{"file_api.run_get_refuses_job_planted", "file_api",
	 "run --get of a job's symlink, FIFO, symlinked parents: refused, "
	 "exit 1", run_get_planted},
	{"file_api.run_put_replaces_job_symlink", "file_api",
	 "run --put over a job's symlink replaces it; into a symlinked dir: "
	 "refused", run_put_planted},
	{NULL, NULL, NULL, NULL},
};
