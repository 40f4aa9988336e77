/*
 * proto_check.c: what a job spec and a result must satisfy on the wire,
 * shared by the encoders (which refuse what the decoders would) and the
 * decoders (proto_internal.h). Pure.
 */
#include "proto_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* True when each of the N strings of V is present and at most MAX bytes. */
static bool
strv_fits(char *const *v, uint32_t n, size_t max)
{
	if (n > 0 && v == NULL)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == NULL || strlen(v[i]) > max)
			return false;
	return true;
}

/* An absolute path with no empty, "." or ".." component. */
static int
check_abs_path(const char *p)
{
	const char *c;

	if (p[0] != '/' || p[1] == '\0')
		return -EINVAL;
	for (c = p + 1; *c != '\0';) {
		const char *end = strchrnul(c, '/');
		size_t n = (size_t)(end - c);

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return -EINVAL;
		c = *end ? end + 1 : end;
		if (*end && *c == '\0')
			return -EINVAL; /* trailing slash */
	}
	return 0;
}

/* True for /tmp, /proc, /dev, /work or below: the launcher mounts these
 * itself, and a bind of the host's /proc or /dev would hand them over. */
static bool
jail_owned(const char *target)
{
	static const char *const dirs[] = {"/tmp", "/proc", "/dev", "/work"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i]);

		if (strncmp(target, dirs[i], n) == 0 &&
		    (target[n] == '\0' || target[n] == '/'))
			return true;
	}
	return false;
}

/* Every limit is required: a zero would mean "unlimited" somewhere. */
int
proto_check_limits(const struct job_limits *l)
{
	if (l->wall_ms == 0 || l->cpu_ms == 0 || l->memory_bytes == 0 ||
	    l->tmp_bytes == 0 || l->home_bytes == 0 || l->fsize_bytes == 0 ||
	    l->stdout_bytes == 0 || l->stderr_bytes == 0 || l->nofile == 0 ||
	    l->nproc == 0 || l->workspace_bytes == 0 ||
	    l->cpu_percent > PROTO_MAX_CPU_PERCENT)
		return -EINVAL;
	return 0;
}

/* A proxy port only with layers network_ns and user_ns on: the proxy's
 * listener and routes are made in the jail's own network namespace by
 * an init that holds CAP_NET_ADMIN there, which takes its user
 * namespace; never in the host's (proto.h). */
static bool
proxy_port_ok(const struct job_spec *s)
{
	return s->proxy_port == 0 ||
	    (!job_spec_layer_off(s, JOB_LAYER_NETWORK_NS) &&
		!job_spec_layer_off(s, JOB_LAYER_USER_NS));
}

