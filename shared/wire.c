/* wire.c: the private wires between stockade's processes (wire.h): their
 * table of messages and descriptor roles, and sending and receiving one
 * message, or one status record, with its header checked. */
#include "proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

/* The table of wire.h, row for row. */
static const struct wire_msg_desc table[] = {
    {WIRE_JAIL, "JAIL", WIRE_CH_ZYGOTE, 4,
	{WIRE_FD_WORKSPACE, WIRE_FD_CGROUP_LEAF, WIRE_FD_STDIN_PIPE,
	    WIRE_FD_TERMINAL},
	WIRE_ROLE_BIT(0), WIRE_ROLE_BIT(2) | WIRE_ROLE_BIT(3)},
    {WIRE_PREPARE, "PREPARE", WIRE_CH_ZYGOTE, 1, {WIRE_FD_WORKSPACE},
	WIRE_ROLE_BIT(0), 0},
    {WIRE_KILL, "KILL", WIRE_CH_ZYGOTE, 0, {0}, 0, 0},
    {WIRE_MEASURE, "MEASURE", WIRE_CH_ZYGOTE, 0, {0}, 0, 0},
    {WIRE_KOBJ, "KOBJ", WIRE_CH_ZYGOTE, 0, {0}, 0, 0},
    {WIRE_JAIL_REPLY, "JAIL_REPLY", WIRE_CH_ZYGOTE, 5,
	{WIRE_FD_PIDFD, WIRE_FD_STDOUT, WIRE_FD_STDERR, WIRE_FD_STATUS,
	    WIRE_FD_NOTIFY},
	0, 0},
    {WIRE_PREPARE_REPLY, "PREPARE_REPLY", WIRE_CH_ZYGOTE, 6,
	{WIRE_FD_PIDFD, WIRE_FD_STDOUT, WIRE_FD_STDERR, WIRE_FD_STATUS,
	    WIRE_FD_NOTIFY, WIRE_FD_GO},
	0, 0},
    {WIRE_MEASURE_REPLY, "MEASURE_REPLY", WIRE_CH_ZYGOTE, 0, {0}, 0, 0},
    {WIRE_KOBJ_REPLY, "KOBJ_REPLY", WIRE_CH_ZYGOTE, 0, {0}, 0, 0},
    {WIRE_GO, "GO", WIRE_CH_GO, 1, {WIRE_FD_STDIN_PIPE}, 0, 0},
    {INIT_REC_SETUP_FAILED, "SETUP_FAILED", WIRE_CH_STATUS, 0, {0}, 0, 0},
    {INIT_REC_PAYLOAD_EXIT, "PAYLOAD_EXIT", WIRE_CH_STATUS, 0, {0}, 0, 0},
    {INIT_REC_LANDLOCK, "LANDLOCK", WIRE_CH_STATUS, 0, {0}, 0, 0},
    {INIT_REC_BIND_FAILED, "BIND_FAILED", WIRE_CH_STATUS, 0, {0}, 0, 0},
    {INIT_REC_TASKS, "TASKS", WIRE_CH_STATUS, 0, {0}, 0, 0},
    {WIRE_SPAWN, "SPAWN", WIRE_CH_SPAWN, 0, {0}, 0, 0},
    {WIRE_SPAWN_REPLY, "SPAWN_REPLY", WIRE_CH_SPAWN, 2,
	{WIRE_FD_LAUNCHER_SOCK, WIRE_FD_LAUNCHER_PIDFD},
	WIRE_ROLE_BIT(0) | WIRE_ROLE_BIT(1), 0},
    {WIRE_SPAWN_FAILED, "SPAWN_FAILED", WIRE_CH_SPAWN, 0, {0}, 0, 0},
    {WIRE_NET_SOCKETS, "NET_SOCKETS", WIRE_CH_NOTIFY, 2,
	{WIRE_FD_PROXY_LISTENER, WIRE_FD_PACKET},
	WIRE_ROLE_BIT(0) | WIRE_ROLE_BIT(1), 0},
    {WIRE_PROXY_READY, "PROXY_READY", WIRE_CH_PROXY, 0, {0}, 0, 0},
    {WIRE_PROXY_FAILED, "PROXY_FAILED", WIRE_CH_PROXY, 0, {0}, 0, 0},
    {WIRE_PROXY_JOB, "PROXY_JOB", WIRE_CH_PROXY, 2,
	{WIRE_FD_PROXY_LISTENER, WIRE_FD_PACKET}, WIRE_ROLE_BIT(0), 0},
    {WIRE_PROXY_END, "PROXY_END", WIRE_CH_PROXY, 0, {0}, 0, 0},
    {WIRE_PROXY_REPORT, "PROXY_REPORT", WIRE_CH_PROXY, 0, {0}, 0, 0},
    {WIRE_SECCOMP_LISTENER, "SECCOMP_LISTENER", WIRE_CH_NOTIFY, 1,
	{WIRE_FD_SECCOMP_LISTENER}, WIRE_ROLE_BIT(0), 0},
    {WIRE_STAGE, "STAGE", WIRE_CH_NOTIFY, 2, {WIRE_FD_STAGE, WIRE_FD_MNT_NS},
	WIRE_ROLE_BIT(0), 0},
    {WIRE_STAGE_OPEN, "STAGE_OPEN", WIRE_CH_SPAWN, 2,
	{WIRE_FD_STAGE, WIRE_FD_STAGE_DIR}, WIRE_ROLE_BIT(0) | WIRE_ROLE_BIT(1),
	0},
    {WIRE_STAGE_OPEN_REPLY, "STAGE_OPEN_REPLY", WIRE_CH_SPAWN, 1,
	{WIRE_FD_STAGE_ENTRY}, WIRE_ROLE_BIT(0), 0},
    {WIRE_STAGE_OPEN_FAILED, "STAGE_OPEN_FAILED", WIRE_CH_SPAWN, 0, {0}, 0, 0},
};

