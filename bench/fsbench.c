/*
 * fsbench.c: a benchmark client of `stockade serve --socket` (docs/
 * protocol.md) for bulk transfers with descriptor passing. Run by
 * bench/fs-transfer.py, not by the tests.
 *
 *   fsbench SOCKET put-big HOST_FILE SANDBOX_PATH
 *   fsbench SOCKET get-big SANDBOX_PATH HOST_FILE
 *   fsbench SOCKET put-many HOST_DIR SANDBOX_DIR COUNT
 *   fsbench SOCKET get-many SANDBOX_DIR HOST_DIR COUNT
 *   fsbench SOCKET unpack HOST_DIR SANDBOX_DIR
 *   fsbench SOCKET pack SANDBOX_DIR HOST_DIR
 *
 * put-big/get-big send one fs.write/fs.read whose data is a descriptor
 * (SCM_RIGHTS): the broker copies in the kernel. put-many/get-many move
 * files named f00000..f(COUNT-1) with one request per file, pipelined (at
 * most WINDOW requests in flight), each with its descriptor. unpack runs
 * `tar -C HOST_DIR -cf - .` into a pipe whose read end goes with one
 * fs.unpack, pack one fs.pack into a pipe read by `tar -C HOST_DIR -xf
 * -`: tar and the broker work at once, as the two tars of `tar c | tar
 * x` do, and the time includes tar's start and end. Prints the
 * elapsed wall time in milliseconds on stdout; exits 1 if any request
 * failed (its answer on stderr).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 64

static int sock = -1;
static char rbuf[1 << 16];
static size_t rlen;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
die(const char *what)
{
	perror(what);
	exit(2);
}

/* Sends LINE (with its '\n') and FD (if >= 0) in one sendmsg. */
static void
send_line(const char *line, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov = {(void *)(uintptr_t)line, len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (iov.iov_len > 0) {
		ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("sendmsg");
		iov.iov_base = (char *)iov.iov_base + n;
		iov.iov_len -= (size_t)n;
		m.msg_control = NULL;
		m.msg_controllen = 0;
	}
}

/* Reads one answer line; returns 0 for a result, 1 for an error. */
static int
read_answer(void)
{
	for (;;) {
		char *nl = memchr(rbuf, '\n', rlen);
		ssize_t n;

		if (nl != NULL) {
			size_t len = (size_t)(nl - rbuf) + 1;
			int bad = strstr(rbuf, "\"error\"") != NULL &&
			    (size_t)(strstr(rbuf, "\"error\"") - rbuf) < len;

			if (bad)
				fprintf(stderr, "%.*s", (int)len, rbuf);
			memmove(rbuf, rbuf + len, rlen - len);
			rlen -= len;
			return bad;
		}
		if (rlen == sizeof(rbuf))
			die("answer too long");
		n = read(sock, rbuf + rlen, sizeof(rbuf) - rlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("read");
		rlen += (size_t)n;
	}
}

static int
one(const char *method, const char *path, int fd)
{
	char line[8192];
	int n = snprintf(line, sizeof(line),
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\","
	    "\"params\":{\"path\":\"%s\",\"fd\":0%s}}\n",
	    method, path,
	    strcmp(method, "fs.write") == 0 ? ",\"overwrite\":true" : "");

	send_line(line, (size_t)n, fd);
	close(fd);
	return read_answer();
}

static int
many(bool put, const char *hostdir, const char *sbdir, long count)
{
	int dfd = open(hostdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long sent = 0, done = 0;
	int bad = 0;

	if (dfd < 0)
		die(hostdir);
	while (done < count) {
		while (sent < count && sent - done < WINDOW) {
			char name[32], line[8192];
			int fd, n;

			snprintf(name, sizeof(name), "f%05ld", sent);
			fd = put ? openat(dfd, name, O_RDONLY | O_CLOEXEC)
				 : openat(dfd, name,
				       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
				       0644);
			if (fd < 0)
				die(name);
			n = snprintf(line, sizeof(line),
			    "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
			    "\"method\":\"%s\",\"params\":{\"path\":"
			    "\"%s/%s\",\"fd\":0%s}}\n",
			    sent, put ? "fs.write" : "fs.read", sbdir, name,
			    put ? ",\"overwrite\":true" : "");
			send_line(line, (size_t)n, fd);
			close(fd);
			sent++;
		}
		bad |= read_answer();
		done++;
	}
	close(dfd);
	return bad;
}

/*
 * One fs.unpack (UNPACK) or fs.pack of SBDIR, with tar on the other end
 * of a pipe: `tar -C HOSTDIR -cf - .` writing it, or `tar -C HOSTDIR -xf
 * -` reading it. Returns 1 if the request or tar failed.
 */
static int
tar_pipe(bool unpack, const char *hostdir, const char *sbdir)
{
	char line[8192];
	int p[2], n, st;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		die("pipe2");
	if ((pid = fork()) < 0)
		die("fork");
	if (pid == 0) {
		dup2(p[unpack ? 1 : 0], unpack ? 1 : 0);
		if (unpack)
			execlp("tar", "tar", "-C", hostdir, "-cf", "-", ".",
			    (char *)NULL);
		else
			execlp("tar", "tar", "-C", hostdir, "-xf", "-",
			    (char *)NULL);
		_exit(127);
	}
	close(p[unpack ? 1 : 0]);
	n = snprintf(line, sizeof(line),
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\","
	    "\"params\":{\"path\":\"%s\",\"fd\":0}}\n",
	    unpack ? "fs.unpack" : "fs.pack", sbdir);
	send_line(line, (size_t)n, p[unpack ? 0 : 1]);
	close(p[unpack ? 0 : 1]);
	n = read_answer();
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr, "fsbench: tar failed\n");
		n = 1;
	}
	return n;
}

int
main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	double t0;
	int bad;

	if (argc < 5) {
		fprintf(stderr,
		    "usage: see the comment at the top of fsbench.c\n");
		return 2;
	}
	if (strlen(argv[1]) >= sizeof(sa.sun_path))
		die("socket path too long");
	strcpy(sa.sun_path, argv[1]);
	if ((sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect");
	t0 = now_ms();
	if (strcmp(argv[2], "put-big") == 0) {
		int fd = open(argv[3], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			die(argv[3]);
		bad = one("fs.write", argv[4], fd);
	} else if (strcmp(argv[2], "get-big") == 0) {
		int fd = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644);

		if (fd < 0)
			die(argv[4]);
		bad = one("fs.read", argv[3], fd);
	} else if (argc == 6 && strcmp(argv[2], "put-many") == 0) {
		bad = many(true, argv[3], argv[4], atol(argv[5]));
	} else if (argc == 6 && strcmp(argv[2], "get-many") == 0) {
		bad = many(false, argv[4], argv[3], atol(argv[5]));
	} else if (strcmp(argv[2], "unpack") == 0) {
		bad = tar_pipe(true, argv[3], argv[4]);
	} else if (strcmp(argv[2], "pack") == 0) {
		bad = tar_pipe(false, argv[4], argv[3]);
	} else {
		fprintf(stderr, "fsbench: unknown mode %s\n", argv[2]);
		return 2;
	}
	printf("%.1f\n", now_ms() - t0);
	return bad ? 1 : 0;
}
