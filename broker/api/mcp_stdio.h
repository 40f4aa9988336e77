/*
 * mcp_stdio.h: the stdio transport of `stockade mcp` (cmd_mcp.c,
 * mcp_stdio.c; MCP "Transports": stdio, one JSON-RPC message per line,
 * nothing else on stdout). The reader thread (mcp_stdio_reader) owns
 * standard input; both threads write whole lines to standard output with
 * mcp_stdio_write. Not for other files.
 */
#ifndef STOCKADE_MCP_STDIO_H
#define STOCKADE_MCP_STDIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "mcp.h"
#include "rpc.h"

/* A running job's progress, every this many milliseconds. */
#define MCP_TICK_MS 1000u

/* A message waiting for the main thread (owned). */
struct queued {
	struct queued *next;
	json_t *msg;
};

struct mcp_stdio {
	pthread_mutex_t mu; /* everything below but out_mu's */
	pthread_cond_t cv; /* the queue grew, or input ended */
	struct queued *head, *tail;
	bool eof; /* standard input ended (or broke) */
	bool broken; /* a line over max_line, or output failed */
	size_t max_line; /* the longest line, bytes (run_session) */
	unsigned out_kind; /* S_IFSOCK, S_IFIFO or another S_IFMT of
				 * standard output, once (run_session) */
	bool stop; /* the reader is to return */
	json_t *current; /* id of the request being handled (owned) */
	bool cancelled; /* ... and the client cancelled it */
	json_t *token; /* the running job's progress token (owned) */
	uint64_t job_start_ms, job_limit_ms, last_tick_ms;
	int wake[2]; /* wakes the reader (job start, stop) */
	pthread_mutex_t out_mu; /* one line at a time on stdout */
	struct rpc_session rpc;
	struct mcp_session mcp;
};

/*
 * Writes MSG (borrowed) to standard output as one line, under out_mu,
 * never blocking past a signal or the session's end (it gives up then).
 * A failure to write marks the session broken and cancels a running job
 * (jobrun_cancel): nobody will read its result.
 */
void mcp_stdio_write(struct mcp_stdio *sv, json_t *msg);

/* Wakes the reader from its poll (a job with a progress token started,
 * or the session is ending). */
void mcp_stdio_wake(struct mcp_stdio *sv);

/*
 * The reader thread (pthread_create's start routine, ARG the struct
 * mcp_stdio): splits standard input into lines; answers ping and
 * malformed lines at once; acts on notifications/cancelled at once;
 * sends the progress of a running job every MCP_TICK_MS; queues every
 * other message for the main thread. Returns when input ends or breaks
 * (eof set, cond signalled), when standard output is closed (broken
 * set, the job cancelled), or when stop is set and it is woken.
 */
void *mcp_stdio_reader(void *arg);

#endif
