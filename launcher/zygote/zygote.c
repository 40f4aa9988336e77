/*
 * zygote.c: the process that makes the launcher's jails (zygote.h): its
 * loop, the jails it clones, kills and measures. Its wire is
 * zygote_wire.h; the launcher's side of it supervisor/zygote_client.c.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fsutil.h"
#include "log.h"
#include "usage.h"
#include "filter_cache.h"
#include "zygote_wire.h"

/* Walks a measure may take to find the jail's tree holding still, and
 * the pause between them (usage_pss_settled). */
#define MEAS_TRIES 3u
#define MEAS_GAP_US 2000u

/* Jails alive at once: the pool's, the running job's, and ones dying. */
#define MAX_LIVE (PROTO_MAX_POOL + 8)

/*
 * What the session's first request fixed (zygote.h, "Authority"): that
 * request reaches the zygote before any job has run, so before anything
 * a payload controls has reached the launcher.
 */
struct pin {
	bool set;
	struct job_spec spec; /* the first request, decoded */
	dev_t ws_dev; /* its workspace */
	ino_t ws_ino;
	bool cgroup; /* it came with a cgroup leaf, */
	dev_t cg_dev; /* whose parent is this one */
	ino_t cg_ino;
};

struct zstate {
	const struct zygote_config *c;
	struct filter_cache cache;
	struct pin pin;
	/* The jails it made that have not exited, by token: the launcher
	 * asks the zygote to kill them (it may signal nothing itself). */
	struct {
		uint64_t token;
		int pidfd;
		pid_t pid; /* init's host pid, valid while pidfd is open */
	} live[MAX_LIVE];
	size_t nlive;
	uint64_t last_token;
	int proc_fd; /* the host's /proc, for measure requests, or -1 */
};

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
 * Checks SPEC (decoded from the RUN message MSG of LEN bytes), its
 * workspace WS (stat) and cgroup leaf CG (or -1) against what the
 * session's first request fixed, pinning them when this is the first
 * (the pin decodes MSG again into a spec of its own). Returns true when
 * the request may go on.
 */
static bool
pinned(struct pin *p, const uint8_t *msg, size_t len,
    const struct job_spec *spec, const struct stat *ws, int cg)
{
	const uint8_t *body;
	size_t body_len;
	uint16_t type;
	dev_t dev = 0;
	ino_t ino = 0;

	if (cg >= 0 && leaf_parent(cg, &dev, &ino) < 0)
		return false;
	if (!p->set) {
		if (proto_decode_header(msg, len, &type, &body, &body_len) <
			0 ||
		    proto_decode_run(body, body_len, &p->spec) < 0)
			return false;
		p->set = true;
		p->ws_dev = ws->st_dev;
		p->ws_ino = ws->st_ino;
		p->cgroup = cg >= 0;
		p->cg_dev = dev;
		p->cg_ino = ino;
		return true;
	}
	return jail_same_authority(&p->spec, spec) && ws->st_dev == p->ws_dev &&
	    ws->st_ino == p->ws_ino && (cg >= 0) == p->cgroup &&
	    (cg < 0 || (dev == p->cg_dev && ino == p->cg_ino));
}

static int
send_reply(int sock, const struct zygote_reply *r, const struct jail *j)
{
	uint8_t buf[64 + JOB_MAX_DETAIL];
	int fds[MAX_REPLY_FDS];
	struct wbuf w;

	wbuf_init(&w, buf, sizeof(buf));
	wbuf_put_i32(&w, (int32_t)r->refusal);
	wbuf_put_i32(&w, r->err);
	wbuf_put_u8(&w, r->kill_on_denial);
	wbuf_put_i32(&w, r->refusal == ZYGOTE_OK ? j->pid : 0);
	wbuf_put_u64(&w,
	    r->refusal == ZYGOTE_OK ? (uint64_t)j->start.tv_sec : 0);
	wbuf_put_u64(&w,
	    r->refusal == ZYGOTE_OK ? (uint64_t)j->start.tv_nsec : 0);
	wbuf_put_u64(&w, r->refusal == ZYGOTE_OK ? j->token : 0);
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
	fds[5] = j->go_fd;
	return proto_send_fds(sock, buf, w.len, fds,
	    j->go_fd >= 0 ? MAX_REPLY_FDS : REPLY_FDS);
}

/*
 * Sorts the descriptors after the workspace, FDS[1..NFDS), by kind into
 * HOST: a directory is the cgroup leaf; a FIFO open read-only (the job's
 * stdin pipe, as the launcher checked it) or
 * a character device (the caller's terminal) the payload's stdin, at
 * most one of each kind. Returns false for anything else. *FIFO says
 * which the stdin is.
 */
