/*
 * test_escape.c: attacks that must keep failing (style.md rule 22), one
 * test per attack, each named after what it tries and citing where it
 * comes from. Each runs the real `stockade run` and asserts the errno or
 * the outcome the payload sees, and the host afterwards.
 *
 * Registered twice in tests/meson.build, as the invoking user and as uid
 * 65534 (tests/lib/harness.h): several of these matter most when stockade
 * itself runs as root, which is how CI runs the first variant.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "harness.h"

TestSuite(escape, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 60);

static const char *
jstr(const struct run_out *o, const char *name)
{
	json_t *v = json_object_get(o->json, name);

	cr_assert(json_is_string(v), "%s is not a string: %s / %s", name,
	    o->out, o->err);
	return json_string_value(v);
}

/* The job ended ok; returns its stdout. */
static const char *
expect_ok(const struct run_out *o)
{
	cr_assert_str_eq(jstr(o, "status"), "ok", "%s / stderr: %s", o->out,
	    o->err);
	return jstr(o, "stdout");
}

/*
 * core_pattern: a payload that could write /proc/sys/kernel/core_pattern
 * would have the kernel run a program of its choice as host root at its
 * next crash (the container escape class of CVE-2019-5736's era; seen in
 * this project's own review when the payload was host uid 0).
 */
Test(escape, write_core_pattern_is_read_only)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import errno, os\n"
	    "for p in ('/proc/sys/kernel/core_pattern', "
	    "'/proc/sys/vm/drop_caches'):\n"
	    "    try:\n"
	    "        open(p, 'w').write('|/work/x')\n"
	    "        print(p, 'written')\n"
	    "    except OSError as e:\n"
	    "        print(p, errno.errorcode[e.errno])\n"
	    "p = '/proc/sysrq-trigger'\n"
	    "if os.path.exists(p):\n"
	    "    try:\n"
	    "        open(p, 'w').write('h')\n"
	    "        print(p, 'written')\n"
	    "    except OSError as e:\n"
	    "        print(p, errno.errorcode[e.errno])\n"
	    "else:\n"
	    "    print(p, 'EROFS')  # this kernel has no magic SysRq\n");
	cr_assert_str_eq(expect_ok(&o),
	    "/proc/sys/kernel/core_pattern EROFS\n"
	    "/proc/sys/vm/drop_caches EROFS\n"
	    "/proc/sysrq-trigger EROFS\n");
	run_out_free(&o);
}

/*
 * Host uid 0 for the payload: even without capabilities, uid 0 passes
 * owner checks on bound host files and RLIMIT_NPROC's root exemption. The
 * payload's uid must map to a non-zero host uid, whoever runs stockade.
 */
Test(escape, payload_is_never_host_root)
{
	char want[64];
	struct run_out o;

	RUN(&o, "run", "--json", "--", "cat", "/proc/self/uid_map",
	    "/proc/self/gid_map");
	/* uid_map shows inside, outside, count with padding. */
	snprintf(want, sizeof(want), "%u", geteuid() == 0 ? 65534u : geteuid());
	{
		unsigned in, out, n, gin, gout, gn;
		const char *text = expect_ok(&o);

		cr_assert_eq(sscanf(text, "%u %u %u %u %u %u", &in, &out, &n,
				 &gin, &gout, &gn),
		    6, "%s", text);
		cr_assert_eq(in, 1000);
		cr_assert_eq(n, 1);
		cr_assert_neq(out, 0, "the payload is host root: %s", text);
		cr_assert_neq(gout, 0, "the payload is host group 0: %s", text);
		cr_assert_eq(out, (unsigned)strtoul(want, NULL, 10), "%s",
		    text);
	}
	run_out_free(&o);
}

/*
 * A setuid or setgid file left in the workspace: `nosuid` protects the
 * jail, not the host, where another user could run it as the workspace's
 * owner (systemd's RestrictSUIDSGID=; this project's review, finding 3).
 */