const struct wire_msg_desc *
wire_msg_desc(uint16_t type)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].type == type)
			return &table[i];
	return NULL;
}

const char *
wire_fd_role_name(enum wire_fd_role role)
{
	static const char *const names[] = {
	    [WIRE_FD_WORKSPACE] = "workspace",
	    [WIRE_FD_CGROUP_LEAF] = "cgroup leaf",
	    [WIRE_FD_STDIN_PIPE] = "stdin pipe",
	    [WIRE_FD_TERMINAL] = "terminal",
	    [WIRE_FD_PIDFD] = "pidfd",
	    [WIRE_FD_STDOUT] = "stdout",
	    [WIRE_FD_STDERR] = "stderr",
	    [WIRE_FD_STATUS] = "status pipe",
	    [WIRE_FD_NOTIFY] = "notify socket",
	    [WIRE_FD_GO] = "go socket",
	    [WIRE_FD_LAUNCHER_SOCK] = "launcher socket",
	    [WIRE_FD_LAUNCHER_PIDFD] = "launcher pidfd",
	    [WIRE_FD_PROXY_LISTENER] = "proxy listener",
	    [WIRE_FD_PACKET] = "packet socket",
	    [WIRE_FD_SECCOMP_LISTENER] = "seccomp listener",
	    [WIRE_FD_STAGE] = "stage",
	    [WIRE_FD_STAGE_DIR] = "stage directory",
	    [WIRE_FD_STAGE_ENTRY] = "stage entry",
	    [WIRE_FD_MNT_NS] = "mount namespace",
	};

	if ((size_t)role < sizeof(names) / sizeof(names[0]) &&
	    names[role] != NULL)
		return names[role];
	return "unknown";
}

/* Little-endian V into P[0, 4). */
static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The little-endian u32 at P. */
static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* The number of bits set in X. */
static size_t
bits(uint32_t x)
{
	return (size_t)__builtin_popcount(x);
}

/* Whether ROLES may go with a message of row D. */
static bool
roles_ok(const struct wire_msg_desc *d, uint32_t roles)
{
	uint32_t all = d->nroles == 0 ? 0 : (1u << d->nroles) - 1u;

	return (roles & ~all) == 0 && (roles & d->required) == d->required &&
	    bits(roles & d->exclusive) <= 1;
}

