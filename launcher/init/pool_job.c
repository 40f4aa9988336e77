/*
 * pool_job.c: a warm pool's jail taking its job (pool.h): jail init,
 * built and locked down for a template, waits for the launcher's RUN
 * message (jail_init_take_job, init_internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init_internal.h"
#include "jail.h"
#include "proto.h"

const struct job_spec *
jail_init_take_job(const struct job_spec *template, int go_fd, int status_fd,
    int *stdin_fd)
{
	struct job_spec *job = calloc(1, sizeof(*job));
	uint8_t *msg = malloc(PROTO_MAX_MSG);
	const uint8_t *body;
	size_t body_len, nfds = 0;
	uint16_t type;
	struct stat st;
	int n, in = -1, fl;

	if (job == NULL || msg == NULL)
		setup_failed(status_fd, STAGE_POOL_JOB, ENOMEM);
	/* At most one descriptor: the job's stdin (more, or a control
	 * message of another kind, is -EBADMSG with all of them closed). */
	n = proto_recv_fds(go_fd, msg, PROTO_MAX_MSG, &in, 1, &nfds);
	if (n == 0)
		_exit(0);
	if (n < 0)
		setup_failed(status_fd, STAGE_POOL_JOB, -n);
	if (proto_decode_header(msg, (size_t)n, &type, &body, &body_len) < 0 ||
	    type != PROTO_RUN || proto_decode_run(body, body_len, job) < 0)
		setup_failed(status_fd, STAGE_POOL_JOB, EBADMSG);
	/* The job's stdin exactly when its spec says so, and then the read
	 * end of a pipe only (proto.h, JOB_F_STDIN), as the launcher
	 * checked; numbered above the standard streams, which init has
	 * closed and the payload's will take. */
	if (!jail_pool_compatible(template, job) ||
	    ((job->flags & JOB_F_STDIN) != 0) != (nfds == 1) ||
	    (nfds == 1 &&
		(fstat(in, &st) < 0 || !S_ISFIFO(st.st_mode) ||
		    (fl = fcntl(in, F_GETFL)) < 0 ||
		    (fl & (O_ACCMODE | O_PATH)) != O_RDONLY)))
		setup_failed(status_fd, STAGE_POOL_JOB, EPERM);
	if (nfds == 1 && (*stdin_fd = above_stdio(in, F_DUPFD_CLOEXEC)) < 0)
		setup_failed(status_fd, STAGE_POOL_JOB, -*stdin_fd);
	close(go_fd);
	free(msg);
	return job;
}
