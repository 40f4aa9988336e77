/*
 * zygote.c: the process that makes the launcher's jails (zygote.h).
 *
 * Wire, on the SOCK_SEQPACKET pair (private to the launcher and its
 * zygote, so not in proto.h):
 *   request  the RUN message as proto_encode_run writes it; descriptors:
 *            the workspace directory, then the cgroup leaf if any;
 *   reply    i32 refusal, i32 errno, u8 kill_on_denial, i32 pid,
 *            u64 start seconds, u64 start nanoseconds (CLOCK_MONOTONIC at
 *            the clone, which is system-wide), str why; on ZYGOTE_OK the
 *            descriptors init's pidfd, stdout, stderr, status pipe and
 *            seccomp-notify socket, in that order.
 */
#include "zygote.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buf.h"
#include "fsutil.h"
#include "log.h"

#define REPLY_FDS 5
#define MAX_FILTERS 4

/* The zygote's seccomp filters, built at the first job that needs each
 * (profile, enforcement) and reused. */
struct filter_cache {
	struct {
		char profile[JOB_MAX_PROFILE + 1];
		bool monitor;
		bool kill;
		scmp_filter_ctx ctx;
	} f[MAX_FILTERS];
	size_t n;
};

static scmp_filter_ctx
cached_filter(struct filter_cache *c, const char *profile, bool monitor,
	      bool *kill, char *why, size_t whylen)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->f[i].monitor == monitor &&
		    strcmp(c->f[i].profile, profile) == 0) {
			*kill = c->f[i].kill;
			return c->f[i].ctx;
		}
	if (c->n == MAX_FILTERS) {
		snprintf(why, whylen, "too many seccomp profiles in one session");
		return NULL;
	}
	c->f[c->n].ctx = jail_seccomp_build(profile, monitor, &c->f[c->n].kill,
					    why, whylen);
	if (c->f[c->n].ctx == NULL)
		return NULL;
	snprintf(c->f[c->n].profile, sizeof(c->f[c->n].profile), "%s", profile);
	c->f[c->n].monitor = monitor;
	*kill = c->f[c->n].kill;
	return c->f[c->n++].ctx;
}

#define MAX_LIVE 8

/*
 * What the session's first request fixed (zygote.h, "Authority"): that
 * request reaches the zygote before any job has run, so before anything
 * a payload controls has reached the launcher.
 */
struct pin {
	bool set;
	struct job_spec spec;  /* the first request, decoded */
	dev_t ws_dev;          /* its workspace */
	ino_t ws_ino;
	bool cgroup;           /* it came with a cgroup leaf, */
	dev_t cg_dev;          /* whose parent is this one */
	ino_t cg_ino;
};

struct zstate {
	const struct zygote_config *c;
	struct filter_cache cache;
	struct pin pin;
	/* The jails it made that have not exited: the launcher asks the
	 * zygote to kill them (it may signal nothing itself). */
	struct {
		uint64_t job_id;
		int pidfd;
	} live[MAX_LIVE];
	size_t nlive;
};

