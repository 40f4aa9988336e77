/*
 * test_rpc.c: the JSON-RPC dispatcher of `stockade serve` (broker/api/rpc.c,
 * docs/protocol.md) driven directly through rpc_handle on a fresh
 * workspace: every method's answer and named errors, the JSON-RPC 2.0
 * envelope (parse errors, invalid requests, unknown methods,
 * notifications), parameter checking, names that are not UTF-8, the
 * inline size limit and descriptors passed for bulk data. The exec tests
 * (and fs.changes after a job) start the real launcher found beside
 * STOCKADE_BIN; they skip visibly when it or user namespaces are missing,
 * and fail then under STOCKADE_MUST_WORK=1. The serve tests run
 * `stockade serve` itself (STOCKADE_BIN) for what only the transport
 * does: descriptors attached to their line, the 16 MiB bound, the socket
 * file's mode and removal. The run_files tests run `stockade run --put
 * --get` (cmd_run.c) the same way.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <resolv.h>
#include <sha2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fstest.h"
#include "fsutil.h"
#include "jobrun.h"
#include "policy.h"
#include "preflight.h"
#include "rpc.h"
#include "supervisor.h"

static struct policy pol;
static struct rpc_session sess;
static struct supervisor sup;
static bool have_sup;
static int next_id = 1;

static void
setup(void)
{
	char err[POLICY_ERR_MAX];

	fstest_setup("rpc", true);
	memset(&pol, 0, sizeof(pol));
	cr_assert_eq(policy_load_default(&pol, err, sizeof(err)), 0, "%s", err);
	rpc_session_init(&sess, root, &pol, NULL);
}

static void
teardown(void)
{
	rpc_session_free(&sess);
	if (have_sup)
		supervisor_free(&sup);
	have_sup = false;
	policy_clear(&pol);
	fstest_teardown();
}

TestSuite(rpc, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(rpc_exec, .init = setup, .fini = teardown, .timeout = 120);
TestSuite(serve, .init = setup, .fini = teardown, .timeout = 120);
TestSuite(run_files, .init = setup, .fini = teardown, .timeout = 120);

/* ---- helpers ---- */

/* Hands LINE to rpc_handle with copies of FDS (rpc_handle closes what it
 * is given); returns the parsed response, or NULL when there was none.
 * Every response must be one line of JSON. */
static json_t *
handle_fds(const char *line, size_t len, const int *fds, size_t nfds)
{
	int copies[32];
	char *resp = NULL;
	json_error_t jerr;
	json_t *j;

	cr_assert_leq(nfds, 32);
	for (size_t i = 0; i < nfds; i++) {
		copies[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
		cr_assert_geq(copies[i], 0);
	}
	cr_assert_eq(rpc_handle(&sess, line, len, copies, nfds, &resp), 0);
	for (size_t i = 0; i < nfds; i++)
		cr_assert_eq(fcntl(copies[i], F_GETFD), -1,
		    "descriptor %zu was not closed", i);
	if (resp == NULL)
		return NULL;
	cr_assert_null(strchr(resp, '\n'), "raw newline in %s", resp);
	j = json_loads(resp, 0, &jerr);
	cr_assert_not_null(j, "not JSON: %s", resp);
	cr_assert_str_eq(json_string_value(json_object_get(j, "jsonrpc")),
	    "2.0");
	free(resp);
	return j;
}

static json_t *
handle(const char *line)
{
	return handle_fds(line, strlen(line), NULL, 0);
}

/* A request for METHOD with PARAMS (stolen; NULL: none) and a fresh id;
 * asserts that the response carries that id. */
static json_t *
call_fds(const char *method, json_t *params, const int *fds, size_t nfds)
{
	int id = next_id++;
	json_t *req = json_pack("{s:s,s:i,s:s}", "jsonrpc", "2.0", "id", id,
	    "method", method);
	char *line;
	json_t *resp;

	cr_assert_not_null(req);
	if (params != NULL)
		json_object_set_new(req, "params", params);
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	resp = handle_fds(line, strlen(line), fds, nfds);
	free(line);
	cr_assert_not_null(resp, "no response to %s", method);
	cr_assert_eq(json_integer_value(json_object_get(resp, "id")), id);
	return resp;
}

static json_t *
call(const char *method, json_t *params)
{
	return call_fds(method, params, NULL, 0);
}

/* The result of RESP (borrowed from it); fails on an error. */
static json_t *
result_of(json_t *resp)
{
	json_t *r = json_object_get(resp, "result");
	char *s = json_dumps(resp, JSON_COMPACT);

	cr_assert_not_null(r, "expected a result, got %s", s);
	cr_assert_null(json_object_get(resp, "error"));
	free(s);
	return r;
}

/* The error of RESP (borrowed), asserting its code. */
static json_t *
error_of(json_t *resp, int code)
{
	json_t *e = json_object_get(resp, "error");
	char *s = json_dumps(resp, JSON_COMPACT);

	cr_assert_not_null(e, "expected error %d, got %s", code, s);
	cr_assert_null(json_object_get(resp, "result"));
	cr_assert_eq(json_integer_value(json_object_get(e, "code")), code,
	    "expected error %d, got %s", code, s);
	cr_assert(json_is_string(json_object_get(e, "message")));
	free(s);
	return e;
}

/* Asserts RESP is the file API error NAME; returns its data. */
static json_t *
fs_error_of(json_t *resp, const char *name)
{
	json_t *d = json_object_get(error_of(resp, RPC_FILE_ERROR), "data");

	cr_assert_str_eq(json_string_value(json_object_get(d, "error")), name);
	cr_assert(json_is_string(json_object_get(d, "path")));
	cr_assert(strncmp(json_string_value(
			      json_object_get(json_object_get(resp, "error"),
				  "message")),
		      name, strlen(name)) == 0);
	return d;
}

/* Asserts RESP is -32602 naming PARAM. */
static void
param_error(json_t *resp, const char *param)
{
	json_t *d = json_object_get(error_of(resp, RPC_INVALID_PARAMS), "data");

	cr_assert_str_eq(json_string_value(json_object_get(d, "param")), param);
}

/* The content of PATH in the workspace (NUL-terminated), or NULL. */
static char *
slurp(const char *path, size_t *len)
{
	char *buf = malloc(1 << 16);
	ssize_t n;
	int fd = openat(root, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	cr_assert_not_null(buf);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	n = read(fd, buf, (1 << 16) - 1);
	close(fd);
	cr_assert_geq(n, 0);
	buf[n] = '\0';
	if (len != NULL)
		*len = (size_t)n;
	return buf;
}

/* Writes TEXT to the host file PATH (created or truncated). */
static void
host_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write_all(fd, text, strlen(text)), 0);
	close(fd);
}

/* The host file PATH's content (NUL-terminated), or NULL. */
static char *
host_read(const char *path)
{
	char *buf = calloc(1, 1 << 16);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	cr_assert_not_null(buf);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	cr_assert_geq(read(fd, buf, (1 << 16) - 1), 0);
	close(fd);
	return buf;
}

static char *
b64(const void *data, size_t len)
{
	char *out = malloc(len / 3 * 4 + 8);

	cr_assert_not_null(out);
	cr_assert_geq(b64_ntop(data, len, out, len / 3 * 4 + 8), 0);
	return out;
}

/* Decodes the base64 string S; *LEN gets the length. */
static unsigned char *
unb64(const char *s, size_t *len)
{
	unsigned char *out = malloc(strlen(s) + 1);
	int n;

	cr_assert_not_null(out);
	n = b64_pton(s, out, strlen(s) + 1);
	cr_assert_geq(n, 0, "not base64: %s", s);
	*len = (size_t)n;
	return out;
}

static int
pipe_with(const char *text)
{
	int p[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(write_all(p[1], text, strlen(text)), 0);
	close(p[1]);
	return p[0];
}

/* ---- fs.write and fs.read ---- */

Test(rpc, write_text_then_read_inline)
{
	json_t *r = call("fs.write",
	    json_pack("{s:s,s:s}", "path", "hello.py", "text",
		"print('hi')\n"));
	json_t *res = result_of(r);
	_cleanup_free_ char *content = slurp("hello.py", NULL);
	_cleanup_free_ unsigned char *data = NULL;
	size_t len;

	cr_assert_str_eq(json_string_value(json_object_get(res, "path")),
	    "hello.py");
	cr_assert_eq(json_integer_value(json_object_get(res, "size")), 12);
	cr_assert_str_eq(content, "print('hi')\n");
	json_decref(r);

	r = call("fs.read", json_pack("{s:s}", "path", "hello.py"));
	res = result_of(r);
	cr_assert_eq(json_integer_value(json_object_get(res, "size")), 12);
	data = unb64(json_string_value(json_object_get(res, "data")), &len);
	cr_assert_eq(len, 12);
	cr_assert_eq(memcmp(data, "print('hi')\n", 12), 0);
	json_decref(r);
}

Test(rpc, write_base64_data_and_mode)
{
	struct stat st;
	json_t *r = call("fs.write",
	    json_pack("{s:s,s:s,s:i}", "path", "d.bin", "data",
		"AP8KaGk=", "mode", 0600));
	_cleanup_free_ char *content = NULL;
	size_t len;

	result_of(r);
	json_decref(r);
	content = slurp("d.bin", &len);
	cr_assert_eq(len, 5);
	cr_assert_eq(memcmp(content, "\0\xff\nhi", 5), 0);
	cr_assert_eq(fstatat(root, "d.bin", &st, 0), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);

	/* setuid and world-write bits are masked by the policy (0755). */
	r = call("fs.write",
	    json_pack("{s:s,s:s,s:i}", "path", "s.bin", "text", "x", "mode",
		04777));
	result_of(r);
	json_decref(r);
	cr_assert_eq(fstatat(root, "s.bin", &st, 0), 0);
	cr_assert_eq(st.st_mode & 07777, 0755);
}

Test(rpc, write_exists_then_overwrite)
{
	json_t *r;
	_cleanup_free_ char *content = NULL;

	fstest_mkfile("f", "old");
	r = call("fs.write",
	    json_pack("{s:s,s:s}", "path", "f", "text", "new"));
	fs_error_of(r, "exists");
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s,s:b}", "path", "f", "text", "new", "overwrite",
		1));
	result_of(r);
	json_decref(r);
	content = slurp("f", NULL);
	cr_assert_str_eq(content, "new");
}