Test(escape, setuid_and_setgid_bits_are_refused)
{
	const char *ws = harness_workspace();
	char path[4096];
	struct stat st;
	struct run_out o;

	RUN(&o, "run", "--json", "--workspace", ws, "--", "python3", "-c",
	    "import errno, os, stat\n"
	    "def t(name, f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        print(name, 'allowed')\n"
	    "    except OSError as e:\n"
	    "        print(name, errno.errorcode[e.errno])\n"
	    "open('/work/f', 'w').write('x')\n"
	    "t('chmod-suid', lambda: os.chmod('/work/f', 0o4755))\n"
	    "t('chmod-sgid', lambda: os.chmod('/work/f', 0o2755))\n"
	    "fd = os.open('/work/f', os.O_RDONLY)\n"
	    "t('fchmod-suid', lambda: os.fchmod(fd, 0o4755))\n"
	    "t('open-creat-suid', lambda: os.open('/work/g', os.O_CREAT | "
	    "os.O_WRONLY, 0o4755))\n"
	    "t('open-tmpfile-sgid', lambda: os.open('/work', os.O_TMPFILE | "
	    "os.O_WRONLY, 0o2755))\n"
	    "t('mkdir-sgid', lambda: os.mkdir('/work/d', 0o2755))\n"
	    "t('mknod-suid', lambda: os.mknod('/work/n', stat.S_IFREG | "
	    "0o4755))\n"
	    "t('chmod-plain', lambda: os.chmod('/work/f', 0o755))\n"
	    "print(oct(os.stat('/work/f').st_mode & 0o7777))\n");
	cr_assert_str_eq(expect_ok(&o),
	    "chmod-suid EPERM\nchmod-sgid EPERM\nfchmod-suid EPERM\n"
	    "open-creat-suid EPERM\nopen-tmpfile-sgid EPERM\n"
	    "mkdir-sgid EPERM\nmknod-suid EPERM\nchmod-plain allowed\n"
	    "0o755\n");
	run_out_free(&o);
	snprintf(path, sizeof(path), "%s/f", ws);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0755, "host sees mode %o",
	    st.st_mode & 07777);
	snprintf(path, sizeof(path), "%s/g", ws);
	cr_assert_neq(access(path, F_OK), 0, "a refused create left %s", path);
}

/*
 * AF_VSOCK is not isolated by a network namespace: it reaches the
 * hypervisor and shares the host's port space (this project's review,
 * finding 2). AF_PACKET and the other families have no business in a job.
 */
Test(escape, socket_families_beyond_inet_are_refused)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import errno, socket\n"
	    "for fam in (40, 17, 5, 9, 38, 44):\n"
	    "    try:\n"
	    "        socket.socket(fam, socket.SOCK_STREAM if fam != 17 else "
	    "socket.SOCK_RAW)\n"
	    "        print(fam, 'allowed')\n"
	    "    except OSError as e:\n"
	    "        print(fam, errno.errorcode[e.errno])\n"
	    "for fam in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):\n"
	    "    socket.socket(fam, socket.SOCK_STREAM).close()\n"
	    "print('inet ok')\n");
	cr_assert_str_eq(expect_ok(&o),
	    "40 EAFNOSUPPORT\n17 EAFNOSUPPORT\n5 EAFNOSUPPORT\n"
	    "9 EAFNOSUPPORT\n38 EAFNOSUPPORT\n44 EAFNOSUPPORT\n"
	    "inet ok\n");
	run_out_free(&o);
}

/* chmod of a bound host device node: read-only binds keep /dev/null
 * writable but its inode untouchable (this project's review, 1b). */
Test(escape, host_device_nodes_cannot_be_changed)
{
	struct stat before, after;
	struct run_out o;

	cr_assert_eq(stat("/dev/zero", &before), 0);
	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import errno, os\n"
	    "try:\n"
	    "    os.chmod('/dev/zero', 0o600)\n"
	    "    print('changed')\n"
	    "except OSError as e:\n"
	    "    print(errno.errorcode[e.errno])\n"
	    "open('/dev/null', 'w').write('still writable')\n"
	    "print(len(open('/dev/zero', 'rb').read(8)))\n");
	cr_assert_str_eq(expect_ok(&o), "EROFS\n8\n");
	run_out_free(&o);
	cr_assert_eq(stat("/dev/zero", &after), 0);
	cr_assert_eq(before.st_mode, after.st_mode);
}

/* Empty files pin kernel memory that no rlimit counts: each tmpfs has an
 * inode cap (this project's review, finding 6). */
Test(escape, tmp_inode_flood_hits_enospc)
{
	char policy[4096];
	struct run_out o;

	snprintf(policy, sizeof(policy), "%s/tmp1.ini",
	    harness_tmpdir("stockade-policy-"));
	harness_write_file(policy, "[limits]\ntmp_mb = 1\n");
	RUN(&o, "run", "--json", "--policy", policy, "--", "python3", "-c",
	    "import errno, os\n"
	    "n = 0\n"
	    "try:\n"
	    "    for n in range(100000):\n"
	    "        open('/tmp/%d' % n, 'w').close()\n"
	    "    print('no limit')\n"
	    "except OSError as e:\n"
	    "    print(errno.errorcode[e.errno], n <= 1024)\n");
	cr_assert_str_eq(expect_ok(&o), "ENOSPC True\n");
	run_out_free(&o);
}

/*
 * A job whose output nobody reads must still end at its wall-clock limit:
 * the launcher may not block on the broker (review, finding 4). The
 * broker's stdout is a pipe never read; after twice the limit, no process
 * of the job may be alive on the host.
 */