static bool
sort_fds(const int *fds, size_t nfds, struct jail_host *host, bool *fifo)
{
	struct stat st;

	for (size_t i = 1; i < nfds; i++) {
		if (fstat(fds[i], &st) < 0)
			return false;
		if (S_ISDIR(st.st_mode) && host->cgroup_fd < 0)
			host->cgroup_fd = fds[i];
		else if ((S_ISCHR(st.st_mode) ||
			     (S_ISFIFO(st.st_mode) &&
				 (fcntl(fds[i], F_GETFL) &
				     (O_ACCMODE | O_PATH)) == O_RDONLY)) &&
		    host->stdin_fd < 0) {
			host->stdin_fd = fds[i];
			*fifo = S_ISFIFO(st.st_mode);
		} else
			return false;
	}
	return true;
}

/*
 * Starts the jail of one request (the RUN message MSG of LEN bytes, with
 * FDS[0] the workspace, then the cgroup leaf and the payload's stdin when
 * there are) into J, or says why not in R. POOLED: a jail for the warm pool,
 * whose init waits for its job (jail.h, jail_host.pooled); never with a
 * stdin.
 */
/*
 * Checks the request MSG (LEN bytes) with its descriptors FDS (NFDS) as
 * start_one takes it: decodes it into SPEC (the caller clears it), sorts
 * the descriptors into HOST (sort_fds), keeps the workspace's fstat in
 * *ST, and refuses what the zygote must not do: a malformed request, one
 * outside the session's authority or with no slot left, layers that
 * cannot be off together here, a root-owned workspace for a root
 * zygote. Returns true when the jail may be made; false with R's refusal
 * and errno set.
 */
static bool
request_ok(struct zstate *z, const uint8_t *msg, size_t len, const int *fds,
    size_t nfds, bool pooled, struct job_spec *spec, struct jail_host *host,
    struct stat *st, struct zygote_reply *r)
{
	const uint8_t *body;
	const char *refusal;
	size_t body_len;
	uint16_t type;
	bool fifo = false;

	/* The launcher decoded and checked this already; decoding it again
	 * here, where the privileges are, costs little (style.md rule 8). */
	if (nfds < 1 || nfds > REQUEST_FDS ||
	    proto_decode_header(msg, len, &type, &body, &body_len) < 0 ||
	    type != PROTO_RUN || proto_decode_run(body, body_len, spec) < 0 ||
	    fstat(fds[0], st) < 0 || !S_ISDIR(st->st_mode) ||
	    !sort_fds(fds, nfds, host, &fifo) ||
	    (host->stdin_fd >= 0 && pooled) ||
	    ((spec->flags & JOB_F_STDIN) != 0) !=
		(host->stdin_fd >= 0 && fifo) ||
	    (host->stdin_fd >= 0 && !fifo &&
		!job_spec_layer_off(spec, JOB_LAYER_NO_TERMINAL))) {
		r->refusal = ZYGOTE_BAD_REQUEST;
		r->err = EBADMSG;
		return false;
	}
	if (z->nlive == MAX_LIVE ||
	    !pinned(&z->pin, msg, len, spec, st, host->cgroup_fd)) {
		r->refusal = ZYGOTE_NOT_SESSION;
		r->err = EPERM;
		return false;
	}
	if ((refusal = jail_layers_refusal(job_spec_layers_off(spec),
		 z->c->as_root)) != NULL) {
		r->refusal = ZYGOTE_LAYERS;
		r->err = EPERM;
		snprintf(r->why, sizeof(r->why), "%s", refusal);
		return false;
	}
	/* A workspace owned by root would lend the job root's access
	 * through the id-mapped mount (or, without a mount namespace, be
	 * root's own directory). */
	if (z->c->as_root && (st->st_uid == 0 || st->st_gid == 0)) {
		r->refusal = ZYGOTE_ROOT_WORKSPACE;
		r->err = EPERM;
		return false;
	}
	return true;
}

/*
 * Keeps a pidfd of the jail J just started under a new token (J->token),
 * to kill it when asked (zygote_kill). A jail that could not be kept
 * could not be killed: it is ended at once, J closed, and R refused
 * (ZYGOTE_CLONE, EMFILE).
 */
static void
keep_live(struct zstate *z, struct jail *j, struct zygote_reply *r)
{
	j->token = ++z->last_token;
	z->live[z->nlive].token = j->token;
	z->live[z->nlive].pid = j->pid;
	z->live[z->nlive].pidfd = fcntl(j->pidfd, F_DUPFD_CLOEXEC, 3);
	if (z->live[z->nlive].pidfd >= 0) {
		z->nlive++;
	} else {
		syscall(SYS_pidfd_send_signal, j->pidfd, SIGKILL, NULL, 0);
		jail_close(j);
		r->refusal = ZYGOTE_CLONE;
		r->err = EMFILE;
	}
}

