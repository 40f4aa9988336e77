/*
 * zygote_serve.c: the zygote's requests that make no jail (zygote.h):
 * killing one it made, and measuring one's memory or counting its kernel
 * objects, which the confined launcher may not read itself. The wire is
 * shared/wire.h; the loop that takes them zygote.c.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buf.h"
#include "usage.h"
#include "zygote_internal.h"

/* Walks a measure may take to find the jail's tree holding still, and
 * the pause between them (usage_pss_settled). */
#define MEAS_TRIES 3u
#define MEAS_GAP_US 2000u

/* Decodes the body of a kill request M: its token and signal. Returns
 * false when it is malformed. */
static bool
kill_request(const struct wire_msg *m, uint64_t *id, int *sig)
{
	struct rbuf r;
	int32_t s;

	rbuf_init(&r, m->body, m->body_len);
	if (rbuf_get_i32(&r, &s) < 0 || rbuf_get_u64(&r, id) < 0 ||
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
 * Answers a measure request M (WIRE_MEASURE: a sequence number, a token,
 * a walk bound) on SOCK: the sum of the proportional set sizes of the
 * jail's processes (usage_walk_pss), which the confined
 * launcher cannot read itself (smaps_rollup needs ptrace read access,
 * and its Landlock domain is no ancestor of the payload's: landlock(7),
 * "Ptrace restrictions"). The zygote has no Landlock domain, and owns
 * the jail's user namespace (user_namespaces(7)). Reply
 * (WIRE_MEASURE_REPLY): a negative errno or 0, the sequence number of
 * the request, bytes, resident bytes, 0, 0, fallbacks. Returns false
 * when the body is malformed, true once answered (a reply that cannot
 * be sent is the launcher's loss). The walk is kept only once the tree
 * held still (usage_pss_settled); else the reply is -EAGAIN. A kernel
 * objects count request (WIRE_KOBJ, the same words and a cap in bytes)
 * is answered alike (WIRE_KOBJ_REPLY) with usage_kernel_objects'
 * watches, maps, locks, files in flight and unreadable processes in
 * place of bytes, 0, 0, 0 and fallbacks (the maps and fdinfo it reads
 * need the same ptrace access).
 */
static bool
measure_request(struct zstate *z, int sock, const struct wire_msg *m)
{
	const bool kobj = m->type == WIRE_KOBJ;
	struct usage_walker w;
	struct jail_usage u;
	struct kernel_objects k;
	uint8_t out[WIRE_HEADER_SIZE + 48];
	struct wbuf wb;
	struct rbuf r;
	uint32_t max_procs, seq;
	uint64_t id, cap = 0;
	int e = -ESRCH;

	rbuf_init(&r, m->body, m->body_len);
	if (rbuf_get_u32(&r, &seq) < 0 || rbuf_get_u64(&r, &id) < 0 ||
	    rbuf_get_u32(&r, &max_procs) < 0 ||
	    (kobj && rbuf_get_u64(&r, &cap) < 0) ||
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
			if (kobj)
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
	wb.len = WIRE_HEADER_SIZE;
	wbuf_put_i32(&wb, e);
	wbuf_put_u32(&wb, seq);
	if (kobj) {
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
		(void)wire_send(sock, out, wb.len,
		    kobj ? WIRE_KOBJ_REPLY : WIRE_MEASURE_REPLY, 0, NULL);
	return true;
}

bool
zygote_serve(struct zstate *z, int sock, const struct wire_msg *m)
{
	uint64_t id;
	int sig;

	switch (m->type) {
	case WIRE_KILL:
		if (!kill_request(m, &id, &sig))
			return false;
		kill_one(z, id, sig);
		return true;
	case WIRE_MEASURE:
	case WIRE_KOBJ:
		return measure_request(z, sock, m);
	default:
		return false;
	}
}

