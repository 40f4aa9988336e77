/*
 * fs_tar_pool.c: writer threads for fs.unpack's small files
 * (fs_tar_pool.h).
 */
#include "fs_tar_pool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum slot_state { SLOT_FREE, SLOT_READY, SLOT_BUSY, SLOT_DONE };

struct fstar_pool {
	int root;
	pthread_mutex_t lock;
	pthread_cond_t work; /* a slot became READY, or stop */
	pthread_cond_t done; /* a slot became DONE */
	struct fstar_job jobs[FSTAR_POOL_SLOTS];
	enum slot_state state[FSTAR_POOL_SLOTS];
	char *data; /* FSTAR_POOL_SLOTS * FSTAR_JOB_MAX */
	size_t head; /* oldest in flight (collect) */
	size_t take; /* next for a writer to start */
	size_t tail; /* next to fill */
	size_t kicked; /* TAIL when the writers were last woken */
	unsigned idle; /* writers waiting for WORK */
	size_t wait_until; /* the caller waits for HEAD up to this (not
			    * included) to be DONE */
	bool caller_waits;
	bool cancel, stop;
	pthread_t threads[FSTAR_POOL_WRITERS];
	unsigned nthreads;
	bool started;
};

int
fstar_pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* The file API's fill (struct fsapi_wreq): the job's data into OUT. As
 * fill_entry in fs_tar_unpack.c, a size over LIMIT - 1 is claimed, not
 * written. */
static int
job_fill(void *arg, int out, uint64_t limit, uint64_t *copied, bool *out_side)
{
	struct fstar_job *j = arg;
	int e;

	*out_side = false;
	if (j->len >= limit) {
		*copied = limit;
		return 0;
	}
	if ((e = fstar_pwrite_all(out, j->data, j->len, 0)) < 0) {
		*out_side = true;
		return e;
	}
	*copied = j->len;
	return 0;
}

/* Writes J beneath ROOT: fsapi_write_req, nothing else. */
static void
job_run(int root, struct fstar_job *j)
{
	j->w.fill = job_fill;
	j->w.fill_arg = j;
	j->err = fsapi_write_req(root, j->path, -1, &j->w, &j->why);
}

/* Whether every job the caller waits for is DONE (P's lock held). */
static bool
batch_done(const struct fstar_pool *p)
{
	for (size_t k = p->head; k < p->wait_until; k++)
		if (p->state[k % FSTAR_POOL_SLOTS] != SLOT_DONE)
			return false;
	return true;
}

static void *
writer(void *arg)
{
	struct fstar_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		size_t i = p->take % FSTAR_POOL_SLOTS;
		struct fstar_job *j;

		/* A job starts only once the one FSTAR_POOL_WRITERS before
		 * it is done: after a failed file, at most the one job
		 * already running beside it can still be written. */
		if (p->take == p->tail || p->state[i] != SLOT_READY ||
		    (p->take >= FSTAR_POOL_WRITERS &&
			p->state[(p->take - FSTAR_POOL_WRITERS) %
			    FSTAR_POOL_SLOTS] == SLOT_BUSY)) {
			if (p->stop)
				break;
			p->idle++;
			pthread_cond_wait(&p->work, &p->lock);
			p->idle--;
			continue;
		}
		p->take++;
		j = &p->jobs[i];
		if (p->cancel) {
			j->err = -ECANCELED;
		} else {
			p->state[i] = SLOT_BUSY;
			pthread_mutex_unlock(&p->lock);
			job_run(p->root, j);
			pthread_mutex_lock(&p->lock);
			/* Nothing queued after a failed file is written:
			 * jobs start in the archive's order, so what has not
			 * started comes after this one. */
			if (j->err < 0)
				p->cancel = true;
		}
		p->state[i] = SLOT_DONE;
		if (p->caller_waits && batch_done(p))
			pthread_cond_broadcast(&p->done);
		/* The other writer may wait for this job to end (the rule
		 * above) with work queued. */
		if (p->take != p->tail)
			pthread_cond_broadcast(&p->work);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct fstar_pool *
fstar_pool_new(int root)
{
	struct fstar_pool *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	if ((p->data = malloc((size_t)FSTAR_POOL_SLOTS * FSTAR_JOB_MAX)) ==
	    NULL) {
		free(p);
		return NULL;
	}
	p->root = root;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	for (size_t i = 0; i < FSTAR_POOL_SLOTS; i++)
		p->jobs[i].data = p->data + i * FSTAR_JOB_MAX;
	return p;
}

struct fstar_job *
fstar_pool_next(struct fstar_pool *p)
{
	struct fstar_job *j = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->tail - p->head < FSTAR_POOL_SLOTS)
		j = &p->jobs[p->tail % FSTAR_POOL_SLOTS];
	pthread_mutex_unlock(&p->lock);
	if (j != NULL) {
		j->err = 0;
		j->why = FS_OK;
	}
	return j;
}