Test(rpc, write_never_through_a_planted_symlink)
{
	char target[160];
	struct stat st;
	json_t *r;

	snprintf(target, sizeof(target), "%s", canary);
	cr_assert_eq(symlinkat(target, root, "out.txt"), 0);
	r = call("fs.write",
	    json_pack("{s:s,s:s}", "path", "out.txt", "text", "pwned"));
	fs_error_of(r, "exists");
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s,s:b}", "path", "out.txt", "text", "pwned",
		"overwrite", 1));
	result_of(r);
	json_decref(r);
	cr_assert_eq(fstatat(root, "out.txt", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISREG(st.st_mode));
	fstest_assert_canary_intact();
}

Test(rpc, read_named_errors)
{
	json_t *r;
	char link[160];

	cr_assert_eq(mkfifoat(root, "fifo", 0644), 0);
	snprintf(link, sizeof(link), "%s", outside);
	cr_assert_eq(symlinkat(link, root, "out"), 0);
	cr_assert_eq(symlinkat(canary, root, "canary"), 0);
	fstest_mkfile("a", "x");
	cr_assert_eq(linkat(root, "a", root, "a2", 0), 0);

	r = call("fs.read", json_pack("{s:s}", "path", "missing"));
	fs_error_of(r, "not_found");
	json_decref(r);
	r = call("fs.read", json_pack("{s:s}", "path", "fifo"));
	fs_error_of(r, "not_regular_file");
	json_decref(r);
	r = call("fs.read", json_pack("{s:s}", "path", "out/canary"));
	fs_error_of(r, "symlink_refused");
	json_decref(r);
	r = call("fs.read", json_pack("{s:s}", "path", "canary"));
	fs_error_of(r, "symlink_refused");
	json_decref(r);
	r = call("fs.read", json_pack("{s:s}", "path", "a2"));
	fs_error_of(r, "hardlinked_file");
	json_decref(r);
	r = call("fs.read", json_pack("{s:s}", "path", "../etc/passwd"));
	fs_error_of(r, "invalid_path");
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(r, "error"), "data"), "path")),
	    "../etc/passwd");
	json_decref(r);
	r = call("fs.read", json_pack("{s:s}", "path", "/etc/passwd"));
	fs_error_of(r, "invalid_path");
	json_decref(r);
	r = call("fs.read", json_pack("{s:s}", "path", "."));
	cr_assert_not_null(json_object_get(r, "error"));
	json_decref(r);
	fstest_assert_canary_intact();
}

Test(rpc, read_offset_and_length)
{
	json_t *r;
	_cleanup_free_ unsigned char *data = NULL;
	size_t len;

	fstest_mkfile("f", "0123456789");
	r = call("fs.read",
	    json_pack("{s:s,s:i,s:i}", "path", "f", "offset", 3, "length", 4));
	data = unb64(json_string_value(json_object_get(result_of(r), "data")),
	    &len);
	cr_assert_eq(len, 4);
	cr_assert_eq(memcmp(data, "3456", 4), 0);
	json_decref(r);
	r = call("fs.read", json_pack("{s:s,s:i}", "path", "f", "offset", -1));
	param_error(r, "offset");
	json_decref(r);
}

/* ---- inline limit ---- */

Test(rpc, inline_size_limit)
{
	static const char sixteen[] = "0123456789abcdef";
	_cleanup_free_ char *enc16 = b64(sixteen, 16), *enc17 = NULL;
	char seventeen[18];
	json_t *r, *d;

	sess.fs.quota.inline_bytes = 16;
	memcpy(seventeen, sixteen, 16);
	seventeen[16] = 'X';
	seventeen[17] = '\0';
	enc17 = b64(seventeen, 17);

	r = call("fs.write",
	    json_pack("{s:s,s:s}", "path", "ok", "data", enc16));
	result_of(r);
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s}", "path", "big", "data", enc17));
	fs_error_of(r, "too_large");
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s}", "path", "big", "text", seventeen));
	fs_error_of(r, "too_large");
	json_decref(r);
	cr_assert_eq(faccessat(root, "big", F_OK, AT_SYMLINK_NOFOLLOW), -1);

	fstest_mkfile("big", seventeen);
	r = call("fs.read", json_pack("{s:s}", "path", "ok"));
	result_of(r);
	json_decref(r);
	r = call("fs.read", json_pack("{s:s}", "path", "big"));
	d = fs_error_of(r, "too_large");
	cr_assert_str_eq(json_string_value(json_object_get(d, "path")), "big");
	json_decref(r);
	/* A range within the limit is fine. */
	r = call("fs.read",
	    json_pack("{s:s,s:i,s:i}", "path", "big", "offset", 1, "length",
		16));
	cr_assert_eq(json_integer_value(json_object_get(result_of(r), "size")),
	    16);
	json_decref(r);
}

/* ---- descriptors ---- */

Test(rpc, write_from_a_pipe_and_a_file)
{
	int p[2], fd;
	json_t *r;
	_cleanup_free_ char *content = NULL;
	char path[160];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(write_all(p[1], "through a pipe\n", 15), 0);
	close(p[1]);
	r = call_fds("fs.write",
	    json_pack("{s:s,s:i}", "path", "piped", "fd", 0), &p[0], 1);
	cr_assert_eq(json_integer_value(json_object_get(result_of(r), "size")),
	    15);
	json_decref(r);
	close(p[0]);
	content = slurp("piped", NULL);
	cr_assert_str_eq(content, "through a pipe\n");
	free(content);

	/* A regular file: from its current offset to its end; the second
	 * descriptor is named, the first is closed unused. */
	snprintf(path, sizeof(path), "%s/src", outside);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write_all(fd, "skip:payload", 12), 0);
	cr_assert_eq(lseek(fd, 5, SEEK_SET), 5);
	{
		int two[2] = {0, fd};

		r = call_fds("fs.write",
		    json_pack("{s:s,s:i}", "path", "filed", "fd", 1), two, 2);
	}
	cr_assert_eq(json_integer_value(json_object_get(result_of(r), "size")),
	    7);
	json_decref(r);
	close(fd);
	content = slurp("filed", NULL);
	cr_assert_str_eq(content, "payload");
}

/* "size" makes a write from a pipe exact: fewer bytes (a client cut
 * off) or more leave no file. */
Test(rpc, write_from_a_pipe_with_size)
{
	_cleanup_free_ char *content = NULL;
	json_t *r;
	int fd;

	fd = pipe_with("exactly");
	r = call_fds("fs.write",
	    json_pack("{s:s,s:i,s:i}", "path", "ok", "fd", 0, "size", 7), &fd,
	    1);
	cr_assert_eq(json_integer_value(json_object_get(result_of(r), "size")),
	    7);
	json_decref(r);
	close(fd);
	content = slurp("ok", NULL);
	cr_assert_str_eq(content, "exactly");

	fd = pipe_with("short");
	r = call_fds("fs.write",
	    json_pack("{s:s,s:i,s:i}", "path", "cut", "fd", 0, "size", 100),
	    &fd, 1);
	fs_error_of(r, "io_error");
	json_decref(r);
	close(fd);
	fd = pipe_with("longer than said");
	r = call_fds("fs.write",
	    json_pack("{s:s,s:i,s:i}", "path", "cut", "fd", 0, "size", 4), &fd,
	    1);
	fs_error_of(r, "too_large");
	json_decref(r);
	close(fd);
	cr_assert_eq(faccessat(root, "cut", F_OK, AT_SYMLINK_NOFOLLOW), -1);

	r = call("fs.write",
	    json_pack("{s:s,s:s,s:i}", "path", "t", "text", "x", "size", 1));
	param_error(r, "size");
	json_decref(r);
}

/* A pipe's end of file after the client's connection has closed is a
 * client killed half way: nothing is written. A live connection (one
 * that only shut down its writing, too) keeps the write. */
