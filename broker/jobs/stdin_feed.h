/*
 * stdin_feed.h: a job's standard input, streamed by the broker (issue
 * 22; README.md, "Standard input"; docs/protocol.md, exec's stdin).
 *
 * The payload never gets the client's descriptor: the broker makes a
 * pipe per job, passes its read end with RUN (JOB_F_STDIN, proto.h) and
 * writes into the other end what it reads from the source: a descriptor
 * (`stockade run`'s own stdin or --stdin FILE, a descriptor passed to
 * serve's exec) or bytes held in memory (serve's inline stdin). A
 * terminal, a socket or a host file handed straight to a jail would let
 * the payload write to it, seek it, ioctl it or reopen it; a pipe's read
 * end lets it read, and nothing else.
 *
 * Streamed in the supervisor's wait for the launcher (supervisor.c):
 * the pipe's end is non-blocking and the source is read only once poll
 * says it is readable and only when the pipe has room for what was read
 * before, so a program that stops reading stops the feeding, never the
 * broker: output, the job's end and the deadlines go on as without
 * input. At most STDIN_FEED_BUF bytes are held between the source and
 * the pipe, whatever the source holds.
 *
 * Pure descriptor I/O (pipe2, poll's answers, read, write); no policy.
 */
#ifndef STOCKADE_STDIN_FEED_H
#define STOCKADE_STDIN_FEED_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes read from the source before they are written to the pipe. */
#define STDIN_FEED_BUF (64u * 1024u)

struct stdin_feed {
	int src; /* the source descriptor (borrowed), or -1 */
	const uint8_t *data; /* the inline bytes (borrowed) when src is -1 */
	size_t len; /* bytes at data */
	size_t doff; /* data[0..doff) written this job */
	uint8_t *buf; /* STDIN_FEED_BUF bytes read from src */
	size_t off, have; /* buf[off..have) read, not yet written */
	int pipe_w; /* our end of this job's pipe, or -1 */
	uint64_t sent; /* bytes written into the pipe this job */
	bool src_end; /* end of file on src */
	int error; /* errno of a failed read of src; 0 none */
};

/*
 * Prepares F to stream the descriptor FD (borrowed: the caller keeps it
 * open until stdin_feed_free, and it is read as it is, blocking or not).
 * Returns 0 or -ENOMEM.
 */
int stdin_feed_init_fd(struct stdin_feed *f, int fd);

/* Prepares F to give DATA[0..LEN) (borrowed until stdin_feed_free). */
void stdin_feed_init_data(struct stdin_feed *f, const void *data, size_t len);

/*
 * Makes this job's pipe (pipe2, O_CLOEXEC; our end O_NONBLOCK) and
 * stores the read end in *READ_END for the RUN message: the caller owns
 * it and closes it as soon as it is sent, so that only the jail holds a
 * reader. Inline data is given from its start again; bytes read from a
 * descriptor and not yet written stay (see stdin_feed_restartable).
 * Returns 0 or a negative errno (pipe2's).
 */
int stdin_feed_start(struct stdin_feed *f, int *read_end);

/*
 * What F waits for now, into P: our end of the pipe for POLLOUT while
 * there are bytes to write, else the source for POLLIN until its end.
 * Returns false when F waits for nothing (no job's pipe, or fed to the
 * end: the pipe is then closed and the program reads end of file).
 */
bool stdin_feed_pollfd(struct stdin_feed *f, struct pollfd *p);

/*
 * Does the I/O poll allowed on P (from stdin_feed_pollfd, REVENTS set):
 * one read of the source, or writes until the pipe is full. A pipe
 * whose reader has gone (EPIPE: the program closed its stdin or ended)
 * ends the feeding, and so does a read error (F->error keeps it). Never
 * blocks on the pipe; reads the source only when poll said it could.
 */
void stdin_feed_step(struct stdin_feed *f, const struct pollfd *p);

/* Closes our end of the pipe (the job ended); accepts a stopped F. */
void stdin_feed_stop(struct stdin_feed *f);

/*
 * Whether the job may be given F again from a new pipe with nothing
 * lost: inline data always; a descriptor while nothing of it was
 * written to a pipe yet.
 */
bool stdin_feed_restartable(const struct stdin_feed *f);

/* Frees what F owns and closes its end of the pipe; accepts a zeroed F. */
void stdin_feed_free(struct stdin_feed *f);

#endif
