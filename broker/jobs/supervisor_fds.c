/*
 * supervisor_fds.c: the launcher's messages that carry descriptors while
 * a job runs (supervisor_internal.h): NET, the proxy's listener and
 * packet socket (issue 25), and STAGE, the root of the job's stage tmpfs
 * (issue 26), each handed to its receiver (supervisor.h, net_fn,
 * stage_fn).
 */
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include "supervisor_internal.h"

size_t
supervisor_fds_of(uint16_t type)
{
	return type == PROTO_NET ? 2 : type == PROTO_STAGE ? 1 : 0;
}

static void
close_n(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

/* Whether SPEC's job may send a message of TYPE with the job id ID now
 * (the types that came before in SEEN). */
static bool
expected(const struct job_spec *spec, uint16_t type, uint64_t id, uint32_t seen)
{
	if (id != spec->job_id || (seen & (1u << type)) != 0)
		return false;
	if (type == PROTO_NET)
		return spec->proxy_port != 0;
	return type == PROTO_STAGE && job_spec_staged(spec);
}

int
supervisor_take_fds(struct supervisor *s, const struct job_spec *spec,
    uint16_t type, const uint8_t *body, size_t len, const int *fds,
    uint32_t *seen)
{
	uint8_t token[PROTO_STAGE_TOKEN_BYTES];
	size_t n = supervisor_fds_of(type);
	uint64_t id = 0;
	int e = type == PROTO_NET ? proto_decode_net(body, len, &id)
				  : proto_decode_stage(body, len, &id, token);

	if (n == 0 || e < 0 || !expected(spec, type, id, *seen)) {
		close_n(fds, n);
		return -EPROTO;
	}
	*seen |= 1u << type;
	if (type == PROTO_NET && s->net_fn != NULL)
		s->net_fn(s->net_arg, id, fds[0], fds[1]);
	else if (type == PROTO_STAGE && s->stage_fn != NULL)
		s->stage_fn(s->stage_arg, id, fds[0], token);
	else
		close_n(fds, n);
	return 0;
}
