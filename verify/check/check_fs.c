/*
 * check_fs.c: the file_api checks of `stockade check` (check.h) for get,
 * and the helpers all file_api checks share (check_fs.h): the host file
 * API against a hostile workspace (docs/architecture.md, "The host file
 * API"; README.md, "Files in and out").
 *
 * Each check builds the workspace a hostile job would leave (symlinks to
 * a file or a directory outside, a symlinked parent, a FIFO, a socket, a
 * hard link to a file outside, files at and one byte over a quota) in a
 * fresh check_workspace directory, runs the real `stockade get` and
 * compares its exit status and the named error on standard error
 * (broker/fs/fserr.h) with what a sound stockade answers. Beside the
 * workspace lie a canary file and a directory with a copy of it: nothing
 * may read them (their content must never appear on standard output) or
 * change them.
 *
 * Every command has a short deadline (FSC_DEADLINE_MS): a get that
 * blocks on a FIFO costs seconds and is reported as hung.
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
#include "check_fs.h"
#include "fserr.h"

const char fsc_canary_text[] = "stockade-check canary: must never be "
			       "read or changed through the workspace\n";

const char fsc_small_policy[] = "[files]\nmax_file_mb = 1\n"
				"max_files = 3\n";

/* PATH (a file under the check's tmpdir) holds exactly the canary. */
bool
fsc_holds_canary(const char *path)
{
	char buf[sizeof(fsc_canary_text) + 16];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == (ssize_t)strlen(fsc_canary_text) &&
	    memcmp(buf, fsc_canary_text, (size_t)n) == 0;
}

/*
 * Sets up S for C: a fresh workspace (given to 65534 as root), the canary
 * and the directory outside, and the policy POLICY (NULL: the default).
 * Returns 0, or fails R and returns -1.
 */
int
fsc_scene_init(struct check_ctx *c, struct scene *s, const char *policy,
    struct check_result *r)
{
	char secret[4200];
	size_t clen = strlen(fsc_canary_text);
	int e;

