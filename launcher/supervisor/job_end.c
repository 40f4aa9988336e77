/*
 * job_end.c: the last phase of a job in the supervisor (monitor.c,
 * launcher_run_job): the records init left on the status pipe, the
 * job's RESULT assembled from them and from the enforcer, the denial log
 * and the output counts, and sent to the broker.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launcher.h"
#include "log.h"
#include "monitor_internal.h"

uint64_t
job_elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - start->tv_sec) * 1000u +
	    (uint64_t)((now.tv_nsec - start->tv_nsec) / 1000000);
}

/*
 * Reads the records init and the payload left on the status pipe (its
 * write ends are all closed once init is reaped; shared/wire.h, the
 * status channel): the ending record into
 * REC, INIT_REC_SETUP_FAILED (or INIT_REC_BIND_FAILED) before any
 * INIT_REC_PAYLOAD_EXIT (a payload
 * whose set-up failed also exits, 127, after saying why), the
 * Landlock ABI the payload reported into *LANDLOCK_ABI, and the tasks
 * init counted as the payload ended into *TASKS (left alone when init
 * sent none). A record whose header fails its check (wire_status_read:
 * -EPROTO) is logged and ends the reading, the records after it
 * refused. Returns 0 when an ending record came, -EBADMSG otherwise.
 */
static int
read_records(int fd, int32_t rec[3], int32_t *landlock_abi, int32_t *tasks)
{
	bool ended = false;
	int32_t got[3];
	int n;

	for (int i = 0; i < 8; i++) {
		n = wire_status_read(fd, got);
		if (n == -EPROTO)
			log_warn("status pipe: a record of type %d with "
				 "descriptors or of no status type: refused",
			    (int)got[0]);
		if (n <= 0)
			break;
		if (got[0] == INIT_REC_LANDLOCK) {
			*landlock_abi = got[1];
			continue;
		}
		if (got[0] == INIT_REC_TASKS) {
			*tasks = got[1];
			continue;
		}
		if (ended &&
		    (rec[0] == INIT_REC_SETUP_FAILED ||
			rec[0] == INIT_REC_BIND_FAILED))
			continue;
		memcpy(rec, got, sizeof(got));
		ended = true;
	}
	return ended ? 0 : -EBADMSG;
}

int
job_send_result(struct launcher *l, struct job_result *r)
{
	int n = proto_encode_result(l->out, PROTO_MAX_MSG, r);

	if (n < 0)
		return n;
	return proto_send(l->ipc, l->out, (size_t)n, -1);
}

void
job_result(const struct job_spec *spec, struct job_state *s,
    enum job_enforcement mode, struct job_result *r_out)
{
	struct job_result r;
	int32_t rec[3] = {0, 0, 0}, tasks_at_exit = 0;
	bool have_rec;

	memset(&r, 0, sizeof(r));
	have_rec = read_records(s->jail.status_fd, rec, &r.landlock_abi,
		       &tasks_at_exit) == 0;
	if (tasks_at_exit > 0)
		enforcer_tasks_at_exit(&s->enf, (uint32_t)tasks_at_exit);
	r.job_id = spec->job_id;
	r.wall_ms = job_elapsed_ms(&s->jail.start);
	r.cpu_ms = s->enf.cpu_ms;
	r.peak_memory_kb = s->enf.peak_rss_bytes / 1024u;
	r.peak_processes = s->enf.peak_tasks;
	r.memory_measure = s->enf.peak_measure;
	/* A limit reached while the program went on: the result says so
	 * whatever the status (its output may lack what a refused fork
	 * would have done). */
	if (s->enf.pids_hit && !job_spec_layer_off(spec, JOB_LAYER_LIMITS)) {
		r.reached[0].limit = JOB_REACHED_PROCESSES;
		r.reached[0].times = s->enf.pids_episodes > 0
		    ? s->enf.pids_episodes
		    : 1;
		r.nreached = 1;
	}
	r.enforcement = mode;
	denials_result(&s->den, &r);
	r.stdout_bytes = s->bytes[1];
	r.stderr_bytes = s->bytes[2];
	if (have_rec && rec[0] == INIT_REC_PAYLOAD_EXIT && r.peak_processes < 2)
		r.peak_processes = 2;
	monitor_classify(spec, s, rec, have_rec, &r);
	*r_out = r;
}
