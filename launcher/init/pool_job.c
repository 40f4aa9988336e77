/*
 * pool_job.c: a warm pool's jail taking its job (pool.h): jail init,
 * built and locked down for a template, waits for the launcher's RUN
 * message (jail_init_take_job, init_internal.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init_internal.h"
#include "jail.h"
#include "proto.h"

/* Whether IN, the descriptor that came as the job's stdin pipe, is the
 * read end of a pipe (proto.h, JOB_F_STDIN), as the launcher checked. */
static bool
stdin_pipe_ok(int in)
{
	struct stat st;
	int fl;

	return fstat(in, &st) == 0 && S_ISFIFO(st.st_mode) &&
	    (fl = fcntl(in, F_GETFL)) >= 0 &&
	    (fl & (O_ACCMODE | O_PATH)) == O_RDONLY;
}

const struct job_spec *
jail_init_take_job(const struct job_spec *template, int go_fd, int status_fd,
    int *stdin_fd)
{
	struct job_spec *job = calloc(1, sizeof(*job));
	uint8_t *msg = malloc(WIRE_MAX_MSG);
	const uint8_t *body;
	size_t body_len;
	uint16_t type;
	struct wire_msg m;
	int n, fds[1], in;

	if (job == NULL || msg == NULL)
		setup_failed(status_fd, STAGE_POOL_JOB, ENOMEM);
	/* A WIRE_GO message (shared/wire.h): the job's RUN and at most its
	 * stdin pipe, by role (another header, or a control message of
	 * another kind, is refused with every descriptor closed). */
	n = wire_recv(go_fd, msg, WIRE_MAX_MSG, fds, 1, &m);
	if (n == 0)
		_exit(0);
	if (n < 0)
		setup_failed(status_fd, STAGE_POOL_JOB, -n);
	if (m.type != WIRE_GO ||
	    proto_decode_header(m.body, m.body_len, &type, &body, &body_len) <
		0 ||
	    type != PROTO_RUN || proto_decode_run(body, body_len, job) < 0)
		setup_failed(status_fd, STAGE_POOL_JOB, EBADMSG);
	/* The job's stdin exactly when its spec says so, and then the read
	 * end of a pipe only; numbered above the standard streams, which
	 * init has closed and the payload's will take. */
	in = wire_fd(&m, fds, WIRE_FD_STDIN_PIPE);
	if (!jail_pool_compatible(template, job) ||
	    ((job->flags & JOB_F_STDIN) != 0) != (in >= 0) ||
	    (in >= 0 && !stdin_pipe_ok(in)))
		setup_failed(status_fd, STAGE_POOL_JOB, EPERM);
	if (in >= 0 && (*stdin_fd = above_stdio(in, F_DUPFD_CLOEXEC)) < 0)
		setup_failed(status_fd, STAGE_POOL_JOB, -*stdin_fd);
	close(go_fd);
	free(msg);
	return job;
}