	memset(s, 0, sizeof(*s));
	s->c = c;
	check_tmpname(c, "outside", s->out, sizeof(s->out));
	check_tmpname(c, "canary", s->canary, sizeof(s->canary));
	snprintf(secret, sizeof(secret), "%s/secret", s->out);
	if ((e = check_workspace(c, s->ws, sizeof(s->ws))) < 0 ||
	    (e = mkdir(s->out, 0755) < 0 ? -errno : 0) < 0 ||
	    (e = check_write_file(s->canary, fsc_canary_text, clen, false,
		 c->root)) < 0 ||
	    (e = check_write_file(secret, fsc_canary_text, clen, false,
		 c->root)) < 0)
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
char *
fsc_in_ws(const struct scene *s, const char *rel, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", s->ws, rel);
	return buf;
}

/* Gives PATH (not followed) to the job's ids when the check is root. */
int
fsc_own(const struct scene *s, const char *path)
{
	return s->c->root && lchown(path, 65534, 65534) < 0 ? -errno : 0;
}

/* Binds a unix socket at REL in S's workspace, through the directory's
 * descriptor (a long TMPDIR does not overflow sun_path). Returns 0 or a
 * negative errno. */
static int
bind_socket(const struct scene *s, const char *rel)
{
	struct sockaddr_un sa;
	int dfd, fd, e = 0;

	if ((dfd = open(s->ws, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		e = -errno;
		close(dfd);
		return e;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd,
	    rel);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		e = -errno;
	close(fd);
	close(dfd);
	return e;
}

bool
fsc_plant(const struct scene *s, struct check_result *r, enum fsc_kind kind,
    const char *rel, const char *arg, size_t len)
{
	static const char *const what[] = {
	    [FSC_FILE] = "a file",
	    [FSC_DIR] = "a directory",
	    [FSC_LINK] = "a symlink",
	    [FSC_FIFO] = "a FIFO",
	    [FSC_SOCKET] = "a unix socket",
	    [FSC_HARDLINK] = "a hard link",
	};
	char p[4400];
	int e = 0;

	fsc_in_ws(s, rel, p, sizeof(p));
	switch (kind) {
	case FSC_FILE:
		e = check_write_file(p, arg, len, true, s->c->root);
		break;
	case FSC_DIR:
		e = mkdir(p, 0755) < 0 ? -errno : fsc_own(s, p);
		break;
	case FSC_LINK:
		e = symlink(arg, p) < 0 ? -errno : fsc_own(s, p);
		break;
	case FSC_FIFO:
		e = mkfifo(p, 0644) < 0 ? -errno : fsc_own(s, p);
		break;
	case FSC_SOCKET:
		if ((e = bind_socket(s, rel)) == 0)
			e = fsc_own(s, p);
		break;
	case FSC_HARDLINK:
		e = link(arg, p) < 0 ? -errno : 0;
		break;
	}
	return !fsc_plant_failed(r, e, what[kind]);
}

/* Fails R for a planting step that went wrong (E < 0). Returns E < 0. */
bool
fsc_plant_failed(struct check_result *r, int e, const char *what)
{
	if (e < 0)
		check_fail(r, "cannot plant %s in the workspace: %s", what,
		    strerror(-e));
	return e < 0;
}

/* Copies IN into OUT (LEN bytes, truncated) for an observation, control
 * bytes as \xHH, so that a raw name cannot break the line. */
void
fsc_shown(const char *in, char *out, size_t len)
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
 * NULL-terminated) with FSC_DEADLINE_MS into P, and writes what was run (for
 * observations, escaped) into WHAT (WLEN bytes). Returns 0 or the
 * negative errno of a process that could not be started.
 */
int
fsc_cmd(const struct scene *s, struct check_proc *p, const char *cmd,
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
			o += (size_t)snprintf(raw + o, sizeof(raw) - o, " %s%s",
			    tmp ? "TMP" : "", tmp ? a + tl : a);
	}
	argv[n] = NULL;
	fsc_shown(raw, what, wlen);
	return check_exec(s->c, argv, NULL, NULL, 0, FSC_DEADLINE_MS, p);
}

/* The file error named on P's standard error ("stockade: PATH: NAME:
 * explanation"), or "" when none is. Static storage. */
const char *
fsc_named_error(const struct check_proc *p)
{
	char pat[64];

	for (int i = 1; i <= FS_ERROR_MAX; i++) {
		snprintf(pat, sizeof(pat),
		    ": %s: ", fs_error_name((enum fs_error)i));
		if (p->err != NULL && strstr(p->err, pat) != NULL)
			return fs_error_name((enum fs_error)i);
	}
	return "";
}

/* How P ended, for an observation: "exit 1, symlink_refused". */
const char *
fsc_outcome(const struct check_proc *p, char *buf, size_t len)
{
	const char *name = fsc_named_error(p);

	if (p->timed_out)
		snprintf(buf, len, "hung: killed after %lld ms",
		    (long long)p->elapsed_ms);
	else if (p->status < 0)
		snprintf(buf, len, "could not be started");
	else
		snprintf(buf, len, "exit %d%s%s, %zu bytes on stdout",
		    p->status, *name != '\0' ? ", " : "", name, p->outlen);
	return buf;
}

/* The first line of P's standard error that is not a warning, escaped
 * into BUF. Returns BUF. */
const char *
fsc_error_line(const struct check_proc *p, char *buf, size_t len)
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
	fsc_shown(line, buf, len);
	return buf;
}

/* Whether P's standard output holds the canary's text. */
static bool
leaked(const struct check_proc *p)
{
	return p->out != NULL &&
	    strstr(p->out, "stockade-check canary") != NULL;
}

/*
 * Runs the file command CMD ARGS and expects it refused with the named
 * error WANT (exit status 1), or, WANT NULL, exit status 0; either way
 * within the deadline and nothing of the canary on standard output.
 * Otherwise fails R with what was seen. KEEP (may be NULL) keeps what a
 * successful command gave (free it with check_proc_free when the call
 * returned true). Returns true when it was as expected.
 */
bool
fsc_expect(const struct scene *s, struct check_result *r, const char *want,
    const char *cmd, const char *const *args, struct check_proc *keep)
{
	struct check_proc p;
	char what[512], how[160], err[512];
	bool ok;

	if (fsc_cmd(s, &p, cmd, args, what, sizeof(what)) < 0) {
		check_fail(r, "%s: could not be started", what);
		check_proc_free(&p);
		return false;
	}
	ok = !p.timed_out && p.status == (want != NULL ? 1 : 0) &&
	    (want == NULL || strcmp(fsc_named_error(&p), want) == 0) &&
	    !leaked(&p);
	if (!ok)
		check_fail(r, "%s: %s%s (a sound stockade: exit %s%s)%s%s",
		    what, fsc_outcome(&p, how, sizeof(how)),
		    leaked(&p) ? ", the canary's content" : "",
		    want != NULL ? "1, " : "0", want != NULL ? want : "",
		    want != NULL ? "" : ": ",
		    want != NULL ? "" : fsc_error_line(&p, err, sizeof(err)));
	if (ok && want == NULL && keep != NULL)
		*keep = p;
	else
		check_proc_free(&p);
	return ok;
}

