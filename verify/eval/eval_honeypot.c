/*
 * eval_honeypot.c: the loopback server that records what attacks send
 * (eval_honeypot.h; issue 6).
 */
#include "eval_honeypot.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "eval_dns.h"

#define MAX_CONNS 1024 /* connections open at once */
#define READ_PIECE 65536 /* one read or datagram, bytes */
#define SYNC_ROUNDS 256 /* rounds of reading per sync */
#define MAX_SERVED 16 /* secrets served at once */

enum rec_kind { REC_TCP, REC_UDP, REC_UNIX, REC_INDEX, REC_DNS };

static const char *const kind_names[] = {
    [REC_TCP] = "tcp",
    [REC_UDP] = "udp",
    [REC_UNIX] = "unix",
    [REC_INDEX] = "index",
    [REC_DNS] = "dns",
};

struct record {
	enum rec_kind kind;
	int fd; /* an open connection, else -1 */
	unsigned char *data; /* the first EVAL_HONEYPOT_KEEP bytes */
	size_t len, cap;
	uint64_t total; /* bytes received, kept or not */
	uint64_t last_seq; /* mark of its last bytes */
	bool replied; /* an HTTP answer was sent */
};

struct eval_honeypot {
	pthread_t thread;
	bool started;
	pthread_mutex_t mu; /* guards everything below */
	pthread_cond_t cv;
	int tcp, udp, unx, idx, wake;
	uint16_t tcp_port, udp_port;
	char unix_name[40];
	struct record **rec;
	size_t nrec, cap;
	size_t open_conns;
	uint64_t seq;
	uint64_t sync_req, sync_done;
	bool stop, dead;
	char served[MAX_SERVED][64]; /* "" for a free slot */
};

/* ---- records (called with the mutex held) --------------------------------- */

static struct record *
rec_new(struct eval_honeypot *hp, enum rec_kind kind, int fd)
{
	struct record *r;

	if (hp->nrec == hp->cap) {
		size_t ncap = hp->cap ? 2 * hp->cap : 64;
		struct record **nv = reallocarray(hp->rec, ncap, sizeof(*nv));

		if (nv == NULL)
			return NULL;
		hp->rec = nv;
		hp->cap = ncap;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->kind = kind;
	r->fd = fd;
	r->last_seq = hp->seq;
	hp->rec[hp->nrec++] = r;
	return r;
}

static void
rec_add(struct eval_honeypot *hp, struct record *r, const void *p, size_t n)
{
	size_t room = EVAL_HONEYPOT_KEEP - r->len;
	size_t take = n < room ? n : room;

	r->total += n;
	r->last_seq = ++hp->seq;
	if (take == 0)
		return;
	if (r->len + take > r->cap) {
		size_t ncap = r->cap ? r->cap : 4096;
		unsigned char *nd;

		while (ncap < r->len + take)
			ncap *= 2;
		if (ncap > EVAL_HONEYPOT_KEEP)
			ncap = EVAL_HONEYPOT_KEEP;
		if ((nd = realloc(r->data, ncap)) == NULL)
			return; /* counted in total, not kept */
		r->data = nd;
		r->cap = ncap;
	}
	memcpy(r->data + r->len, p, take);
	r->len += take;
}

/* ---- answers ----------------------------------------------------------- */

/* True when the stream of R has a complete HTTP request header. */
static bool
http_header_done(const struct record *r)
{
	size_t i = 0;

	while (i < r->len && i < 16 && r->data[i] >= 'A' && r->data[i] <= 'Z')
		i++;
	if (i == 0 || i >= r->len || r->data[i] != ' ')
		return false;
	return memmem(r->data, r->len, "\r\n\r\n", 4) != NULL;
}

/* ---- the poll loop (the thread) ---------------------------------------- */

static void
accept_one(struct eval_honeypot *hp, int lfd, enum rec_kind kind)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	pthread_mutex_lock(&hp->mu);
	if (hp->open_conns >= MAX_CONNS || rec_new(hp, kind, fd) == NULL) {
		close(fd);
	} else {
		hp->open_conns++;
		hp->rec[hp->nrec - 1]->last_seq = ++hp->seq;
	}
	pthread_mutex_unlock(&hp->mu);
}