int
wire_send(int sock, uint8_t *msg, size_t len, uint16_t type, uint32_t roles,
    const int *fds)
{
	const struct wire_msg_desc *d = wire_msg_desc(type);
	size_t nfds = bits(roles);

	if (d == NULL || len < WIRE_HEADER_SIZE || !roles_ok(d, roles))
		return -EINVAL;
	msg[0] = (uint8_t)type;
	msg[1] = (uint8_t)(type >> 8);
	msg[2] = (uint8_t)nfds;
	msg[3] = (uint8_t)(nfds >> 8);
	put32(msg + 4, roles);
	return proto_send_fds(sock, msg, len, fds, nfds);
}

int
wire_recv(int sock, uint8_t *buf, size_t size, int *fds, size_t maxfds,
    struct wire_msg *m)
{
	const struct wire_msg_desc *d;
	size_t nfds = 0, count;
	int n;

	m->nfds = 0;
	if (size < WIRE_HEADER_SIZE)
		return -EINVAL;
	n = proto_recv_fds_max(sock, buf,
	    size < WIRE_MAX_MSG ? size : WIRE_MAX_MSG, fds, maxfds, &nfds);
	if (n <= 0)
		return n;
	if ((size_t)n >= WIRE_HEADER_SIZE) {
		m->type = (uint16_t)(buf[0] | buf[1] << 8);
		count = (size_t)(buf[2] | buf[3] << 8);
		m->roles = get32(buf + 4);
		d = wire_msg_desc(m->type);
		if (d != NULL && roles_ok(d, m->roles) && count == nfds &&
		    count == bits(m->roles)) {
			m->nfds = nfds;
			m->body = buf + WIRE_HEADER_SIZE;
			m->body_len = (size_t)n - WIRE_HEADER_SIZE;
			return n;
		}
	}
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	return -EPROTO;
}

int
wire_fd(const struct wire_msg *m, const int *fds, enum wire_fd_role role)
{
	const struct wire_msg_desc *d = wire_msg_desc(m->type);
	size_t at = 0;

	if (d == NULL)
		return -1;
	for (size_t i = 0; i < d->nroles; i++) {
		if ((m->roles & WIRE_ROLE_BIT(i)) == 0)
			continue;
		if (d->roles[i] == role)
			return at < m->nfds ? fds[at] : -1;
		at++;
	}
	return -1;
}

int
wire_status_write(int fd, uint16_t type, int32_t a, int32_t b)
{
	const struct wire_msg_desc *d = wire_msg_desc(type);
	uint8_t rec[WIRE_STATUS_SIZE] = {(uint8_t)type, (uint8_t)(type >> 8)};
	ssize_t w;

	if (d == NULL || d->channel != WIRE_CH_STATUS)
		return -EINVAL;
	put32(rec + WIRE_HEADER_SIZE, (uint32_t)a);
	put32(rec + WIRE_HEADER_SIZE + 4, (uint32_t)b);
	do
		w = write(fd, rec, sizeof(rec));
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return w == (ssize_t)sizeof(rec) ? 0 : -EIO;
}

int
wire_status_read(int fd, int32_t rec[3])
{
	uint8_t raw[WIRE_STATUS_SIZE];
	const struct wire_msg_desc *d;
	ssize_t n;

	do
		n = read(fd, raw, sizeof(raw));
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -errno;
	if (n != (ssize_t)sizeof(raw))
		return -EBADMSG;
	rec[0] = (int32_t)(raw[0] | raw[1] << 8);
	rec[1] = (int32_t)get32(raw + WIRE_HEADER_SIZE);
	rec[2] = (int32_t)get32(raw + WIRE_HEADER_SIZE + 4);
	d = wire_msg_desc((uint16_t)rec[0]);
	if (d == NULL || d->channel != WIRE_CH_STATUS || raw[2] != 0 ||
	    raw[3] != 0 || get32(raw + 4) != 0)
		return -EPROTO;
	return 1;
}