Test(rpc, write_from_a_pipe_of_a_client_gone)
{
	_cleanup_free_ char *content = NULL;
	int conn[2], fd;
	json_t *r;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, conn),
	    0);
	sess.client_fd = conn[0];
	cr_assert_eq(shutdown(conn[1], SHUT_WR), 0);
	fd = pipe_with("kept");
	r = call_fds("fs.write",
	    json_pack("{s:s,s:i}", "path", "live", "fd", 0), &fd, 1);
	result_of(r);
	json_decref(r);
	close(fd);
	content = slurp("live", NULL);
	cr_assert_str_eq(content, "kept");

	close(conn[1]);
	fd = pipe_with("half of it");
	r = call_fds("fs.write",
	    json_pack("{s:s,s:i}", "path", "gone", "fd", 0), &fd, 1);
	fs_error_of(r, "io_error");
	json_decref(r);
	close(fd);
	cr_assert_eq(faccessat(root, "gone", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	close(conn[0]);
	sess.client_fd = -1;
}

/* A regular file given with "size" must hold that much from its offset. */
Test(rpc, write_from_a_file_with_size)
{
	char path[160];
	json_t *r;
	int fd;

	snprintf(path, sizeof(path), "%s/src", outside);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write_all(fd, "0123456789", 10), 0);
	cr_assert_eq(lseek(fd, 4, SEEK_SET), 4);
	r = call_fds("fs.write",
	    json_pack("{s:s,s:i,s:i}", "path", "a", "fd", 0, "size", 10), &fd,
	    1);
	fs_error_of(r, "io_error");
	json_decref(r);
	cr_assert_eq(faccessat(root, "a", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	r = call_fds("fs.write",
	    json_pack("{s:s,s:i,s:i}", "path", "a", "fd", 0, "size", 6), &fd,
	    1);
	cr_assert_eq(json_integer_value(json_object_get(result_of(r), "size")),
	    6);
	json_decref(r);
	close(fd);
}

Test(rpc, read_into_a_pipe_and_a_file)
{
	char buf[64], path[160];
	ssize_t n;
	int p[2], fd;
	json_t *r;

	fstest_mkfile("f", "bulk content\n");
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	r = call_fds("fs.read", json_pack("{s:s,s:i}", "path", "f", "fd", 0),
	    &p[1], 1);
	cr_assert_eq(json_integer_value(json_object_get(result_of(r), "size")),
	    13);
	cr_assert_null(json_object_get(result_of(r), "data"));
	json_decref(r);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf));
	cr_assert_eq(n, 13);
	cr_assert_eq(memcmp(buf, "bulk content\n", 13), 0);
	close(p[0]);

	snprintf(path, sizeof(path), "%s/dst", outside);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	r = call_fds("fs.read", json_pack("{s:s,s:i}", "path", "f", "fd", 0),
	    &fd, 1);
	result_of(r);
	json_decref(r);
	n = pread(fd, buf, sizeof(buf), 0);
	cr_assert_eq(n, 13);
	cr_assert_eq(memcmp(buf, "bulk content\n", 13), 0);
	close(fd);
}

