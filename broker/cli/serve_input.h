/*
 * serve_input.h: the input of a `stockade serve` connection (serve.c):
 * the bytes read, split into request lines, each with the descriptors
 * that came with it (SCM_RIGHTS, unix(7)), queued until handled.
 */
#ifndef STOCKADE_SERVE_INPUT_H
#define STOCKADE_SERVE_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rpc.h"
#include "supervisor.h"

struct server;

/* A complete request line read and not yet handled, with its
 * descriptors. */
struct line {
	struct line *next;
	char *text; /* LEN bytes without the '\n' */
	size_t len;
	int fds[RPC_MAX_FDS + 1];
	size_t nfds;
};

/* A connection's input: the complete lines not yet handled (a queue),
 * the bytes of the line not yet complete, and the descriptors that came
 * with it. */
struct conn {
	int in, out;
	bool sock; /* recvmsg with SCM_RIGHTS */
	char *buf;
	size_t len, cap;
	int pending[RPC_MAX_FDS + 1];
	size_t npending;
	struct line *head, *tail;
	size_t queued_bytes, queued_lines;
	bool eof; /* the input ended (read returned 0) */
	int broken; /* 0, or the read's error ended the input:
				 * -EPROTO, -EMSGSIZE or another errno */
	struct server *sv; /* for the watch during a job */
	struct supervisor_watch watch;
};

/* Adds FD to the list FDS (*N of them): at most RPC_MAX_FDS + 1 are
 * kept, one more than a request may carry so that rpc_handle refuses
 * it; FD is closed when the list is full. */
void fds_add(int *fds, size_t *n, int fd);

/* Closes the *N descriptors of FDS and sets *N to 0. */
void fds_close(int *fds, size_t *n);

/* Takes the first queued line of C (the caller then owns it: line_free),
 * or NULL when none is queued. */
struct line *queue_pop(struct conn *c);

/* Closes the descriptors of L and frees it; L may be NULL. */
void line_free(struct line *l);

/*
 * Reads once from C (its input must be readable) and queues every line
 * that completes. The descriptors a recvmsg brought belong to the line
 * that holds the last byte it read: a client sends a line and its
 * descriptors in one sendmsg.
 *
 * Returns the bytes read; 0 at end of input (C->eof set; a last line
 * without its '\n' is dropped, never carried out); -EAGAIN or -EINTR to
 * try again; or a negative errno that ends the connection, C->broken
 * set: -EMSGSIZE for a line over RPC_MAX_LINE (said by serve.c once the
 * lines before it are answered), -EPROTO for control data other than
 * descriptors or truncated, -ENOMEM, or read's error. All but -EMSGSIZE
 * are said on stderr here.
 */
ssize_t conn_fill(struct conn *c);

#endif
