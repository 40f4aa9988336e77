/*
 * stockade-launcher: builds one namespace jail per job for the broker.
 *
 * Started only by the broker, by fork and exec, with its end of the
 * socketpair at a fixed descriptor named by --ipc-fd (3). It owns no host
 * file API: the workspace arrives as a descriptor. At start-up it forks
 * its zygote, which makes every jail (zygote.h), then confines itself to
 * supervising them (confine.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "confine.h"
#include "jail.h"
#include "launcher.h"
#include "log.h"

/*
 * Ends and reaps what this launcher started, before it exits (issue 23,
 * point 5): the warm pool's waiting jails, whose init is our child
 * (CLONE_PARENT; pool_drain has the zygote kill each and reaps it), then
 * the zygote (zygote_stop reaps it). The jails of jobs were reaped when
 * their job ended (monitor.c). Left to exit alone, each would be a
 * zombie of whatever reaps orphans after us: a container's pid 1 without
 * an init collects them until pids.max stops it from forking.
 */
static void
end_children(struct launcher *l)
{
	if (l->pool.buf != NULL)
		(void)pool_drain(&l->pool, &l->zygote);
	zygote_stop(&l->zygote);
}

static int
parse_fd(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 3 || v > 1024)
		return -1;
	return (int)v;
}

/* The descriptor must be a SOCK_SEQPACKET unix socket. */
static int
check_ipc(int fd)
{
	struct stat st;
	int type = 0;
	socklen_t len = sizeof(type);

	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		return -errno;
	return type == SOCK_SEQPACKET ? 0 : -EPROTOTYPE;
}

/*
 * Takes the broker's socket from the command line (--ipc-fd N) into
 * *FD, checks it, dies with PARENT, the broker (or its spawner), and
 * closes every other descriptor above stdio. Returns -1 to go on, or the
 * exit status: 0 after --version, 2 for a bad command line or socket, 1
 * when the broker is gone already.
 */
static int
take_ipc(int argc, char **argv, pid_t parent, int *fd)
{
	int e;

	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("stockade-launcher %s (protocol %u)\n", STOCKADE_VERSION,
		    PROTO_VERSION);
		return 0;
	}
	if (argc != 3 || strcmp(argv[1], "--ipc-fd") != 0 ||
	    (*fd = parse_fd(argv[2])) < 0) {
		fprintf(stderr,
		    "usage: stockade-launcher --ipc-fd N\n"
		    "It is started by stockade, not by hand.\n");
		return 2;
	}
	if ((e = check_ipc(*fd)) < 0) {
		log_error("descriptor %d is not the broker's socket: %s", *fd,
		    strerror(-e));
		return 2;
	}
	/* If the broker dies, so do we, and our jails with us; a parent
	 * that died before the signal was armed shows as a new parent
	 * (prctl(2), PR_SET_PDEATHSIG). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent) {
		log_error("the broker is gone");
		return 1;
	}
	/* Nothing but stdio and the socket crosses the exec (rule 11). */
	closefrom(*fd + 1);
	for (int i = 3; i < *fd; i++)
		close(i);
	signal(SIGPIPE, SIG_IGN);
	return -1;
}

/*
 * The session L on the broker's socket FD, in PHASE_HELLO: its buffers,
 * the payload's host ids, a pidfd of this process and /proc. Returns 0,
 * or -1 (logged) when memory, pidfd_open or /proc fails; L then holds
 * what was made until the process exits.
 */
static int
session_init(struct launcher *l, int fd)
{
	memset(l, 0, sizeof(*l));
	l->ipc = fd;
	l->phase = PHASE_HELLO;
	l->msg = malloc(PROTO_MAX_MSG);
	l->out = malloc(PROTO_MAX_MSG);
	/*
	 * Whose ids the payload gets on the host: ours, unless we are root.
	 * A payload that is host uid 0, even without a capability, passes
	 * every check that looks at the uid alone (sysctls under /proc/sys,
	 * owner checks on bound files, RLIMIT_NPROC's exemption for root),
	 * so a root launcher maps payloads to the overflow ids ("nobody")
	 * and lends them an id-mapped workspace instead (idmap.c).
	 */
	l->as_root = geteuid() == 0;
	l->outer_uid = l->as_root ? PROTO_ROOT_PAYLOAD_ID : geteuid();
	l->outer_gid = l->as_root ? PROTO_ROOT_PAYLOAD_ID : getegid();
	l->self_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	l->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	l->cg_parent = -1;
	if (l->msg == NULL || l->out == NULL || l->self_pidfd < 0 ||
	    l->proc_fd < 0) {
		log_error("start-up failed: out of memory, pidfd_open or /proc "
			  "unusable");
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	/* Our parent as we start: the broker (or its spawner), which may
	 * be pid 1 itself (the broker as a container's entry point). */
	const pid_t parent = getppid();
	struct zygote_config zc;
	struct launcher l;
	char why[512];
	int fd = -1, e;

	log_set_program("stockade-launcher");
	if (getenv("STOCKADE_DEBUG") != NULL)
		log_set_level(LOG_LVL_DEBUG);
	if ((e = take_ipc(argc, argv, parent, &fd)) >= 0)
		return e;
	if (session_init(&l, fd) < 0)
		return 1;
	/* The zygote first, unconfined, then this process confines itself
	 * for good (zygote.h says why the two are apart). */
	zc.as_root = l.as_root;
	zc.outer_uid = l.outer_uid;
	zc.outer_gid = l.outer_gid;
	zc.launcher_pidfd = l.self_pidfd;
	if ((e = zygote_start(&zc, &l.zygote)) < 0) {
		log_error("cannot start the zygote: %s", strerror(-e));
		return 1;
	}
	if ((e = confine_launcher(why, sizeof(why))) < 0) {
		log_error("cannot confine the launcher: %s", why);
		end_children(&l);
		return 1;
	}
	for (;;) {
		e = launcher_dispatch_one(&l);
		if (e == 0 || l.peer_gone)
			break; /* the broker closed the session */
		if (e < 0) {
			log_error("ending the session: %s", strerror(-e));
			end_children(&l);
			return 1;
		}
	}
	end_children(&l);
	if (l.cg_parent >= 0)
		close(l.cg_parent);
	free(l.cg_path);
	free(l.msg);
	free(l.out);
	return 0;
}