Test(rpc, descriptor_checks)
{
	int p[2], dir, fds[RPC_MAX_FDS + 1];
	json_t *r;

	fstest_mkfile("f", "x");
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	/* An index past what came with the request. */
	r = call_fds("fs.read", json_pack("{s:s,s:i}", "path", "f", "fd", 1),
	    &p[1], 1);
	param_error(r, "fd");
	json_decref(r);
	r = call("fs.read", json_pack("{s:s,s:i}", "path", "f", "fd", 0));
	param_error(r, "fd");
	json_decref(r);
	/* The wrong direction: the read end as a destination. */
	r = call_fds("fs.read", json_pack("{s:s,s:i}", "path", "f", "fd", 0),
	    &p[0], 1);
	param_error(r, "fd");
	json_decref(r);
	r = call_fds("fs.write", json_pack("{s:s,s:i}", "path", "g", "fd", 0),
	    &p[1], 1);
	param_error(r, "fd");
	json_decref(r);
	/* A directory is neither a file nor a pipe. */
	dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = call_fds("fs.write", json_pack("{s:s,s:i}", "path", "g", "fd", 0),
	    &dir, 1);
	param_error(r, "fd");
	json_decref(r);
	close(dir);
	/* A non-blocking pipe could end a transfer half way. */
	cr_assert_eq(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	r = call_fds("fs.write", json_pack("{s:s,s:i}", "path", "g", "fd", 0),
	    &p[0], 1);
	param_error(r, "fd");
	json_decref(r);
	cr_assert_eq(faccessat(root, "g", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	/* More descriptors than a request may carry. */
	for (size_t i = 0; i < RPC_MAX_FDS + 1; i++)
		fds[i] = p[1];
	r = call_fds("fs.read", json_pack("{s:s,s:i}", "path", "f", "fd", 0),
	    fds, RPC_MAX_FDS + 1);
	error_of(r, RPC_INVALID_REQUEST);
	json_decref(r);
	close(p[0]);
	close(p[1]);
}

/* Only connected stream sockets: a datagram socket never ends (a read
 * waits for the next datagram), an unconnected or listening one carries
 * no data. */
Test(rpc, descriptor_sockets)
{
	struct sockaddr_in lo = {.sin_family = AF_INET,
	    .sin_port = htons(9),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	sa_family_t fam = AF_UNIX;
	int bad[4], sp[2];
	char buf[8];
	json_t *r;

	fstest_mkfile("f", "sock");
	/* UDP, unconnected and connected; a unix stream socket never
	 * connected; a listening one (autobound: only the family given). */
	bad[0] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bad[1] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(connect(bad[1], (struct sockaddr *)&lo, sizeof(lo)), 0);
	bad[2] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bad[3] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(bind(bad[3], (struct sockaddr *)&fam, sizeof(fam)), 0);
	cr_assert_eq(listen(bad[3], 1), 0);
	for (int i = 0; i < 4; i++) {
		cr_assert_geq(bad[i], 0);
		r = call_fds("fs.write",
		    json_pack("{s:s,s:i}", "path", "g", "fd", 0), &bad[i], 1);
		param_error(r, "fd");
		cr_assert_not_null(
		    strstr(json_string_value(
			       json_object_get(json_object_get(r, "error"),
				   "message")),
			"connected stream socket"));
		json_decref(r);
		r = call_fds("fs.read",
		    json_pack("{s:s,s:i}", "path", "f", "fd", 0), &bad[i], 1);
		param_error(r, "fd");
		json_decref(r);
		close(bad[i]);
	}
	cr_assert_eq(faccessat(root, "g", F_OK, AT_SYMLINK_NOFOLLOW), -1);

	/* A connected stream socket (a socketpair end) is taken both ways. */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	r = call_fds("fs.read", json_pack("{s:s,s:i}", "path", "f", "fd", 0),
	    &sp[0], 1);
	cr_assert_eq(json_integer_value(json_object_get(result_of(r), "size")),
	    4);
	json_decref(r);
	cr_assert_eq(read(sp[1], buf, sizeof(buf)), 4);
	cr_assert_eq(memcmp(buf, "sock", 4), 0);
	cr_assert_eq(write_all(sp[1], "back", 4), 0);
	cr_assert_eq(shutdown(sp[1], SHUT_WR), 0);
	r = call_fds("fs.write", json_pack("{s:s,s:i}", "path", "g", "fd", 0),
	    &sp[0], 1);
	result_of(r);
	json_decref(r);
	close(sp[0]);
	close(sp[1]);
	{
		_cleanup_free_ char *g = slurp("g", NULL);

		cr_assert_str_eq(g, "back");
	}
}

/* ---- list, stat, mkdir, remove, rename ---- */

Test(rpc, list_and_stat)
{
	json_t *r, *entries, *e;

	fstest_mkfile("b", "bb");
	cr_assert_eq(mkdirat(root, "a", 0755), 0);
	fstest_mkfile("a/c", "ccc");
	cr_assert_eq(symlinkat("/etc", root, "l"), 0);

	r = call("fs.list", json_pack("{s:b}", "recursive", 1));
	entries = json_object_get(result_of(r), "entries");
	cr_assert_eq(json_array_size(entries), 4);
	cr_assert_str_eq(json_string_value(
			     json_object_get(json_array_get(entries, 0),
				 "path")),
	    "a");
	cr_assert_str_eq(json_string_value(
			     json_object_get(json_array_get(entries, 1),
				 "path")),
	    "a/c");
	cr_assert_str_eq(json_string_value(
			     json_object_get(json_array_get(entries, 2),
				 "path")),
	    "b");
	cr_assert_str_eq(json_string_value(
			     json_object_get(json_array_get(entries, 3),
				 "path")),
	    "l");
	e = json_array_get(entries, 0);
	cr_assert_str_eq(json_string_value(json_object_get(e, "type")),
	    "directory");
	e = json_array_get(entries, 1);
	cr_assert_str_eq(json_string_value(json_object_get(e, "type")), "file");
	cr_assert_eq(json_integer_value(json_object_get(e, "size")), 3);
	cr_assert_eq(json_integer_value(json_object_get(e, "mode")), 0644);
	cr_assert(json_is_number(json_object_get(e, "mtime")));
	cr_assert_gt(json_number_value(json_object_get(e, "mtime")), 1e9);
	cr_assert_str_eq(json_string_value(
			     json_object_get(json_array_get(entries, 3),
				 "type")),
	    "symlink");
	cr_assert(json_is_false(json_object_get(result_of(r), "truncated")));
	json_decref(r);

	r = call("fs.list", json_pack("{s:b,s:i}", "recursive", 1, "limit", 2));
	cr_assert_eq(json_array_size(json_object_get(result_of(r), "entries")),
	    2);
	cr_assert(json_is_true(json_object_get(result_of(r), "truncated")));
	json_decref(r);

	r = call("fs.list", json_pack("{s:s}", "path", "a"));
	entries = json_object_get(result_of(r), "entries");
	cr_assert_eq(json_array_size(entries), 1);
	cr_assert_str_eq(json_string_value(
			     json_object_get(json_array_get(entries, 0),
				 "path")),
	    "a/c");
	json_decref(r);
	r = call("fs.list", json_pack("{s:s}", "path", "b"));
	fs_error_of(r, "not_a_directory");
	json_decref(r);
	r = call("fs.list", json_pack("{s:s}", "path", "l"));
	fs_error_of(r, "symlink_refused");
	json_decref(r);

	r = call("fs.stat", json_pack("{s:s}", "path", "a/c"));
	e = result_of(r);
	cr_assert_str_eq(json_string_value(json_object_get(e, "path")), "a/c");
	cr_assert_eq(json_integer_value(json_object_get(e, "nlink")), 1);
	cr_assert_eq(json_integer_value(json_object_get(e, "size")), 3);
	json_decref(r);
	r = call("fs.stat", json_pack("{s:s}", "path", "l"));
	cr_assert_str_eq(json_string_value(
			     json_object_get(result_of(r), "type")),
	    "symlink");
	json_decref(r);
	r = call("fs.stat", json_pack("{s:s}", "path", "."));
	cr_assert_str_eq(json_string_value(
			     json_object_get(result_of(r), "type")),
	    "directory");
	json_decref(r);
	r = call("fs.stat", json_pack("{s:s}", "path", "nope"));
	fs_error_of(r, "not_found");
	json_decref(r);
}

Test(rpc, mkdir_remove_rename)
{
	struct stat st;
	json_t *r;

	r = call("fs.mkdir", json_pack("{s:s}", "path", "x/y"));
	fs_error_of(r, "not_found");
	json_decref(r);
	r = call("fs.mkdir",
	    json_pack("{s:s,s:b,s:i}", "path", "x/y", "parents", 1, "mode",
		0700));
	cr_assert_eq(json_object_size(result_of(r)), 0);
	json_decref(r);
	cr_assert_eq(fstatat(root, "x/y", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 0777, 0700);
	r = call("fs.mkdir", json_pack("{s:s}", "path", "x"));
	fs_error_of(r, "exists");
	json_decref(r);

	fstest_mkfile("x/y/f", "1");
	r = call("fs.remove", json_pack("{s:s}", "path", "x"));
	fs_error_of(r, "not_empty");
	json_decref(r);
	r = call("fs.rename",
	    json_pack("{s:s,s:s}", "from", "x/y/f", "to", "g"));
	result_of(r);
	json_decref(r);
	cr_assert_eq(fstatat(root, "g", &st, AT_SYMLINK_NOFOLLOW), 0);
	fstest_mkfile("h", "2");
	r = call("fs.rename", json_pack("{s:s,s:s}", "from", "g", "to", "h"));
	fs_error_of(r, "exists");
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(r, "error"), "data"), "to")),
	    "h");
	json_decref(r);
	r = call("fs.rename",
	    json_pack("{s:s,s:s,s:b}", "from", "g", "to", "h", "overwrite", 1));
	result_of(r);
	json_decref(r);
	r = call("fs.rename",
	    json_pack("{s:s,s:s}", "from", "h", "to", "../escaped"));
	fs_error_of(r, "invalid_path");
	json_decref(r);
	r = call("fs.remove",
	    json_pack("{s:s,s:b}", "path", "x", "recursive", 1));
	result_of(r);
	json_decref(r);
	cr_assert_eq(faccessat(root, "x", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	r = call("fs.remove", json_pack("{s:s}", "path", "x"));
	fs_error_of(r, "not_found");
	json_decref(r);
	r = call("fs.rename", json_pack("{s:s}", "from", "h"));
	param_error(r, "to");
	json_decref(r);
}

/* ---- names that are not UTF-8 ---- */

Test(rpc, path_b64_round_trip)
{
	static const char name[] = "new\nline\xff\x1b[31m";
	_cleanup_free_ char *enc = b64(name, strlen(name));
	_cleanup_free_ unsigned char *raw = NULL;
	json_t *r, *e;
	size_t len;
	struct stat st;

	r = call("fs.write",
	    json_pack("{s:s,s:s}", "path_b64", enc, "text", "odd"));
	e = result_of(r);
	cr_assert_str_eq(json_string_value(json_object_get(e, "path")),
	    "new\\nline\\xff\\e[31m");
	cr_assert_str_eq(json_string_value(json_object_get(e, "path_b64")),
	    enc);
	json_decref(r);
	cr_assert_eq(fstatat(root, name, &st, AT_SYMLINK_NOFOLLOW), 0);

	r = call("fs.list", NULL);
	e = json_array_get(json_object_get(result_of(r), "entries"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(e, "path")),
	    "new\\nline\\xff\\e[31m");
	raw = unb64(json_string_value(json_object_get(e, "path_b64")), &len);
	cr_assert_eq(len, strlen(name));
	cr_assert_eq(memcmp(raw, name, len), 0);
	json_decref(r);

	r = call("fs.read", json_pack("{s:s}", "path_b64", enc));
	cr_assert_str_eq(json_string_value(
			     json_object_get(result_of(r), "data")),
	    "b2Rk");
	json_decref(r);
	r = call("fs.stat", json_pack("{s:s}", "path_b64", enc));
	cr_assert_eq(json_integer_value(json_object_get(result_of(r), "size")),
	    3);
	json_decref(r);
	/* A plain name has no path_b64. */
	fstest_mkfile("plain", "");
	r = call("fs.stat", json_pack("{s:s}", "path", "plain"));
	cr_assert_null(json_object_get(result_of(r), "path_b64"));
	json_decref(r);
	/* Errors name the path escaped too. */
	r = call("fs.read", json_pack("{s:s}", "path_b64", "bm9wZQo="));
	e = fs_error_of(r, "not_found");
	cr_assert_str_eq(json_string_value(json_object_get(e, "path")),
	    "nope\\n");
	cr_assert_str_eq(json_string_value(json_object_get(e, "path_b64")),
	    "bm9wZQo=");
	json_decref(r);
}

/* Invisible characters (Unicode Cf, Zl, Zp: fsname.h) are escaped in
 * fs.list, with the raw name in path_b64. Sorted byte-wise: a..g. */
Test(rpc, list_escapes_invisible_characters)
{
	static const char *const raw[][2] = {
	    {"a\xc2\xad", "a\\xc2\\xad"}, /* soft hyphen */
	    {"b\xe2\x80\xae"
	     "fdp.exe",
		"b\\xe2\\x80\\xaefdp.exe"}, /* RLO */
	    {"c\xe2\x80\x8b", "c\\xe2\\x80\\x8b"}, /* zero width */
	    {"d\xe2\x80\xa8", "d\\xe2\\x80\\xa8"}, /* Zl */
	    {"e\xe2\x80\xa9", "e\\xe2\\x80\\xa9"}, /* Zp */
	    {"f\xf3\xa0\x80\x81", "f\\xf3\\xa0\\x80\\x81"}, /* tag */
	    {"g\xef\xbb\xbf", "g\\xef\\xbb\\xbf"}, /* BOM */
	};
	const size_t n = sizeof(raw) / sizeof(raw[0]);
	json_t *r, *entries;

	for (size_t i = 0; i < n; i++)
		fstest_mkfile(raw[i][0], "");
	r = call("fs.list", NULL);
	entries = json_object_get(result_of(r), "entries");
	cr_assert_eq(json_array_size(entries), n);
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(entries, i);
		_cleanup_free_ unsigned char *back = NULL;
		size_t len;

		cr_assert_str_eq(json_string_value(json_object_get(e, "path")),
		    raw[i][1]);
		cr_assert(json_is_string(json_object_get(e, "path_b64")),
		    "no path_b64 for %s", raw[i][1]);
		back = unb64(json_string_value(json_object_get(e, "path_b64")),
		    &len);
		cr_assert_eq(len, strlen(raw[i][0]));
		cr_assert_eq(memcmp(back, raw[i][0], len), 0);
	}
	json_decref(r);
}

Test(rpc, nul_in_a_path_is_invalid_path)
{
	json_t *r = handle(
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fs.write\","
	    "\"params\":{\"path\":\"a\\u0000b\",\"text\":\"x\"}}");
	json_t *d = fs_error_of(r, "invalid_path");

	cr_assert_str_eq(json_string_value(json_object_get(d, "path")),
	    "a\\x00b");
	json_decref(r);
	cr_assert_eq(faccessat(root, "a", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	r = call("fs.read", json_pack("{s:s}", "path_b64", "YQBi"));
	fs_error_of(r, "invalid_path");
	json_decref(r);
}

/* ---- the envelope ---- */

Test(rpc, parse_errors)
{
	static const char *const bad[] = {
	    "",
	    "garbage",
	    "{\"jsonrpc\":\"2.0\",",
	    "{'a':1}",
	    /* a duplicate key could mean two things to two readers */
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fs.stat\","
	    "\"params\":{\"path\":\"a\",\"path\":\"b\"}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fs.stat\"} extra",
	    "\xff\xfe",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *r = handle(bad[i]);

		error_of(r, RPC_PARSE_ERROR);
		cr_assert(json_is_null(json_object_get(r, "id")), "%s", bad[i]);
		json_decref(r);
	}
}

Test(rpc, invalid_requests)
{
	static const char *const bad[] = {
	    "42",
	    "\"fs.list\"",
	    "null",
	    "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fs.list\"}]",
	    "{\"id\":1,\"method\":\"fs.list\"}",
	    "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"fs.list\"}",
	    "{\"jsonrpc\":2,\"id\":1,\"method\":\"fs.list\"}",
	    "{\"jsonrpc\":\"2.0\\u0000\",\"id\":1,\"method\":\"fs.list\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1}",
	    "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"fs.list\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fs.list\","
	    "\"params\":\"x\"}",
	    /* a notification that is not a valid request is answered */
	    "{\"jsonrpc\":\"2.0\",\"method\":1}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *r = handle(bad[i]);

		cr_assert_not_null(r, "no answer to %s", bad[i]);
		error_of(r, RPC_INVALID_REQUEST);
		json_decref(r);
	}
}

Test(rpc, unknown_method_and_ids)
{
	json_t *r = handle("{\"jsonrpc\":\"2.0\",\"id\":\"abc\","
			   "\"method\":\"fs.format\"}");

	error_of(r, RPC_METHOD_NOT_FOUND);
	cr_assert_str_eq(json_string_value(json_object_get(r, "id")), "abc");
	json_decref(r);
	r = handle("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"fs.list\"}");
	result_of(r);
	cr_assert(json_is_null(json_object_get(r, "id")));
	json_decref(r);
	r = handle("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"fs.changes\","
		   "\"params\":{}}");
	result_of(r);
	cr_assert(json_real_value(json_object_get(r, "id")) == 1.5);
	json_decref(r);
	/* Prefix tricks do not match a method. */
	r = handle(
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"fs.list\\u0000x\"}");
	error_of(r, RPC_METHOD_NOT_FOUND);
	json_decref(r);
}

Test(rpc, notifications_get_no_answer)
{
	_cleanup_free_ char *content = NULL;

	cr_assert_null(
	    handle("{\"jsonrpc\":\"2.0\",\"method\":\"fs.write\","
		   "\"params\":{\"path\":\"n\",\"text\":\"quiet\"}}"));
	content = slurp("n", NULL);
	cr_assert_str_eq(content, "quiet");
	/* Even when they fail. */
	cr_assert_null(handle("{\"jsonrpc\":\"2.0\",\"method\":\"fs.read\","
			      "\"params\":{\"path\":\"missing\"}}"));
	cr_assert_null(handle("{\"jsonrpc\":\"2.0\",\"method\":\"no.such\"}"));
}

/* rpc_cancels_current for the NUL-terminated LINE. */
static bool
cancels(const char *line)
{
	return rpc_cancels_current(&sess, line, strlen(line));
}

/* $/cancelRequest (issue 22): in its own turn a notification that does
 * nothing, answered null as a request, its id checked; and
 * rpc_cancels_current tells serve.c which line cancels the running
 * request (S->current_id) and which does not. */
Test(rpc, cancel_request)
{
	json_t *r, *id;

	cr_assert_null(handle("{\"jsonrpc\":\"2.0\",\"method\":"
			      "\"$/cancelRequest\",\"params\":{\"id\":3}}"));
	r = handle("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
		   "\"$/cancelRequest\",\"params\":{\"id\":\"x\"}}");
	cr_assert(json_is_null(result_of(r)));
	json_decref(r);
	r = handle("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
		   "\"$/cancelRequest\",\"params\":{\"id\":[1]}}");
	error_of(r, RPC_INVALID_PARAMS);
	json_decref(r);
	r = handle("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
		   "\"$/cancelRequest\",\"params\":{\"id\":1,\"x\":1}}");
	error_of(r, RPC_INVALID_PARAMS);
	json_decref(r);
	cr_assert_null(sess.current_id, "current_id outlives its request");

	id = json_integer(7);
	sess.current_id = id;
	cr_assert(cancels("{\"jsonrpc\":\"2.0\",\"method\":"
			  "\"$/cancelRequest\",\"params\":{\"id\":7}}"));
	cr_assert(!cancels("{\"jsonrpc\":\"2.0\",\"method\":"
			   "\"$/cancelRequest\",\"params\":{\"id\":8}}"));
	cr_assert(!cancels("{\"jsonrpc\":\"2.0\",\"method\":"
			   "\"$/cancelRequest\",\"params\":{\"id\":\"7\"}}"));
	cr_assert(!cancels("{\"jsonrpc\":\"2.0\",\"method\":"
			   "\"exec\",\"params\":{\"id\":7}}"));
	cr_assert(!cancels("{\"method\":\"$/cancelRequest\","
			   "\"params\":{\"id\":7"));
	json_decref(id);
	sess.current_id = json_null();
	cr_assert(!cancels("{\"method\":\"$/cancelRequest\","
			   "\"params\":{\"id\":null}}"));
	sess.current_id = NULL;
}

Test(rpc, wrong_parameter_types)
{
	json_t *r;

	r = call("fs.stat", json_pack("{s:i}", "path", 1));
	param_error(r, "path");
	json_decref(r);
	r = call("fs.stat", json_object());
	param_error(r, "path");
	json_decref(r);
	r = call("fs.stat", json_pack("[s]", "a"));
	error_of(r, RPC_INVALID_PARAMS);
	json_decref(r);
	r = call("fs.stat",
	    json_pack("{s:s,s:s}", "path", "a", "path_b64", "YQ=="));
	param_error(r, "path_b64");
	json_decref(r);
	r = call("fs.stat", json_pack("{s:s}", "path_b64", "not base64!"));
	param_error(r, "path_b64");
	json_decref(r);
	r = call("fs.stat", json_pack("{s:s,s:b}", "path", "a", "follow", 1));
	param_error(r, "follow");
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s,s:s}", "path", "a", "text", "x", "overwrite",
		"yes"));
	param_error(r, "overwrite");
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s,s:i}", "path", "a", "text", "x", "mode",
		010000));
	param_error(r, "mode");
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s,s:f}", "path", "a", "text", "x", "mode",
		420.0));
	param_error(r, "mode");
	json_decref(r);
	r = call("fs.write", json_pack("{s:s}", "path", "a"));
	param_error(r, "data");
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s,s:s}", "path", "a", "text", "x", "data",
		"eA=="));
	error_of(r, RPC_INVALID_PARAMS);
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s}", "path", "a", "data", "%%%%"));
	param_error(r, "data");
	json_decref(r);
	r = call("fs.write", json_pack("{s:s,s:i}", "path", "a", "text", 5));
	param_error(r, "text");
	json_decref(r);
	r = call("fs.list", json_pack("{s:i}", "limit", 0));
	param_error(r, "limit");
	json_decref(r);
	r = call("fs.remove",
	    json_pack("{s:s,s:i}", "path", "a", "recursive", 1));
	param_error(r, "recursive");
	json_decref(r);
	r = call("fs.changes", json_pack("{s:b}", "since", 1));
	param_error(r, "since");
	json_decref(r);
	r = call("exec", json_pack("{s:[]}", "argv"));
	param_error(r, "argv");
	json_decref(r);
	r = call("exec", json_pack("{s:[s,i]}", "argv", "echo", 1));
	param_error(r, "argv");
	json_decref(r);
	r = call("exec", json_pack("{s:s}", "argv", "echo hi"));
	param_error(r, "argv");
	json_decref(r);
	r = call("exec",
	    json_pack("{s:[s],s:i}", "argv", "true", "timeout_seconds",
		100000));
	param_error(r, "timeout_seconds");
	json_decref(r);
	r = call("exec",
	    json_pack("{s:[s],s:i}", "argv", "true", "memory_mb", 1 << 30));
	param_error(r, "memory_mb");
	json_decref(r);
	r = call("exec", json_pack("{s:[s]}", "argv", ""));
	param_error(r, "argv");
	json_decref(r);
	cr_assert_eq(faccessat(root, "a", F_OK, AT_SYMLINK_NOFOLLOW), -1);
}