static bool
str_eq(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* Whether B asks for nothing the session's first request A did not:
 * the same ids, flags, names, home, seccomp profile and bind mounts.
 * Limits, argv and environment may differ per job. */
static bool
same_authority(const struct job_spec *a, const struct job_spec *b)
{
	if (a->uid != b->uid || a->gid != b->gid || a->flags != b->flags ||
	    a->nmounts != b->nmounts || !str_eq(a->hostname, b->hostname) ||
	    !str_eq(a->user, b->user) || !str_eq(a->home, b->home) ||
	    !str_eq(a->seccomp_profile, b->seccomp_profile))
		return false;
	for (uint32_t i = 0; i < a->nmounts; i++)
		if (a->mounts[i].kind != b->mounts[i].kind ||
		    !str_eq(a->mounts[i].source, b->mounts[i].source) ||
		    !str_eq(a->mounts[i].target, b->mounts[i].target))
			return false;
	return true;
}

/* The device and inode of the directory above cgroup leaf LEAF, which
 * must be on a cgroup2 file system. */
static int
leaf_parent(int leaf, dev_t *dev, ino_t *ino)
{
	struct statfs sf;
	struct stat st;
	int up;

	if (fstatfs(leaf, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC)
		return -EINVAL;
	up = openat(leaf, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (up < 0)
		return -errno;
	if (fstat(up, &st) < 0) {
		close(up);
		return -errno;
	}
	close(up);
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/*
 * Checks SPEC, its workspace WS (stat) and cgroup leaf CG (or -1)
 * against what the session's first request fixed, pinning them when this
 * is the first. Returns true when the request may go on; takes SPEC into
 * the pin on the first call (then *SPEC is zeroed).
 */
static bool
pinned(struct pin *p, struct job_spec *spec, const struct stat *ws, int cg)
{
	dev_t dev = 0;
	ino_t ino = 0;

	if (cg >= 0 && leaf_parent(cg, &dev, &ino) < 0)
		return false;
	if (!p->set) {
		p->set = true;
		p->spec = *spec;
		memset(spec, 0, sizeof(*spec));
		p->ws_dev = ws->st_dev;
		p->ws_ino = ws->st_ino;
		p->cgroup = cg >= 0;
		p->cg_dev = dev;
		p->cg_ino = ino;
		return true;
	}
	return same_authority(&p->spec, spec) && ws->st_dev == p->ws_dev &&
	       ws->st_ino == p->ws_ino && (cg >= 0) == p->cgroup &&
	       (cg < 0 || (dev == p->cg_dev && ino == p->cg_ino));
}

static int
send_reply(int sock, const struct zygote_reply *r, const struct jail *j)
{
	uint8_t buf[64 + JOB_MAX_DETAIL];
	int fds[REPLY_FDS];
	struct wbuf w;

	wbuf_init(&w, buf, sizeof(buf));
	wbuf_put_i32(&w, (int32_t)r->refusal);
	wbuf_put_i32(&w, r->err);
	wbuf_put_u8(&w, r->kill_on_denial);
	wbuf_put_i32(&w, r->refusal == ZYGOTE_OK ? j->pid : 0);
	wbuf_put_u64(&w, r->refusal == ZYGOTE_OK ? (uint64_t)j->start.tv_sec : 0);
	wbuf_put_u64(&w, r->refusal == ZYGOTE_OK ? (uint64_t)j->start.tv_nsec : 0);
	wbuf_put_str(&w, r->why);
	if (!wbuf_ok(&w))
		return -ENOBUFS;
	if (r->refusal != ZYGOTE_OK)
		return proto_send_fds(sock, buf, w.len, NULL, 0);
	fds[0] = j->pidfd;
	fds[1] = j->out_fd;
	fds[2] = j->err_fd;
	fds[3] = j->status_fd;
	fds[4] = j->notify_sock;
	return proto_send_fds(sock, buf, w.len, fds, REPLY_FDS);
}

/*
 * Starts the jail of one request (the RUN message MSG of LEN bytes, with
 * FDS[0] the workspace and FDS[1] the cgroup leaf when NFDS is 2) into J,
 * or says why not in R.
 */
static void
start_one(struct zstate *z, const uint8_t *msg, size_t len, const int *fds,
	  size_t nfds, struct jail *j, struct zygote_reply *r)
{
	const struct zygote_config *c = z->c;
	const struct job_spec *use;
	struct job_spec spec;
	struct jail_host host = {
		.outer_uid = c->outer_uid,
		.outer_gid = c->outer_gid,
		.launcher_pidfd = c->launcher_pidfd,
		.cgroup_fd = nfds == 2 ? fds[1] : -1,
		.filter = NULL,
		.sibling = true,
	};
	const uint8_t *body;
	size_t body_len;
	uint16_t type;
	struct stat st;
	int tree = -1, e;

	memset(&spec, 0, sizeof(spec));
	/* The launcher decoded and checked this already; decoding it again
	 * here, where the privileges are, costs little (style.md rule 8). */
	if (nfds < 1 || nfds > 2 ||
	    proto_decode_header(msg, len, &type, &body, &body_len) < 0 ||
	    type != PROTO_RUN || proto_decode_run(body, body_len, &spec) < 0 ||
	    fstat(fds[0], &st) < 0 || !S_ISDIR(st.st_mode)) {
		r->refusal = ZYGOTE_BAD_REQUEST;
		r->err = EBADMSG;
		goto out;
	}
	if (z->nlive == MAX_LIVE ||
	    !pinned(&z->pin, &spec, &st, host.cgroup_fd)) {
		r->refusal = ZYGOTE_NOT_SESSION;
		r->err = EPERM;
		goto out;
	}
	/* The first request's spec now lives in the pin. */
	use = spec.argv != NULL ? &spec : &z->pin.spec;
	if (c->as_root) {
		/* A workspace owned by root would lend the job root's
		 * access through the id-mapped mount. */
		if (st.st_uid == 0 || st.st_gid == 0) {
			r->refusal = ZYGOTE_ROOT_WORKSPACE;
			r->err = EPERM;
			goto out;
		}
		tree = jail_idmapped_workspace(fds[0], c->outer_uid,
					       c->outer_gid);
		if (tree < 0) {
			r->refusal = ZYGOTE_IDMAP;
			r->err = -tree;
			goto out;
		}
	}
	if (!(use->flags & JOB_F_UNSAFE_NO_SECCOMP)) {
		host.filter = cached_filter(&z->cache, use->seccomp_profile,
					    host.cgroup_fd < 0,
					    &r->kill_on_denial, r->why,
					    sizeof(r->why));
		if (host.filter == NULL) {
			r->refusal = ZYGOTE_FILTER;
			r->err = EINVAL;
			goto out;
		}
	}
	if ((e = jail_start(use, fds[0], tree, &host, j)) < 0) {
		r->refusal = ZYGOTE_CLONE;
		r->err = -e;
	} else {
		/* Kept to kill it when asked (zygote_kill). */
		z->live[z->nlive].job_id = use->job_id;
		z->live[z->nlive].pidfd = fcntl(j->pidfd, F_DUPFD_CLOEXEC, 3);
		if (z->live[z->nlive].pidfd >= 0)
			z->nlive++;
	}
out:
	if (tree >= 0)
		close(tree);
	job_spec_clear(&spec);
}

/*
 * Keeps, as root, only what building a jail needs (zygote.h); anything
 * else keeps none. no_new_privs in every case. Returns 0 or -1.
 */
static int
drop_privileges(bool as_root)
{
	bool bset;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	if (!as_root)
		return 0;
	if (capng_get_caps_process() != 0)
		return -1;
	bset = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP) != 0;
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED,
			  CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID, -1) != 0)
		return -1;
	return capng_apply(bset ? CAPNG_SELECT_ALL :
				  CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT) == 0 ?
		       0 : -1;
}

/* KILL: SIGKILL the live jail of the job the CANCEL message MSG names
 * (init: the kernel then kills its whole pid namespace). Unknown or
 * already gone: nothing to do. */
static void
kill_one(struct zstate *z, const uint8_t *msg, size_t len)
{
	const uint8_t *body;
	size_t body_len;
	uint16_t type;
	uint64_t id;

	if (proto_decode_header(msg, len, &type, &body, &body_len) < 0 ||
	    type != PROTO_CANCEL ||
	    proto_decode_cancel(body, body_len, &id) < 0)
		return;
	for (size_t i = 0; i < z->nlive; i++)
		if (z->live[i].job_id == id)
			syscall(SYS_pidfd_send_signal, z->live[i].pidfd,
				SIGKILL, NULL, 0);
}

/* Forgets the jails whose init has exited (its pidfd is readable). */
static void
reap_live(struct zstate *z, const struct pollfd *p)
{
	size_t k = 0;

	for (size_t i = 0; i < z->nlive; i++) {
		if (p[i].revents != 0) {
			close(z->live[i].pidfd);
			continue;
		}
		z->live[k++] = z->live[i];
	}
	z->nlive = k;
}

static _Noreturn void
zygote_main(const struct zygote_config *c, int sock, pid_t launcher)
{
	static struct zstate z;
	uint8_t *msg = malloc(PROTO_MAX_MSG);
	int fds[PROTO_IO_MAX_FDS];
	size_t nfds;
	int n;

	prctl(PR_SET_NAME, "stockade-zygote");
	if (msg == NULL || drop_privileges(c->as_root) < 0) {
		log_error("zygote: start-up failed (memory or capabilities)");
		_exit(1);
	}
	/* After the capabilities: dropping them clears the parent-death
	 * signal (prctl(2)). The launcher may have died before it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != launcher)
		_exit(1);
	z.c = c;
	for (;;) {
		struct pollfd p[MAX_LIVE + 1];
		struct zygote_reply r;
		uint16_t type;
		const uint8_t *body;
		size_t body_len;
		struct jail j;

		for (size_t i = 0; i < z.nlive; i++)
			p[i] = (struct pollfd){.fd = z.live[i].pidfd,
					       .events = POLLIN};
		p[z.nlive] = (struct pollfd){.fd = sock, .events = POLLIN};
		if (poll(p, z.nlive + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p[z.nlive].revents == 0) {
			reap_live(&z, p);
			continue;
		}
		n = proto_recv_fds(sock, msg, PROTO_MAX_MSG, fds, 2, &nfds);
		if (n <= 0)
			_exit(n == 0 ? 0 : 1);
		if (nfds == 0 &&
		    proto_decode_header(msg, (size_t)n, &type, &body,
					&body_len) == 0 &&
		    type == PROTO_CANCEL) {
			kill_one(&z, msg, (size_t)n);
			continue;
		}
		memset(&r, 0, sizeof(r));
		memset(&j, 0, sizeof(j));
		j.pidfd = j.out_fd = j.err_fd = j.status_fd = j.notify_sock = -1;
		start_one(&z, msg, (size_t)n, fds, nfds, &j, &r);
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		n = send_reply(sock, &r, &j);
		/* Ours are closed either way: the launcher has its copies,
		 * or init reads EOF on its pipes and the job is lost. */
		jail_close(&j);
		if (n < 0)
			_exit(1);
	}
}