int
proto_check_spec(const struct job_spec *s)
{
	if (s->argv[0][0] == '\0')
		return -EINVAL;
	if (s->uid == 0 || s->gid == 0)
		return -EINVAL;
	if ((s->flags & ~JOB_F_KNOWN) != 0 ||
	    (s->layers_off & ~JOB_LAYERS_ALL) != 0)
		return -EINVAL;
	if (!proxy_port_ok(s))
		return -EINVAL;
	for (uint32_t i = 0; i < s->envc; i++) {
		const char *eq = strchr(s->envp[i], '=');

		if (eq == NULL || eq == s->envp[i])
			return -EINVAL;
	}
	/* The hostname goes into the jail's /etc/hosts and /etc/hostname:
	 * letters, digits and '-' only (RFC 1123), as the policy demands. */
	if (s->hostname[0] == '\0' || s->hostname[0] == '-' ||
	    strspn(s->hostname,
		"abcdefghijklmnopqrstuvwxyz"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != strlen(s->hostname))
		return -EINVAL;
	/* The user name goes into the jail's /etc/passwd: no separator, no
	 * newline, nothing but the useradd alphabet. */
	if (s->user[0] == '\0' ||
	    strspn(s->user, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
		strlen(s->user) ||
	    s->user[0] == '-' || (s->user[0] >= '0' && s->user[0] <= '9'))
		return -EINVAL;
	if (check_abs_path(s->home) < 0 || strcmp(s->home, "/work") == 0 ||
	    strcmp(s->home, "/tmp") == 0)
		return -EINVAL;
	if ((unsigned)s->enforcement > ENFORCE_MAX)
		return -EINVAL;
	if (s->seccomp_profile != NULL &&
	    (s->seccomp_profile[0] == '\0' ||
		strlen(s->seccomp_profile) > JOB_MAX_PROFILE ||
		strspn(s->seccomp_profile, "abcdefghijklmnopqrstuvwxyz") !=
		    strlen(s->seccomp_profile)))
		return -EINVAL;
	/* The cgroup is the policy's: "" (the launcher's own) or absolute. */
	if (s->cgroup != NULL && s->cgroup[0] != '\0' &&
	    check_abs_path(s->cgroup) < 0)
		return -EINVAL;
	for (uint32_t i = 0; i < s->nmounts; i++) {
		const struct mount_entry *m = &s->mounts[i];

		if (m->kind != MOUNT_RO_BIND && m->kind != MOUNT_RO_BIND_TRY &&
		    m->kind != MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK)
			return -EINVAL;
		if (check_abs_path(m->source) < 0 ||
		    check_abs_path(m->target) < 0 || jail_owned(m->target))
			return -EINVAL;
	}
	return 0;
}

/*
 * -EINVAL for every spec proto_decode_run would refuse (proto.h), so that
 * the sender finds its own mistake instead of ending the peer's session.
 */
int
proto_check_encodable(const struct job_spec *s)
{
	if (s->argc < 1 || s->argc > JOB_MAX_ARGS || s->envc > JOB_MAX_ENV ||
	    s->nmounts > JOB_MAX_MOUNTS || s->hostname == NULL ||
	    strlen(s->hostname) > JOB_MAX_HOSTNAME || s->user == NULL ||
	    strlen(s->user) > JOB_MAX_USER || s->home == NULL ||
	    strlen(s->home) > JOB_MAX_STR ||
	    (s->cgroup != NULL && strlen(s->cgroup) > JOB_MAX_STR) ||
	    !strv_fits(s->argv, s->argc, JOB_MAX_STR) ||
	    !strv_fits(s->envp, s->envc, JOB_MAX_STR) ||
	    (s->nmounts > 0 && s->mounts == NULL))
		return -EINVAL;
	for (uint32_t i = 0; i < s->nmounts; i++) {
		const struct mount_entry *m = &s->mounts[i];

		if (m->source == NULL || m->target == NULL ||
		    strlen(m->source) > JOB_MAX_STR ||
		    strlen(m->target) > JOB_MAX_STR)
			return -EINVAL;
	}
	if (proto_check_spec(s) < 0 || proto_check_limits(&s->limits) < 0)
		return -EINVAL;
	return 0;
}

/*
 * A detail a person may read on a terminal: no control character but
 * tab, neither C0 nor DEL nor a C1 control written as UTF-8 (U+0080 to
 * U+009F, bytes C2 80 to C2 9F), which would let a launcher's text move
 * the cursor or rewrite the screen. Other bytes, even invalid UTF-8, are
 * the reader's to sanitize (result_json.c).
 */
static bool
detail_ok(const char *d)
{
	for (const unsigned char *p = (const unsigned char *)d; *p; p++) {
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			return false;
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			return false;
	}
	return true;
}

/*
 * What every RESULT must be, for proto_encode_result and
 * proto_decode_result alike: STATUS known; exit code -1..255 and signal
 * 0..64, consistent with the status (ok: exit 0 and no signal;
 * exit_nonzero: exit 1..255 and no signal; crash, and cancelled (the
 * jail killed), a signal 1..64 and no exit code); every figure at most INT64_MAX, so that it stays a
 * non-negative JSON integer; the detail as detail_ok says. -EINVAL
 * otherwise. (The detail's length is the caller's to check.)
 */
int
proto_check_result(uint32_t status, const struct job_result *r,
    const char *detail)
{
	if (status > JOB_STATUS_MAX || r->exit_code < -1 ||
	    r->exit_code > 255 || r->signal < 0 || r->signal > 64)
		return -EINVAL;
	switch (status) {
	case JOB_OK:
		if (r->exit_code != 0 || r->signal != 0)
			return -EINVAL;
		break;
	case JOB_EXIT_NONZERO:
		if (r->exit_code < 1 || r->signal != 0)
			return -EINVAL;
		break;
	case JOB_CRASH:
	case JOB_CANCELLED:
		if (r->signal < 1 || r->exit_code != -1)
			return -EINVAL;
		break;
	default:
		break;
	}
	if (r->enforcement != ENFORCE_MONITOR &&
	    r->enforcement != ENFORCE_CGROUP2)
		return -EINVAL;
	if (r->landlock_abi < 0 || r->landlock_abi > 1000 ||
	    r->ndenials > JOB_MAX_DENIALS)
		return -EINVAL;
	for (uint32_t i = 0; i < r->ndenials; i++) {
		const char *n = r->denials[i].syscall;
		size_t len = strnlen(n, JOB_DENIAL_NAME);

		/* A name as libseccomp spells it, or "abi:number". */
		if (len == 0 || len == JOB_DENIAL_NAME ||
		    strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_:") !=
			len ||
		    r->denials[i].count == 0 ||
		    r->denials[i].first_ms > INT64_MAX)
			return -EINVAL;
	}
	if (r->wall_ms > INT64_MAX || r->cpu_ms > INT64_MAX ||
	    r->peak_memory_kb > INT64_MAX || r->stdout_bytes > INT64_MAX ||
	    r->stderr_bytes > INT64_MAX)
		return -EINVAL;
	/* A known measure, or 0 (no job ran: nothing measured); each limit
	 * kind once, reached at least once. */
	if (r->memory_measure > MEASURE_MAX || r->nreached > JOB_MAX_REACHED)
		return -EINVAL;
	for (uint32_t i = 0; i < r->nreached; i++) {
		if (r->reached[i].limit < 1 ||
		    r->reached[i].limit > JOB_REACHED_MAX ||
		    r->reached[i].times == 0)
			return -EINVAL;
		for (uint32_t j = 0; j < i; j++)
			if (r->reached[j].limit == r->reached[i].limit)
				return -EINVAL;
	}
	if (!detail_ok(detail))
		return -EINVAL;
	return 0;
}