Test(rpc, changes_before_any_exec_and_exec_without_launcher)
{
	json_t *r = call("fs.changes", NULL), *res = result_of(r);

	cr_assert_eq(json_array_size(json_object_get(res, "created")), 0);
	cr_assert_eq(json_array_size(json_object_get(res, "modified")), 0);
	cr_assert_eq(json_array_size(json_object_get(res, "deleted")), 0);
	cr_assert(json_is_false(json_object_get(res, "truncated")));
	cr_assert_eq(json_integer_value(json_object_get(res, "unhashed")), 0);
	cr_assert(json_is_integer(json_object_get(res, "unhashed")));
	json_decref(r);
	r = call("exec", json_pack("{s:[s]}", "argv", "true"));
	error_of(r, RPC_JOB_ERROR);
	json_decref(r);
}

/*
 * One fs.list reply holds at most 16 MiB of entries (compact JSON): 15
 * nested directories of 250-byte names hold files whose entries are about
 * 3.8 KiB each, more than 16 MiB of them. The reply stops short of the
 * bound, truncated, and every entry in it is whole.
 */
Test(rpc, list_reply_bounded)
{
	char path[4096];
	/* 15 names of 250 bytes and their slashes. */
	size_t len = 15 * 251 - 1, files, bytes = 0, i;
	json_t *r, *res, *entries, *e;

	files = (16u << 20) / (len + 6) + 64;
	cr_assert_eq(fstest_long_path_links(15, files, path, sizeof(path)),
	    len);

	r = call("fs.list", json_pack("{s:b}", "recursive", 1));
	res = result_of(r);
	entries = json_object_get(res, "entries");
	cr_assert(json_is_true(json_object_get(res, "truncated")));
	cr_assert_lt(json_array_size(entries), files + 15);
	json_array_foreach(entries, i, e)
	    bytes += json_dumpb(e, NULL, 0, JSON_COMPACT) + 1;
	cr_assert_leq(bytes, 16u << 20);
	/* Stopped at the bound, not well before it. */
	cr_assert_gt(bytes + 2 * (len + 100), 16u << 20);
	json_decref(r);

	/* Under the bound: whole. */
	r = call("fs.list",
	    json_pack("{s:b,s:i}", "recursive", 1, "limit", 100));
	res = result_of(r);
	cr_assert_eq(json_array_size(json_object_get(res, "entries")), 100);
	json_decref(r);
}

/* ---- exec and fs.changes, with the real launcher ---- */

