/*
 * check_terminal.c: the checks of the terminal layer (check.h,
 * check_jail.h; their entries are in check_process.c's table): the job
 * leads a session of its own with no controlling terminal and only its
 * standard descriptors, and `stockade run` escapes the controls a
 * program writes to a terminal, even split across writes. Each runs
 * stockade-probe (probe_process.c) or a shell in a real job
 * (docs/layers.md says what the layer does).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "check_jail.h"

/* ---- terminal -------------------------------------------------------- */

/* terminal.own_session: the program leads a session and a process group
 * of its own (setsid(2)), so no terminal of the caller's session is its
 * controlling terminal and TIOCSTI cannot type into it
 * (CVE-2017-5226). */
void
term_own_session(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char pid[32], sid[32], pgrp[32];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("session")) &&
	    jail_val(r, &j, "pid", pid, sizeof(pid)) &&
	    jail_val(r, &j, "sid", sid, sizeof(sid)) &&
	    jail_val(r, &j, "pgrp", pgrp, sizeof(pgrp))) {
		if (strcmp(pid, sid) == 0 && strcmp(pid, pgrp) == 0)
			check_pass(r,
			    "pid %s leads its session and process "
			    "group",
			    pid);
		else
			check_fail(r,
			    "pid %s is in session %s, process group "
			    "%s (0: a session outside the jail)",
			    pid, sid, pgrp);
	}
	check_job_free(&j);
}

/* terminal.no_controlling_terminal: /proc/self/stat's tty_nr is 0 and
 * standard input answers no terminal ioctl (ENOTTY). */
void
term_no_ctty(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char tty[32], pg[32];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("session")) &&
	    jail_val(r, &j, "tty_nr", tty, sizeof(tty)) &&
	    jail_val(r, &j, "tiocgpgrp", pg, sizeof(pg))) {
		if (strcmp(tty, "0") == 0 && strcmp(pg, "ENOTTY") == 0)
			check_pass(r, "tty_nr 0; TIOCGPGRP on stdin: ENOTTY");
		else
			check_fail(r, "tty_nr %s; TIOCGPGRP on stdin: %s", tty,
			    pg);
	}
	check_job_free(&j);
}

/* terminal.stdin_null_stdout_pipes: standard input is /dev/null
 * (character device 1:3) and standard output and error are pipes to
 * the launcher. */
void
term_stdio_kinds(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char f0[32], f1[32], f2[32];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("session")) &&
	    jail_val(r, &j, "fd0", f0, sizeof(f0)) &&
	    jail_val(r, &j, "fd1", f1, sizeof(f1)) &&
	    jail_val(r, &j, "fd2", f2, sizeof(f2))) {
		if (strcmp(f0, "chr 1:3") == 0 && strcmp(f1, "fifo") == 0 &&
		    strcmp(f2, "fifo") == 0)
			check_pass(r,
			    "stdin /dev/null (chr 1:3), stdout and "
			    "stderr pipes");
		else
			check_fail(r, "stdin %s, stdout %s, stderr %s", f0, f1,
			    f2);
	}
	check_job_free(&j);
}

/* terminal.only_stdio_descriptors: the program starts with descriptors
 * 0, 1 and 2 and no other (style.md rule 10: nothing of init's or the
 * launcher's crosses the exec). */
void
term_only_stdio(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char fds[1024];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("session")) &&
	    jail_val(r, &j, "fds", fds, sizeof(fds))) {
		if (strcmp(fds, "0,1,2") == 0)
			check_pass(r, "open descriptors: 0, 1, 2");
		else
			check_fail(r, "open descriptors: %s (want 0,1,2)", fds);
	}
	check_job_free(&j);
}

/*
 * terminal.split_controls_escaped: `stockade run` with its output on a
 * terminal escapes a C1 control the program wrote in two writes (0xC2,
 * then 0x9B "2J": CSI, erase display, in UTF-8) as it does one written
 * whole; and the same for OSC (0x9D) on stderr: the terminal gets no
 * raw C1 control and no ESC (issue 23, point 4; ECMA-48 8.3.16 and
 * 8.3.89 for CSI and OSC).
 */