int
zygote_kill(struct zygote *z, uint64_t job_id)
{
	uint8_t msg[64];
	int n = proto_encode_cancel(msg, sizeof(msg), job_id);

	if (n < 0)
		return n;
	return proto_send_fds(z->sock, msg, (size_t)n, NULL, 0);
}

int
zygote_start(const struct zygote_config *c, struct zygote *z)
{
	pid_t launcher = getpid();
	int sv[2], e;

	z->pid = -1;
	z->sock = -1;
	z->buf = malloc(PROTO_MAX_MSG);
	if (z->buf == NULL)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		e = -errno;
		free(z->buf);
		z->buf = NULL;
		return e;
	}
	z->pid = fork();
	if (z->pid == 0) {
		int lo = sv[1] < c->launcher_pidfd ? sv[1] : c->launcher_pidfd;
		int hi = sv[1] ^ c->launcher_pidfd ^ lo;

		/* Standard input and output are /dev/null (the spawner
		 * made them so); standard error is the broker's, for
		 * diagnostics. Nothing else of the launcher's stays, the
		 * broker's socket least of all. */
		if (lo > 3)
			syscall(SYS_close_range, 3u, (unsigned)lo - 1, 0u);
		if (hi > lo + 1)
			syscall(SYS_close_range, (unsigned)lo + 1,
				(unsigned)hi - 1, 0u);
		syscall(SYS_close_range, (unsigned)hi + 1, ~0u, 0u);
		zygote_main(c, sv[1], launcher);
	}
	e = z->pid < 0 ? -errno : 0;
	close(sv[1]);
	if (e < 0) {
		close(sv[0]);
		free(z->buf);
		z->buf = NULL;
		return e;
	}
	z->sock = sv[0];
	return 0;
}

