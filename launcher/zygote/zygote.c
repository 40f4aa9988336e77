/*
 * zygote.c: the process that makes the launcher's jails (zygote.h): its
 * loop, the jails it clones, kills and measures. Its wire is
 * shared/wire.h; the launcher's side of it supervisor/zygote_client.c.
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
#include "zygote_internal.h"
#include "zygote_wire.h"

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

/* Sends the reply R (of type TYPE, WIRE_JAIL_REPLY or WIRE_PREPARE_REPLY)
 * with, on ZYGOTE_OK, jail J's descriptors in the table's order (wire.h). */
static int
send_reply(int sock, uint16_t type, const struct zygote_reply *r,
    const struct jail *j)
{
	uint8_t buf[WIRE_HEADER_SIZE + 64 + JOB_MAX_DETAIL];
	int fds[WIRE_MAX_FDS];
	struct wbuf w;

	wbuf_init(&w, buf, sizeof(buf));
	w.len = WIRE_HEADER_SIZE;
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
		return wire_send(sock, buf, w.len, type, 0, NULL);
	fds[0] = j->pidfd;
	fds[1] = j->out_fd;
	fds[2] = j->err_fd;
	fds[3] = j->status_fd;
	fds[4] = j->notify_sock;
	fds[5] = j->go_fd;
	return wire_send(sock, buf, w.len, type,
	    type == WIRE_PREPARE_REPLY ? 0x3fu : 0x1fu, fds);
}

/* Whether FD is a FIFO open read-only: the job's stdin pipe, as the
 * launcher checked it (proto.h, JOB_F_STDIN). */
static bool
is_stdin_pipe(int fd)
{
	struct stat st;
	int fl;

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) &&
	    (fl = fcntl(fd, F_GETFL)) >= 0 &&
	    (fl & (O_ACCMODE | O_PATH)) == O_RDONLY;
}

/*
 * Takes the descriptors after the workspace of request M (FDS) by their
 * role's position (wire.h) into HOST, and checks each is what its role
 * says: the cgroup leaf a directory, the stdin pipe a FIFO open
 * read-only with JOB_F_STDIN in SPEC, the terminal a character device
 * with layer no_terminal off; JOB_F_STDIN without a stdin pipe is a
 * mismatch too. Returns NULL, or the name of the role that does not
 * match.
 */
static const char *
take_fds(const struct wire_msg *m, const int *fds,
    const struct job_spec *spec, struct jail_host *host)
{
	int cg = wire_fd(m, fds, WIRE_FD_CGROUP_LEAF);
	int pipe = wire_fd(m, fds, WIRE_FD_STDIN_PIPE);
	int tty = wire_fd(m, fds, WIRE_FD_TERMINAL);
	bool flag = (spec->flags & JOB_F_STDIN) != 0;
	struct stat st;

	if (cg >= 0 && (fstat(cg, &st) < 0 || !S_ISDIR(st.st_mode)))
		return wire_fd_role_name(WIRE_FD_CGROUP_LEAF);
	if (flag != (pipe >= 0) || (pipe >= 0 && !is_stdin_pipe(pipe)))
		return wire_fd_role_name(WIRE_FD_STDIN_PIPE);
	if (tty >= 0 &&
	    (fstat(tty, &st) < 0 || !S_ISCHR(st.st_mode) ||
		!job_spec_layer_off(spec, JOB_LAYER_NO_TERMINAL)))
		return wire_fd_role_name(WIRE_FD_TERMINAL);
	host->cgroup_fd = cg;
	host->stdin_fd = pipe >= 0 ? pipe : tty;
	return NULL;
}

/*
 * Checks the request M (WIRE_JAIL or WIRE_PREPARE, its body a RUN
 * message) with its descriptors FDS as start_one takes it: decodes it
 * into SPEC (the caller clears it), takes the descriptors by role into
 * HOST (take_fds), keeps the workspace's fstat in *ST, and refuses what
 * the zygote must not do: a malformed request or a descriptor not what
 * its role says (ZYGOTE_BAD_REQUEST, EBADMSG or EBADF), one outside the
 * session's authority or with no slot left, layers that cannot be off
 * together here, a root-owned workspace for a root zygote. Returns true
 * when the jail may be made; false with R's refusal and errno set.
 */