/* The canary and OUT/secret still hold the canary; else fails R. */
bool
fsc_outside_intact(const struct scene *s, struct check_result *r)
{
	char secret[4200];

	snprintf(secret, sizeof(secret), "%s/secret", s->out);
	if (!fsc_holds_canary(s->canary)) {
		check_fail(r,
		    "the canary file outside the workspace was "
		    "changed");
		return false;
	}
	if (!fsc_holds_canary(secret)) {
		check_fail(r,
		    "the file outside the workspace, in the "
		    "directory a symlink named, was changed");
		return false;
	}
	return true;
}

/* Whether NAME exists in the directory outside (lstat). */
bool
fsc_outside_has(const struct scene *s, const char *name)
{
	char p[4400];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", s->out, name);
	return lstat(p, &st) == 0;
}

/* ---- get -------------------------------------------------------------- */

/* file_api.get_symlink_to_outside_refused: report.txt, a symlink to a
 * file outside (absolute), and up.txt, one climbing out ("../canary-N"),
 * are refused as symlink_refused and nothing of the file is read
 * (CVE-2018-15664; tests/verify/eval/attacks/35-symlink-get-key.sh). */
static void
get_symlink_to_outside(struct check_ctx *c, struct check_result *r)
{
	struct scene s;
	char rel[4200];

	if (fsc_scene_init(c, &s, NULL, r) < 0)
		return;
	snprintf(rel, sizeof(rel), "..%s", strrchr(s.canary, '/'));
	if (!fsc_plant(&s, r, FSC_LINK, "report.txt", s.canary, 0) ||
	    !fsc_plant(&s, r, FSC_LINK, "up.txt", rel, 0))
		return;
	if (fsc_expect_refused(&s, r, "symlink_refused", "get",
		ARGS("report.txt", "-")) &&
	    fsc_expect_refused(&s, r, "symlink_refused", "get",
		ARGS("up.txt", "-")))
		check_pass(r,
		    "get report.txt (-> the canary outside) and "
		    "up.txt (-> ../canary): exit 1, symlink_refused, "
		    "nothing read");
}

/* file_api.get_symlinked_parent_refused: a symlink in the middle of the
 * path is refused as symlink_refused, whether it leads outside (logs ->
 * a directory outside) or stays inside (alias -> real): openat2(2)
 * RESOLVE_NO_SYMLINKS (CVE-2018-15664; tests/verify/eval/attacks/40-*). */
static void
get_symlinked_parent(struct check_ctx *c, struct check_result *r)
{
	struct scene s;

	if (fsc_scene_init(c, &s, NULL, r) < 0)
		return;
	if (!fsc_plant(&s, r, FSC_LINK, "logs", s.out, 0) ||
	    !fsc_plant(&s, r, FSC_DIR, "real", NULL, 0) ||
	    !fsc_plant(&s, r, FSC_FILE, "real/f", "inside\n", 7) ||
	    !fsc_plant(&s, r, FSC_LINK, "alias", "real", 0))
		return;
	if (fsc_expect_refused(&s, r, "symlink_refused", "get",
		ARGS("logs/secret", "-")) &&
	    fsc_expect_refused(&s, r, "symlink_refused", "stat",
		ARGS("logs/secret")) &&
	    fsc_expect_refused(&s, r, "symlink_refused", "get",
		ARGS("alias/f", "-")))
		check_pass(r,
		    "get and stat logs/secret (logs -> a directory "
		    "outside), get alias/f (alias -> real, inside): "
		    "exit 1, symlink_refused");
}

/* file_api.get_fifo_refused_without_hanging: a FIFO at the name is
 * not_regular_file at once; the read is opened O_PATH first (or
 * O_NONBLOCK), never blocking for a writer (fifo(7);
 * tests/verify/eval/attacks/37-fifo-get.sh). */
static void
get_fifo(struct check_ctx *c, struct check_result *r)
{
	struct scene s;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_FIFO, "data.csv", NULL, 0))
		return;
	if (fsc_expect_refused(&s, r, "not_regular_file", "get",
		ARGS("data.csv", "-")))
		check_pass(r,
		    "get data.csv (a FIFO with no writer): exit 1, "
		    "not_regular_file, without blocking");
}

/* file_api.get_socket_and_dir_refused: a unix socket is
 * not_regular_file, a directory is_a_directory: get serves regular files
 * only (docs/architecture.md, "Reading"). */