int
zygote_start_jail(struct zygote *z, const struct job_spec *spec, int wsfd,
		  int cgroup_fd, struct jail *j, struct zygote_reply *r)
{
	int fds[PROTO_IO_MAX_FDS] = {wsfd, cgroup_fd};
	char *why = NULL;
	uint64_t sec, nsec;
	struct rbuf rb;
	size_t nfds;
	int32_t refusal, err, pid;
	uint8_t kill;
	int n, e;

	memset(j, 0, sizeof(*j));
	j->pidfd = j->out_fd = j->err_fd = j->status_fd = j->notify_sock = -1;
	memset(r, 0, sizeof(*r));
	if ((n = proto_encode_run(z->buf, PROTO_MAX_MSG, spec)) < 0)
		return n;
	if ((e = proto_send_fds(z->sock, z->buf, (size_t)n, fds,
				cgroup_fd >= 0 ? 2 : 1)) < 0)
		return e;
	n = proto_recv_fds(z->sock, z->buf, PROTO_MAX_MSG, fds, REPLY_FDS,
			   &nfds);
	if (n <= 0)
		return n == 0 ? -EPIPE : n;
	rbuf_init(&rb, z->buf, (size_t)n);
	if (rbuf_get_i32(&rb, &refusal) < 0 || rbuf_get_i32(&rb, &err) < 0 ||
	    rbuf_get_u8(&rb, &kill) < 0 || rbuf_get_i32(&rb, &pid) < 0 ||
	    rbuf_get_u64(&rb, &sec) < 0 || rbuf_get_u64(&rb, &nsec) < 0 ||
	    rbuf_get_str(&rb, &why, sizeof(r->why) - 1) < 0 ||
	    rbuf_end(&rb) < 0 || refusal < ZYGOTE_OK ||
	    refusal > ZYGOTE_NOT_SESSION ||
	    nfds != (refusal == ZYGOTE_OK ? REPLY_FDS : 0u) ||
	    (refusal == ZYGOTE_OK && pid <= 0)) {
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		free(why);
		return -EPROTO;
	}
	r->refusal = (enum zygote_refusal)refusal;
	r->err = err;
	r->kill_on_denial = kill != 0;
	snprintf(r->why, sizeof(r->why), "%s", why);
	free(why);
	if (refusal != ZYGOTE_OK)
		return 0;
	j->pid = (pid_t)pid;
	j->start.tv_sec = (time_t)sec;
	j->start.tv_nsec = (long)nsec;
	j->pidfd = fds[0];
	j->out_fd = fds[1];
	j->err_fd = fds[2];
	j->status_fd = fds[3];
	j->notify_sock = fds[4];
	return 0;
}

void
zygote_stop(struct zygote *z)
{
	close_fdp(&z->sock);
	free(z->buf);
	z->buf = NULL;
}