static bool
request_ok(struct zstate *z, const struct wire_msg *m, const int *fds,
    struct job_spec *spec, struct jail_host *host, struct stat *st,
    struct zygote_reply *r)
{
	int wsfd = wire_fd(m, fds, WIRE_FD_WORKSPACE);
	const uint8_t *body;
	const char *refusal;
	size_t body_len;
	uint16_t type;

	/* The launcher decoded and checked this already; decoding it again
	 * here, where the privileges are, costs little (style.md rule 8). */
	if (proto_decode_header(m->body, m->body_len, &type, &body,
		&body_len) < 0 ||
	    type != PROTO_RUN || proto_decode_run(body, body_len, spec) < 0) {
		r->refusal = ZYGOTE_BAD_REQUEST;
		r->err = EBADMSG;
		return false;
	}
	if (fstat(wsfd, st) < 0 || !S_ISDIR(st->st_mode))
		refusal = wire_fd_role_name(WIRE_FD_WORKSPACE);
	else
		refusal = take_fds(m, fds, spec, host);
	if (refusal != NULL) {
		log_error("zygote: a %s request whose %s descriptor is not one",
		    wire_msg_desc(m->type)->name, refusal);
		r->refusal = ZYGOTE_BAD_REQUEST;
		r->err = EBADF;
		return false;
	}
	if (z->nlive == MAX_LIVE ||
	    !pinned(&z->pin, m->body, m->body_len, spec, st,
		host->cgroup_fd)) {
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

/*
 * Starts the jail of one request M (WIRE_JAIL, or WIRE_PREPARE: a jail
 * for the warm pool, whose init waits for its job; jail.h,
 * jail_host.pooled) with its descriptors FDS into J, or says why not in
 * R.
 */
static void
start_one(struct zstate *z, const struct wire_msg *m, const int *fds,
    struct jail *j, struct zygote_reply *r)
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
	    .pooled = m->type == WIRE_PREPARE,
	};
	struct stat st;
	int tree = -1, e;

	memset(&spec, 0, sizeof(spec));
	if (!request_ok(z, m, fds, &spec, &host, &st, r))
		goto out;
	/* Without a mount namespace there is nowhere to put an id-mapped
	 * mount: the job gets the real workspace (docs/layers.md). */
	if (c->as_root && !job_spec_layer_off(&spec, JOB_LAYER_MOUNT_NS)) {
		tree = jail_idmapped_workspace(wire_fd(m, fds,
						   WIRE_FD_WORKSPACE),
		    c->outer_uid,
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
	if ((e = jail_start(&spec, wire_fd(m, fds, WIRE_FD_WORKSPACE), tree,
		 &host, j)) < 0) {
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
	uint8_t *msg = malloc(WIRE_MAX_MSG);
	int fds[WIRE_MAX_FDS];
	struct wire_msg m;
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
		uint16_t rtype;
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
		n = wire_recv(sock, msg, WIRE_MAX_MSG, fds, WIRE_MAX_FDS, &m);
		if (n == 0)
			_exit(0);
		if (n < 0 && n != -EPROTO)
			_exit(1);
		if (n > 0 && zygote_serve(&z, sock, &m))
			continue;
		memset(&r, 0, sizeof(r));
		memset(&j, 0, sizeof(j));
		j.pidfd = j.out_fd = j.err_fd = j.status_fd = j.notify_sock =
		    -1;
		j.go_fd = -1;
		/* Anything else is answered as a jail request refused. */
		rtype = n > 0 && m.type == WIRE_PREPARE ? WIRE_PREPARE_REPLY
							: WIRE_JAIL_REPLY;
		if (n > 0 && (m.type == WIRE_JAIL || m.type == WIRE_PREPARE)) {
			start_one(&z, &m, fds, &j, &r);
		} else {
			/* Not a request, or not one of this wire. */
			r.refusal = ZYGOTE_BAD_REQUEST;
			r.err = EBADMSG;
		}
		for (size_t i = 0; i < m.nfds; i++)
			close(fds[i]);
		n = send_reply(sock, rtype, &r, &j);
		/* Ours are closed either way: the launcher has its copies,
		 * or init reads EOF on its pipes and the job is lost. */
		jail_close(&j);
		if (n < 0)
			_exit(1);
	}
}