Test(escape, unread_output_does_not_stop_the_clock)
{
	const char *ws = harness_workspace();
	char hex[13], mark[64], path[4096];
	int p[2], null;
	pid_t pid;

	harness_random_hex(hex, sizeof(hex));
	snprintf(mark, sizeof(mark), "escmark-%s", hex);
	cr_assert_eq(pipe(p), 0);
	snprintf(path, sizeof(path), "%s/mark", ws);
	harness_write_file(path, mark);
	pid = fork();
	cr_assert_geq(pid, 0);
	/* The marker reaches the job through a file in its workspace, so
	 * only the job's processes carry it, not the broker's command line
	 * (the broker itself stays blocked writing to the unread pipe). */
	if (pid == 0) {
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(p[1], 1);
		dup2(null, 2);
		close(p[0]);
		execl(harness_stockade(), "stockade", "run", "--timeout", "1",
		    "--workspace", ws, "--", "sh", "-c",
		    "exec python3 -c 'import sys\n"
		    "while True:\n"
		    "    sys.stdout.write(\"y\" * 65536)\n' \"$(cat "
		    "/work/mark)\"",
		    (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	usleep(2500 * 1000);
	cr_assert_eq(harness_count_marked(mark, 1000, NULL, 0), 0,
	    "the job outlived its 1 s limit while its output was "
	    "not read");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(p[0]);
}

/* A failure of stockade's own set-up is sandbox_error, never blamed on the
 * program (review, finding 10): a hard RLIMIT_NOFILE below the policy's
 * open_files makes the payload's setrlimit fail. */
Test(escape, payload_setup_failure_is_sandbox_error)
{
	const char *const argv[] = {"prlimit", "--nofile=32:32", "--",
	    harness_stockade(), "run", "--json", "--", "true", NULL};
	struct run_out o;

	harness_spawn(argv, &o);
	cr_assert_str_eq(jstr(&o, "status"), "sandbox_error", "%s", o.out);
	cr_assert_not_null(strstr(jstr(&o, "detail"), "rlimits"), "%s", o.out);
	cr_assert_eq(o.status, 70);
	run_out_free(&o);
}

/* A program that sends itself SIGXCPU has not hit the CPU limit. */
Test(escape, self_sent_sigxcpu_is_a_crash_not_a_limit)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import os, signal; os.kill(os.getpid(), signal.SIGXCPU)");
	cr_assert_str_eq(jstr(&o, "status"), "crash", "%s", o.out);
	cr_assert_str_eq(jstr(&o, "signal"), "SIGXCPU");
	run_out_free(&o);
}

/*
 * Output pipes kept open past the job in an unreachable SCM_RIGHTS cycle
 * (the kernel frees them only when its unix-socket garbage collection
 * runs): the job still ends at once, ok, and not as a sandbox_error that
 * would blame stockade (this project's second review, finding 3).
 */
Test(escape, pipes_hidden_in_an_scm_rights_cycle_do_not_hold_the_job)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--timeout", "2", "--", "python3", "-c",
	    "import os, socket\n"
	    "a, b = socket.socketpair()\n"
	    "socket.send_fds(a, [b'x'], [1, 2, a.fileno(), b.fileno()])\n"
	    "print('bye', flush=True)\n"
	    "os._exit(0)\n");
	cr_assert_str_eq(expect_ok(&o), "bye\n");
	cr_assert_lt(o.wall_ms, 1500, "took %ld ms", o.wall_ms);
	run_out_free(&o);
}

/*
 * Escape sequences to the caller's terminal: OSC 52 writes the clipboard,
 * and query sequences make the terminal type a reply, TIOCSTI by another
 * route. On a terminal (here a pty from script(1)), stockade shows them
 * in caret notation instead of passing them (second review, finding 6).
 */
Test(escape, control_sequences_do_not_reach_a_terminal)
{
	char cmd[4096];
	struct run_out o;

	snprintf(cmd, sizeof(cmd),
	    "%s run -- printf 'x\\033]52;c;aGk=\\007\\033[6n\\302\\233y\\n'",
	    harness_stockade());
	{
		const char *const argv[] = {"script", "-qec", cmd, "/dev/null",
		    NULL};

		harness_spawn(argv, &o);
	}
	cr_assert_eq(o.status, 0, "exit %d: %s %s", o.status, o.out, o.err);
	cr_assert_not_null(strstr(o.out, "x^[]52;c;aGk=^G^[[6n^[[y"), "%s",
	    o.out);
	cr_assert_null(strchr(o.out, '\033'), "a raw ESC reached the terminal");
	cr_assert_null(strstr(o.out, "\302\233"), "a raw C1 CSI reached it");
	run_out_free(&o);
}