/* Starts the writers with every signal blocked in them (they inherit
 * the mask): a signal for the session goes to the caller's thread. */
static int
start(struct fstar_pool *p)
{
	sigset_t all, old;
	int e = 0;

	p->started = true;
	/* The umask is read by setting it: never while a writer runs. */
	(void)fsapi_process_umask();
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (p->nthreads < FSTAR_POOL_WRITERS &&
	    (e = pthread_create(&p->threads[p->nthreads], NULL, writer, p)) ==
		0)
		p->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return p->nthreads > 0 ? 0 : -e;
}

/* Wakes the idle writers when a job waits for them (P's lock held). */
static void
kick_locked(struct fstar_pool *p)
{
	p->kicked = p->tail;
	if (p->idle > 0 && p->take != p->tail)
		pthread_cond_broadcast(&p->work);
}

int
fstar_pool_submit(struct fstar_pool *p, struct fstar_job *j)
{
	size_t i = (size_t)(j - p->jobs);
	int e = 0;

	if (!p->started)
		e = start(p);
	pthread_mutex_lock(&p->lock);
	p->tail++;
	if (p->nthreads == 0) {
		/* No writer: this thread writes it, in order. */
		p->take++;
		pthread_mutex_unlock(&p->lock);
		job_run(p->root, j);
		pthread_mutex_lock(&p->lock);
		p->state[i] = SLOT_DONE;
	} else {
		p->state[i] = SLOT_READY;
		/* A writer still busy takes it next by itself; idle ones
		 * are woken for FSTAR_POOL_BATCH jobs at once, not each. */
		if (p->idle > 0 && p->tail - p->kicked >= FSTAR_POOL_BATCH)
			kick_locked(p);
	}
	pthread_mutex_unlock(&p->lock);
	return e;
}

void
fstar_pool_kick(struct fstar_pool *p)
{
	pthread_mutex_lock(&p->lock);
	kick_locked(p);
	pthread_mutex_unlock(&p->lock);
}

struct fstar_job *
fstar_pool_done(struct fstar_pool *p, bool wait)
{
	struct fstar_job *j = NULL;
	size_t i;

	pthread_mutex_lock(&p->lock);
	while (p->head != p->tail) {
		i = p->head % FSTAR_POOL_SLOTS;
		if (p->state[i] == SLOT_DONE) {
			j = &p->jobs[i];
			break;
		}
		if (!wait)
			break;
		kick_locked(p); /* what is queued must not wait for more */
		/* Woken once for FSTAR_POOL_BATCH jobs, not for each. */
		p->wait_until = p->head +
		    (p->tail - p->head < FSTAR_POOL_BATCH ? p->tail - p->head
							  : FSTAR_POOL_BATCH);
		p->caller_waits = true;
		pthread_cond_wait(&p->done, &p->lock);
		p->caller_waits = false;
	}
	pthread_mutex_unlock(&p->lock);
	return j;
}

void
fstar_pool_release(struct fstar_pool *p, struct fstar_job *j)
{
	pthread_mutex_lock(&p->lock);
	p->state[j - p->jobs] = SLOT_FREE;
	p->head++;
	pthread_mutex_unlock(&p->lock);
}

void
fstar_pool_cancel(struct fstar_pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->cancel = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
}

void
fstar_pool_free(struct fstar_pool *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned k = 0; k < p->nthreads; k++)
		pthread_join(p->threads[k], NULL);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p->data);
	free(p);
}