/* Starts a supervisor on the launcher beside STOCKADE_BIN and gives it to
 * the session, or skips (fails under STOCKADE_MUST_WORK=1). */
static void
with_launcher(void)
{
	const char *bin = getenv("STOCKADE_BIN");
	const char *must = getenv("STOCKADE_MUST_WORK");
	bool strict = must != NULL && strcmp(must, "1") == 0;
	char copy[PATH_MAX], path[PATH_MAX], err[512];

	if (bin == NULL) {
		cr_assert(!strict, "STOCKADE_BIN is not set");
		cr_skip_test("STOCKADE_BIN is not set: no launcher to run");
	}
	snprintf(copy, sizeof(copy), "%s", bin);
	snprintf(path, sizeof(path), "%s/stockade-launcher", dirname(copy));
	if (access(path, X_OK) != 0) {
		cr_assert(!strict, "%s: %s", path, strerror(errno));
		cr_skip_test("%s: %s", path, strerror(errno));
	}
	if (preflight_userns(err, sizeof(err)) < 0) {
		cr_assert(!strict, "%s", err);
		cr_skip_test("%s", err);
	}
	cr_assert_eq(supervisor_init_path(&sup, path, err, sizeof(err)), 0,
	    "%s", err);
	have_sup = true;
	sess.sup = &sup;
	/* A root broker lends the jail a workspace owned by the payload's
	 * id (workspace.h): as `stockade serve` would be given. */
	if (geteuid() == 0)
		cr_assert_eq(fchown(root, PROTO_ROOT_PAYLOAD_ID,
				 PROTO_ROOT_PAYLOAD_ID),
		    0);
}

/* The lower-case hex SHA-256 of TEXT (libmd). */
static void
sha256_hex(const char *text, char hex[SHA256_DIGEST_STRING_LENGTH])
{
	cr_assert_not_null(
	    SHA256Data((const uint8_t *)text, strlen(text), hex));
}

/* The item of LIST whose path is PATH, or NULL. */
static json_t *
find_item(json_t *list, const char *path)
{
	size_t i;
	json_t *e;

	json_array_foreach(list, i,
	    e) if (strcmp(json_string_value(json_object_get(e, "path")),
		       path) == 0) return e;
	return NULL;
}

/* Asserts that the list NAME of the fs.changes result RES holds the
 * regular file PATH, with the size and SHA-256 of TEXT (for a deleted
 * file, what it held). */
static void
assert_file_change(json_t *res, const char *name, const char *path,
    const char *text)
{
	json_t *item = find_item(json_object_get(res, name), path);
	char hex[SHA256_DIGEST_STRING_LENGTH];

	cr_assert_not_null(item, "%s: no %s", name, path);
	sha256_hex(text, hex);
	cr_assert_str_eq(json_string_value(json_object_get(item, "sha256")),
	    hex, "%s: %s", name, path);
	cr_assert_eq(json_integer_value(json_object_get(item, "size")),
	    (json_int_t)strlen(text), "%s: %s", name, path);
}

Test(rpc_exec, exec_result_and_changes)
{
	json_t *r, *res, *item;

	with_launcher();
	r = call("fs.write",
	    json_pack("{s:s,s:s}", "path", "keep", "text", "same\n"));
	result_of(r);
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s}", "path", "mod", "text", "before\n"));
	result_of(r);
	json_decref(r);
	r = call("fs.write",
	    json_pack("{s:s,s:s}", "path", "gone", "text", "bye\n"));
	result_of(r);
	json_decref(r);

	r = call("exec",
	    json_pack("{s:[s,s,s],s:f}", "argv", "/bin/sh", "-c",
		"echo after >> mod; rm gone; mkdir d; "
		"echo new > d/n; echo out; echo err >&2",
		"timeout_seconds", 10.0));
	res = result_of(r);
	cr_assert_str_eq(json_string_value(json_object_get(res, "status")),
	    "ok", "%s", json_string_value(json_object_get(res, "detail")));
	cr_assert_eq(json_integer_value(json_object_get(res, "exit_code")), 0);
	cr_assert_str_eq(json_string_value(json_object_get(res, "stdout")),
	    "out\n");
	cr_assert_str_eq(json_string_value(json_object_get(res, "stderr")),
	    "err\n");
	cr_assert_eq(json_integer_value(
			 json_object_get(json_object_get(res, "limits"),
			     "wall_time_ms")),
	    10000);
	cr_assert(json_is_string(json_object_get(res, "hint")));
	json_decref(r);

	r = call("fs.changes", NULL);
	res = result_of(r);
	cr_assert_eq(json_array_size(json_object_get(res, "created")), 2);
	item = find_item(json_object_get(res, "created"), "d");
	cr_assert_not_null(item);
	cr_assert_str_eq(json_string_value(json_object_get(item, "type")),
	    "directory");
	cr_assert(json_is_null(json_object_get(item, "sha256")));
	assert_file_change(res, "created", "d/n", "new\n");
	cr_assert_eq(json_array_size(json_object_get(res, "modified")), 1);
	assert_file_change(res, "modified", "mod", "before\nafter\n");
	cr_assert_eq(json_array_size(json_object_get(res, "deleted")), 1);
	assert_file_change(res, "deleted", "gone", "bye\n");
	cr_assert(json_is_false(json_object_get(res, "truncated")));
	json_decref(r);

	/* A second job that changes nothing: an empty manifest. */
	r = call("exec", json_pack("{s:[s]}", "argv", "true"));
	result_of(r);
	json_decref(r);
	r = call("fs.changes", NULL);
	res = result_of(r);
	cr_assert_eq(json_array_size(json_object_get(res, "created")), 0);
	cr_assert_eq(json_array_size(json_object_get(res, "modified")), 0);
	cr_assert_eq(json_array_size(json_object_get(res, "deleted")), 0);
	json_decref(r);
}

/* A job's chmod of /work itself ends with the job: the next snapshot
 * (as an ordinary user, a 000 workspace would be unreadable) and the
 * next job find the session's mode. */
Test(rpc_exec, the_workspace_mode_is_put_back_after_each_job)
{
	struct stat before, after;
	json_t *r, *res;

	with_launcher();
	cr_assert_eq(fstat(root, &before), 0);
	for (int i = 0; i < 2; i++) {
		r = call("exec",
		    json_pack("{s:[s,s,s]}", "argv", "/bin/sh", "-c",
			"chmod 000 /work"));
		res = result_of(r);
		cr_assert_str_eq(json_string_value(
				     json_object_get(res, "status")),
		    "ok", "job %d: %s", i,
		    json_string_value(json_object_get(res, "stderr")));
		json_decref(r);
		cr_assert_eq(fstat(root, &after), 0);
		cr_assert_eq(after.st_mode & 07777, before.st_mode & 07777,
		    "job %d left mode %04o", i,
		    (unsigned)(after.st_mode & 07777));
	}
}

Test(rpc_exec, a_failing_job_is_a_result_not_an_error)
{
	json_t *r, *res;

	with_launcher();
	r = call("exec",
	    json_pack("{s:[s,s,s]}", "argv", "/bin/sh", "-c", "exit 3"));
	res = result_of(r);
	cr_assert_str_eq(json_string_value(json_object_get(res, "status")),
	    "exit_nonzero");
	cr_assert_eq(json_integer_value(json_object_get(res, "exit_code")), 3);
	json_decref(r);
	r = call("exec",
	    json_pack("{s:[s,s,s],s:f}", "argv", "/bin/sh", "-c", "sleep 10",
		"timeout_seconds", 0.3));
	res = result_of(r);
	cr_assert_str_eq(json_string_value(json_object_get(res, "status")),
	    "timeout");
	json_decref(r);
	r = call("exec", json_pack("{s:[s]}", "argv", "/no/such/program"));
	res = result_of(r);
	cr_assert_str_neq(json_string_value(json_object_get(res, "status")),
	    "ok");
	json_decref(r);
}

/* A sparse file a job makes is listed by fs.changes with sha256 null and
 * counted in "unhashed" (its holes are never read: security review,
 * finding 1); a dense one beside it is hashed. */
Test(rpc_exec, sparse_file_listed_unhashed)
{
	json_t *r, *res, *item;

	with_launcher();
	r = call("exec",
	    json_pack("{s:[s,s,s]}", "argv", "/bin/sh", "-c",
		"truncate -s 67108863 sparse && "
		"echo dense > dense"));
	res = result_of(r);
	cr_assert_str_eq(json_string_value(json_object_get(res, "status")),
	    "ok", "%s", json_string_value(json_object_get(res, "stderr")));
	json_decref(r);
	r = call("fs.changes", NULL);
	res = result_of(r);
	item = find_item(json_object_get(res, "created"), "sparse");
	cr_assert_not_null(item);
	cr_assert_eq(json_integer_value(json_object_get(item, "size")),
	    67108863);
	cr_assert(json_is_null(json_object_get(item, "sha256")));
	assert_file_change(res, "created", "dense", "dense\n");
	cr_assert_eq(json_integer_value(json_object_get(res, "unhashed")), 1);
	cr_assert(json_is_false(json_object_get(res, "truncated")));
	json_decref(r);
}

/* A broker interrupted (SIGTERM) before a job's first snapshot runs no
 * job: exec answers -32002 (serve.c then ends the session). */