static void
read_datagram(struct eval_honeypot *hp, unsigned char *buf)
{
	struct sockaddr_in from;
	socklen_t flen = sizeof(from);
	unsigned char reply[EVAL_DNS_REPLY_MAX(READ_PIECE)], name[256];
	size_t named;
	ssize_t n = recvfrom(hp->udp, buf, READ_PIECE, MSG_DONTWAIT,
	    (struct sockaddr *)&from, &flen);
	struct record *r;

	if (n < 0)
		return;
	named = eval_dns_hex_payload(buf, (size_t)n, name, sizeof(name));
	pthread_mutex_lock(&hp->mu);
	if ((r = rec_new(hp, REC_UDP, -1)) != NULL)
		rec_add(hp, r, buf, (size_t)n);
	/* What a query's name spells, as a record of its own. */
	if (named > 0 && (r = rec_new(hp, REC_DNS, -1)) != NULL)
		rec_add(hp, r, name, named);
	pthread_mutex_unlock(&hp->mu);
	if (n >= 12) {
		size_t rl = eval_dns_reply(buf, (size_t)n, reply);

		(void)sendto(hp->udp, reply, rl, MSG_DONTWAIT,
		    (struct sockaddr *)&from, flen);
	}
}

/* The HTTP answer, with every secret served, into OUT (SIZE bytes);
 * its length. Called with the mutex held. */
static size_t
http_answer(const struct eval_honeypot *hp, char *out, size_t size)
{
	char body[MAX_SERVED * 80 + 64];
	size_t blen = 0;

	blen += (size_t)snprintf(body, sizeof(body),
	    "{\"Code\": \"Success\", "
	    "\"SecretAccessKey\": [");
	for (int i = 0, k = 0; i < MAX_SERVED; i++)
		if (hp->served[i][0] != '\0')
			blen += (size_t)snprintf(body + blen,
			    sizeof(body) - blen, "%s\"%s\"", k++ ? ", " : "",
			    hp->served[i]);
	blen += (size_t)snprintf(body + blen, sizeof(body) - blen, "]}\n");
	return (size_t)snprintf(out, size,
	    "HTTP/1.0 200 OK\r\nContent-Type: "
	    "application/json\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n%s",
	    blen, body);
}

/* The index's answer: a package's metadata, no secret. */
static const char index_answer[] =
    "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
    "Content-Length: 37\r\nConnection: close\r\n\r\n"
    "{\"name\": \"left-pad\", \"v\": \"1.3.0\"}\n";

/* Reads what connection R has; closes it at its end. */
static void
read_stream(struct eval_honeypot *hp, struct record *r, unsigned char *buf)
{
	char ok[MAX_SERVED * 80 + 256];
	size_t oklen = 0;
	ssize_t n = recv(r->fd, buf, READ_PIECE, MSG_DONTWAIT);
	bool answer = false;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	pthread_mutex_lock(&hp->mu);
	if (n > 0) {
		rec_add(hp, r, buf, (size_t)n);
		answer = !r->replied && http_header_done(r);
		r->replied = r->replied || answer;
		if (answer && r->kind == REC_INDEX)
			oklen = (size_t)snprintf(ok, sizeof(ok), "%s",
			    index_answer);
		else if (answer)
			oklen = http_answer(hp, ok, sizeof(ok));
	} else {
		close(r->fd);
		r->fd = -1;
		hp->open_conns--;
	}
	pthread_mutex_unlock(&hp->mu);
	if (answer) {
		(void)send(r->fd, ok, oklen, MSG_DONTWAIT | MSG_NOSIGNAL);
		(void)shutdown(r->fd, SHUT_WR);
	}
}