/*
 * Runs ARGV (ARGV[0] the stockade binary) with C's environment, stdin
 * /dev/null and stdout and stderr on a new pseudo-terminal, reading what
 * the terminal gets into OUT (SIZE bytes, NUL-terminated, *LEN bytes)
 * until the program has ended and the terminal is drained, or 30 s.
 * *ST gets its wait status. Returns true when it ended; otherwise fails
 * R (the program killed).
 */
static bool
run_on_pty(struct check_ctx *c, struct check_result *r, char *const *argv,
    char *out, size_t size, size_t *len, int *st)
{
	char *pts;
	int mfd, sfd;
	pid_t pid, p = 0;
	int64_t t0;

	*len = 0;
	*st = 0;
	if ((mfd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 ||
	    grantpt(mfd) < 0 || unlockpt(mfd) < 0 ||
	    (pts = ptsname(mfd)) == NULL ||
	    (sfd = open(pts, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		check_fail(r, "cannot open a pseudo-terminal: %s",
		    strerror(errno));
		if (mfd >= 0)
			close(mfd);
		return false;
	}
	if ((pid = fork()) < 0) {
		check_fail(r, "fork: %s", strerror(errno));
		close(mfd);
		close(sfd);
		return false;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (nul < 0 || dup2(nul, 0) < 0 || dup2(sfd, 1) < 0 ||
		    dup2(sfd, 2) < 0)
			_exit(90);
		execve(argv[0], argv, c->envp);
		_exit(91);
	}
	close(sfd);
	t0 = check_now_ms();
	for (;;) {
		struct pollfd pf = {mfd, POLLIN, 0};
		ssize_t n;

		if (check_now_ms() - t0 > 30000)
			break;
		if (poll(&pf, 1, 50) > 0) {
			n = read(mfd, out + *len, size - 1 - *len);
			if (n > 0) {
				*len += (size_t)n;
				if (*len < size - 1)
					continue;
			}
			if (n <= 0 && errno != EINTR && errno != EAGAIN &&
			    p != 0)
				break; /* EIO: every slave closed */
		}
		if (p == 0 && (p = waitpid(pid, st, WNOHANG)) < 0)
			break;
		if (p != 0 && poll(&pf, 1, 0) == 0)
			break;
	}
	if (p == 0) {
		kill(pid, SIGKILL);
		(void)waitpid(pid, st, 0);
	}
	close(mfd);
	out[*len] = '\0';
	if (p == 0) {
		check_fail(r, "stockade run did not end within 30 s");
		return false;
	}
	return true;
}

void
term_split_controls_escaped(struct check_ctx *c, struct check_result *r)
{
	static const char script[] =
	    "printf '\\302'; sleep 0.3; printf '\\2332J'; "
	    "printf '\\302' >&2; sleep 0.3; printf '\\2350;pwn\\007' >&2";
	char ws[4096], out[8192];
	size_t len = 0;
	int st = 0, e;

	if ((e = check_workspace(c, ws, sizeof(ws))) < 0) {
		check_fail(r, "cannot make a workspace: %s", strerror(-e));
		return;
	}
	char *argv[] = {check_unconst(c->stockade), check_unconst("run"),
	    check_unconst("--workspace"), ws, check_unconst("--"),
	    check_unconst("sh"), check_unconst("-c"), check_unconst(script),
	    NULL};
	if (!run_on_pty(c, r, argv, out, sizeof(out), &len, &st))
		return;
	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)out[i];

		if (b == 0x1b ||
		    (b == 0xc2 && i + 1 < len &&
			(unsigned char)out[i + 1] >= 0x80 &&
			(unsigned char)out[i + 1] <= 0x9f)) {
			check_fail(r,
			    "the terminal got a raw %s at byte %zu of "
			    "%zu: a control split across two writes was "
			    "not escaped",
			    b == 0x1b ? "ESC" : "C1 control", i, len);
			return;
		}
	}
	if (strstr(out, "2J") == NULL || strstr(out, "pwn") == NULL) {
		check_fail(r,
		    "the terminal got %zu bytes without the program's "
		    "output (\"2J\", \"pwn\"): stockade exit %d",
		    len, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return;
	}
	check_pass(r,
	    "CSI and OSC written in two writes each reached the "
	    "terminal escaped (%zu bytes, no raw C1 control or ESC)",
	    len);
}