Test(rpc_exec, interrupted_exec_runs_no_job)
{
	json_t *r, *e;

	with_launcher();
	jobrun_catch_signals();
	cr_assert_eq(raise(SIGTERM), 0);
	cr_assert_eq(jobrun_interrupted(), SIGTERM);
	r = call("exec",
	    json_pack("{s:[s,s,s]}", "argv", "/bin/sh", "-c",
		"echo ran > ran"));
	e = error_of(r, RPC_JOB_ERROR);
	cr_assert_not_null(
	    strstr(json_string_value(json_object_get(e, "message")),
		"interrupted"));
	json_decref(r);
	cr_assert_eq(faccessat(root, "ran", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	jobrun_default_signals();
}

/* ---- the transport: `stockade serve` as a program ---- */

/* The stockade binary, or skips (fails under STOCKADE_MUST_WORK=1) when
 * it or user namespaces (which serve checks first) are missing. */
static const char *
serve_binary(void)
{
	const char *bin = getenv("STOCKADE_BIN");
	const char *must = getenv("STOCKADE_MUST_WORK");
	bool strict = must != NULL && strcmp(must, "1") == 0;
	char err[512];

	if (bin == NULL || access(bin, X_OK) != 0) {
		cr_assert(!strict, "STOCKADE_BIN is not an executable");
		cr_skip_test("STOCKADE_BIN is not an executable");
	}
	if (preflight_userns(err, sizeof(err)) < 0) {
		cr_assert(!strict, "%s", err);
		cr_skip_test("%s", err);
	}
	/* A root broker refuses a root-owned workspace (workspace.h). */
	if (geteuid() == 0)
		cr_assert_eq(fchown(root, PROTO_ROOT_PAYLOAD_ID,
				 PROTO_ROOT_PAYLOAD_ID),
		    0);
	return bin;
}

/* Starts `stockade serve --workspace ws EXTRA...` with stdin and stdout
 * the socket IO (or /dev/null when -1) and stderr to /dev/null. */
static pid_t
start_serve(int io, const char *extra1, const char *extra2)
{
	const char *bin = serve_binary();
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(io >= 0 ? io : null, 0);
		dup2(io >= 0 ? io : null, 1);
		dup2(null, 2);
		execl(bin, "stockade", "serve", "--workspace", ws, extra1,
		    extra2, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int
wait_exit(pid_t pid)
{
	int st;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "serve was killed by signal %d", WTERMSIG(st));
	return WEXITSTATUS(st);
}

/* Sends DATA with the descriptors FDS (N, may be 0) in one sendmsg. */
static void
send_with_fds(int sock, const char *data, const int *fds, size_t n)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = (void *)(uintptr_t)data,
	    .iov_len = strlen(data)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	cr_assert_leq(n, 8);
	if (n > 0) {
		struct cmsghdr *cm;

		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	}
	cr_assert_eq(sendmsg(sock, &msg, MSG_NOSIGNAL), (ssize_t)strlen(data));
}

/* Reads one response line from SOCK (within 20 s) and parses it. */
static json_t *
read_response(int sock)
{
	static char buf[1 << 16];
	size_t len = 0;
	json_t *j;

	for (;;) {
		struct pollfd p = {.fd = sock, .events = POLLIN};
		ssize_t n;

		cr_assert_eq(poll(&p, 1, 20000), 1, "no answer within 20 s");
		n = recv(sock, buf + len, 1, 0);
		cr_assert_eq(n, 1, "the connection ended");
		if (buf[len] == '\n')
			break;
		cr_assert_lt(++len, sizeof(buf) - 1);
	}
	buf[len] = '\0';
	j = json_loads(buf, 0, NULL);
	cr_assert_not_null(j, "not JSON: %s", buf);
	return j;
}

Test(serve, descriptors_go_to_the_line_they_came_with)
{
	int sv[2], fd;
	pid_t pid;
	json_t *r;
	_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = start_serve(sv[1], NULL, NULL);
	close(sv[1]);

	/* Two lines in one sendmsg, the descriptor for the second. */
	fd = pipe_with("second");
	send_with_fds(sv[0],
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fs.list\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"fs.write\","
	    "\"params\":{\"path\":\"a\",\"fd\":0}}\n",
	    &fd, 1);
	close(fd);
	r = read_response(sv[0]);
	cr_assert_eq(json_integer_value(json_object_get(r, "id")), 1);
	result_of(r);
	json_decref(r);
	r = read_response(sv[0]);
	cr_assert_eq(json_integer_value(json_object_get(r, "id")), 2);
	result_of(r);
	json_decref(r);

	/* A line sent in two parts, the descriptor with the first. */
	fd = pipe_with("split");
	send_with_fds(sv[0], "{\"jsonrpc\":\"2.0\",\"id\":3,", &fd, 1);
	close(fd);
	usleep(100000);
	send_with_fds(sv[0],
	    "\"method\":\"fs.write\",\"params\":{\"path\":\"b\","
	    "\"fd\":0}}\n",
	    NULL, 0);
	r = read_response(sv[0]);
	result_of(r);
	json_decref(r);

	/* A line without descriptors after one with: fd 0 names nothing. */
	fd = pipe_with("third");
	send_with_fds(sv[0],
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"fs.write\","
	    "\"params\":{\"path\":\"c\",\"fd\":0}}\n",
	    &fd, 1);
	close(fd);
	send_with_fds(sv[0],
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"fs.write\","
	    "\"params\":{\"path\":\"d\",\"fd\":0}}\n",
	    NULL, 0);
	r = read_response(sv[0]);
	result_of(r);
	json_decref(r);
	r = read_response(sv[0]);
	param_error(r, "fd");
	json_decref(r);

	/* After a half-close the answers still come; a last line without
	 * its '\n' was cut short and is not carried out. */
	send_with_fds(sv[0],
	    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"fs.stat\","
	    "\"params\":{\"path\":\"a\"}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"fs.write\","
	    "\"params\":{\"path\":\"cut\",\"text\":\"x\"}}",
	    NULL, 0);
	cr_assert_eq(shutdown(sv[0], SHUT_WR), 0);
	r = read_response(sv[0]);
	cr_assert_eq(json_integer_value(json_object_get(result_of(r), "size")),
	    6);
	json_decref(r);
	cr_assert_eq(wait_exit(pid), 0);
	{
		char rest;

		cr_assert_eq(recv(sv[0], &rest, 1, 0), 0,
		    "an answer to a cut line");
	}
	close(sv[0]);
	cr_assert_eq(faccessat(root, "cut", F_OK, AT_SYMLINK_NOFOLLOW), -1);

	a = slurp("a", NULL);
	b = slurp("b", NULL);
	c = slurp("c", NULL);
	cr_assert_str_eq(a, "second");
	cr_assert_str_eq(b, "split");
	cr_assert_str_eq(c, "third");
	cr_assert_eq(faccessat(root, "d", F_OK, AT_SYMLINK_NOFOLLOW), -1);
}

Test(serve, a_line_over_16_mib_ends_the_session)
{
	size_t big = RPC_MAX_LINE + 2;
	char *line = malloc(big);
	int sv[2];
	pid_t pid;
	json_t *r;
	ssize_t n;

	cr_assert_not_null(line);
	memset(line, 'x', big);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = start_serve(sv[1], NULL, NULL);
	close(sv[1]);
	/* The broker stops reading once it has refused the line: a short
	 * write is expected. */
	n = send(sv[0], line, big, MSG_NOSIGNAL);
	cr_assert_gt(n, 0);
	free(line);
	r = read_response(sv[0]);
	error_of(r, RPC_PARSE_ERROR);
	cr_assert(json_is_null(json_object_get(r, "id")));
	json_decref(r);
	cr_assert_eq(wait_exit(pid), 1);
	close(sv[0]);
}

Test(serve, socket_mode_0600_refused_if_it_exists_removed_at_sigterm)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	char path[128];
	pid_t pid;
	json_t *r;
	int s, tries;

	snprintf(path, sizeof(path), "%s/s.sock", outside);
	cr_assert_lt(strlen(path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	pid = start_serve(-1, "--socket", path);
	for (tries = 0; tries < 200 && stat(path, &st) != 0; tries++)
		usleep(20000);
	cr_assert_eq(stat(path, &st), 0, "no socket at %s", path);
	cr_assert(S_ISSOCK(st.st_mode));
	cr_assert_eq(st.st_mode & 0777, 0600);

	/* A second broker refuses the path that exists. */
	cr_assert_eq(wait_exit(start_serve(-1, "--socket", path)), 2);

	/* Two clients, one after the other. */
	for (int i = 0; i < 2; i++) {
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		cr_assert_eq(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
		send_with_fds(s,
		    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		    "\"fs.list\"}\n",
		    NULL, 0);
		r = read_response(s);
		result_of(r);
		json_decref(r);
		close(s);
	}
	cr_assert_eq(kill(pid, SIGTERM), 0);
	cr_assert_eq(wait_exit(pid), 0);
	cr_assert_eq(stat(path, &st), -1, "the socket was left behind");
}

/* Waits up to WAIT_MS for PID to exit; asserts it did, with status 0. */
static void
exits_within(pid_t pid, long wait_ms)
{
	struct timespec t0, t;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		long ms;

		cr_assert_geq(w, 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (w == pid)
			break;
		if (ms > wait_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			cr_assert_fail("serve still runs %ld ms after SIGTERM",
			    ms);
		}
		usleep(10000);
	}
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "serve ended with status %#x", st);
}

/* Asserts that the workspace holds nothing but "big". */
static void
assert_only_big(void)
{
	int fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fdopendir(fd);
	struct dirent *e;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		cr_assert(strcmp(e->d_name, ".") == 0 ||
			strcmp(e->d_name, "..") == 0 ||
			strcmp(e->d_name, "big") == 0,
		    "left in the workspace: %s", e->d_name);
	closedir(d);
}

/*
 * A transfer that blocks does not hold the session past SIGTERM
 * (finding 5 of the security review): fs.read into a pipe nobody drains,
 * and fs.write from a socket that never ends. The request is answered
 * io_error, serve exits within a second, and nothing is left in the
 * workspace.
 */
Test(serve, a_blocked_transfer_ends_at_sigterm)
{
	static char chunk[1 << 16];
	int sv[2], p[2], d[2], fd, queued = 0, tries;
	struct pollfd pf;
	pid_t pid;
	json_t *r;

	/* 1 MiB: far more than a pipe holds (64 KiB by default). */
	memset(chunk, 'x', sizeof(chunk));
	fd = openat(root, "big", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(write_all(fd, chunk, sizeof(chunk)), 0);
	close(fd);

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = start_serve(sv[1], NULL, NULL);
	close(sv[1]);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	send_with_fds(sv[0],
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"fs.read\",\"params\":{\"path\":\"big\","
	    "\"fd\":0}}\n",
	    &p[1], 1);
	close(p[1]);
	/* Blocked: the pipe is full and no answer came. */
	for (tries = 0; tries < 500; tries++) {
		cr_assert_eq(ioctl(p[0], FIONREAD, &queued), 0);
		if (queued >= 65536)
			break;
		usleep(10000);
	}
	cr_assert_geq(queued, 65536, "the pipe never filled: %d", queued);
	pf = (struct pollfd){.fd = sv[0], .events = POLLIN};
	cr_assert_eq(poll(&pf, 1, 200), 0, "answered though blocked");
	cr_assert_eq(kill(pid, SIGTERM), 0);
	exits_within(pid, 1000);
	r = read_response(sv[0]);
	fs_error_of(r, "io_error");
	json_decref(r);
	close(p[0]);
	close(sv[0]);

	/* fs.write from a connected socket whose peer never ends it. */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = start_serve(sv[1], NULL, NULL);
	close(sv[1]);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, d), 0);
	cr_assert_eq(write_all(d[1], "partial", 7), 0);
	send_with_fds(sv[0],
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"fs.write\",\"params\":{\"path\":\"w\","
	    "\"fd\":0}}\n",
	    &d[0], 1);
	close(d[0]);
	/* The data is taken (nothing left queued), then the read waits. */
	for (tries = 0; tries < 500; tries++) {
		cr_assert_eq(ioctl(d[1], TIOCOUTQ, &queued), 0);
		if (queued == 0)
			break;
		usleep(10000);
	}
	cr_assert_eq(queued, 0, "serve never read the socket");
	pf = (struct pollfd){.fd = sv[0], .events = POLLIN};
	cr_assert_eq(poll(&pf, 1, 200), 0, "answered though blocked");
	cr_assert_eq(kill(pid, SIGTERM), 0);
	exits_within(pid, 1000);
	r = read_response(sv[0]);
	fs_error_of(r, "io_error");
	json_decref(r);
	close(d[1]);
	close(sv[0]);
	assert_only_big();
}

/* ---- `stockade run --put/--get` (cmd_run.c, jobrun.c) ---- */

/* Runs `stockade ARGV...` (NULL-terminated) with stdin /dev/null,
 * capturing stdout and stderr (each NUL-terminated, up to 64 KiB) into
 * OUT and ERR (freed by the caller). Returns the exit status. */
static int
run_stockade(const char *const argv[], char **out, char **err)
{
	const char *bin = serve_binary();
	char *bufs[2];
	size_t lens[2] = {0, 0};
	int po[2], pe[2], st;
	pid_t pid;

	cr_assert_eq(pipe2(po, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(pe, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		const char *full[32] = {"stockade"};
		int null = open("/dev/null", O_RDONLY);
		size_t i;

		for (i = 0; argv[i] != NULL && i < 30; i++)
			full[i + 1] = argv[i];
		full[i + 1] = NULL;
		dup2(null, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(bin, (char *const *)(uintptr_t)full);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	for (int k = 0; k < 2; k++) {
		bufs[k] = calloc(1, 1 << 16);
		cr_assert_not_null(bufs[k]);
	}
	for (int open_n = 2; open_n > 0;) {
		struct pollfd p[2] = {{.fd = po[0], .events = POLLIN},
		    {.fd = pe[0], .events = POLLIN}};

		cr_assert_gt(poll(p, 2, 30000), 0, "stockade run hangs");
		for (int k = 0; k < 2; k++) {
			ssize_t n;

			if (p[k].fd < 0 || !(p[k].revents & (POLLIN | POLLHUP)))
				continue;
			n = read(p[k].fd, bufs[k] + lens[k],
			    (1 << 16) - 1 - lens[k]);
			if (n <= 0) {
				close(p[k].fd);
				*(k == 0 ? &po[0] : &pe[0]) = -1;
				open_n--;
			} else {
				lens[k] += (size_t)n;
			}
		}
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	*out = bufs[0];
	*err = bufs[1];
	return WEXITSTATUS(st);
}

#define RUN_ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

Test(run_files, put_then_get_round_trip_with_json)
{
	char in[160], res[160], spec_in[200], spec_out[200];
	_cleanup_free_ char *out = NULL, *err = NULL, *got = NULL;
	json_t *j, *files, *item;
	int rc;

	snprintf(in, sizeof(in), "%s/in.txt", outside);
	snprintf(res, sizeof(res), "%s/res.txt", outside);
	host_write(in, "hello\n");
	snprintf(spec_in, sizeof(spec_in), "%s:in.txt", in);
	snprintf(spec_out, sizeof(spec_out), "out.txt:%s", res);
	rc = run_stockade(RUN_ARGV("run", "--json", "--workspace", ws, "--put",
			      spec_in, "--get", spec_out, "--", "/bin/sh", "-c",
			      "tr a-z A-Z < in.txt > out.txt"),
	    &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	j = json_loads(out, 0, NULL);
	cr_assert_not_null(j, "%s", out);
	cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
	files = json_object_get(j, "files");
	item = json_array_get(json_object_get(files, "put"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(item, "path")),
	    "in.txt");
	cr_assert_eq(json_integer_value(json_object_get(item, "size")), 6);
	cr_assert(json_is_null(json_object_get(item, "error")));
	item = json_array_get(json_object_get(files, "get"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(item, "host")), res);
	cr_assert_eq(json_integer_value(json_object_get(item, "size")), 6);
	json_decref(j);
	got = host_read(res);
	cr_assert_str_eq(got, "HELLO\n");
}

Test(run_files, a_failed_get_is_named_and_turns_ok_into_1)
{
	char res[160], spec[200], spec2[200];
	_cleanup_free_ char *out = NULL, *err = NULL, *got = NULL;
	DIR *d;
	struct dirent *de;
	int rc, n = 0;

	snprintf(res, sizeof(res), "%s/res.txt", outside);
	host_write(res, "previous\n");
	snprintf(spec, sizeof(spec), "nope:%s", res);
	rc = run_stockade(RUN_ARGV("run", "--workspace", ws, "--get", spec,
			      "--", "true"),
	    &out, &err);
	cr_assert_eq(rc, 1, "%s", err);
	cr_assert_not_null(strstr(err, "stockade: nope: not_found: "), "%s",
	    err);
	/* The host file is as it was, and no temporary file is left. */
	got = host_read(res);
	cr_assert_str_eq(got, "previous\n");
	d = opendir(outside);
	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL)
		n += strncmp(de->d_name, ".stockade", 9) == 0;
	closedir(d);
	cr_assert_eq(n, 0, "a temporary file was left in %s", outside);
	free(out);
	free(err);

	/* The job's own status decides when it is not ok. */
	snprintf(spec2, sizeof(spec2), "nope:%s", res);
	rc = run_stockade(RUN_ARGV("run", "--workspace", ws, "--get", spec2,
			      "--", "/bin/sh", "-c", "exit 3"),
	    &out, &err);
	cr_assert_eq(rc, 3, "%s", err);
}

Test(run_files, a_failed_put_runs_no_job)
{
	char in[160], spec[200];
	_cleanup_free_ char *out = NULL, *err = NULL;
	int rc;

	snprintf(in, sizeof(in), "%s/in.txt", outside);
	host_write(in, "x");
	/* A regular file where the put needs a directory (a missing one
	 * would be made). */
	close(openat(root, "plain", O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	snprintf(spec, sizeof(spec), "%s:plain/dir/in.txt", in);
	rc = run_stockade(RUN_ARGV("run", "--json", "--workspace", ws, "--put",
			      spec, "--", "/bin/sh", "-c", "touch ran"),
	    &out, &err);
	cr_assert_eq(rc, 1, "%s", err);
	cr_assert_not_null(strstr(err,
			       "stockade: plain/dir/in.txt: "
			       "not_a_directory"),
	    "%s", err);
	cr_assert_str_eq(out, "");
	cr_assert_eq(faccessat(root, "ran", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	free(out);
	free(err);
	out = err = NULL;
	/* A host file that cannot be opened, and a bad operand: no job. */
	rc = run_stockade(RUN_ARGV("run", "--workspace", ws, "--put",
			      "/nonexistent/f:f", "--", "/bin/sh", "-c",
			      "touch ran"),
	    &out, &err);
	cr_assert_eq(rc, 1, "%s", err);
	free(out);
	free(err);
	out = err = NULL;
	rc = run_stockade(RUN_ARGV("run", "--workspace", ws, "--put", "noColon",
			      "--", "true"),
	    &out, &err);
	cr_assert_eq(rc, 2, "%s", err);
	cr_assert_eq(faccessat(root, "ran", F_OK, AT_SYMLINK_NOFOLLOW), -1);
}