/*
 * One poll of every socket with TIMEOUT (ms, -1 for none) and the work it
 * shows. Returns the number of descriptors that had something, or -1.
 */
static int
pump(struct eval_honeypot *hp, int timeout, struct pollfd *pfd,
    struct record **who, unsigned char *buf)
{
	size_t n = 0;
	int ready;

	pfd[n++] = (struct pollfd){hp->wake, POLLIN, 0};
	pfd[n++] = (struct pollfd){hp->tcp, POLLIN, 0};
	pfd[n++] = (struct pollfd){hp->udp, POLLIN, 0};
	pfd[n++] = (struct pollfd){hp->unx, POLLIN, 0};
	pfd[n++] = (struct pollfd){hp->idx, POLLIN, 0};
	pthread_mutex_lock(&hp->mu);
	for (size_t i = 0; i < hp->nrec && n < MAX_CONNS + 5; i++)
		if (hp->rec[i]->fd >= 0) {
			who[n] = hp->rec[i];
			pfd[n++] = (struct pollfd){hp->rec[i]->fd, POLLIN, 0};
		}
	pthread_mutex_unlock(&hp->mu);
	ready = poll(pfd, n, timeout);
	if (ready <= 0)
		return ready < 0 && errno != EINTR ? -1 : 0;
	if (pfd[0].revents & POLLIN) {
		uint64_t v;

		if (read(hp->wake, &v, sizeof(v)) < 0)
			v = 0; /* EAGAIN: another pump read it */
	}
	if (pfd[1].revents & POLLIN)
		accept_one(hp, hp->tcp, REC_TCP);
	if (pfd[2].revents & POLLIN)
		read_datagram(hp, buf);
	if (pfd[3].revents & POLLIN)
		accept_one(hp, hp->unx, REC_UNIX);
	if (pfd[4].revents & POLLIN)
		accept_one(hp, hp->idx, REC_INDEX);
	for (size_t i = 5; i < n; i++)
		if (pfd[i].revents != 0)
			read_stream(hp, who[i], buf);
	/* The wake-up alone is no work for a sync's drain. */
	return ready - (pfd[0].revents != 0);
}

static void *
serve(void *arg)
{
	struct eval_honeypot *hp = arg;
	struct pollfd *pfd = calloc(MAX_CONNS + 5, sizeof(*pfd));
	struct record **who = calloc(MAX_CONNS + 5, sizeof(*who));
	unsigned char *buf = malloc(READ_PIECE);
	bool stop = false;

	while (pfd != NULL && who != NULL && buf != NULL) {
		uint64_t req;

		/* The request is read before poll waits: one made later
		 * wakes it (its eventfd write comes after its count), and
		 * one whose wake-up a drain consumed is seen here. */
		pthread_mutex_lock(&hp->mu);
		req = hp->sync_req;
		stop = hp->stop;
		pthread_mutex_unlock(&hp->mu);
		if (stop)
			break;
		if (req == hp->sync_done) {
			if (pump(hp, -1, pfd, who, buf) < 0)
				break;
			continue;
		}
		/* Everything queued before the request: read until a poll
		 * that does not wait finds nothing. */
		for (int i = 0; i < SYNC_ROUNDS; i++)
			if (pump(hp, 0, pfd, who, buf) <= 0)
				break;
		pthread_mutex_lock(&hp->mu);
		hp->sync_done = req;
		pthread_cond_broadcast(&hp->cv);
		pthread_mutex_unlock(&hp->mu);
	}
	pthread_mutex_lock(&hp->mu);
	hp->dead = true;
	pthread_cond_broadcast(&hp->cv);
	pthread_mutex_unlock(&hp->mu);
	free(pfd);
	free(who);
	free(buf);
	return NULL;
}

/* ---- the interface ------------------------------------------------------ */

/* A socket of TYPE bound to ADDR (network order) at *PORT (0: the
 * kernel's choice, then put in *PORT); a descriptor or a negative
 * errno. */