static void
start_one(struct zstate *z, const uint8_t *msg, size_t len, const int *fds,
    size_t nfds, bool pooled, struct jail *j, struct zygote_reply *r)
{
	const struct zygote_config *c = z->c;
	struct job_spec spec;
	struct jail_host host = {
	    .outer_uid = c->outer_uid,
	    .outer_gid = c->outer_gid,
	    .launcher_pidfd = c->launcher_pidfd,
	    .cgroup_fd = -1,
	    .filter = NULL,
	    .sibling = true,
	    .stdin_fd = -1,
	    .pooled = pooled,
	};
	struct stat st;
	int tree = -1, e;

	memset(&spec, 0, sizeof(spec));
	if (!request_ok(z, msg, len, fds, nfds, pooled, &spec, &host, &st, r))
		goto out;
	/* Without a mount namespace there is nowhere to put an id-mapped
	 * mount: the job gets the real workspace (docs/layers.md). */
	if (c->as_root && !job_spec_layer_off(&spec, JOB_LAYER_MOUNT_NS)) {
		tree = jail_idmapped_workspace(fds[0], c->outer_uid,
		    c->outer_gid);
		if (tree < 0) {
			r->refusal = ZYGOTE_IDMAP;
			r->err = -tree;
			goto out;
		}
	}
	if (!job_spec_layer_off(&spec, JOB_LAYER_SECCOMP)) {
		/* The monitor's refusals (memory it could not see) belong
		 * to layer limits: without it nothing is monitored. */
		host.filter = cached_filter(&z->cache, spec.seccomp_profile,
		    host.cgroup_fd < 0 &&
			!job_spec_layer_off(&spec, JOB_LAYER_LIMITS),
		    &r->kill_on_denial, r->why, sizeof(r->why));
		if (host.filter == NULL) {
			r->refusal = ZYGOTE_FILTER;
			r->err = EINVAL;
			goto out;
		}
	}
	if ((e = jail_start(&spec, fds[0], tree, &host, j)) < 0) {
		r->refusal = ZYGOTE_CLONE;
		r->err = -e;
	} else {
		keep_live(z, j, r);
	}
out:
	if (tree >= 0)
		close(tree);
	job_spec_clear(&spec);
}

/*
 * Keeps, as root, only what building a jail needs (zygote.h); anything
 * else keeps none. Returns 0 or -1. No no_new_privs: the zygote never
 * executes a program, and the flag, which no process can clear, would
 * pass to every jail; each payload sets it before its exec unless layer
 * caps_nnp is off (payload.c, docs/layers.md).
 */
static int
drop_privileges(bool as_root)
{
	bool bset;

	if (!as_root)
		return 0;
	if (capng_get_caps_process() != 0)
		return -1;
	bset = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP) != 0;
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED,
		CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID, -1) != 0)
		return -1;
	return capng_apply(bset ? CAPNG_SELECT_ALL
				: CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT) == 0
	    ? 0
	    : -1;
}

/* Whether MSG (LEN bytes) is a kill request; its token and signal then. */
static bool
kill_request(const uint8_t *msg, size_t len, uint64_t *id, int *sig)
{
	struct rbuf r;
	uint32_t magic;
	int32_t s;

	rbuf_init(&r, msg, len);
	if (rbuf_get_u32(&r, &magic) < 0 || magic != KILL_MAGIC ||
	    rbuf_get_i32(&r, &s) < 0 || rbuf_get_u64(&r, id) < 0 ||
	    rbuf_end(&r) < 0)
		return false;
	*sig = s;
	return true;
}

/* Sends SIG (SIGKILL or JAIL_KILL_SIGNAL, nothing else) to the init of
 * the live jail TOKEN names (with a pid namespace, SIGKILL to init kills
 * the namespace; without one, init ends the job on JAIL_KILL_SIGNAL).
 * Unknown or already gone: nothing to do. */
static void
kill_one(struct zstate *z, uint64_t id, int sig)
{
	if (sig != SIGKILL && sig != JAIL_KILL_SIGNAL)
		return;
	for (size_t i = 0; i < z->nlive; i++)
		if (z->live[i].token == id)
			syscall(SYS_pidfd_send_signal, z->live[i].pidfd, sig,
			    NULL, 0);
}

/*
 * Answers a measure request MSG (LEN bytes: the MEAS word, a token, a
 * walk bound) on SOCK, when MSG is one: the sum of the proportional set
 * sizes of the jail's processes (usage_walk_pss), which the confined
 * launcher cannot read itself (smaps_rollup needs ptrace read access,
 * and its Landlock domain is no ancestor of the payload's: landlock(7),
 * "Ptrace restrictions"). The zygote has no Landlock domain, and owns
 * the jail's user namespace (user_namespaces(7)). Reply: MEAS, a
 * negative errno or 0, the sequence number of the request, bytes,
 * 0, 0, 0, fallbacks. Returns false when MSG is no measure request,
 * true once answered (a reply that cannot be sent is the launcher's
 * loss). The walk is kept only once the tree held still
 * (usage_pss_settled); else the reply is -EAGAIN. A kernel objects
 * count request (KOBJ, the same words and a cap in bytes) is answered
 * alike with usage_kernel_objects' watches, maps, locks, files in
 * flight and unreadable processes in place of bytes, 0, 0, 0 and
 * fallbacks (the maps and fdinfo it reads need the same ptrace access).
 */
