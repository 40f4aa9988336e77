/*
 * eval_sched.c: the runs of one `stockade eval`, --jobs at a time
 * (eval_sched.h): a queue of cells taken in order by worker threads,
 * each run by eval_run (eval_run.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval_honeypot.h"
#include "eval_sched.h"
#include "result.h"

struct sched {
	pthread_mutex_t mu;
	const struct eval_ctx *ctx;
	const struct eval_matrix *m;
	char (*policy)[PATH_MAX]; /* one file per configuration */
	struct eval_verdict *v; /* the matrix's verdicts */
	size_t next, total;
	size_t *done; /* finished runs per configuration */
	uint64_t marks[EVAL_MAX_JOBS]; /* honeypot mark of each worker's run */
	pthread_cond_t cv; /* a run ended */
	size_t in_flight; /* runs going on */
	bool exclusive; /* one of them must run alone */
	int64_t t0;
	const char *what; /* "layers", ... for progress */
};

struct worker {
	struct sched *s;
	size_t slot;
};

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One configuration done: its counts on stderr. */
static void
progress(struct sched *s, size_t c)
{
	const struct eval_matrix *m = s->m;
	size_t ok = 0, bad = 0, err = 0;

	for (size_t a = 0; a < m->corpus->n; a++) {
		enum eval_outcome o = s->v[a * m->ncfg + c].outcome;

		ok += o == EVAL_STOPPED;
		bad += o == EVAL_SUCCEEDED;
		err += o == EVAL_ERROR || o == EVAL_NOT_RUN;
	}
	fprintf(stderr,
	    "stockade: eval %s: %s: %zu stopped, %zu succeeded, "
	    "%zu not run or failed (%.1f s)\n",
	    s->what, m->cfg[c].title, ok, bad, err,
	    (double)(mono_ms() - s->t0) / 1000.0);
}

/*
 * Whether the runs of CFG must go one at a time: with the limits on and
 * no user namespace, RLIMIT_NPROC counts every process of the eval's
 * user on the host (setrlimit(2)), another run's too, so that a fork
 * bomb next door would make a job hit its process limit. Alone, a run
 * shares the count only with the eval's own few processes, the same in
 * every run (the eval's user must run nothing else: docs/evidence.md).
 */
static bool
must_run_alone(const struct eval_config *cfg)
{
	return (cfg->layers_off & JOB_LAYER_BIT(JOB_LAYER_LIMITS)) == 0 &&
	    (cfg->layers_off & JOB_LAYER_BIT(JOB_LAYER_USER_NS)) != 0;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	struct sched *s = w->s;
	const struct eval_matrix *m = s->m;

	for (;;) {
		size_t i, a, c;
		uint64_t low = UINT64_MAX;

		bool alone;

		pthread_mutex_lock(&s->mu);
		/* A run that must be alone waits for the others to end;
		 * the others wait while it runs. */
		while (s->next < s->total && !s->ctx->interrupted() &&
		    (s->exclusive ||
			(must_run_alone(&m->cfg[s->next / m->corpus->n]) &&
			    s->in_flight > 0)))
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->next >= s->total || s->ctx->interrupted()) {
			pthread_cond_broadcast(&s->cv);
			pthread_mutex_unlock(&s->mu);
			break;
		}
		i = s->next++;
		/* Configuration after configuration: a column is done
		 * before the next one begins (but for --jobs overlap). */
		c = i / m->corpus->n;
		a = i % m->corpus->n;
		alone = must_run_alone(&m->cfg[c]);
		s->in_flight++;
		s->exclusive = alone;
		s->marks[w->slot] = eval_honeypot_mark(s->ctx->hp);
		pthread_mutex_unlock(&s->mu);

		(void)eval_run(s->ctx, &m->corpus->v[a], s->policy[c],
		    m->cfg[c].layers_off != 0, (unsigned)i,
		    &s->v[a * m->ncfg + c]);

		pthread_mutex_lock(&s->mu);
		s->in_flight--;
		if (alone)
			s->exclusive = false;
		pthread_cond_broadcast(&s->cv);
		s->marks[w->slot] = UINT64_MAX;
		for (size_t k = 0; k < EVAL_MAX_JOBS; k++)
			if (s->marks[k] < low)
				low = s->marks[k];
		if (++s->done[c] == m->corpus->n)
			progress(s, c);
		pthread_mutex_unlock(&s->mu);
		/* Records no run in flight can need any more. */
		eval_honeypot_forget(s->ctx->hp,
		    low == UINT64_MAX ? eval_honeypot_mark(s->ctx->hp) : low);
	}
	return NULL;
}

/* Runs every cell of M (eval_sched.h). */
int
eval_sched_run(const struct eval_ctx *ctx, struct eval_matrix *m,
    struct eval_verdict *v, char (*policy)[PATH_MAX], unsigned jobs,
    const char *what)
{
	struct sched s;
	struct worker w[EVAL_MAX_JOBS];
	pthread_t t[EVAL_MAX_JOBS];
	unsigned started = 0;

	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	s.ctx = ctx;
	s.m = m;
	s.policy = policy;
	s.v = v;
	s.total = m->corpus->n * m->ncfg;
	s.done = calloc(m->ncfg, sizeof(*s.done));
	s.t0 = mono_ms();
	s.what = what;
	for (size_t k = 0; k < EVAL_MAX_JOBS; k++)
		s.marks[k] = UINT64_MAX;
	if (s.done == NULL)
		return -ENOMEM;
	for (unsigned k = 0; k < jobs; k++) {
		w[k] = (struct worker){&s, k};
		if (pthread_create(&t[k], NULL, work, &w[k]) != 0)
			break;
		started++;
	}
	if (started == 0)
		work(&(struct worker){&s, 0});
	for (unsigned k = 0; k < started; k++)
		pthread_join(t[k], NULL);
	free(s.done);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	return ctx->interrupted() ? -EINTR : 0;
}