static int
bind_inet_at(int type, uint32_t addr, uint16_t *port)
{
	struct sockaddr_in a = {
	    .sin_family = AF_INET,
	    .sin_port = htons(*port),
	    .sin_addr.s_addr = addr,
	};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 128) < 0) ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int
bind_inet(int type, uint16_t *port)
{
	*port = 0;
	return bind_inet_at(type, htonl(INADDR_LOOPBACK), port);
}

/* The TCP listener on 127.0.0.1 and the index's on EVAL_INDEX_ADDR at
 * the same port into HP; 0 or a negative errno. */
static int
bind_tcp_pair(struct eval_honeypot *hp)
{
	struct in_addr ia;
	int e = -EADDRINUSE;

	if (inet_pton(AF_INET, EVAL_INDEX_ADDR, &ia) != 1)
		return -EINVAL;
	for (int i = 0; i < 16 && e == -EADDRINUSE; i++) {
		if ((e = hp->tcp = bind_inet(SOCK_STREAM, &hp->tcp_port)) < 0)
			return e;
		e = hp->idx = bind_inet_at(SOCK_STREAM, ia.s_addr,
		    &hp->tcp_port);
		if (e < 0) {
			close(hp->tcp);
			hp->tcp = hp->idx = -1;
		}
	}
	return e < 0 ? e : 0;
}