static void
get_socket_and_dir(struct check_ctx *c, struct check_result *r)
{
	struct scene s;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_SOCKET, "sock", NULL, 0) ||
	    !fsc_plant(&s, r, FSC_DIR, "dir", NULL, 0))
		return;
	if (fsc_expect_refused(&s, r, "not_regular_file", "get",
		ARGS("sock", "-")) &&
	    fsc_expect_refused(&s, r, "is_a_directory", "get",
		ARGS("dir", "-")))
		check_pass(r,
		    "get sock (a unix socket): not_regular_file; "
		    "get dir: is_a_directory; exit 1 both");
}

/* file_api.get_hardlink_refused: notes.txt, a hard link to the canary
 * outside the workspace, is hardlinked_file and nothing is read: no
 * symlink to refuse, the second link is the sign (README.md, "Files in
 * and out"; tests/verify/eval/attacks/38-hardlink-get.sh). */
static void
get_hardlink(struct check_ctx *c, struct check_result *r)
{
	struct scene s;

	if (fsc_scene_init(c, &s, NULL, r) < 0 ||
	    !fsc_plant(&s, r, FSC_HARDLINK, "notes.txt", s.canary, 0))
		return;
	if (fsc_expect_refused(&s, r, "hardlinked_file", "get",
		ARGS("notes.txt", "-")))
		check_pass(r,
		    "get notes.txt (a hard link to the canary "
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

	if (fsc_scene_init(c, &s, fsc_small_policy, r) < 0)
		return;
	if ((buf = malloc(FSC_MIB + 1)) == NULL) {
		check_fail(r, "out of memory");
		return;
	}
	memset(buf, 'g', FSC_MIB + 1);
	if (fsc_plant(&s, r, FSC_FILE, "exact.bin", buf, FSC_MIB) &&
	    fsc_plant(&s, r, FSC_FILE, "over.bin", buf, FSC_MIB + 1)) {
		fd = open(fsc_in_ws(&s, "sparse.bin", sparse, sizeof(sparse)),
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, 1LL << 30) < 0)
			e = -errno;
		if (fd >= 0)
			close(fd);
		if (e == 0)
			e = fsc_own(&s, sparse);
	} else {
		e = -1;
	}
	free(buf);
	if (e == -1 || fsc_plant_failed(r, e, "a sparse file"))
		return;
	/* Into a host file: check_exec gives the command a non-blocking
	 * standard output, which a 1 MiB copy would fill (EAGAIN). */
	check_tmpname(c, "got", got, sizeof(got));
	if (!fsc_expect_ok(&s, r, "get", ARGS("exact.bin", got), NULL))
		return;
	if (stat(got, &st) < 0 || st.st_size != FSC_MIB) {
		check_fail(r,
		    "get exact.bin (1 MiB, the limit): exit 0 but "
		    "the host file has %lld bytes, not 1048576",
		    stat(got, &st) < 0 ? -1LL : (long long)st.st_size);
		return;
	}
	check_tmpname(c, "got", got, sizeof(got));
	if (fsc_expect_refused(&s, r, "too_large", "get",
		ARGS("over.bin", got)) &&
	    fsc_expect_refused(&s, r, "too_large", "get",
		ARGS("sparse.bin", got))) {
		if (lstat(got, &st) == 0)
			check_fail(r,
			    "a refused get made the host file (%lld "
			    "bytes)",
			    (long long)st.st_size);
		else
			check_pass(r,
			    "max_file_mb = 1: get of 1 MiB served "
			    "whole; of 1 MiB + 1 and of a sparse 1 GiB: "
			    "exit 1, too_large, no host file");
	}
}

const struct check checks_fs[] = {
    {"file_api.get_symlink_to_outside_refused", "file_api",
	"get of a symlink to a file outside: exit 1, symlink_refused, "
	"nothing read",
	get_symlink_to_outside},
    {"file_api.get_symlinked_parent_refused", "file_api",
	"get/stat through a symlinked parent (outside or inside): exit 1, "
	"symlink_refused",
	get_symlinked_parent},
    {"file_api.get_fifo_refused_without_hanging", "file_api",
	"get of a FIFO: exit 1, not_regular_file, at once", get_fifo},
    {"file_api.get_socket_and_dir_refused", "file_api",
	"get of a unix socket: not_regular_file; of a directory: "
	"is_a_directory",
	get_socket_and_dir},
    {"file_api.get_hardlink_refused", "file_api",
	"get of a hard link to a file outside: exit 1, hardlinked_file",
	get_hardlink},
    {"file_api.get_size_limit_exact", "file_api",
	"max_file_mb = 1: 1 MiB served, 1 MiB + 1 and sparse 1 GiB "
	"too_large",
	get_size_limit},
    {NULL, NULL, NULL, NULL},
};