static bool
measure_request(struct zstate *z, int sock, const uint8_t *msg, size_t len)
{
	struct usage_walker w;
	struct jail_usage u;
	struct kernel_objects k;
	uint8_t out[56];
	struct wbuf wb;
	struct rbuf r;
	uint32_t magic, max_procs, seq;
	uint64_t id, cap = 0;
	int e = -ESRCH;

	rbuf_init(&r, msg, len);
	if (rbuf_get_u32(&r, &magic) < 0 ||
	    (magic != MEAS_MAGIC && magic != KOBJ_MAGIC) ||
	    rbuf_get_u32(&r, &seq) < 0 || rbuf_get_u64(&r, &id) < 0 ||
	    rbuf_get_u32(&r, &max_procs) < 0 ||
	    (magic == KOBJ_MAGIC && rbuf_get_u64(&r, &cap) < 0) ||
	    rbuf_end(&r) < 0)
		return false;
	memset(&u, 0, sizeof(u));
	memset(&k, 0, sizeof(k));
	for (size_t i = 0; i < z->nlive && e == -ESRCH; i++) {
		if (z->live[i].token != id)
			continue;
		if (z->proc_fd < 0) {
			e = -ENOENT;
		} else if ((e = usage_walker_init(&w, max_procs)) == 0) {
			if (magic == KOBJ_MAGIC)
				e = usage_kernel_objects(&w, z->proc_fd,
				    z->live[i].pid, cap, &k);
			else
				e = usage_pss_settled(&w, z->proc_fd,
				    z->live[i].pid, MEAS_TRIES, MEAS_GAP_US,
				    &u);
			usage_walker_free(&w);
		}
	}
	wbuf_init(&wb, out, sizeof(out));
	wbuf_put_u32(&wb, magic);
	wbuf_put_i32(&wb, e);
	wbuf_put_u32(&wb, seq);
	if (magic == KOBJ_MAGIC) {
		wbuf_put_u64(&wb, k.watches);
		wbuf_put_u64(&wb, k.maps);
		wbuf_put_u64(&wb, k.locks);
		wbuf_put_u64(&wb, k.inflight);
		wbuf_put_u32(&wb, k.unreadable);
	} else {
		wbuf_put_u64(&wb, u.rss_bytes);
		wbuf_put_u64(&wb, u.resident_bytes);
		wbuf_put_u64(&wb, 0);
		wbuf_put_u64(&wb, 0);
		wbuf_put_u32(&wb, u.pss_fallbacks);
	}
	if (wbuf_ok(&wb))
		(void)proto_send_fds(sock, out, wb.len, NULL, 0);
	return true;
}

/* Whether MSG (LEN bytes) is a prepare request: the POOL word, then a
 * request (zygote_prepare_jail). */
static bool
pool_request(const uint8_t *msg, size_t len)
{
	struct rbuf r;
	uint32_t magic;

	rbuf_init(&r, msg, len);
	return rbuf_get_u32(&r, &magic) == 0 && magic == POOL_MAGIC;
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

_Noreturn void
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
	z.proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (;;) {
		struct pollfd p[MAX_LIVE + 1];
		struct zygote_reply r;
		size_t at_sock = z.nlive;
		uint64_t id;
		bool pooled;
		int sig;
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
		/* Forget the dead first: a prepare may need their slots. */
		reap_live(&z, p);
		if (p[at_sock].revents == 0)
			continue;
		n = proto_recv_fds(sock, msg, PROTO_MAX_MSG, fds, REQUEST_FDS,
		    &nfds);
		if (n <= 0)
			_exit(n == 0 ? 0 : 1);
		if (nfds == 0 && kill_request(msg, (size_t)n, &id, &sig)) {
			kill_one(&z, id, sig);
			continue;
		}
		if (nfds == 0 && measure_request(&z, sock, msg, (size_t)n))
			continue;
		memset(&r, 0, sizeof(r));
		memset(&j, 0, sizeof(j));
		j.pidfd = j.out_fd = j.err_fd = j.status_fd = j.notify_sock =
		    -1;
		j.go_fd = -1;
		pooled = pool_request(msg, (size_t)n);
		start_one(&z, msg + (pooled ? 4 : 0),
		    (size_t)n - (pooled ? 4 : 0), fds, nfds, pooled, &j, &r);
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