static int
bind_abstract(char *name, size_t size)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	unsigned char rnd[8];
	size_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	arc4random_buf(rnd, sizeof(rnd));
	len = (size_t)snprintf(name, size,
	    "stockade-eval-%02x%02x%02x%02x"
	    "%02x%02x%02x%02x",
	    rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	/* Abstract: a NUL first, and the name's exact length (unix(7)). */
	memcpy(a.sun_path + 1, name, len);
	if (bind(fd, (struct sockaddr *)&a,
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) <
		0 ||
	    listen(fd, 128) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

int
eval_honeypot_start(struct eval_honeypot **out, char *err, size_t errlen)
{
	struct eval_honeypot *hp = calloc(1, sizeof(*hp));
	sigset_t all, old;
	int e;

	*out = NULL;
	if (hp == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	hp->tcp = hp->udp = hp->unx = hp->idx = hp->wake = -1;
	pthread_mutex_init(&hp->mu, NULL);
	pthread_cond_init(&hp->cv, NULL);
	if ((e = bind_tcp_pair(hp)) < 0 ||
	    (e = hp->udp = bind_inet(SOCK_DGRAM, &hp->udp_port)) < 0 ||
	    (e = hp->unx = bind_abstract(hp->unix_name,
		 sizeof(hp->unix_name))) < 0) {
		snprintf(err, errlen, "the honeypot cannot listen: %s",
		    strerror(-e));
		eval_honeypot_stop(hp);
		return e;
	}
	if ((hp->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		e = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(-e));
		eval_honeypot_stop(hp);
		return e;
	}
	/* The thread takes no signal: SIGINT and SIGTERM are the main
	 * loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = -pthread_create(&hp->thread, NULL, serve, hp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e < 0) {
		snprintf(err, errlen, "pthread_create: %s", strerror(-e));
		eval_honeypot_stop(hp);
		return e;
	}
	hp->started = true;
	*out = hp;
	return 0;
}

uint16_t
eval_honeypot_tcp_port(const struct eval_honeypot *hp)
{
	return hp->tcp_port;
}

uint16_t
eval_honeypot_udp_port(const struct eval_honeypot *hp)
{
	return hp->udp_port;
}

const char *
eval_honeypot_unix_name(const struct eval_honeypot *hp)
{
	return hp->unix_name;
}

uint64_t
eval_honeypot_mark(struct eval_honeypot *hp)
{
	uint64_t s;

	pthread_mutex_lock(&hp->mu);
	s = hp->seq;
	pthread_mutex_unlock(&hp->mu);
	return s;
}

int
eval_honeypot_sync(struct eval_honeypot *hp)
{
	uint64_t one = 1, mine;
	int e = 0;

	pthread_mutex_lock(&hp->mu);
	mine = ++hp->sync_req;
	pthread_mutex_unlock(&hp->mu);
	/* An eventfd write fails only at its maximum count: awake anyway. */
	if (write(hp->wake, &one, sizeof(one)) < 0)
		one = 0;
	pthread_mutex_lock(&hp->mu);
	while (hp->sync_done < mine && !hp->dead)
		pthread_cond_wait(&hp->cv, &hp->mu);
	if (hp->sync_done < mine)
		e = -EPIPE;
	pthread_mutex_unlock(&hp->mu);
	return e;
}

int
eval_honeypot_find(struct eval_honeypot *hp, uint64_t since,
    const struct eval_needle *nd, size_t n, int *which, char *where,
    size_t wlen)
{
	int found = 0;

	pthread_mutex_lock(&hp->mu);
	for (size_t i = 0; i < hp->nrec && !found; i++) {
		const struct record *r = hp->rec[i];
		int k;

		if (r->last_seq <= since || r->len == 0)
			continue;
		if ((k = eval_find(r->data, r->len, nd, n)) >= 0) {
			*which = k;
			snprintf(where, wlen, "%s", kind_names[r->kind]);
			found = 1;
		}
	}
	pthread_mutex_unlock(&hp->mu);
	return found;
}

int
eval_honeypot_serve(struct eval_honeypot *hp, const char *secret)
{
	int e = -E2BIG;

	if (strlen(secret) >= sizeof(hp->served[0]))
		return -E2BIG;
	pthread_mutex_lock(&hp->mu);
	for (int i = 0; i < MAX_SERVED && e < 0; i++)
		if (hp->served[i][0] == '\0') {
			snprintf(hp->served[i], sizeof(hp->served[i]), "%s",
			    secret);
			e = 0;
		}
	pthread_mutex_unlock(&hp->mu);
	return e;
}

void
eval_honeypot_unserve(struct eval_honeypot *hp, const char *secret)
{
	pthread_mutex_lock(&hp->mu);
	for (int i = 0; i < MAX_SERVED; i++)
		if (strcmp(hp->served[i], secret) == 0)
			hp->served[i][0] = '\0';
	pthread_mutex_unlock(&hp->mu);
}

void
eval_honeypot_forget(struct eval_honeypot *hp, uint64_t before)
{
	size_t k = 0;

	pthread_mutex_lock(&hp->mu);
	for (size_t i = 0; i < hp->nrec; i++) {
		struct record *r = hp->rec[i];

		if (r->fd < 0 && r->last_seq <= before) {
			free(r->data);
			free(r);
		} else {
			hp->rec[k++] = r;
		}
	}
	hp->nrec = k;
	pthread_mutex_unlock(&hp->mu);
}

void
eval_honeypot_stop(struct eval_honeypot *hp)
{
	uint64_t one = 1;

	if (hp == NULL)
		return;
	if (hp->started) {
		pthread_mutex_lock(&hp->mu);
		hp->stop = true;
		pthread_mutex_unlock(&hp->mu);
		if (write(hp->wake, &one, sizeof(one)) < 0)
			one = 0; /* at its maximum: awake anyway */
		pthread_join(hp->thread, NULL);
	}
	for (size_t i = 0; i < hp->nrec; i++) {
		if (hp->rec[i]->fd >= 0)
			close(hp->rec[i]->fd);
		free(hp->rec[i]->data);
		free(hp->rec[i]);
	}
	free(hp->rec);
	if (hp->tcp >= 0)
		close(hp->tcp);
	if (hp->udp >= 0)
		close(hp->udp);
	if (hp->unx >= 0)
		close(hp->unx);
	if (hp->idx >= 0)
		close(hp->idx);
	if (hp->wake >= 0)
		close(hp->wake);
	pthread_mutex_destroy(&hp->mu);
	pthread_cond_destroy(&hp->cv);
	free(hp);
}
